// Package emulator gives backend tests the endpoints of their emulators:
// the environment variables that the test binary's TestMain (module
// testenv: testenv.Main) sets when it starts them, or that point at a
// running service. An endpoint from the environment always wins, so a test
// can run against a real service.
//
// When a required variable is missing the test fails with instructions:
// the suite never skips a backend silently.
package emulator

import (
	"os"
	"strings"
	"testing"
)

// Environment variables, as set by testenv.
const (
	PostgresURL       = "AGENTMEM_POSTGRES_URL"
	DynamoDBEndpoint  = "AGENTMEM_DYNAMODB_ENDPOINT"
	FirestoreHost     = "AGENTMEM_FIRESTORE_EMULATOR_HOST"
	CosmosEndpoint    = "AGENTMEM_COSMOS_ENDPOINT"
	CosmosKey         = "AGENTMEM_COSMOS_KEY"
	emulatorsUsage    = "start it from the package's TestMain with testenv.Main (module testenv; scripts/emulators.sh install %s installs it), or set the variable to an endpoint of your own"
	missingVarMessage = "%s is not set: the %s emulator is not running; " + emulatorsUsage
)

// emulatorOf returns the name of the emulator (testenv.Emulator) whose
// endpoint the variable name holds: its second word, as every variable here
// is spelled (AGENTMEM_POSTGRES_URL is postgres's). testenv keeps the table
// of emulators; this package only names their variables.
func emulatorOf(name string) string {
	if f := strings.Split(name, "_"); len(f) > 2 {
		return strings.ToLower(f[1])
	}
	return "an"
}

// Lookup returns the value of the endpoint variable name, or "" and a
// message saying how to start the emulator.
func Lookup(name string) (string, string) {
	if v := os.Getenv(name); v != "" {
		return v, ""
	}
	b := emulatorOf(name)
	return "", sprintf(missingVarMessage, name, b, b)
}

// Require returns the value of the endpoint variable name, failing tb with
// instructions when it is not set.
func Require(tb testing.TB, name string) string {
	tb.Helper()
	v, msg := Lookup(name)
	if v == "" {
		tb.Fatal(msg)
	}
	return v
}
