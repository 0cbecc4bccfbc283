package contract

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// lookAlike is a metadata key as long as the store-owned key k that the
// store does not own: the "off" side's rows are as large as the "on"
// side's, so the ratio is the check's, not the bytes'.
func lookAlike(k string) string { return strings.Replace(k, ":", ".", 1) }

// lifetimeBenchFiles is how many files the folder of BenchLifetime holds.
const lifetimeBenchFiles = 200

// BenchLifetime measures what a file's lifetime (issue 39) costs the reads
// that check it, as one sub-benchmark per read ("read", "list",
// "snapshot") in full mode. Two stores, each over a fresh driver, hold a
// folder of 200 short files: "on", every file expiring in a year and one
// in ten pinned instead (the check reads, parses and compares every one),
// and "off", the same rows with no expiry or pin, their metadata as large
// (a key of the same length the store does not own, "agentmem.expires"),
// so that only the check differs.
// Each iteration makes the read on both, alternately (off first on even
// iterations, on first on odd ones), so both see the same machine; it
// reports calls-off/op and calls-on/op (backend calls a [Counter] sees),
// ns-off/op, ns-on/op and vs-off, their ratio, and pair-median, the median
// over the iterations of each pair's on ÷ off (a pause of the runtime or
// the machine moves a total more than it moves the median). The
// lifetime rides in the same request as the path, so the calls are the
// same; the driver's share (reading two metadata keys with each listed
// path) is in both sides. newDriver returns a fresh, empty driver for each
// store; the benchmark closes it.
func BenchLifetime(b *testing.B, newDriver func(b *testing.B) driver.Driver) {
	type side struct {
		c       *Counter
		s       *store.Store
		elapsed time.Duration
	}
	const folder = "bench/main/"
	open := func(on bool) *side {
		raw := newDriver(b)
		sd := &side{c: NewCounter(raw)}
		sd.s = store.New(sd.c, nil)
		b.Cleanup(func() { _ = sd.s.Close(); _ = raw.Close() })
		year := time.Now().Add(365 * 24 * time.Hour)
		for i := range lifetimeBenchFiles {
			r := store.WriteRequest{Path: fmt.Sprintf("%snote-%03d.md", folder, i), Content: fmt.Sprintf("- note %d of the bench folder\n", i),
				Metadata: map[string]string{"updated_by": "bench"}}
			switch {
			case on && i%10 == 0:
				r.Pinned = true
			case on:
				r.ExpiresAt = year
			case i%10 == 0:
				r.Metadata[lookAlike(driver.PinnedKey)] = "true"
			default:
				r.Metadata[lookAlike(driver.ExpiresKey)] = driver.FormatExpiry(year)
			}
			if _, err := sd.s.Write(b.Context(), r); err != nil {
				b.Fatal(err)
			}
		}
		return sd
	}
	off, on := open(false), open(true)
	reads := []struct {
		name string
		do   func(s *store.Store) error
	}{
		{"read", func(s *store.Store) error {
			_, err := s.Read(b.Context(), folder+"note-007.md", 4000)
			return err
		}},
		{"list", func(s *store.Store) error {
			paths, err := s.ListPaths(b.Context(), folder, 500)
			if err == nil && len(paths) != lifetimeBenchFiles {
				err = fmt.Errorf("listed %d of %d files", len(paths), lifetimeBenchFiles)
			}
			return err
		}},
		{"snapshot", func(s *store.Store) error {
			_, err := s.ReadAndList(b.Context(), store.ReadAndListRequest{Path: folder + "MEMORY.md", MaxChars: 4000, Prefix: folder, Limit: 500})
			return err
		}},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) {
			for _, sd := range []*side{off, on} {
				sd.c.Reset()
				sd.elapsed = 0
			}
			pairs := make([]float64, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				order := []*side{off, on}
				if i%2 == 1 {
					order = []*side{on, off}
				}
				var took [2]time.Duration
				for j, sd := range order {
					began := time.Now()
					err := r.do(sd.s)
					took[j] = time.Since(began)
					sd.elapsed += took[j]
					if err != nil {
						b.Fatal(err)
					}
				}
				if order[0] == on {
					took[0], took[1] = took[1], took[0]
				}
				pairs = append(pairs, float64(took[1])/float64(max(took[0], 1)))
			}
			b.StopTimer()
			reportOffOn(b, off.c, on.c, off.elapsed, on.elapsed)
			slices.Sort(pairs)
			b.ReportMetric(pairs[len(pairs)/2], "pair-median")
		})
	}
}
