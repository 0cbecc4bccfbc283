package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/store"
)

// testApp returns an app that writes to buffers and sees no terminal.
func testApp() (*app, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, timeout: 30 * time.Second,
		isTerminal: func(any) bool { return false }}, &out, &errOut
}

// openURL opens a store and closes it when the test ends.
func openURL(tb testing.TB, rawURL string) *store.Store {
	tb.Helper()
	s, err := store.Open(tb.Context(), rawURL, nil)
	if err != nil {
		tb.Fatalf("open %s: %v", redact(rawURL), err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// emulatorStores returns the URLs of a fresh PostgreSQL table and DynamoDB
// table, dropped when the test ends; it fails when an emulator is missing.
func emulatorStores(tb testing.TB) (pgURL, ddbURL string) {
	tb.Helper()
	pg := emulator.Require(tb, emulator.PostgresURL)
	ep := emulator.Require(tb, emulator.DynamoDBEndpoint)
	pgURL, err := postgresURL(pg, unique("mig"))
	if err != nil {
		tb.Fatal(err)
	}
	ddbURL = dynamoURL(ep, unique("mig-"))
	tb.Cleanup(func() { dropPostgres(pgURL); dropDynamo(ddbURL) })
	return pgURL, ddbURL
}

// seed writes files files spread over namespaces namespaces, every third
// with metadata, and returns the paths.
func seed(tb testing.TB, s *store.Store, namespaces, files int) {
	tb.Helper()
	for i := range files {
		ns := i % namespaces
		w := store.WriteRequest{
			Path:    fmt.Sprintf("user%02d/main/note%04d.md", ns, i),
			Content: fmt.Sprintf("- fact %d of user %d\n- ünïcode ✓ %s\n", i, ns, strings.Repeat("x", i%97)),
		}
		if i%3 == 0 {
			w.Metadata = map[string]string{"source": "seed", "n": fmt.Sprint(i)}
		}
		if _, err := s.Write(tb.Context(), w); err != nil {
			tb.Fatal(err)
		}
	}
}

// entry is a file as compared across stores.
type entry struct {
	content  string
	metadata map[string]string
	version  string
}

// tree reads every file of s.
func tree(tb testing.TB, s *store.Store) map[string]entry {
	tb.Helper()
	out := map[string]entry{}
	for p, err := range s.Walk(tb.Context(), "", 0) {
		if err != nil {
			tb.Fatal(err)
		}
		f, err := s.Read(tb.Context(), p, wholeFile)
		if err != nil {
			tb.Fatal(err)
		}
		out[p] = entry{f.Content, f.Metadata, f.Version}
	}
	return out
}

// sameTrees fails tb unless a and b hold the same paths, content and
// metadata (versions are each store's own).
func sameTrees(tb testing.TB, what string, a, b map[string]entry) {
	tb.Helper()
	if len(a) != len(b) {
		tb.Fatalf("%s: %d files, want %d", what, len(b), len(a))
	}
	for p, e := range a {
		g, ok := b[p]
		if !ok {
			tb.Fatalf("%s: %s missing", what, p)
		}
		if g.content != e.content || !maps.Equal(g.metadata, e.metadata) {
			tb.Fatalf("%s: %s = %q %v, want %q %v", what, p, g.content, g.metadata, e.content, e.metadata)
		}
	}
}

// TestMigrateInterruptedAndRerun migrates 2,000 files of 50 namespaces from
// SQLite to PostgreSQL to DynamoDB, each hop cancelled half-way and run
// again, and checks that the trees are identical and reported so; then
// forgets one namespace on DynamoDB and checks that the other 49 are
// untouched, versions included.
func TestMigrateInterruptedAndRerun(t *testing.T) {
	t.Parallel() // mostly waiting on the emulators: beside the browser tests
	const namespaces, files = 25, 1000
	pgURL, ddbURL := emulatorStores(t)
	srcURL := "sqlite:" + filepath.Join(t.TempDir(), "src.db")
	seed(t, openURL(t, srcURL), namespaces, files)

	for _, hop := range [][2]string{{srcURL, pgURL}, {pgURL, ddbURL}} {
		from, to := openURL(t, hop[0]), openURL(t, hop[1])
		a, _, _ := testApp()
		ctx, cancel := context.WithCancel(t.Context())
		rep, err := a.migrate(ctx, from, to, migrateOptions{Workers: 4, Progress: func(done, total int) {
			if done == total/2 {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted migrate %s: err %v, want context.Canceled", redact(hop[1]), err)
		}
		first := rep.copied()
		if first < files/2 || first >= files {
			t.Fatalf("interrupted migrate copied %d files, want between %d and %d", first, files/2, files-1)
		}

		a, out, errOut := testApp()
		if code := a.run(t.Context(), []string{"migrate", hop[0], hop[1]}); code != exitOK {
			t.Fatalf("rerun exit %d: %s", code, errOut)
		}
		// The rerun copies only what the first run did not (a file whose
		// write was in flight at the cancel may go either way).
		m := regexp.MustCompile(`copied (\d+) of ` + fmt.Sprint(files) + ` files \((\d+) created, 0 replaced, (\d+) unchanged, 0 vanished\)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("rerun reported %q", out)
		}
		var copied, unchanged int
		fmt.Sscan(m[1], &copied)
		fmt.Sscan(m[3], &unchanged)
		if copied+unchanged != files || unchanged < first || unchanged > first+4 {
			t.Fatalf("rerun after %d copied: %s", first, out)
		}
		if !strings.Contains(out.String(), fmt.Sprintf("verified: %d files identical", files)) {
			t.Fatalf("rerun did not verify: %s", out)
		}
		t.Logf("%s → %s: interrupted after %d files; rerun: %s", redact(hop[0]), redact(hop[1]), first, strings.TrimSpace(out.String()))
	}
	src, pg, ddb := tree(t, openURL(t, srcURL)), tree(t, openURL(t, pgURL)), tree(t, openURL(t, ddbURL))
	sameTrees(t, "postgres", src, pg)
	sameTrees(t, "dynamodb", src, ddb)

	a, out, errOut := testApp()
	if code := a.run(t.Context(), []string{"--store", ddbURL, "forget", "--yes", "user07"}); code != exitOK {
		t.Fatalf("forget exit %d: %s", code, errOut)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("erased %d files of namespace user07", files/namespaces)) {
		t.Fatalf("forget said %q", out)
	}
	after := tree(t, openURL(t, ddbURL))
	for p, e := range ddb {
		g, ok := after[p]
		if strings.HasPrefix(p, "user07/") {
			if ok {
				t.Fatalf("forget left %s", p)
			}
			continue
		}
		if !ok || g.content != e.content || !maps.Equal(g.metadata, e.metadata) || g.version != e.version {
			t.Fatalf("forget touched %s: %+v, want %+v", p, g, e)
		}
	}
	if want := files - files/namespaces; len(after) != want {
		t.Fatalf("after forget: %d files, want %d", len(after), want)
	}
}

// BenchmarkMigrate reports migrate's throughput (files/s) and backend
// requests per copied file (req/op on both stores, dst-req/op on the
// destination), verification included, from SQLite to each backend. One
// op is one file: the source holds b.N files.
func BenchmarkMigrate(b *testing.B) {
	pgURL, ddbURL := emulatorStores(b)
	for _, dst := range []struct{ name, url string }{
		{"sqlite", ""},
		{"postgres", pgURL},
		{"dynamodb", ddbURL},
	} {
		b.Run("to="+dst.name, func(b *testing.B) {
			dir := b.TempDir()
			srcD, err := store.OpenDriver(b.Context(), "sqlite:"+filepath.Join(dir, "src.db"))
			if err != nil {
				b.Fatal(err)
			}
			srcC := contract.NewCounter(srcD)
			src := store.New(srcC, nil)
			defer src.Close()
			seed(b, src, 50, b.N)
			u := dst.url
			if u == "" {
				u = "sqlite:" + filepath.Join(dir, "dst.db")
			} else {
				u = strings.Replace(u, "mig", fmt.Sprintf("mig%d", b.N), 1) // a fresh table per run
			}
			dstD, err := store.OpenDriver(b.Context(), u)
			if err != nil {
				b.Fatal(err)
			}
			dstC := contract.NewCounter(dstD)
			to := store.New(dstC, nil)
			defer to.Close()
			if dst.name == "postgres" {
				b.Cleanup(func() { dropPostgres(u) })
			} else if dst.name == "dynamodb" {
				b.Cleanup(func() { dropDynamo(u) })
			}
			a, _, _ := testApp()
			srcC.Reset()
			dstC.Reset()
			b.ResetTimer()
			rep, err := a.migrate(b.Context(), src, to, migrateOptions{Workers: 4})
			b.StopTimer()
			if err != nil || rep.Created != b.N || rep.Verified != b.N {
				b.Fatalf("migrate: %+v, %v", rep, err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
			b.ReportMetric(float64(srcC.Total()+dstC.Total())/float64(b.N), "req/op")
			b.ReportMetric(float64(dstC.Total())/float64(b.N), "dst-req/op")
		})
	}
}
