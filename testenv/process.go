package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// readyTimeout bounds how long an emulator may take to answer (JVMs on a
// busy 2-core machine take a while).
const readyTimeout = 120 * time.Second

// CacheEnv names the directory of the installed emulators; by default
// .cache/emulators in the repository (the directory holding go.work above
// the test's working directory).
const CacheEnv = "AGENTMEM_EMULATORS_CACHE"

type processStarter struct{}

func (processStarter) kind() string { return "process" }

func (processStarter) start(ctx context.Context, env *Env, e Emulator) (map[string]string, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	hostPort := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	switch e {
	case Postgres:
		return startPostgres(ctx, env, port)
	case DynamoDB:
		// DynamoDB Local answers its errors (HTTP 400) without the
		// X-Amz-Crc32 header the service sends; its successes carry a correct
		// one. The SDK's check took the missing header for 0 and logged
		// "failed to close HTTP response body ... did not match expected
		// checksum, 0, N" for each; the dynamodb package's store.Open client
		// checks only headers that are present (dynamodb/url.go,
		// TestResponseChecksums). Test clients of its own leave the SDK's
		// check on: its log is silent without a configured logger.
		cache, err := cacheDir()
		if err != nil {
			return nil, err
		}
		if err := specs[e].check(cache); err != nil {
			return nil, err
		}
		java, _ := javaBin()
		dir := filepath.Join(cache, ddbDir)
		launcher := filepath.Join(cache, ddbLauncher)
		p, err := spawn(ctx, env, "dynamodb", nil, []string{"DDB_LOCAL_TELEMETRY=0"}, java,
			"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"),
			"-cp", launcher+":"+filepath.Join(dir, "DynamoDBLocal.jar")+":"+filepath.Join(dir, "DynamoDBLocal_lib", "*"),
			"DdbLoopback", "-inMemory", "-port", strconv.Itoa(port), "-disableTelemetry")
		if err != nil {
			return nil, err
		}
		return endpoint(e, hostPort, ""), p.waitReady(ctx, func() bool { return httpAnswers("http://"+hostPort+"/", nil) })
	case Firestore:
		if err := specs[e].check(""); err != nil {
			return nil, err
		}
		java, _ := javaBin()
		p, err := spawn(ctx, env, "firestore", nil, nil, java, "-Duser.language=en", "-cp", firestoreJar, firestoreClass,
			"start", "--host=127.0.0.1", "--port="+strconv.Itoa(port))
		if err != nil {
			return nil, err
		}
		return endpoint(e, hostPort, ""), p.waitReady(ctx, func() bool {
			return httpAnswers("http://"+hostPort+"/", func(code int, body []byte) bool { return strings.TrimSpace(string(body)) == "Ok" })
		})
	default:
		cache, err := cacheDir()
		if err != nil {
			return nil, err
		}
		if err := specs[e].check(cache); err != nil {
			return nil, err
		}
		node, _ := exec.LookPath("node")
		cli := filepath.Join(cache, cosmosCLI)
		p, err := spawn(ctx, env, "cosmos", nil, nil, node, cli, "--host", "127.0.0.1", "-p", strconv.Itoa(port), "--no-ssl")
		if err != nil {
			return nil, err
		}
		return endpoint(e, hostPort, ""), p.waitReady(ctx, func() bool {
			return httpAnswers("http://"+hostPort+"/", func(code int, _ []byte) bool { return code == http.StatusOK })
		})
	}
}

// startPostgres runs initdb and postgres from the PostgreSQL server binaries
// in a fresh data directory (as the postgres user when run as root: initdb
// refuses root).
func startPostgres(ctx context.Context, env *Env, port int) (map[string]string, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agentmem-pg.")
	if err != nil {
		return nil, err
	}
	env.onStop(func(context.Context) error { return os.RemoveAll(dir) })
	if err := chownForPostgres(dir, cred); err != nil {
		return nil, err
	}
	// The socket's path must fit a sockaddr_un (maxSocketPath), whatever TMPDIR is.
	sockets, err := os.MkdirTemp(socketParent(len("/.s.PGSQL.65535")), "am-pg.")
	if err != nil {
		return nil, err
	}
	env.onStop(func(context.Context) error { return os.RemoveAll(sockets) })
	if err := chownForPostgres(sockets, cred); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.Dir = "/"
	setCredential(initdb, cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: initdb: %v\n%s", ErrNotReady, err, tail(out))
	}
	p, err := spawn(ctx, env, "postgres", cred, nil, filepath.Join(bin, "postgres"), "-D", data,
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port), "-k", sockets,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	if err != nil {
		return nil, err
	}
	isready := filepath.Join(bin, "pg_isready")
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return endpoint(Postgres, "", url), p.waitReady(ctx, func() bool {
		return exec.CommandContext(ctx, isready, "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres").Run() == nil
	})
}

