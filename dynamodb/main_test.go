package dynamodb_test

import (
	"testing"

	"github.com/agentmem/agentmem/testenv"
)

// TestMain gives the tests an emulator: AGENTMEM_* endpoints win, else
// testenv starts one (a container where Docker answers, else a process)
// and stops it when the tests end.
func TestMain(m *testing.M) { testenv.Main(m, testenv.DynamoDB) }
