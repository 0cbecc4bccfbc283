// Recency: a search that weighs recent files more (Request.RecencyHalfLife)
// scales each match's score by a decay on its file's last write, taken from
// the version on the row the search read anyway.

package search

import (
	"context"
	"math"
	"time"

	"github.com/agentmem/agentmem/core/internal/ulid"
)

// RecencyWeight is the most a search with Request.RecencyHalfLife takes
// off a match's score: a file written now keeps its score, one written a
// half-life ago keeps 1 - RecencyWeight/2 of it, a very old one 1 -
// RecencyWeight. So recency decides between matches that words (and
// vectors) rank nearly alike, and never puts a weak match above a strong
// one: a file with 10% more of the score stays above, however old.
const RecencyWeight = 0.1

// recencyFactor is the factor a match's score is multiplied by when its
// file was last written at written (ok false: unknown), now and half-life
// h (> 0): in (1-RecencyWeight, 1], 1 for a write at or after now (a clock
// ahead of ours cannot push a file down, nor an undated one).
func recencyFactor(written time.Time, ok bool, now time.Time, h time.Duration) float64 {
	if !ok || !written.Before(now) {
		return 1
	}
	age := now.Sub(written)
	return 1 - RecencyWeight*(1-math.Exp2(-float64(age)/float64(h)))
}

// fenceMark is what follows a fence's own time-ordered stem in its
// version (core/store's fenceVersion): the version of the write the row
// still is comes after it.
const fenceMark = "+"

// VersionTime is the time of the last write of a row with version v, the
// time [Request.RecencyHalfLife] weighs: the time its version was made at
// (a version's first 10 characters are its milliseconds), or for a fence
// (which changes nothing a reader sees) that of the write it carries. ok
// is false for a version without a time (a file edited by hand in a file
// store).
func VersionTime(v string) (time.Time, bool) {
	const stem = 26
	if len(v) > stem+len(fenceMark) && v[stem:stem+len(fenceMark)] == fenceMark {
		v = v[stem+len(fenceMark):]
	}
	return ulid.Time(v)
}

// weighRecency applies r.RecencyHalfLife to f's matches and related files
// (nothing when it is not positive): each score scaled by its file's
// [recencyFactor] at the engine's now, rounded to 6 decimals, and the
// hits sorted again. The files are those the search read; none is read
// for this, none is added or dropped.
func (s *Engine) weighRecency(ctx context.Context, r Request, f *found) {
	if r.RecencyHalfLife <= 0 {
		return
	}
	s.fillVersions(ctx, r, f)
	now := s.now()
	for _, hits := range [][]hit{f.hits, f.related} {
		for i := range hits {
			t, ok := VersionTime(hits[i].c.version)
			w := recencyFactor(t, ok, now, r.RecencyHalfLife)
			hits[i].score = max(math.Round(hits[i].score*w*1e6)/1e6, math.SmallestNonzeroFloat64)
		}
		sortHits(hits)
	}
}

// fillVersions reads, in one batched read, the versions of the hits whose
// read returned none (a file store's scope read leaves out the version of
// a file it cut at MaxFileChars), so that an old long file is not weighed
// as written now. A failed read leaves them so, and says so in the log.
func (s *Engine) fillVersions(ctx context.Context, r Request, f *found) {
	var paths []string
	for _, hits := range [][]hit{f.hits, f.related} {
		for _, h := range hits {
			if h.c.version == "" {
				paths = append(paths, h.c.path)
			}
		}
	}
	if len(paths) == 0 {
		return
	}
	rows, err := s.getFiles(ctx, paths)
	if err != nil {
		s.warn(ctx, "reading the versions recency weighs failed; those files count as written now", "", r.Prefix, err)
		return
	}
	for _, hits := range [][]hit{f.hits, f.related} {
		for i := range hits {
			if row := rows[hits[i].c.path]; hits[i].c.version == "" && row != nil && !row.Tombstone {
				hits[i].c.version = row.Version
			}
		}
	}
}
