package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"

	// Every backend registers its URL schemes on import.
	_ "github.com/agentmem/agentmem/core/filestore"
	_ "github.com/agentmem/agentmem/core/memstore"
	_ "github.com/agentmem/agentmem/cosmosdb"
	_ "github.com/agentmem/agentmem/dynamodb"
	_ "github.com/agentmem/agentmem/firestore"
	_ "github.com/agentmem/agentmem/postgres"
	_ "github.com/agentmem/agentmem/sqlite"

	// Every embedder registers its name (the store URL's embedder=) on
	// import: wordvec, the offline default, and the API ones.
	_ "github.com/agentmem/agentmem/embedapi"
	_ "github.com/agentmem/agentmem/wordvec"
)

// Exit codes; see the package documentation.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitConflict = 3
	exitNotFound = 4
)

// DefaultStore is the store URL used without --store and $AGENTMEM_STORE:
// the SQLite file the quickstart writes.
const DefaultStore = "sqlite:.agent-memory.db"

// StoreEnv names the environment variable that gives the store URL.
const StoreEnv = "AGENTMEM_STORE"

// DefaultEmbedder is the embedder of hybrid search used when the store URL
// has no embedder= parameter and neither --embedder nor $AGENTMEM_EMBEDDER
// names one: the offline word vectors, no key and no network.
const DefaultEmbedder = "wordvec"

// EmbedderEnv names the environment variable that gives the embedder.
const EmbedderEnv = "AGENTMEM_EMBEDDER"

// wholeFile is the read bound that returns a file entire.
const wholeFile = 1 << 40

// codeError carries the exit code an error ends the command with.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// usagef returns a usage error (exit 2).
func usagef(format string, args ...any) error {
	return &codeError{exitUsage, fmt.Errorf(format, args...)}
}

// withCode gives err the exit code code.
func withCode(code int, err error) error { return &codeError{code, err} }

// exitCode maps an error to the documented exit codes, by sentinel.
func exitCode(err error) int {
	var ce *codeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ce):
		return ce.code
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrOperationConflict):
		return exitConflict
	case errors.Is(err, store.ErrNotFound):
		return exitNotFound
	case errors.Is(err, store.ErrInvalidURL), errors.Is(err, store.ErrInvalidPath),
		errors.Is(err, store.ErrInvalidBound), errors.Is(err, store.ErrInvalidMetadata),
		errors.Is(err, store.ErrInvalidContent), errors.Is(err, store.ErrInvalidOperation),
		errors.Is(err, store.ErrPathCollision), errors.Is(err, store.ErrReservedPath),
		errors.Is(err, store.ErrTooLarge), errors.Is(err, store.ErrInvalidSearchMode),
		errors.Is(err, store.ErrInvalidLifetime):
		// Bad input, not a store failure: 1 is kept for those.
		return exitUsage
	}
	return exitError
}

// app is one run of the command: its streams and global flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	storeURL       string
	embedder       string // --embedder
	timeout        time.Duration
	// isTerminal reports whether f is an interactive terminal; tests replace it.
	isTerminal func(f any) bool
}

// Main runs the command with os.Args and returns its exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, isTerminal: isTerminal}
	return a.run(ctx, os.Args[1:])
}

