package mcp_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// countingDriver counts file reads.
type countingDriver struct {
	driver.Driver
	gets atomic.Int64
}

func (d *countingDriver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	d.gets.Add(1)
	return d.Driver.GetFile(ctx, path)
}

// nextNote waits for a notification, failing after timeout.
func nextNote(t *testing.T, notes <-chan string, timeout time.Duration) string {
	t.Helper()
	select {
	case uri := <-notes:
		return uri
	case <-time.After(timeout):
		t.Fatal("no notification")
		return ""
	}
}

func noNote(t *testing.T, notes <-chan string, wait time.Duration) {
	t.Helper()
	select {
	case uri := <-notes:
		t.Fatalf("unexpected notification %s", uri)
	case <-time.After(wait):
	}
}

func TestSubscribersHearChangesMadeElsewhere(t *testing.T) {
	d := &countingDriver{Driver: newMemDriver(t)}
	st := store.New(d, nil)
	memA, err := memory.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	memB, err := memory.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	const interval = 20 * time.Millisecond
	serverA := newServer(t, memA, &agentmemmcp.Options{Namespace: sessionUser, PollInterval: interval})
	serverB := newServer(t, memB, &agentmemmcp.Options{Namespace: sessionUser, PollInterval: -1})
	notes := make(chan string, 16)
	alice := connectAs(t, serverA, "alice", "2025-11-25", &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcpsdk.ResourceUpdatedNotificationRequest) {
			notes <- req.Params.URI
		},
	})
	for _, uri := range []string{"memory:///MEMORY.md", agentmemmcp.SnapshotURI, "memory:///travel.md"} {
		if err := alice.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	other := connectAs(t, serverB, "alice", "", nil)
	bob := connectAs(t, serverB, "bob", "", nil)

	// Bob's changes on the other server are not alice's.
	write(t, bob, "MEMORY.md", "- bob")
	noNote(t, notes, 10*interval)

	// Alice's change through the other server: MEMORY.md and the snapshot.
	write(t, other, "MEMORY.md", "- from server B")
	got := map[string]bool{nextNote(t, notes, 5*time.Second): true, nextNote(t, notes, 5*time.Second): true}
	if !got["memory:///MEMORY.md"] || !got[agentmemmcp.SnapshotURI] {
		t.Fatalf("notifications %v, want MEMORY.md and the snapshot", got)
	}
	noNote(t, notes, 10*interval) // once per change

	// A direct store write (a background job), to a file created meanwhile.
	if _, err := memory.Append(t.Context(), st, readPath(t, memA, "alice", "travel.md"), "- direct", nil); err != nil {
		t.Fatal(err)
	}
	got = map[string]bool{nextNote(t, notes, 5*time.Second): true, nextNote(t, notes, 5*time.Second): true}
	if !got["memory:///travel.md"] || !got[agentmemmcp.SnapshotURI] {
		t.Fatalf("notifications %v, want travel.md and the snapshot", got)
	}

	// A change through this server notifies once, not again at the next
	// poll.
	write(t, alice, "MEMORY.md", "- through server A")
	got = map[string]bool{nextNote(t, notes, 5*time.Second): true, nextNote(t, notes, 5*time.Second): true}
	if !got["memory:///MEMORY.md"] || !got[agentmemmcp.SnapshotURI] {
		t.Fatalf("notifications %v, want MEMORY.md and the snapshot", got)
	}
	noNote(t, notes, 10*interval)

	// With nobody subscribed, polling stops: no more reads.
	for _, uri := range []string{"memory:///MEMORY.md", agentmemmcp.SnapshotURI, "memory:///travel.md"} {
		if err := alice.Unsubscribe(t.Context(), &mcpsdk.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * interval)
	before := d.gets.Load()
	time.Sleep(10 * interval)
	if after := d.gets.Load(); after != before {
		t.Fatalf("%d reads after every subscription ended", after-before)
	}
}

// readPath returns the store path of a file of user's notebook.
func readPath(t *testing.T, mem *memory.Memory, user, file string) string {
	t.Helper()
	scope, err := mem.Scope(t.Context(), memory.Invocation{Namespace: memory.EscapeNamespace(user)})
	if err != nil {
		t.Fatal(err)
	}
	return scope + "/" + file
}

// hangingReads is a driver whose reads, once armed, block until their
// context is done, telling began and canceled.
type hangingReads struct {
	driver.Driver
	reads    atomic.Int64 // reads answered
	armed    atomic.Bool
	began    chan struct{}
	canceled chan struct{}
}

func (d *hangingReads) GetFile(ctx context.Context, path string) (*driver.File, error) {
	if d.armed.Load() {
		select {
		case d.began <- struct{}{}:
		default:
		}
		<-ctx.Done()
		select {
		case d.canceled <- struct{}{}:
		default:
		}
		return nil, ctx.Err()
	}
	defer d.reads.Add(1)
	return d.Driver.GetFile(ctx, path)
}

// TestShutdownStopsThePollers: Shutdown stops the pollers of subscribed
// resources too, within its deadline: a poll whose read hangs is canceled
// when the deadline passes and Shutdown returns its error (before, pollers
// outlived Shutdown, under a context nothing could cancel).
func TestShutdownStopsThePollers(t *testing.T) {
	d := &hangingReads{Driver: newMemDriver(t), began: make(chan struct{}, 1), canceled: make(chan struct{}, 1)}
	mem, err := memory.New(store.New(d, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, mem, &agentmemmcp.Options{Namespace: sessionUser, PollInterval: 10 * time.Millisecond})
	alice := connectAs(t, srv, "alice", "", nil)
	if err := alice.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: "memory:///MEMORY.md"}); err != nil {
		t.Fatal(err)
	}
	// Past the subscription's own read and a few polls: the next read is
	// a poll's.
	for d.reads.Load() < 4 {
		time.Sleep(time.Millisecond)
	}
	d.armed.Store(true)
	select {
	case <-d.began:
	case <-time.After(10 * time.Second):
		t.Fatal("no poll read after 10 s")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	select {
	case err := <-shut:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want context.DeadlineExceeded (a poll was in flight)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown has not returned after 10 s")
	}
	select {
	case <-d.canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("the poll in flight was not canceled after 10 s")
	}
}
