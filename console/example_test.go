package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentmem/agentmem/console"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// A user key writes its own notebook with compare-and-swap; a stale ETag
// is refused and nothing is written.
func Example() {
	d, err := memstore.New(context.Background(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	defer s.Close()
	h, _ := console.New(s, &console.Options{
		Authenticate: func(r *http.Request) (console.Principal, error) {
			if r.Header.Get("Authorization") == "Bearer kamal-key" {
				return console.Principal{User: "kamal", Client: "example"}, nil
			}
			return console.Principal{}, console.ErrUnauthenticated
		},
	})
	srv := httptest.NewServer(h)
	defer srv.Close()

	put := func(content, ifMatch string) *http.Response {
		req, _ := http.NewRequestWithContext(context.Background(), "PUT", srv.URL+"/api/v1/namespaces/kamal/files/main/MEMORY.md", strings.NewReader(content))
		req.Header.Set("Authorization", "Bearer kamal-key")
		req.Header.Set("Content-Type", "text/markdown")
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		return resp
	}
	created := put("- lives in Hanoi\n", "")
	updated := put("- lives in Da Nang\n", created.Header.Get("ETag"))
	stale := put("- lost update\n", created.Header.Get("ETag"))
	f, _ := s.Read(context.Background(), "kamal/main/MEMORY.md", 100)
	fmt.Println(created.StatusCode, updated.StatusCode, stale.StatusCode, stale.Header.Get("Content-Type"))
	fmt.Printf("%q by %s\n", f.Content, f.Metadata[console.UpdatedByKey])
	// Output:
	// 201 200 412 application/problem+json
	// "- lives in Da Nang\n" by kamal
}
