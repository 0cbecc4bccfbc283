package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/testenv"
)

// TestMain makes the test binary the agentmem command for the scripts, as
// the go command's own tests do, and gives the tests PostgreSQL and
// DynamoDB (AGENTMEM_* endpoints win, else testenv starts them).
func TestMain(m *testing.M) {
	// DynamoDB Local's keys, for the tests that drop its tables from this
	// process; set here rather than with t.Setenv, so that those tests may
	// run in parallel.
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "agentmemKey", "AWS_SECRET_ACCESS_KEY": "agentmemSecret"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	testscript.Main(testenv.Wrap(m, testenv.Postgres, testenv.DynamoDB), map[string]func(){"agentmem": main})
}

// TestScripts runs testdata/script/*.txtar against each store that needs no
// server: AGENTMEM_STORE is a SQLite file, then a file-store directory, in
// $WORK. Scripts that also use PostgreSQL or DynamoDB start with `need`,
// which fails (never skips) when the emulator's variable is missing. The
// history scripts (history*.txtar) also run against memlog, a journaled
// memstore that keeps history; on a backend that keeps none yet
// (condition [history]) they check the error and skip the rest.
func TestScripts(t *testing.T) {
	t.Parallel() // beside the tests that mostly wait (migrate, browsers, MCP client)
	historyScripts, err := filepath.Glob("testdata/script/history*.txtar")
	if err != nil || len(historyScripts) == 0 {
		t.Fatalf("no history scripts: %v", err)
	}
	lifetimeScripts, err := filepath.Glob("testdata/script/lifetime*.txtar")
	if err != nil || len(lifetimeScripts) == 0 {
		t.Fatalf("no lifetime scripts: %v", err)
	}
	for _, local := range []struct {
		name, url string
		history   bool     // the backend keeps history
		files     []string // the scripts to run, nil for all
	}{
		{"sqlite", "sqlite:$WORK/memory.db", keepsHistory(t, "sqlite:"+filepath.Join(t.TempDir(), "probe.db")), nil},
		{"file", "file:$WORK/memory", keepsHistory(t, "file:"+filepath.Join(t.TempDir(), "probe")), nil},
		// memlog (journal_test.go) keeps history whatever the others do.
		{"memlog", "memlog:$WORK/memory.journal", true, append(historyScripts, lifetimeScripts...)},
	} {
		t.Run(local.name, func(t *testing.T) {
			dir := "testdata/script"
			if local.files != nil {
				dir = ""
			}
			testscript.Run(t, testscript.Params{
				Dir:                 dir,
				Files:               local.files,
				RequireExplicitExec: true,
				Condition: func(cond string) (bool, error) {
					switch cond {
					case "history":
						return local.history, nil
					case "memlog":
						return local.name == "memlog", nil
					case "filestore":
						return local.name == "file", nil
					}
					return false, fmt.Errorf("unknown condition %q", cond)
				},
				Setup: func(e *testscript.Env) error {
					e.Setenv("AGENTMEM_STORE", os.Expand(local.url, func(string) string { return e.WorkDir }))
					e.Setenv("BACKEND", local.name)
					// A race-built binary sleeps a second as it exits (the race
					// detector's atexit_sleep_ms), and the scripts start it
					// hundreds of times: that second was most of their time.
					e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
					return setupEmulators(e)
				},
				Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
					"need":   cmdNeed,
					"status": cmdStatus,
					"save":   cmdSave,
					"sleep":  cmdSleep,
				},
			})
		})
	}
}

// keepsHistory reports whether the backend of rawURL keeps history
// (implements driver.Historian): the scripts' condition [history].
func keepsHistory(t *testing.T, rawURL string) bool {
	t.Helper()
	d, err := store.OpenDriver(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("open %s: %v", rawURL, err)
	}
	defer d.Close()
	return driver.CapabilitiesOf(d).History
}

// cmdSleep waits for a duration: sleep DURATION (time.ParseDuration), for
// the one script that waits for a file to expire on the real clock.
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("sleep: %v", err)
	}
	time.Sleep(d)
}

// cmdSave sets the environment variable NAME to the last command's stdout
// without its surrounding space: save NAME.
func cmdSave(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: save NAME")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}

// cmdNeed fails the script, with instructions, unless the emulators named
// (postgres, dynamodb) are configured.
func cmdNeed(ts *testscript.TestScript, neg bool, args []string) {
	vars := map[string]string{"postgres": emulator.PostgresURL, "dynamodb": emulator.DynamoDBEndpoint}
	for _, a := range args {
		name, ok := vars[a]
		if !ok {
			ts.Fatalf("need: unknown emulator %q", a)
		}
		if v, msg := emulator.Lookup(name); v == "" {
			ts.Fatalf("%s", msg)
		}
	}
}

// cmdStatus runs a program and checks its exit code: status CODE PROG ARGS….
// Its stdout and stderr are kept for the stdout and stderr commands.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// seq numbers the tables of this process.
var seq atomic.Int64

// unique returns a table name no other test run uses.
func unique(prefix string) string {
	return fmt.Sprintf("%s%d%04d", prefix, time.Now().UnixNano()%1e9, seq.Add(1))
}

// setupEmulators gives a script PGSTORE and DDBSTORE, URLs of a fresh
// PostgreSQL table and DynamoDB table dropped when it ends, when the
// emulators are configured; AWS credentials for DynamoDB Local go into
// the environment.
func setupEmulators(e *testscript.Env) error {
	if pg, _ := emulator.Lookup(emulator.PostgresURL); pg != "" {
		u, err := postgresURL(pg, unique("cli"))
		if err != nil {
			return err
		}
		e.Setenv("PGSTORE", u)
		e.Defer(func() { dropPostgres(u) })
	}
	if ep, _ := emulator.Lookup(emulator.DynamoDBEndpoint); ep != "" {
		e.Setenv("AWS_ACCESS_KEY_ID", "agentmemKey")
		e.Setenv("AWS_SECRET_ACCESS_KEY", "agentmemSecret")
		u := dynamoURL(ep, unique("cli-"))
		e.Setenv("DDBSTORE", u)
		e.Defer(func() { dropDynamo(u) })
	}
	return nil
}

// postgresURL is the emulator's URL with ?table=table.
func postgresURL(base, table string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("table", table)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// dynamoURL names table on DynamoDB Local at endpoint.
func dynamoURL(endpoint, table string) string {
	return "dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
}

// dropPostgres drops the tables a postgres URL made, if any.
func dropPostgres(u string) {
	ctx := context.Background()
	d, err := store.OpenDriver(ctx, u)
	if err != nil {
		return
	}
	defer d.Close()
	pd := d.(*postgres.Driver)
	q := fmt.Sprintf(`DROP TABLE IF EXISTS %q, %q CASCADE`, pd.Table()+"_receipts", pd.Table())
	_, _ = pd.Pool().Exec(ctx, q)
}

// dropDynamo deletes the table a dynamodb URL names; DynamoDB Local needs
// the credentials in the environment.
func dropDynamo(u string) {
	ctx := context.Background()
	pu, err := url.Parse(u)
	if err != nil {
		return
	}
	d, err := store.OpenDriver(ctx, dynamoURL(pu.Query().Get("endpoint"), pu.Host)+"&create_table=false")
	if err != nil {
		return
	}
	defer d.Close()
	table := pu.Host
	_, _ = d.(*dynamodb.Driver).Client().DeleteTable(ctx, &awsdynamodb.DeleteTableInput{TableName: &table})
}
