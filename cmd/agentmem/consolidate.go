package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/spf13/cobra"

	agentmemanthropic "github.com/agentmem/agentmem/anthropic"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// ModelEnv names the environment variable that gives consolidate's model
// when --model is not set.
const ModelEnv = "AGENTMEM_MODEL"

// metaRequestedBy is the metadata key that records who ran a
// consolidation (--by); updated_by names the consolidator.
const metaRequestedBy = "requested_by"

// maxConsolidateRuns bounds the runs of one consolidate command: each run
// advances the checkpoint, so this is only a guard against a series that
// grows as fast as it is read.
const maxConsolidateRuns = 1000

func (a *app) consolidateCmd() *cobra.Command {
	var modelFlag, by, prunedFile string
	var dryRun bool
	var maxTokens, maxOutput int
	c := &cobra.Command{
		Use:   "consolidate USER --model PROVIDER:MODEL",
		Short: "Turn USER's pruned history into notes with a model",
		Long: `consolidate reads what a history window pruned from USER's conversations
(pruned.md, pruned_0002.md, … in namespace USER, escaped as the ADK adapter
does, agent "main") from the last checkpoint on, shows it with MEMORY.md to a
model, and applies the edits it answers (appends, replacements of one exact
passage, topic files) with compare-and-swap, exactly once: a rerun after an
error resumes and writes nothing twice. It runs until all pruned text is read,
--max-tokens of it per model request, then prints each run's diff and a
summary (edits applied, tokens used). With nothing new it prints nothing and
exits 0.

Every change records updated_by "agentmem-consolidator/<model id>" (and
requested_by: --by, else $USER, else the OS user name, else agentmem), so on a
store with history (?history=30d) log names the consolidator and restore
undoes the change.

--dry-run asks the model and prints the proposed diff of the first run, and
writes nothing (no edit, no checkpoint).

Models (--model, else $` + ModelEnv + `):
  anthropic:MODEL  the Anthropic Messages API (key from ANTHROPIC_API_KEY,
                   base URL from ANTHROPIC_BASE_URL), e.g. anthropic:claude-sonnet-4-5
  script:FILE      for tests and demos, no network: FILE holds a JSON array of
                   answers; the n-th model request of the command gets the n-th
                   (a string, the answer's text, or {"text": …, "model": …});
                   requests past the end fail

Exit codes: 0 ok, 1 error (the model failed or answered edits that do not
apply: nothing was written; run it again), 2 usage (no model, a bad --model),
4 no store.`,
		Example: `  ANTHROPIC_API_KEY=… agentmem consolidate --model anthropic:claude-sonnet-4-5 kamal@example.com
  agentmem consolidate --dry-run --model anthropic:claude-sonnet-4-5 kamal@example.com`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns := memory.EscapeNamespace(argv[0])
			if ns == "" {
				return usagef("consolidate: USER must not be empty")
			}
			if maxTokens < 0 || maxOutput < 0 {
				return usagef("consolidate: --max-tokens and --max-output-tokens must not be negative")
			}
			md, err := withBy(nil, by)
			if err != nil {
				return err
			}
			md = map[string]string{metaRequestedBy: md[metaUpdatedBy], memory.ClientKey: md[memory.ClientKey]}
			spec := modelFlag
			if spec == "" {
				spec = os.Getenv(ModelEnv)
			}
			model, err := openModel(spec)
			if err != nil {
				return err
			}
			opts := &pruned.ConsolidateOptions{PrunedFile: prunedFile, DryRun: dryRun, MaxPrunedTokens: maxTokens,
				MaxOutputTokens: maxOutput, Metadata: md}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				m, err := memory.New(s, nil)
				if err != nil {
					return err
				}
				return a.consolidate(ctx, m, ns, model, opts)
			})
		},
	}
	c.Flags().StringVar(&modelFlag, "model", "", "the model, `PROVIDER:MODEL` (default $"+ModelEnv+"; see above)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print the proposed diff and write nothing")
	c.Flags().IntVar(&maxTokens, "max-tokens", pruned.DefaultConsolidationTokens, "the pruned text one model request reads, in `tokens` (4 characters each)")
	c.Flags().IntVar(&maxOutput, "max-output-tokens", 0, "bound of each answer, in `tokens` (default: the model's)")
	c.Flags().StringVar(&prunedFile, "pruned-file", pruned.DefaultFile, "the first `FILE` of the pruned series (the history window's File)")
	c.Flags().StringVar(&by, "by", "", "who runs the consolidation, recorded as metadata "+metaRequestedBy+" (default $USER, else the OS user name, else agentmem)")
	return c
}

