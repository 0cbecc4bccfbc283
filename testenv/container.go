package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Images the container path runs unless AGENTMEM_<NAME>_IMAGE names
// another: scripts/emulators.sh images builds them from the same local files
// the process path runs (no registry is needed).
var Images = map[Emulator]string{
	Postgres:  "agentmem-emulator/postgres:local",
	DynamoDB:  "agentmem-emulator/dynamodb:local",
	Firestore: "agentmem-emulator/firestore:local",
	Cosmos:    "agentmem-emulator/cosmos:local",
}

// ImageEnv returns the variable that overrides e's image, such as
// AGENTMEM_POSTGRES_IMAGE (an official image: postgres:15,
// amazon/dynamodb-local).
func ImageEnv(e Emulator) string { return "AGENTMEM_" + strings.ToUpper(string(e)) + "_IMAGE" }

// Label marks every container testenv starts.
const Label = "agentmem.testenv"

func image(e Emulator) string {
	if v := os.Getenv(ImageEnv(e)); v != "" {
		return v
	}
	return Images[e]
}

// dockerAnswers returns nil when a Docker daemon answers within 5 s.
func dockerAnswers(ctx context.Context) error {
	quietTestcontainers()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return fmt.Errorf("%w (%v)", ErrNoDocker, err)
	}
	if err := p.Health(ctx); err != nil {
		return fmt.Errorf("%w (%v)", ErrNoDocker, err)
	}
	return nil
}

// quietTestcontainers turns testcontainers' progress log off (set
// AGENTMEM_EMULATORS_VERBOSE=1 to keep it), and its reaper, which needs a
// registry, unless TESTCONTAINERS_RYUK_DISABLED says otherwise: testenv
// terminates what it starts itself.
func quietTestcontainers() {
	if os.Getenv("AGENTMEM_EMULATORS_VERBOSE") == "" {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	if _, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !ok {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

type containerStarter struct{}

func (containerStarter) kind() string { return "container" }

func (containerStarter) start(ctx context.Context, env *Env, e Emulator) (map[string]string, error) {
	img := image(e)
	common := []testcontainers.ContainerCustomizer{
		testcontainers.WithLabels(map[string]string{Label: "1"}),
	}
	var (
		c    testcontainers.Container
		port string
		err  error
	)
	switch e {
	case Postgres:
		var pc *tcpostgres.PostgresContainer
		pc, err = tcpostgres.Run(ctx, img, append(common,
			tcpostgres.WithDatabase("postgres"), tcpostgres.WithUsername("postgres"), tcpostgres.WithPassword("postgres"),
			testcontainers.WithCmd("postgres", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
			// pg_isready over TCP answers only once the final server listens
			// (the official image's entrypoint first runs one on a socket).
			testcontainers.WithWaitStrategyAndDeadline(readyTimeout,
				wait.ForExec([]string{"pg_isready", "-q", "-h", "127.0.0.1", "-U", "postgres"}).WithPollInterval(200*time.Millisecond)),
		)...)
		if pc != nil {
			c = pc
		}
		env.onStop(terminate(c))
		if err != nil {
			return nil, containerErr(e, img, err)
		}
		hostPort, err := reachable(ctx, c, "5432/tcp")
		if err != nil {
			return nil, err
		}
		return endpoint(e, "", "postgres://postgres:postgres@"+hostPort+"/postgres?sslmode=disable"), nil
	case DynamoDB:
		port = "8000/tcp"
		// The official image has the same entrypoint (java) and working
		// directory layout. Like the process, it answers errors without
		// X-Amz-Crc32 (see processStarter.start).
		c, err = testcontainers.Run(ctx, img, append(common,
			testcontainers.WithExposedPorts(port),
			testcontainers.WithCmd("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.library.path=./DynamoDBLocal_lib",
				"-jar", "DynamoDBLocal.jar", "-inMemory", "-port", "8000", "-disableTelemetry"),
			testcontainers.WithWaitStrategyAndDeadline(readyTimeout,
				httpWait{port: port}),
		)...)
	case Firestore:
		port = "8080/tcp"
		c, err = testcontainers.Run(ctx, img, append(common,
			testcontainers.WithExposedPorts(port),
			testcontainers.WithWaitStrategyAndDeadline(readyTimeout,
				httpWait{port: port, ok: func(_ int, body []byte) bool { return strings.TrimSpace(string(body)) == "Ok" }}),
		)...)
	default:
		// The server names its own address (localhost:PORT) in the account
		// metadata the SDK follows, so the host port must equal the
		// container's: a free host port, bound as itself.
		hp, ferr := freePort()
		if ferr != nil {
			return nil, ferr
		}
		n := strconv.Itoa(hp)
		port = n + "/tcp"
		p, perr := network.ParsePort(port)
		if perr != nil {
			return nil, perr
		}
		c, err = testcontainers.Run(ctx, img, append(common,
			testcontainers.WithExposedPorts(port),
			testcontainers.WithCmd("--host", "0.0.0.0", "-p", n, "--no-ssl"),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{p: {{HostPort: n}}}
			}),
			testcontainers.WithWaitStrategyAndDeadline(readyTimeout,
				httpWait{port: port, ok: func(code int, _ []byte) bool { return code == http.StatusOK }}),
		)...)
	}
	if c != nil {
		env.onStop(terminate(c))
	}
	if err != nil {
		return nil, containerErr(e, img, err)
	}
	hostPort, err := reachable(ctx, c, port)
	if err != nil {
		return nil, err
	}
	return endpoint(e, hostPort, ""), nil
}

// reachable returns host:port of c's mapped port: on 127.0.0.1 where it
// answers there (a local daemon; testcontainers would take a gateway address
// when the tests themselves run in a container), else testcontainers' host,
// and TESTCONTAINERS_HOST_OVERRIDE wins.
func reachable(ctx context.Context, c testcontainers.Container, port string) (string, error) {
	hostPort, err := c.PortEndpoint(ctx, port, "")
	if err != nil {
		return "", err
	}
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") != "" {
		return hostPort, nil
	}
	p, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", err
	}
	local := net.JoinHostPort("127.0.0.1", p.Port())
	if conn, err := net.DialTimeout("tcp", local, time.Second); err == nil {
		conn.Close()
		return local, nil
	}
	return hostPort, nil
}

// terminate stops and removes c; nil c is a
// no-op.
func terminate(c testcontainers.Container) func(context.Context) error {
	return func(ctx context.Context) error {
		if c == nil {
			return nil
		}
		return c.Terminate(ctx)
	}
}

// containerErr says which image failed and where the local ones come from
// (a missing image surfaces as a failed pull: there is no registry here).
func containerErr(e Emulator, img string, err error) error {
	return fmt.Errorf("%w: a container from %s (build the local images with scripts/emulators.sh images, or name another in %s): %v",
		ErrNotReady, img, ImageEnv(e), err)
}

// httpWait waits until GET / on the container's port answers (as ok says,
// or at all), on 127.0.0.1 or on testcontainers' host: wait.ForHTTP only
// tries the latter.
type httpWait struct {
	port string
	ok   func(code int, body []byte) bool
}

func (w httpWait) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	for {
		if p, err := target.MappedPort(ctx, w.port); err == nil {
			hosts := []string{"127.0.0.1"}
			if h, err := target.Host(ctx); err == nil && h != "127.0.0.1" {
				hosts = append(hosts, h)
			}
			for _, h := range hosts {
				if httpAnswers("http://"+net.JoinHostPort(h, p.Port())+"/", w.ok) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET / on port %s: %w", w.port, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
