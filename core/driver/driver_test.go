package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPrefixEnd(t *testing.T) {
	for in, want := range map[string]string{
		"a/": "a0", "tenant": "tenanu", "é": "ê", "a\U0010FFFF": "b", "\U0010FFFF": "", "": "", "a\uD7FF": "a\uE000",
	} {
		got, ok := PrefixEnd(in)
		if got != want || ok != (want != "") {
			t.Errorf("PrefixEnd(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestCutRunes(t *testing.T) {
	if got, cut := CutRunes("héllo", 2); got != "hé" || !cut {
		t.Fatalf("CutRunes = %q, %v", got, cut)
	}
}

// TestPrefixEndBoundsThePrefix checks that [p, PrefixEnd(p)) holds exactly
// the strings that start with p, in byte order, over path characters.
func TestPrefixEndBoundsThePrefix(t *testing.T) {
	alphabet := "-./09AZ_az"
	var all []string
	for _, a := range alphabet {
		for _, b := range alphabet {
			all = append(all, "t"+string(a), "t"+string(a)+string(b))
		}
	}
	for _, p := range []string{"t", "t/", "t-", "tz", "t_", "t9"} {
		end, ok := PrefixEnd(p)
		if !ok {
			t.Fatalf("PrefixEnd(%q) has no bound", p)
		}
		for _, s := range all {
			if in := s >= p && s < end; in != strings.HasPrefix(s, p) {
				t.Fatalf("prefix %q, bound %q: %q in range = %v", p, end, s, in)
			}
		}
	}
}

// fakeDriver has the nine primitives (unused here) and, by embedding,
// whatever optional interfaces a test gives it.
type fakeDriver struct{ Driver }

type checker struct {
	fakeDriver
	checks bool
}

func (c checker) ChecksCollisions() bool { return c.checks }

type mutatingChecker struct{ checker }

func (mutatingChecker) Mutate(context.Context, MutateParams) (MutateResult, error) {
	return MutateResult{}, nil
}

type reporting struct {
	mutatingChecker
	caps Capabilities
}

func (r reporting) DriverCapabilities() Capabilities { return r.caps }

// TestCapabilitiesOfCollisionChecker: a collision check counts only on a
// Mutator that reports true, and a CapabilityReporter can take it away.
func TestCapabilitiesOfCollisionChecker(t *testing.T) {
	for _, c := range []struct {
		name string
		d    Driver
		want bool
	}{
		{"no Mutator", checker{checks: true}, false},
		{"Mutator reporting false", mutatingChecker{checker{checks: false}}, false},
		{"Mutator reporting true", mutatingChecker{checker{checks: true}}, true},
		{"reporter without it", reporting{mutatingChecker{checker{checks: true}}, Capabilities{AtomicMutation: true}}, false},
		{"reporter without the Mutator", reporting{mutatingChecker{checker{checks: true}}, Capabilities{AtomicCollision: true}}, false},
		{"reporter with both", reporting{mutatingChecker{checker{checks: true}}, Capabilities{AtomicMutation: true, AtomicCollision: true}}, true},
	} {
		if got := CapabilitiesOf(c.d).AtomicCollision; got != c.want {
			t.Errorf("%s: AtomicCollision = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPruneBatches(t *testing.T) {
	left := []int{10, 4} // rows to remove per kind
	var calls []int
	batch := func(k int) func(context.Context) (int, error) {
		return func(context.Context) (int, error) {
			n := min(3, left[k])
			left[k] -= n
			calls = append(calls, n)
			return n, nil
		}
	}
	n, err := PruneBatches(t.Context(), 3, batch(0), batch(1))
	if err != nil || n != 14 || fmt.Sprint(calls) != "[3 3 3 1 3 1]" {
		t.Fatalf("PruneBatches = %d, %v; batches %v", n, err, calls)
	}
	boom := errors.New("boom")
	n, err = PruneBatches(t.Context(), 3, func(context.Context) (int, error) { return 2, boom })
	if n != 2 || !errors.Is(err, boom) {
		t.Fatalf("failing batch: %d, %v", n, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := PruneBatches(ctx, 3, batch(0)); !errors.Is(err, context.Canceled) {
		t.Fatalf("done context: %v", err)
	}
}

// TestHints: a Hints never holds more than its bound and forgets on Drop.
func TestHints(t *testing.T) {
	h := NewHints[string, int](2)
	h.Put("a", 1)
	h.Put("b", 2)
	h.Put("a", 3) // an update, not a new entry: nothing is forgotten
	if v, ok := h.Get("a"); !ok || v != 3 {
		t.Fatalf("a = %d, %v", v, ok)
	}
	if _, ok := h.Get("b"); !ok {
		t.Fatal("b was forgotten by an update of a")
	}
	h.Put("c", 4)
	n := 0
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := h.Get(k); ok {
			n++
		}
	}
	if _, ok := h.Get("c"); !ok || n != 2 {
		t.Fatalf("after a third key: c kept %v, %d entries", ok, n)
	}
	h.Drop("c")
	if _, ok := h.Get("c"); ok {
		t.Fatal("c still there after Drop")
	}
}

// namedChecker is a driver with a backend name (Namer).
type namedChecker struct{ checker }

func (namedChecker) Name() string { return "engine" }

// unnamedChecker is a Namer that gives no name.
type unnamedChecker struct{ checker }

func (unnamedChecker) Name() string { return "" }

func TestName(t *testing.T) {
	for _, c := range []struct {
		d    Driver
		want string
	}{
		{namedChecker{}, "engine"},
		{checker{}, "driver.checker"},                  // no Namer: the type
		{&mutatingChecker{}, "driver.mutatingChecker"}, // without its pointer
		{unnamedChecker{}, "driver.unnamedChecker"},    // an empty name: the type
		{nil, ""},
	} {
		if got := Name(c.d); got != c.want {
			t.Errorf("Name(%T) = %q, want %q", c.d, got, c.want)
		}
	}
}