// consolidate runs pruned.Consolidate until no pruned text is left (once for a
// dry run, which advances nothing), printing each run's diff to stdout and
// a summary to stderr.
func (a *app) consolidate(ctx context.Context, m *memory.Memory, ns string, model pruned.Model, opts *pruned.ConsolidateOptions) error {
	var runs, chars, applied, replayed, skipped, asks int
	var usage pruned.Usage
	var id string
	for runs < maxConsolidateRuns {
		res, err := pruned.Consolidate(ctx, m, ns, model, opts)
		if err != nil {
			return consolidateErr(err)
		}
		if res.PrunedChars == 0 && res.Asks == 0 && len(res.Edits) == 0 {
			break // nothing pruned since the last checkpoint
		}
		runs++
		chars += res.PrunedChars
		applied, replayed, skipped, asks = applied+res.Applied, replayed+res.Replayed, skipped+len(res.Skipped), asks+res.Asks
		usage.InputTokens += res.Usage.InputTokens
		usage.OutputTokens += res.Usage.OutputTokens
		id = cmp.Or(res.Model, id)
		fmt.Fprint(a.stdout, res.Diff)
		for _, sk := range res.Skipped {
			fmt.Fprintf(a.stderr, "agentmem: skipped an edit of %s: %s\n", sk.Edit.File, sk.Reason)
		}
		if opts.DryRun {
			more := ""
			if res.More {
				more = "; more pruned text waits beyond this run"
			}
			fmt.Fprintf(a.stderr, "dry run: %s proposed from %d characters of pruned text; nothing written%s\n", plural(len(res.Edits), "edit"), res.PrunedChars, more)
			return nil
		}
		if !res.More {
			break
		}
	}
	if runs == 0 {
		fmt.Fprintf(a.stderr, "nothing pruned for %s since the last consolidation\n", ns)
		return nil
	}
	fmt.Fprintf(a.stderr, "consolidated %d characters of pruned text in %s: %s applied, %d replayed, %d skipped; %s, %d input and %d output tokens (model %s)\n",
		chars, plural(runs, "run"), plural(applied, "edit"), replayed, skipped, plural(asks, "model request"), usage.InputTokens, usage.OutputTokens, cmp.Or(id, "unknown"))
	return nil
}

// consolidateErr says what to do about a failed run.
func consolidateErr(err error) error {
	switch {
	case errors.Is(err, pruned.ErrConsolidationState):
		return fmt.Errorf("agentmem: consolidate: %w (agentmem rm USER/main/%s/… removes it)", err, pruned.StateDir)
	case errors.Is(err, store.ErrInvalidPath):
		return usagef("consolidate: %v", err)
	case errors.Is(err, pruned.ErrMalformedAnswer), errors.Is(err, pruned.ErrInvalidEdits):
		return fmt.Errorf("agentmem: consolidate: %w; run it again (the model may answer otherwise) or pick another --model", err)
	}
	return fmt.Errorf("agentmem: consolidate: %w; run it again to resume: nothing is written twice", err)
}

// plural returns "1 run", "2 runs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// openModel returns the model that spec (PROVIDER:MODEL) names.
func openModel(spec string) (pruned.Model, error) {
	if spec == "" {
		return nil, usagef("consolidate needs a model: --model PROVIDER:MODEL or $%s (anthropic:MODEL, or script:FILE for tests)", ModelEnv)
	}
	provider, name, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return nil, usagef("--model %q: want PROVIDER:MODEL, such as anthropic:claude-sonnet-4-5", spec)
	}
	switch provider {
	case "anthropic":
		if os.Getenv("ANTHROPIC_API_KEY") == "" && os.Getenv("ANTHROPIC_AUTH_TOKEN") == "" {
			return nil, usagef("--model %s: set ANTHROPIC_API_KEY to the API key", spec)
		}
		client := sdk.NewClient()
		return agentmemanthropic.Model(&client.Messages, sdk.Model(name)), nil
	case "script":
		return openScript(name)
	}
	return nil, usagef("--model %q: unknown provider %q: use anthropic:MODEL, or script:FILE for tests", spec, provider)
}

// scriptModel is the script: provider: answers read from a file, in
// order, for tests and demos.
type scriptModel struct {
	file    string
	answers []scriptAnswer

	mu   sync.Mutex
	next int
}

// scriptAnswer is one answer of a script file.
type scriptAnswer struct {
	Text  string `json:"text"`
	Model string `json:"model"`
}

func (s *scriptAnswer) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &s.Text)
	}
	type plain scriptAnswer
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(s))
}

func openScript(file string) (*scriptModel, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("--model script:%s: no such file", file)
	}
	if err != nil {
		return nil, err
	}
	var answers []scriptAnswer
	if err := json.Unmarshal(b, &answers); err != nil {
		return nil, usagef("--model script:%s: want a JSON array of answers (strings, or {\"text\": …, \"model\": …}): %v", file, err)
	}
	return &scriptModel{file: file, answers: answers}, nil
}

// Generate implements pruned.Model: the next answer of the file.
func (s *scriptModel) Generate(ctx context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.answers) {
		return pruned.ModelResponse{}, fmt.Errorf("script %s has %d answers; request %d has none", s.file, len(s.answers), s.next+1)
	}
	ans := s.answers[s.next]
	s.next++
	return pruned.ModelResponse{Text: ans.Text, Model: cmp.Or(ans.Model, "script")}, nil
}
