package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

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
		url, err := pc.ConnectionString(ctx, "sslmode=disable")
		if err != nil {
			return nil, err
		}
		return endpoint(e, "", url), nil
	case DynamoDB:
		port = "8000/tcp"
		// The official image has the same entrypoint (java) and working
		// directory layout.
		c, err = testcontainers.Run(ctx, img, append(common,
			testcontainers.WithExposedPorts(port),
			testcontainers.WithCmd("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.library.path=./DynamoDBLocal_lib",
				"-jar", "DynamoDBLocal.jar", "-inMemory", "-port", "8000", "-disableTelemetry"),
			testcontainers.WithWaitStrategyAndDeadline(readyTimeout,
				wait.ForHTTP("/").WithPort(port).WithStatusCodeMatcher(func(int) bool { return true })),
		)...)
	case Firestore:
		port = "8080/tcp"
		c, err = testcontainers.Run(ctx, img, append(common,
			testcontainers.WithExposedPorts(port),
			testcontainers.WithWaitStrategyAndDeadline(readyTimeout,
				wait.ForHTTP("/").WithPort(port).WithResponseMatcher(func(body io.Reader) bool {
					b, _ := io.ReadAll(body)
					return strings.TrimSpace(string(b)) == "Ok"
				})),
		)...)
	default:
		port = "3000/tcp"
		c, err = testcontainers.Run(ctx, img, append(common,
			testcontainers.WithExposedPorts(port),
			testcontainers.WithWaitStrategyAndDeadline(readyTimeout,
				wait.ForHTTP("/").WithPort(port).WithStatusCodeMatcher(func(code int) bool { return code == http.StatusOK })),
		)...)
	}
	if c != nil {
		env.onStop(terminate(c))
	}
	if err != nil {
		return nil, containerErr(e, img, err)
	}
	hostPort, err := c.PortEndpoint(ctx, port, "")
	if err != nil {
		return nil, err
	}
	return endpoint(e, hostPort, ""), nil
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