// maxSocketPath is the longest unix socket path every platform takes:
// sun_path holds 104 bytes with the terminating NUL on macOS (108 on
// Linux, where PostgreSQL refuses a path over 107).
const maxSocketPath = 103

// socketParent returns the directory to make a socket's directory in:
// os.TempDir(), or /tmp when a directory made there (a prefix and ten
// random digits) and a name of nameLen bytes would not fit in
// maxSocketPath.
func socketParent(nameLen int) string {
	if d := os.TempDir(); len(d)+len("/am-pg.1234567890")+nameLen <= maxSocketPath {
		return d
	}
	return "/tmp"
}

// pgBin finds the PostgreSQL server binaries: AGENTMEM_PG_BIN, else
// Debian's 15, else the newest installed major version.
func pgBin() (string, error) {
	if d := os.Getenv("AGENTMEM_PG_BIN"); d != "" {
		return d, needFiles(filepath.Join(d, "initdb"))
	}
	cands := []string{"/usr/lib/postgresql/15/bin"}
	more, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(more)))
	for _, d := range append(cands, more...) {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: PostgreSQL server binaries (initdb) under /usr/lib/postgresql (apt-get install postgresql-15)", ErrNotInstalled)
}

// javaBin finds Java 17, else any java on PATH.
func javaBin() (string, error) {
	if m, _ := filepath.Glob("/usr/lib/jvm/java-17-openjdk-*/bin/java"); len(m) > 0 {
		return m[0], nil
	}
	j, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: java (apt-get install openjdk-17-jre-headless)", ErrNotInstalled)
	}
	return j, nil
}

// cacheDir is where [Install] installs the emulators.
func cacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, nil
	}
	root, err := workRoot()
	if err != nil {
		return "", fmt.Errorf("%w: %w to find .cache/emulators in (set %s)", ErrNotInstalled, err, CacheEnv)
	}
	return filepath.Join(root, ".cache", "emulators"), nil
}

// workRoot returns the folder holding go.work at or above the working
// directory: the repository's root.
func workRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s", wd)
		}
	}
}

func needFiles(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%w: %s (run scripts/emulators.sh install)", ErrNotInstalled, p)
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// httpAnswers reports whether url answers at all, or as ok says.
func httpAnswers(url string, ok func(code int, body []byte) bool) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	return ok == nil || ok(resp.StatusCode, body)
}

// A process is one emulator running in its own process group.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// spawn starts argv in its own process group, output to a log file, and
// registers its stop on env before anything can fail.
func spawn(ctx context.Context, env *Env, name string, cred *credential, extraEnv []string, argv0 string, args ...string) (*process, error) {
	logf, err := os.CreateTemp("", "agentmem-"+name+".*.log")
	if err != nil {
		return nil, err
	}
	wd, err := os.MkdirTemp("", "agentmem-"+name+".")
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := chownForPostgres(wd, cred); err != nil {
		logf.Close()
		return nil, err
	}
	cmd := exec.Command(argv0, args...)
	cmd.Dir = wd // DynamoDB Local writes a metadata file in its working directory
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), extraEnv...)
	setGroup(cmd)
	setCredential(cmd, cred)
	setDeathSignal(cmd)
	p := &process{name: name, cmd: cmd, log: logf.Name(), done: make(chan struct{})}
	env.onStop(func(ctx context.Context) error {
		defer os.Remove(p.log)
		defer os.RemoveAll(wd)
		return p.stop(ctx)
	})
	err = cmd.Start()
	logf.Close()
	if err != nil {
		close(p.done)
		return nil, fmt.Errorf("start %s: %w", argv0, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitReady polls ready until it holds, the process exits or time is up.
func (p *process) waitReady(ctx context.Context, ready func() bool) error {
	deadline := time.Now().Add(readyTimeout)
	for !ready() {
		select {
		case <-p.done:
			return fmt.Errorf("%w: the process exited (%v); log %s:\n%s", ErrNotReady, p.cmd.ProcessState, p.log, p.tail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w within %s; log %s:\n%s", ErrNotReady, readyTimeout, p.log, p.tail())
		}
	}
	return nil
}

func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	return tail(b)
}

// tail returns the last 30 lines of out, indented.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// stop ends the process group: SIGINT (PostgreSQL's fast shutdown; the
// JVMs and node exit on it too), then SIGKILL after 10 s.
func (p *process) stop(ctx context.Context) error {
	if p.cmd.Process == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = signalGroup(pgid, false)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
	case <-ctx.Done():
	}
	_ = signalGroup(pgid, true)
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("testenv: " + p.name + " (process group " + strconv.Itoa(pgid) + ") did not exit after SIGKILL")
	}
}
