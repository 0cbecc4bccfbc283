package e2e_test

import (
	"testing"

	"github.com/agentmem/agentmem/testenv"
)

// TestMain gives the end-to-end runs every emulator: AGENTMEM_* endpoints
// win, else testenv starts them (containers where Docker answers, else
// processes) and stops them when the tests end.
func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Postgres, testenv.DynamoDB, testenv.Firestore, testenv.Cosmos)
}
