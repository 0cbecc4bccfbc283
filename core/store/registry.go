// The registries of names a store URL may use: one generic type for the
// URL schemes (Register) and the embedders (RegisterEmbedder).

package store

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// registry holds openers by name, each registered once, from an init
// function, by the package a blank import adds. It is safe for concurrent
// use.
type registry[T any] struct {
	fn       string            // the registering function, for its panics
	what     string            // what a name names, for its panics: "scheme", "embedder"
	reserved string            // a name nothing may register ("" for none)
	known    map[string]string // agentmem's own names → the package that registers each
	mu       sync.RWMutex
	openers  map[string]T
}

// add registers open, of which isNil says whether it is nil, under name
// (lower-cased). Like sql.Register it panics on a name that is empty, not
// a valid URL scheme or reserved, on a nil opener and on a name registered
// already: each a programming error found when the program starts.
func (r *registry[T]) add(name string, open T, isNil bool) {
	n := strings.ToLower(name)
	if !validScheme(n) || n == r.reserved {
		panic(fmt.Sprintf("store: %s of invalid %s %q", r.fn, r.what, name))
	}
	if isNil {
		panic(fmt.Sprintf("store: %s of %s %q with a nil opener", r.fn, r.what, name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.openers[n]; dup {
		panic(fmt.Sprintf("store: %s called twice for %s %q", r.fn, r.what, n))
	}
	if r.openers == nil {
		r.openers = map[string]T{}
	}
	r.openers[n] = open
}

// get returns the opener of name (already lower-cased).
func (r *registry[T]) get(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	open, ok := r.openers[name]
	return open, ok
}

// names returns the registered names, sorted.
func (r *registry[T]) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.openers))
	for n := range r.openers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// missing describes an unregistered name for an error: the import that
// adds it when it is one of agentmem's own (pkg, ok), and the registered
// names ("none" when there are none).
func (r *registry[T]) missing(name string) (pkg string, ok bool, registered string) {
	registered = strings.Join(r.names(), ", ")
	if registered == "" {
		registered = "none"
	}
	pkg, ok = r.known[name]
	return pkg, ok, registered
}
