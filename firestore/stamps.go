package firestore

import (
	"time"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

// defaultStamps bounds the driver's memory of file update times.
const defaultStamps = 4096

// stamp is what the driver last saw of a file row: its store version and
// the document's update time in that state.
type stamp struct {
	version string
	at      time.Time
}

// stamps remembers, per path, the update time of the last version the
// driver read or wrote, so that Mutate can write with an update-time
// precondition instead of reading inside a transaction. An entry is only
// a hint: a write conditioned on a stale one fails its precondition and
// writes nothing, and the transaction then decides. When full it forgets
// an arbitrary entry.
type stamps struct{ h *driver.Hints[string, stamp] }

func newStamps(n int) *stamps { return &stamps{driver.NewHints[string, stamp](n)} }

// at returns the update time of path at version, if known.
func (s *stamps) at(path, version string) (time.Time, bool) {
	st, ok := s.h.Get(path)
	if !ok || st.version != version || st.at.IsZero() {
		return time.Time{}, false
	}
	return st.at, true
}

func (s *stamps) put(path, version string, at time.Time) {
	if !at.IsZero() {
		s.h.Put(path, stamp{version: version, at: at})
	}
}

func (s *stamps) drop(path string) { s.h.Drop(path) }

// saw remembers the update time of a file row the driver read.
func (d *Driver) saw(f *driver.File, s *firestore.DocumentSnapshot) {
	if d.seen != nil && !f.Tombstone {
		d.seen.put(f.Path, f.Version, s.UpdateTime)
	}
}

// forget drops what the driver remembers of path.
func (d *Driver) forget(path string) {
	if d.seen != nil {
		d.seen.drop(path)
	}
}