// run executes args and prints a failure as one line on stderr.
func (a *app) run(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var status exitStatus
	if errors.As(err, &status) {
		return int(status)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "agentmem: ") {
		msg = "agentmem: " + msg
	}
	msg = strings.ReplaceAll(msg, ": agentmem: ", ": ")
	fmt.Fprintln(a.stderr, strings.ReplaceAll(msg, "\n", " "))
	return exitCode(err)
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "agentmem",
		Short: "Read, write, move and erase agentmem memory files in any store",
		Long: `agentmem works on the memory files of an agentmem store named by a URL:
--store URL, else $AGENTMEM_STORE, else ` + DefaultStore + ` (the quickstart's file).

Store URLs: mem://, file:///abs/dir, file:rel/dir, sqlite:memory.db,
postgres://user@host/db (password from PGPASSWORD or ~/.pgpass), dynamodb://TABLE
(?region=, ?endpoint=), firestore://PROJECT/COLLECTION, cosmosdb://HOST/DB/CONTAINER
(key from AGENTMEM_COSMOS_KEY).

Search ranks by meaning as well as words (hybrid: BM25 fused with vectors of
the files' chunks) with the embedder of the store URL's embedder= parameter,
else --embedder, else $AGENTMEM_EMBEDDER, else ` + DefaultEmbedder + ` (offline word
vectors, no key, no network): wordvec, openai:MODEL (OPENAI_API_KEY),
ollama:MODEL (OLLAMA_HOST), gemini:MODEL (GEMINI_API_KEY), voyage:MODEL
(VOYAGE_API_KEY), or none for BM25 only. Writes index the files they change
before the command exits; reindex rebuilds the index after a model change.

Nothing is overwritten blindly: writes and deletes compare-and-swap on a version.

With ?history=on (or ?history=30d, ?history=720h: the retention) in the store
URL, every change is recorded: log lists them, diff compares versions, restore
writes a past version back.

Every write records who made it as metadata updated_by (--by, default $USER,
else the OS user name, else agentmem) and client=cli (the console's activity
counts it as cli; a --meta client=… is kept). Commands that only read never create a
store (they open it with create=false): a database file, directory, table or
container that does not exist is exit 4, on every backend.

Exit codes: 0 ok, 1 error, 2 usage or invalid input, 3 conflict (the version
changed or the file exists; nothing written), 4 not found; diff exits 1 when
the versions differ, as diff(1).`,
		Example: `  agentmem ls kamal/
  echo "- likes tea" | agentmem put kamal/main/MEMORY.md
  agentmem cat -v kamal/main/MEMORY.md
  agentmem edit kamal/main/MEMORY.md
  agentmem --store 'sqlite:.agent-memory.db?history=30d' log kamal/main/MEMORY.md
  agentmem migrate sqlite:.agent-memory.db 'postgres://app@db.internal/agents'`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q: run agentmem --help for the list", args[0])
			}
			return nil
		},
		RunE:    func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		Version: version(),
	}
	root.SetVersionTemplate("agentmem {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		hint := ""
		if cmd.Name() == "append" {
			hint = "; TEXT that starts with - goes after --"
		}
		return usagef("%s: %v (see %s --help%s)", cmd.Name(), err, cmd.CommandPath(), hint)
	})
	// No default value in the flag itself: help would print it, and a URL
	// from the environment may hold a password.
	root.PersistentFlags().StringVar(&a.storeURL, "store", "", "store `URL` (default $"+StoreEnv+", else "+DefaultStore+")")
	root.PersistentFlags().StringVar(&a.embedder, "embedder", "", "embedder of hybrid search when the store URL has no embedder= parameter: wordvec, openai:MODEL, ollama:MODEL, gemini:MODEL, voyage:MODEL or none (default $"+EmbedderEnv+", else "+DefaultEmbedder+")")
	root.PersistentFlags().DurationVar(&a.timeout, "timeout", 10*time.Second, "how long to wait for the store to open and for each request")
	root.AddCommand(
		a.lsCmd(), a.catCmd(), a.putCmd(), a.editCmd(), a.rmCmd(), a.searchCmd(),
		a.appendCmd(), a.snapshotCmd(), a.exportCmd(), a.importCmd(), a.migrateCmd(),
		a.forgetCmd(), a.pruneCmd(), a.statsCmd(), a.serveCmd(),
		a.logCmd(), a.diffCmd(), a.restoreCmd(), a.consoleCmd(), a.reindexCmd(),
	)
	root.AddCommand(a.consolidateCmd())
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			shells := []string{}
			for _, sc := range c.Commands() {
				shells = append(shells, sc.Name())
			}
			// cobra's completion prints its help and exits 0 for a
			// missing or unknown shell: that is a usage error.
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, argv []string) error {
				if len(argv) == 0 {
					return usagef("completion: name a shell: %s (usage: agentmem completion SHELL)", strings.Join(shells, ", "))
				}
				return usagef("completion: no completion for shell %q: name one of %s", argv[0], strings.Join(shells, ", "))
			}
		}
	}
	return root
}

// byFlag adds --by to c, stored in *by: who makes the change, recorded as
// the metadata updated_by.
func byFlag(c *cobra.Command, by *string) {
	c.Flags().StringVar(by, "by", "", "who makes the change, recorded as metadata "+metaUpdatedBy+" (default $USER, else the OS user name, else agentmem)")
}

// defaultBy returns by, else $USER, else the OS user's name, else "agentmem":
// never empty, so that every write records who made it.
func defaultBy(by string) string {
	if by != "" {
		return by
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "agentmem"
}

// cliClient is the client recorded (metadata client) with every write,
// delete and restore the CLI makes, as consoleClient is through
// `agentmem console`.
const cliClient = "cli"

// withBy returns md with updated_by set to by, else to the updated_by
// that md has (given with --meta), else to defaultBy's default, and with
// client (memory.ClientKey) set to "cli" unless md has one (given with
// --meta); a new map when md is nil. It fails when the result is not
// valid metadata.
func withBy(md map[string]string, by string) (map[string]string, error) {
	if md == nil {
		md = map[string]string{}
	}
	if by != "" || md[metaUpdatedBy] == "" {
		md[metaUpdatedBy] = defaultBy(by)
	}
	if md[memory.ClientKey] == "" {
		md[memory.ClientKey] = cliClient
	}
	if err := store.ValidateMetadata(md); err != nil {
		return nil, usagef("--by %q: %v", md[metaUpdatedBy], err)
	}
	return md, nil
}

// args wraps a cobra argument check so that a failure exits with 2.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usagef("%s: %v (usage: %s)", cmd.Name(), err, cmd.UseLine())
		}
		return nil
	}
}

// open opens the store that rawURL names, waiting at most a.timeout.
func (a *app) open(ctx context.Context, rawURL string) (*store.Store, error) {
	return a.openWith(ctx, rawURL, nil)
}

