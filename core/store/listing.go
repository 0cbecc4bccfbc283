// Listings that continue: the cursor of ListPaths and Walk, and the
// namespaces of a store, page by page.

package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// ListOptions continues a listing of [Store.ListPaths] or [Store.Walk].
// Pass at most one; the zero value changes nothing.
type ListOptions struct {
	// After, when not empty, starts the listing strictly after this path
	// in code-point order: pass the last path of a page to list the next
	// one (a cursor). It must be a valid path that starts with the
	// listing's prefix; it need not exist (a file deleted since it was
	// listed is fine).
	After string
}

// listAfter is the After of opts, checked against prefix: ErrInvalidBound
// for more than one ListOptions, ErrInvalidPath for an After that is not
// a valid path under prefix.
func listAfter(prefix string, opts []ListOptions) (string, error) {
	switch {
	case len(opts) == 0:
		return "", nil
	case len(opts) > 1:
		return "", fmt.Errorf("%w: pass at most one ListOptions, got %d", ErrInvalidBound, len(opts))
	}
	after := opts[0].After
	if after == "" {
		return "", nil
	}
	if err := ValidatePath(after); err != nil {
		return "", fmt.Errorf("%w (ListOptions.After must be a listed path)", err)
	}
	if !strings.HasPrefix(after, prefix) {
		return "", fmt.Errorf("%w: ListOptions.After %q must start with the prefix %q: it continues a listing of that prefix", ErrInvalidPath, after, prefix)
	}
	return after, nil
}

// Bounds of [Store.Namespaces].
const (
	// MaxNamespacesLimit bounds NamespacesRequest.Limit: larger requests
	// are cut to it.
	MaxNamespacesLimit = 1000
)

// NamespacesRequest selects a page of [Store.Namespaces].
type NamespacesRequest struct {
	// After is the Next of the previous page (a namespace); "" starts at
	// the first.
	After string
	// Limit bounds the namespaces returned (> 0; more than
	// [MaxNamespacesLimit] is cut to it).
	Limit int
}

// NamespacesPage is one page of [Store.Namespaces].
type NamespacesPage struct {
	// Namespaces are the names, in the order of their paths.
	Namespaces []string
	// Next, when not empty, is the After of the next page; it is empty on
	// the last page.
	Next string
}

// Namespaces lists the namespaces of the store: the first segments of
// the paths that hold at least one file ("alice" for "alice/main/x.md"),
// in the code-point order of those paths ("bob-b" before "bob", as "-"
// sorts before "/"), r.Limit at a time. A path without a "/" is no
// namespace; tombstones and the store's own rows (the search index) do
// not make one. It asks the driver for one namespace at a time and jumps
// past each one's files, so its cost grows with the namespaces listed,
// not with their files.
//
// Like [Store.Walk] it is not a snapshot: a namespace whose files are all
// written or deleted during the listing may be listed or not, but none is
// listed twice or out of order.
//
// It fails with ErrInvalidBound when r.Limit <= 0, ErrInvalidPath when
// r.After is not one valid path segment, ErrNoDriver, ctx's error, or the
// backend's error.
func (s *Store) Namespaces(ctx context.Context, r NamespacesRequest) (page NamespacesPage, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpNamespaces})
	defer func() { o.done(err, false, len(page.Namespaces)) }()
	if err := s.usable(ctx); err != nil {
		return NamespacesPage{}, err
	}
	if r.Limit <= 0 {
		return NamespacesPage{}, fmt.Errorf("%w: limit must be positive, got %d", ErrInvalidBound, r.Limit)
	}
	limit := min(r.Limit, MaxNamespacesLimit)
	after := ""
	if r.After != "" {
		if err := ValidatePath(r.After); err != nil || strings.Contains(r.After, "/") {
			return NamespacesPage{}, fmt.Errorf("%w: NamespacesRequest.After %q must be a namespace (one path segment), the Next of a page", ErrInvalidPath, r.After)
		}
		after = r.After + "/~" // past every path of the namespace (see driver.ListParams.After)
	}
	page.Namespaces = []string{}
	for {
		ns, next, err := s.nextNamespace(ctx, after)
		if err != nil {
			return NamespacesPage{}, err
		}
		if ns == "" {
			return page, nil
		}
		if len(page.Namespaces) == limit {
			page.Next = page.Namespaces[limit-1]
			return page, nil
		}
		page.Namespaces = append(page.Namespaces, ns)
		after = next
	}
}

// nextNamespace finds the first namespace with a file after the string
// after, and the After that skips past it; "" when there is none. Its
// pages start at one entry (the first path is a file of the next
// namespace, as a rule) and double while they find only tombstones,
// expired files, top-level files and reserved rows.
func (s *Store) nextNamespace(ctx context.Context, after string) (ns, next string, err error) {
	size := 1
	for {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		entries, err := s.d.ListFiles(ctx, driver.ListParams{After: after, Limit: size})
		if err != nil {
			return "", "", err
		}
		last := after
		for _, e := range entries {
			if e.Path <= after {
				continue // never backwards, whatever the driver does
			}
			after = e.Path
			if end, ok := rowpath.ReservedAt(e.Path); ok {
				after = end // the store's derived rows are never files
				continue
			}
			first, _, nested := strings.Cut(e.Path, "/")
			if nested && !e.Tombstone && !s.expired(e.Lifetime) {
				return first, pastFolder(e.Path, ""), nil
			}
		}
		if len(entries) < size {
			return "", "", nil
		}
		if after == last {
			return "", "", fmt.Errorf("agentmem: the driver returned a full page of paths none of which is after %q: fix its ListFiles", after)
		}
		size = min(2*size, DefaultWalkPageSize)
	}
}
