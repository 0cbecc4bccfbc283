// Path collisions: a create is refused when a file and a folder would share a
// path (checkCollision, on every write path).

package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
)

// checkCollision refuses with ErrPathCollision a create of path that would
// make a file and a folder share a name: a proper ancestor of path is a
// file ("p/x.md" for "p/x.md/y.md"), or a file lies below path. Tombstones
// are not files, and neither are files that have expired: their expiry is
// recorded (a delete by ExpiryUpdatedBy) and they block nothing. It costs
// one batched read of the ancestors (one GetFile each without
// [driver.BatchGetter]; none for a top-level path) and one listing of
// path+"/" (more pages only past tombstones and expired files).
//
// The check and the create are separate requests: on a backend that can
// hold both, a concurrent create of the file and of the folder may both
// pass it. A driver that can check atomically refuses the create itself.
func (s *Store) checkCollision(ctx context.Context, path string) error {
	if anc := ancestors(path); len(anc) > 0 {
		files, err := s.getFiles(ctx, anc)
		if err != nil {
			return err
		}
		for _, a := range anc {
			f := files[a]
			if f == nil || f.Tombstone {
				continue
			}
			if s.expired(driver.LifetimeOf(f.Metadata)) {
				if err := s.expire(ctx, f); err != nil { // due: recorded, then gone
					return err
				}
				continue
			}
			return collisionError(path, fmt.Sprintf("%q is a file", a))
		}
	}
	// Below: the first file; one that has expired is recorded as expired
	// and the listing goes on.
	var blocker string
	var err error
	werr := s.walkRows(ctx, path+"/", "", collisionPage, true, func(e driver.Entry) bool {
		if !s.expired(e.Lifetime) {
			blocker = e.Path
			return false
		}
		_, err = s.expireAt(ctx, e.Path)
		return err == nil
	})
	switch {
	case werr != nil:
		return werr
	case err != nil:
		return err
	case blocker != "":
		return collisionError(path, fmt.Sprintf("%q is a folder holding %q", path, blocker))
	}
	return nil
}

// collisionPage is the page of checkCollision's listing below a path.
const collisionPage = 8

// ancestors returns the proper ancestor paths of path, shallowest first:
// "a" and "a/b" for "a/b/c.md".
func ancestors(path string) []string {
	var out []string
	for i := strings.IndexByte(path, '/'); i >= 0; {
		out = append(out, path[:i])
		j := strings.IndexByte(path[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return out
}

// collisionError reports a refused create: ErrPathCollision, saying why.
func collisionError(path, why string) error {
	return &detailed{
		msg:  fmt.Sprintf("agentmem: cannot create %q: %s (a file and a folder cannot share a path)", path, why),
		errs: []error{ErrPathCollision},
	}
}