// openWith opens the store that rawURL names with opts, waiting at most
// a.timeout.
func (a *app) openWith(ctx context.Context, rawURL string, opts *store.Options) (*store.Store, error) {
	if a.timeout <= 0 {
		return nil, usagef("--timeout must be positive")
	}
	octx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	opts, err := a.withEmbedder(octx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	s, err := store.Open(octx, rawURL, opts)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", redact(rawURL), deadline(err, a.timeout))
	}
	return s, nil
}

// embedderSpec returns the embedder a store URL without embedder= gets:
// --embedder, else $AGENTMEM_EMBEDDER, else DefaultEmbedder, and where it
// came from.
func (a *app) embedderSpec() (spec, from string) {
	switch {
	case a.embedder != "":
		return a.embedder, "--embedder"
	case os.Getenv(EmbedderEnv) != "":
		return os.Getenv(EmbedderEnv), "$" + EmbedderEnv
	}
	return DefaultEmbedder, "the default embedder"
}

// withEmbedder returns opts with the embedder of embedderSpec, unless
// rawURL has an embedder= parameter (the URL wins: store.Open opens it)
// or opts has one already.
func (a *app) withEmbedder(ctx context.Context, rawURL string, opts *store.Options) (*store.Options, error) {
	if u, err := store.ParseURL(rawURL); err != nil || u.Query().Has(store.EmbedderParam) {
		return opts, nil // store.Open says what is wrong with the URL, or opens its embedder
	}
	if opts != nil && opts.Embedder != nil {
		return opts, nil
	}
	spec, from := a.embedderSpec()
	e, err := store.OpenEmbedder(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", from, spec, err)
	}
	o := store.Options{}
	if opts != nil {
		o = *opts
	}
	o.Embedder = e
	return &o, nil
}

// openExisting opens the store of --store, else $AGENTMEM_STORE, else
// DefaultStore, as openStore does, but never creates it: a command that
// only reads (or deletes) must not create an empty store for a typo.
func (a *app) openExisting(ctx context.Context) (*store.Store, error) {
	return a.openExistingWith(ctx, a.storeURLOf(), nil)
}

// openExistingWith opens rawURL with opts, asking the backend not to
// create what is missing (create=false, unless the URL says otherwise):
// a missing database file, directory, table or container is exit code 4
// and nothing is created, on every backend.
func (a *app) openExistingWith(ctx context.Context, rawURL string, opts *store.Options) (*store.Store, error) {
	open := rawURL
	if u, err := store.ParseURL(rawURL); err == nil && !u.Query().Has(driver.CreateParam) {
		q := u.Query()
		q.Set(driver.CreateParam, "false")
		u.RawQuery = q.Encode()
		open = u.String()
	}
	s, err := a.openWith(ctx, open, opts)
	if errors.Is(err, store.ErrStoreNotFound) {
		return nil, withCode(exitNotFound, fmt.Errorf("no store at %s: nothing was created: check --store or $%s (a write such as agentmem put creates it): %w", redact(rawURL), StoreEnv, errors.Unwrap(err)))
	}
	return s, err
}

// storeURLOf returns the URL of --store, else $AGENTMEM_STORE, else
// DefaultStore.
func (a *app) storeURLOf() string {
	u := a.storeURL
	if u == "" {
		u = os.Getenv(StoreEnv)
	}
	if u == "" {
		u = DefaultStore
	}
	return u
}

// openStore opens the store of --store, else $AGENTMEM_STORE, else
// DefaultStore.
func (a *app) openStore(ctx context.Context) (*store.Store, error) {
	return a.open(ctx, a.storeURLOf())
}

// openRecording opens the store as openStore does, but records changes in
// the history with the default retention when the URL does not set
// store.HistoryParam: a change made to repair history (restore) belongs
// in it.
func (a *app) openRecording(ctx context.Context) (*store.Store, error) {
	raw := a.storeURLOf() // a restore reads history that only an existing store has
	if u, err := store.ParseURL(raw); err == nil && !u.Query().Has(store.HistoryParam) {
		return a.openExistingWith(ctx, raw, &store.Options{History: &store.HistoryOptions{}})
	}
	return a.openExistingWith(ctx, raw, nil)
}

// deadline explains a timeout.
func deadline(err error, d time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v (is the server up? raise --timeout): %w", d, err)
	}
	return err
}

// request returns a context bounding one request by --timeout.
func (a *app) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.timeout)
}

// redact shows a store URL without password, query or fragment.
func redact(rawURL string) string {
	u, err := store.ParseURL(rawURL)
	if err != nil {
		return "(malformed URL)"
	}
	return store.Redact(u)
}

// isTerminal reports whether f is an *os.File open on a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// parseMeta turns k=v flags into metadata.
func parseMeta(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("--meta %q: want key=value", kv)
		}
		m[k] = v
	}
	if err := store.ValidateMetadata(m); err != nil {
		return nil, err
	}
	return m, nil
}
