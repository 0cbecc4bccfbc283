package firestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"testing"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/contract/emulator"
)

// EmulatorClients returns n clients (separate process views) of a project
// of their own on the Firestore emulator, and wipes that project when the
// test ends. A missing emulator fails the test with instructions.
func EmulatorClients(tb testing.TB, n int) []*firestore.Client {
	host := emulator.Require(tb, emulator.FirestoreHost)
	if os.Getenv("FIRESTORE_EMULATOR_HOST") != host {
		tb.Setenv("FIRESTORE_EMULATOR_HOST", host) // the client finds the emulator here
	}
	project := "demo-agentmem-" + RandomID()
	tb.Cleanup(func() { Wipe(tb, host, project) })
	clients := make([]*firestore.Client, n)
	for i := range clients {
		c, err := firestore.NewClient(context.WithoutCancel(tb.Context()), project)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = c.Close() })
		clients[i] = c
	}
	return clients
}

// Wipe deletes every document of project with the emulator's DELETE endpoint.
func Wipe(tb testing.TB, host, project string) {
	url := fmt.Sprintf("http://%s/emulator/v1/projects/%s/databases/(default)/documents", host, project)
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	if err != nil {
		tb.Error(err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Errorf("wiping the emulator: %v", err)
		return
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Errorf("wiping the emulator: %s", resp.Status)
	}
}

// RandomID returns 12 random hex digits.
func RandomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
