package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmem/agentmem/contract/emulator"
)

// Emulator names one emulator a test binary may need.
type Emulator string

// The emulators testenv starts.
const (
	Postgres  Emulator = "postgres"
	DynamoDB  Emulator = "dynamodb"
	Firestore Emulator = "firestore"
	Cosmos    Emulator = "cosmos"
)

// All lists every emulator, in start order.
var All = []Emulator{Postgres, DynamoDB, Firestore, Cosmos}

// Mode says how emulators that the environment does not give are started.
type Mode string

// Modes, as AGENTMEM_EMULATORS spells them.
const (
	// Auto starts containers where a Docker daemon answers, processes otherwise.
	Auto Mode = ""
	// Containers starts each emulator with testcontainers-go.
	Containers Mode = "containers"
	// Processes starts each emulator as a local process.
	Processes Mode = "processes"
)

// ModeEnv is the environment variable that forces a [Mode].
const ModeEnv = "AGENTMEM_EMULATORS"

// CosmosKey is the Cosmos DB emulator's well-known, public account key.
const CosmosKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Sentinel errors; check them with errors.Is.
var (
	// ErrMode: set AGENTMEM_EMULATORS to containers, processes or nothing.
	ErrMode = errors.New("testenv: set AGENTMEM_EMULATORS to containers, processes or nothing (auto)")
	// ErrNoDocker: start a Docker daemon (or set AGENTMEM_EMULATORS=processes).
	ErrNoDocker = errors.New("testenv: start a Docker daemon, or set AGENTMEM_EMULATORS=processes: no Docker daemon answers")
	// ErrNotInstalled: install the prerequisites with `scripts/emulators.sh
	// install` (processes) or build the images with `scripts/emulators.sh
	// images` (containers).
	ErrNotInstalled = errors.New("testenv: install the emulator with scripts/emulators.sh install (processes) or images (containers): not found")
	// ErrNotReady: read the emulator's log quoted in the error; it exited
	// or did not answer in time.
	ErrNotReady = errors.New("testenv: read the emulator's log below: it did not answer")
)

// M is what [Main] runs: a *testing.M, or anything with its Run method.
type M interface{ Run() int }

// Main starts the emulators in need that the environment does not give,
// runs m, stops them and exits with m's code, or with 1 when an emulator
// cannot start (saying why on stderr). Call it from TestMain.
func Main(m M, need ...Emulator) {
	os.Exit(Wrap(m, need...).Run())
}

// Wrap returns an M whose Run does what [Main] does, returning the code
// instead of exiting: for wrappers that exit themselves, such as
// testscript.Main.
func Wrap(m M, need ...Emulator) M {
	return wrapped{m: m, need: need}
}

type wrapped struct {
	m    M
	need []Emulator
}

