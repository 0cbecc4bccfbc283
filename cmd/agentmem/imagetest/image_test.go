//go:build image

package imagetest

import (
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestImageServesHealthAndAPI: the image builds without a registry, and a
// container of it answers /healthz, /readyz, and a write with a user key
// (201), which another user's key cannot read (404).
func TestImageServesHealthAndAPI(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "Dockerfile")); err != nil {
		t.Fatalf("no Dockerfile at the repository root: %v", err)
	}
	ctxDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(ctxDir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, root, []string{"CGO_ENABLED=0"}, "go", "build", "-trimpath", "-o", filepath.Join(ctxDir, "agentmem"), "./cmd/agentmem")
	certs, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatalf("the image carries the host's CA certificates: %v", err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "ca-certificates.crt"), certs, 0o644); err != nil {
		t.Fatal(err)
	}
	tag := "agentmem-imagetest:" + strings.ToLower(rand.Text())
	run(t, root, nil, "docker", "build", "-q", "-f", filepath.Join(root, "Dockerfile"), "-t", tag, ctxDir)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })

	keysDir := t.TempDir()
	if err := os.Chmod(keysDir, 0o755); err != nil {
		t.Fatal(err)
	}
	keys := agentmemmcp.HashKey("key-ana") + " ana\n" + agentmemmcp.HashKey("key-bob") + " bob\n"
	if err := os.WriteFile(filepath.Join(keysDir, "keys"), []byte(keys), 0o644); err != nil {
		t.Fatal(err)
	}
	id := run(t, root, nil, "docker", "run", "-d", "--label", "agentmem.testenv=image", "-p", "127.0.0.1::8787",
		"-v", filepath.Join(keysDir, "keys")+":/etc/agentmem/keys:ro", tag)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := exec.Command("docker", "logs", id).CombinedOutput()
			t.Logf("container logs:\n%s", logs)
		}
		_ = exec.Command("docker", "rm", "-f", id).Run()
	})
	addr := run(t, root, nil, "docker", "port", id, "8787/tcp")
	base := "http://" + strings.Fields(addr)[0]

	req := func(method, path, key, body string, headers ...string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		r, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			r.Header.Set("Content-Type", "text/markdown")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for deadline := time.Now().Add(60 * time.Second); req("GET", "/healthz", "", "") != http.StatusOK; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the container's /healthz did not answer 200 within 60s")
		}
	}
	if code := req("GET", "/readyz", "", ""); code != http.StatusOK {
		t.Fatalf("/readyz: %d, want 200", code)
	}
	file := "/api/v1/namespaces/ana/files/main/MEMORY.md"
	if code := req("PUT", file, "key-ana", "- from the image\n", "If-None-Match", "*"); code != http.StatusCreated {
		t.Fatalf("PUT with ana's key: %d, want 201", code)
	}
	if code := req("GET", file, "key-ana", ""); code != http.StatusOK {
		t.Fatalf("GET with ana's key: %d, want 200", code)
	}
	if code := req("GET", file, "key-bob", ""); code != http.StatusNotFound {
		t.Fatalf("GET with bob's key: %d, want 404", code)
	}
}
