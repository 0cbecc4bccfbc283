package pruned

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/store"
)

func TestAppendQueue(t *testing.T) {
	m, s := newMem(t, nil)
	const path = "kamal/main/pruned.md"
	q := mustQueue(t, m, &QueueOptions{Size: 1}) // a full queue makes Add wait
	for _, e := range []struct{ text, op string }{{"one", "a"}, {"two", "b"}, {"one", "a"}, {"three", "c"}} {
		if err := q.Add(t.Context(), path, e.text, e.op); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, path); got != "one\ntwo\nthree\n" {
		t.Fatalf("after the run: %q", got)
	}
	// A new queue (a restart) replays: the store's receipts answer.
	q2 := mustQueue(t, m, nil)
	for _, e := range []struct{ text, op string }{{"one", "a"}, {"two (rendered anew)", "b"}, {"three", "c"}, {"four", "d"}} {
		if err := q2.Add(t.Context(), path, e.text, e.op); err != nil {
			t.Fatal(err)
		}
	}
	if err := q2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, path); got != "one\ntwo\nthree\nfour\n" {
		t.Fatalf("after the replay: %q", got)
	}
	if err := q2.Add(t.Context(), path, "five", "e"); !errors.Is(err, ErrQueueClosed) {
		t.Fatalf("add after close: %v", err)
	}
	if err := q.Add(t.Context(), path, "five", ""); !errors.Is(err, memory.ErrMissingID) {
		t.Fatalf("add without op: %v", err)
	}
}

func TestAppendQueueErrors(t *testing.T) {
	for _, mode := range []memory.ErrorMode{memory.IgnoreErrors, memory.RaiseErrors} {
		t.Run(string(mode), func(t *testing.T) {
			d := memtest.NewCounting()
			d.FailRead = errors.New("backend down")
			var logs bytes.Buffer
			var mu sync.Mutex
			s := store.New(d, nil)
			m := mustNew(t, s, &memory.Options{InjectionErrors: mode, Logger: slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))})
			var reported []error
			q := mustQueue(t, m, &QueueOptions{OnError: func(_ context.Context, err error) {
				mu.Lock()
				reported = append(reported, err)
				mu.Unlock()
			}})
			if err := q.Add(t.Context(), "kamal/main/pruned.md", "one", "a"); err != nil {
				t.Fatal(err)
			}
			// Wait leaves the failure for Flush (a trigger waits for the
			// appends without taking the next request's error).
			if err := q.Wait(t.Context()); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			flushErr := q.Flush(t.Context())
			mu.Lock()
			defer mu.Unlock()
			if len(reported) != 1 || !errors.Is(reported[0], d.FailRead) {
				t.Fatalf("OnError got %v", reported)
			}
			switch mode {
			case memory.IgnoreErrors:
				if flushErr != nil || !bytes.Contains(logs.Bytes(), []byte("backend down")) {
					t.Fatalf("flush %v, logs %q", flushErr, logs.String())
				}
			case memory.RaiseErrors:
				if !errors.Is(flushErr, d.FailRead) || logs.Len() != 0 || q.Err() != nil {
					t.Fatalf("flush %v, logs %q", flushErr, logs.String())
				}
			}
			// The failed operation is forgotten: adding it again retries it.
			d.SetFailRead(nil)
			mu.Unlock()
			if err := q.Add(t.Context(), "kamal/main/pruned.md", "one", "a"); err != nil {
				t.Fatal(err)
			}
			if err := q.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if got := memtest.Content(t, s, "kamal/main/pruned.md"); got != "one\n" {
				t.Fatalf("retried: %q", got)
			}
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestAppendQueueCloseWaitsForAdds: an Add let in before Close (past the
// closed check, not yet queued) is queued and appended before Close
// returns, never after it.
func TestAppendQueueCloseWaitsForAdds(t *testing.T) {
	m, s := newMem(t, nil)
	const path = "kamal/main/pruned.md"
	q := mustQueue(t, m, nil)
	inGap, proceed := make(chan struct{}), make(chan struct{})
	admitted = func() { close(inGap); <-proceed }
	t.Cleanup(func() { admitted = nil })
	added := make(chan error, 1)
	go func() { added <- q.Add(t.Context(), path, "one", "a") }()
	<-inGap
	closed := make(chan error, 1)
	go func() { closed <- q.Close(t.Context()) }()
	waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.closed })
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while an Add it let in was not queued yet", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(proceed)
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, path); got != "one\n" {
		t.Fatalf("after Close: %q", got)
	}
}

// waitFor polls cond until it holds (10 s at most).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
	}
}
