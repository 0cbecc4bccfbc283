package pruned

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/internal/canon"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

// consolidationState is the state file's content.
type consolidationState struct {
	// Epoch is random, drawn when the state file is created, so that a
	// notebook erased and started over never reuses operation ids.
	Epoch      string       `json:"epoch"`
	Checkpoint Checkpoint   `json:"checkpoint"`
	Pending    *pendingPlan `json:"pending,omitempty"`
}

// pendingPlan is a run's validated edits, stored before the first edit is
// written, so that a rerun applies the same edits under the same
// operations, whatever the model would answer now.
type pendingPlan struct {
	From  Checkpoint    `json:"from"`
	Next  Checkpoint    `json:"next"`
	Round int           `json:"round"`
	Model string        `json:"model"`
	Edits []memory.Edit `json:"edits"`
}

// stateLifetime is the state file's expiry and pin, as last read.
type stateLifetime struct {
	expires time.Time
	pinned  bool
}

// maxStateChars bounds the state file a run reads.
const maxStateChars = 1 << 20

// readState reads the state file: the zero state when absent.
func (c *consolidation) readState(ctx context.Context) (consolidationState, string, error) {
	var st consolidationState
	c.stateLife = stateLifetime{}
	f, err := notes.Read(ctx, c.m.Store(), c.state, maxStateChars)
	if err != nil || f == nil {
		return st, "", err
	}
	c.stateLife = stateLifetime{expires: f.ExpiresAt, pinned: f.Pinned}
	if f.Truncated {
		return st, "", ErrConsolidationState
	}
	dec := json.NewDecoder(strings.NewReader(f.Content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil || st.Epoch == "" {
		return st, "", fmt.Errorf("%w: %v", ErrConsolidationState, err)
	}
	return st, f.Version, nil
}

// writeState writes st over version ver (""= absent) and returns the new
// version. Its operation derives from the scope, the epoch, the plan's
// checkpoint and round, and what it writes, so a replay is answered by
// the store and two runs can never both land a change over one version.
func (c *consolidation) writeState(ctx context.Context, st consolidationState, ver, kind string) (string, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	content := string(b) + "\n"
	fp := canon.Hash(map[string]any{"kind": "consolidate-" + kind, "content": content})
	op := &store.Operation{ID: "consolidate-" + canon.Hash(map[string]any{"scope": c.sc, "epoch": st.Epoch,
		"kind": kind, "state": fp, "over": ver}), Fingerprint: fp}
	model := c.res.Model
	if st.Pending != nil {
		model = st.Pending.Model
	}
	// The state file keeps its expiry and pin (as read) like every file.
	var life stateLifetime
	if ver != "" {
		life = c.stateLife
	}
	mu, err := c.m.Store().Write(ctx, store.WriteRequest{Path: c.state, Content: content, Expected: ver, Operation: op,
		Metadata: c.metadata(model, c.res.RunID, kind), ExpiresAt: life.expires, Pinned: life.pinned})
	if err != nil {
		return "", err
	}
	return mu.Version, nil
}
