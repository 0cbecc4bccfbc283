package store

import (
	"testing"
	"time"
)

func TestNewVersion(t *testing.T) {
	now := time.Now()
	seen := map[string]bool{}
	prev := ""
	for i := 0; i < 10000; i++ {
		v := newVersion(now.Add(time.Duration(i)*time.Millisecond), "")
		if len(v) != 26 || seen[v] {
			t.Fatalf("version %q (len %d, seen %v)", v, len(v), seen[v])
		}
		if v <= prev {
			t.Fatalf("versions of later milliseconds sort later: %q after %q", v, prev)
		}
		seen[v], prev = true, v
	}
	v := newVersion(now, "run/op~1")
	if got := versionOperation(v); got != "run/op~1" {
		t.Fatalf("versionOperation = %q", got)
	}
	if got := versionOperation(prev); got != "" {
		t.Fatalf("plain version names operation %q", got)
	}
}

func TestCutRunes(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
		cut  bool
	}{{"héllo", 2, "hé", true}, {"héllo", 5, "héllo", false}, {"😀😀", 1, "😀", true}, {"", 3, "", false}, {"abc", 0, "", true}} {
		got, cut := cutRunes(c.in, c.n)
		if got != c.want || cut != c.cut {
			t.Errorf("cutRunes(%q, %d) = %q, %v", c.in, c.n, got, cut)
		}
	}
}

func TestFenceVersionKeepsOrigin(t *testing.T) {
	now := time.Now()
	v0 := newVersion(now, "run/op+1~x") // an operation id may hold both markers
	f1 := fenceVersion(now, v0)
	f2 := fenceVersion(now, f1)
	if !refenced(f1, v0) || !refenced(f2, v0) || !refenced(f2, f1) {
		t.Fatalf("fences %q, %q of %q lost their origin", f1, f2, v0)
	}
	if versionOperation(f1) != "" || f1 == v0 || f2 == f1 {
		t.Fatalf("fence versions %q, %q of %q", f1, f2, v0)
	}
	if refenced(newVersion(now, ""), v0) || refenced(fenceVersion(now, "ext-ab"), v0) || refenced("", "") {
		t.Fatal("unrelated versions share an origin")
	}
	if !refenced(fenceVersion(now, "ext-ab"), "ext-ab") {
		t.Fatal("a fence of an external edit lost its origin")
	}
}

// TestNewVersionMonotonic checks that versions generated in a row
// increase strictly, within one millisecond and when the clock steps back.
func TestNewVersionMonotonic(t *testing.T) {
	now := time.Now()
	times := []time.Time{now, now, now, now.Add(-time.Hour), now.Add(time.Millisecond), now}
	prev := ""
	for i, at := range times {
		v := newVersion(at, "")
		if len(v) != 26 || v <= prev {
			t.Fatalf("version %d at %v = %q, not after %q", i, at, v, prev)
		}
		prev = v
	}
}

// TestUnfenced checks that a fence carries the whole version it fences,
// operation included, and that fences of fences do not nest.
func TestUnfenced(t *testing.T) {
	now := time.Now()
	for _, v := range []string{newVersion(now, ""), newVersion(now, "op+1~x")} {
		f1 := fenceVersion(now, v)
		f2 := fenceVersion(now, f1)
		if !isFence(f1) || !isFence(f2) || isFence(v) {
			t.Fatalf("isFence(%q, %q, %q) wrong", v, f1, f2)
		}
		if unfenced(f1) != v || unfenced(f2) != v || unfenced(v) != v {
			t.Fatalf("unfenced(%q) = %q, unfenced(%q) = %q, want %q", f1, unfenced(f1), f2, unfenced(f2), v)
		}
		if origin(f2) != origin(v) || !refenced(f2, v) {
			t.Fatalf("origin(%q) = %q, want %q", f2, origin(f2), origin(v))
		}
	}
}