func (w wrapped) Run() int {
	if w.m == nil {
		fmt.Fprintln(os.Stderr, "testenv: Main was given a nil M")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env, err := Start(ctx, w.need...)
	stop()
	if err != nil {
		_ = env.Close()
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	code := w.m.Run()
	if err := env.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Env is the set of emulators [Start] started. Its Close stops them.
type Env struct {
	mu      sync.Mutex
	stops   []func(context.Context) error
	vars    map[string]string
	started map[Emulator]string // how each was started, for the log
}

// Started reports how e started each emulator: "env", "container" or
// "process".
func (e *Env) Started() map[Emulator]string {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[Emulator]string, len(e.started))
	for k, v := range e.started {
		out[k] = v
	}
	return out
}

// Var returns the value Start gave the environment variable name ("" if
// none).
func (e *Env) Var(name string) string {
	if e == nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.vars[name]
}

func (e *Env) onStop(f func(context.Context) error) {
	e.mu.Lock()
	e.stops = append(e.stops, f)
	e.mu.Unlock()
}

// Close stops every emulator e started, in reverse order, and unsets the
// variables it set. It is safe on a nil Env and idempotent.
func (e *Env) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	stops := e.stops
	e.stops = nil
	vars := e.vars
	e.vars = nil
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var errs []error
	for i := len(stops) - 1; i >= 0; i-- {
		errs = append(errs, stops[i](ctx))
	}
	for name := range vars {
		_ = os.Unsetenv(name)
	}
	return errors.Join(errs...)
}

// ModeFromEnv returns the mode AGENTMEM_EMULATORS asks for; an unknown
// value is [ErrMode].
func ModeFromEnv() (Mode, error) {
	switch m := Mode(strings.TrimSpace(os.Getenv(ModeEnv))); m {
	case Auto, Containers, Processes:
		return m, nil
	default:
		return "", fmt.Errorf("%w, not %q", ErrMode, string(m))
	}
}

// Start gives each emulator in need an endpoint: from the environment, or
// by starting it (see the package doc), in parallel, and sets the
// environment variables of those it started. Close the returned Env (also
// when err is not nil: it stops what did start).
func Start(ctx context.Context, need ...Emulator) (*Env, error) {
	env := &Env{vars: map[string]string{}, started: map[Emulator]string{}}
	mode, err := ModeFromEnv()
	if err != nil {
		return env, err
	}
	var todo []Emulator
	seen := map[Emulator]bool{}
	for _, e := range need {
		if _, ok := specs[e]; !ok {
			return env, fmt.Errorf("testenv: use one of %v: unknown emulator %q", All, string(e))
		}
		if seen[e] {
			continue
		}
		seen[e] = true
		if os.Getenv(specs[e].vars[0]) != "" {
			fromEnv(env, e)
			continue
		}
		todo = append(todo, e)
	}
	if len(todo) == 0 {
		return env, nil
	}
	var s starter
	switch mode {
	case Containers:
		if err := dockerAnswers(ctx); err != nil {
			return env, err
		}
		s = containerStarter{}
	case Processes:
		s = processStarter{}
	default:
		if dockerAnswers(ctx) == nil {
			s = containerStarter{}
		} else {
			s = processStarter{}
		}
	}
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for i, e := range todo {
		wg.Go(func() {
			t0 := time.Now()
			vars, err := s.start(ctx, env, e)
			if err != nil {
				errs[i] = fmt.Errorf("%s (%s): %w", e, s.kind(), err)
				return
			}
			env.mu.Lock()
			for k, v := range vars {
				env.vars[k] = v
				_ = os.Setenv(k, v)
			}
			env.started[e] = s.kind()
			env.mu.Unlock()
			fmt.Fprintf(os.Stderr, "testenv: %s (%s) ready in %.1fs: %s\n", e, s.kind(),
				time.Since(t0).Seconds(), vars[specs[e].vars[0]])
		})
	}
	wg.Wait()
	return env, errors.Join(errs...)
}

// fromEnv records an emulator the environment gives; Cosmos gets the
// well-known key when only its endpoint is set, and Firestore's SDK
// variable follows AGENTMEM_FIRESTORE_EMULATOR_HOST.
func fromEnv(env *Env, e Emulator) {
	env.started[e] = "env"
	switch e {
	case Cosmos:
		if os.Getenv(emulator.CosmosKey) == "" {
			env.vars[emulator.CosmosKey] = CosmosKey
			_ = os.Setenv(emulator.CosmosKey, CosmosKey)
		}
	case Firestore:
		if os.Getenv("FIRESTORE_EMULATOR_HOST") == "" {
			v := os.Getenv(emulator.FirestoreHost)
			env.vars["FIRESTORE_EMULATOR_HOST"] = v
			_ = os.Setenv("FIRESTORE_EMULATOR_HOST", v)
		}
	}
}

// A starter starts one emulator and returns the variables of its endpoint;
// it registers its cleanup on env before it can fail.
type starter interface {
	kind() string
	start(ctx context.Context, env *Env, e Emulator) (map[string]string, error)
}

// endpoint returns the variables for an emulator reachable at hostPort.
func endpoint(e Emulator, hostPort, postgresURL string) map[string]string {
	switch e {
	case Postgres:
		return map[string]string{emulator.PostgresURL: postgresURL}
	case DynamoDB:
		return map[string]string{emulator.DynamoDBEndpoint: "http://" + hostPort}
	case Firestore:
		return map[string]string{emulator.FirestoreHost: hostPort, "FIRESTORE_EMULATOR_HOST": hostPort}
	default:
		return map[string]string{emulator.CosmosEndpoint: "http://" + hostPort, emulator.CosmosKey: CosmosKey}
	}
}
