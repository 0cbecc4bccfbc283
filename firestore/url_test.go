package firestore_test

import (
	"context"
	"errors"
	"testing"

	gcfirestore "cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

// TestOpenURL opens the emulator by store URL (emulator_host, and then
// FIRESTORE_EMULATOR_HOST, which the SDK honours), writes and reads, and
// checks that Close closes the client the opener created.
func TestOpenURL(t *testing.T) {
	host := emulator.Require(t, emulator.FirestoreHost)
	project := "demo-agentmem-url-" + firestore.RandomID()
	t.Cleanup(func() { firestore.Wipe(t, host, project) })

	t.Setenv("FIRESTORE_EMULATOR_HOST", "")
	s, err := store.Open(t.Context(), "firestore://"+project+"/apps/a1/memory?emulator_host="+host, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Driver().(*firestore.Driver)
	if got := d.Collection().Path; got != "projects/"+project+"/databases/(default)/documents/apps/a1/memory" {
		t.Errorf("collection %q", got)
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/main/a.md", Content: "by URL"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.GetFile(t.Context(), "u/main/a.md"); err == nil {
		t.Error("the client still works after Close")
	}

	t.Setenv("FIRESTORE_EMULATOR_HOST", host)
	s, err = store.Open(t.Context(), "firestore://"+project+"/apps/a1/memory?database=(default)", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if f, err := s.Read(t.Context(), "u/main/a.md", 100); err != nil || f.Content != "by URL" {
		t.Fatalf("read = %+v, %v", f, err)
	}
}

func TestOpenURLRefusesBadURLs(t *testing.T) {
	for _, u := range []string{
		"firestore://project",
		"firestore:///collection",
		"firestore://project/",
		"firestore://user:pw@project/c",
		"firestore://project/c?emulatorhost=x",
		"firestore://project/c?emulator_host=http://localhost:8080",
	} {
		if _, err := store.Open(t.Context(), u, nil); !errors.Is(err, store.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want store.ErrInvalidURL", u, err)
		}
	}
}

// TestNewArgumentErrors checks that New refuses a nil context, a nil
// client and an empty or malformed collection with errors, before any
// I/O; the missing ones wrap store.ErrNilArgument.
func TestNewArgumentErrors(t *testing.T) {
	if _, err := firestore.New(t.Context(), nil, "c", nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("New(nil client) = %v, want store.ErrNilArgument", err)
	}
	c, err := gcfirestore.NewClient(t.Context(), "demo-offline", option.WithEndpoint("127.0.0.1:1"), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var noCtx context.Context // nil: the case under test
	if _, err := firestore.New(noCtx, c, "c", nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("New(nil ctx) = %v, want store.ErrNilArgument", err)
	}
	if _, err := firestore.New(t.Context(), c, "", nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("New(collection \"\") = %v, want store.ErrNilArgument", err)
	}
	for _, coll := range []string{"a/b", "__reserved__"} {
		if _, err := firestore.New(t.Context(), c, coll, nil); err == nil || errors.Is(err, store.ErrNilArgument) {
			t.Errorf("New(collection %q) = %v, want an error that is not store.ErrNilArgument", coll, err)
		}
	}
}
