package anthropic

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// faultCommands are the mutating commands swept by TestFaultsExactlyOnce.
var faultCommands = []struct {
	name string
	cmd  Command
}{
	{"create", Command{Command: "create", Path: "/memories/new.md", FileText: "new\n"}},
	{"str_replace", Command{Command: "str_replace", Path: "/memories/notes.md", OldStr: "beta", NewStr: "BETA"}},
	{"insert", Command{Command: "insert", Path: "/memories/notes.md", InsertLine: 2, InsertText: "inserted"}},
	{"delete_file", Command{Command: "delete", Path: "/memories/notes.md"}},
	{"delete_dir", Command{Command: "delete", Path: "/memories/proj"}},
	{"rename_file", Command{Command: "rename", OldPath: "/memories/notes.md", NewPath: "/memories/archive/notes.md"}},
	{"rename_dir", Command{Command: "rename", OldPath: "/memories/proj", NewPath: "/memories/old"}},
}

// faultSeed is the memory every fault scenario starts from.
var faultSeed = map[string]string{
	"/memories/notes.md":          "alpha\nbeta\ngamma\n",
	"/memories/proj/plan.md":      "step one\n",
	"/memories/proj/deep/more.md": "deeper\n",
}

// TestFaultsExactlyOnce fails each backend call of each mutating command in
// turn (before it applies, after it applies with the reply lost, and as a
// crash before or after it), then replays the call on a fresh store: the
// replay returns the clean run's result and leaves the clean run's files,
// with and without the driver's atomic fast path.
func TestFaultsExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name string
		wrap func(driver.Driver) driver.Driver
	}{
		{"full", func(d driver.Driver) driver.Driver { return d }},
		{"primitives", contract.Primitives},
	} {
		for _, fc := range faultCommands {
			t.Run(mode.name+"/"+fc.name, func(t *testing.T) {
				t.Parallel()
				fresh := func() driver.Driver {
					d := mode.wrap(newMemDriver(t))
					seedStore(t, newTool(t, store.New(keepOpen{d}, nil)), "alice", faultSeed)
					return d
				}
				// The clean run: its result, files and number of calls.
				d := fresh()
				c := contract.NewCounter(keepOpen{d})
				want := exec(t, newTool(t, store.New(c, nil)), "alice", "toolu_1", fc.cmd)
				n := c.Total()
				if want.IsError {
					t.Fatalf("clean run refused: %s", want.Text)
				}
				wantFiles := dump(files(t, store.New(keepOpen{d}, nil), "alice/"))
				for _, fm := range []contract.FaultMode{contract.FailBefore, contract.ReplyLost, contract.Crash, contract.CrashAfter} {
					for k := 1; k <= n; k++ {
						t.Run(fmt.Sprintf("%s/k%d", fm, k), func(t *testing.T) {
							d := fresh()
							clk := &contract.Clock{}
							opts := &store.Options{PendingTimeout: contract.PendingTimeout, Now: clk.Now}
							f := contract.NewFaults(keepOpen{d})
							f.Inject(k, fm)
							r1, err1 := newTool(t, store.New(f, opts)).Execute(t.Context(), "alice", "toolu_1", fc.cmd)
							switch {
							case err1 != nil && !errors.Is(err1, contract.ErrInjected):
								t.Fatalf("faulty run: %v (calls %v)", err1, f.Calls())
							case err1 == nil && r1 != want:
								t.Fatalf("faulty run = %+v, want %+v", r1, want)
							}
							clk.Advance(2 * contract.PendingTimeout) // the dead attempt's lease runs out
							s := store.New(keepOpen{d}, opts)
							r2, err := newTool(t, s).Execute(t.Context(), "alice", "toolu_1", fc.cmd)
							if err != nil {
								t.Fatalf("replay: %v (faulty run %+v, %v; calls %v)", err, r1, err1, f.Calls())
							}
							if r2 != want {
								t.Fatalf("replay = %+v, want %+v (faulty run %v; calls %v)", r2, want, err1, f.Calls())
							}
							if got := dump(files(t, s, "alice/")); got != wantFiles {
								t.Fatalf("files after replay:\n%s\nwant\n%s(faulty run %v; calls %v)", got, wantFiles, err1, f.Calls())
							}
							// A second replay changes nothing either.
							if r3 := exec(t, newTool(t, s), "alice", "toolu_1", fc.cmd); r3 != want {
								t.Fatalf("second replay = %+v", r3)
							}
							if got := dump(files(t, s, "alice/")); got != wantFiles {
								t.Fatalf("files after second replay:\n%s", got)
							}
						})
					}
				}
			})
		}
	}
}
