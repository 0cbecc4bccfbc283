package testenv

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// aptScript is the helper every apt-get call of the scripts goes through.
const aptScript = "scripts/lib/apt.sh"

// fakeAptGet records its arguments, and whether the test's lock was free
// when it ran, in the file log beside it.
const fakeAptGet = `#!/bin/sh
dir="$(dirname "$0")"
echo "apt-get $*" >>"$dir/log"
if flock -n "$LOCK" true; then echo free >>"$dir/log"; else echo held >>"$dir/log"; fi
`

// aptEnv returns a directory with a fake apt-get, a lock file in it, and
// the environment that points scripts/lib/apt.sh at both.
func aptEnv(t *testing.T, timeout string) (dir, lock string, env []string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("scripts/lib/apt.sh reads /proc/locks: Linux only, as apt is")
	}
	for _, tool := range []string{"bash", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found (util-linux has flock): %v", tool, err)
		}
	}
	dir = t.TempDir()
	lock = filepath.Join(dir, "lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "apt-get"), []byte(fakeAptGet), 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LOCK="+lock, "AGENTMEM_APT_LOCKS="+lock, "AGENTMEM_APT_LOCK_TIMEOUT="+timeout)
	return dir, lock, env
}

// holdLock holds lock with flock(1) until release is closed: a stand-in
// for another apt or dpkg process. It returns once the lock is held.
func holdLock(t *testing.T, lock string) (release func()) {
	t.Helper()
	held := lock + ".held"
	gone := lock + ".release"
	cmd := exec.Command("flock", lock, "sh", "-c", `touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done`, "sh", held, gone)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = os.WriteFile(gone, nil, 0o644)
			<-done
		})
	}
	t.Cleanup(release)
	for {
		if _, err := os.Stat(held); err == nil {
			return release
		}
		select {
		case err := <-done:
			t.Fatalf("flock %s exited: %v", lock, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestAptWaitsForTheLock runs scripts/lib/apt.sh while another process
// holds the (test's) lock: it says so once, waits, and runs apt-get once
// the lock is free, with apt-get's own lock timeout.
func TestAptWaitsForTheLock(t *testing.T) {
	dir, lock, env := aptEnv(t, "600")
	release := holdLock(t, lock)
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(repoRoot(t), aptScript), "install", "-y", "chromium")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == 1 {
			if _, err := os.Stat(filepath.Join(dir, "log")); err == nil {
				t.Error("apt-get ran while the lock was held")
			}
			release() // the other apt finishes
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("apt.sh: %v\n%s", err, strings.Join(lines, "\n"))
	}
	want := regexp.MustCompile(`^\[apt\] another apt or dpkg \(process \d+, flock\) holds ` + regexp.QuoteMeta(lock) + `: waiting up to 600s for it to finish$`)
	if len(lines) != 1 || !want.MatchString(lines[0]) {
		t.Errorf("stderr %q, want one line saying it waits", lines)
	}
	if got := readLog(t, dir); got != "apt-get -o DPkg::Lock::Timeout=600 install -y chromium\nfree\n" {
		t.Errorf("apt-get ran as %q, want once, with the lock free", got)
	}
}

// TestAptWaitIsBounded: a lock that stays held is waited for only
// AGENTMEM_APT_LOCK_TIMEOUT seconds, then apt-get runs anyway (and fails
// with its own message, if the lock is still held).
func TestAptWaitIsBounded(t *testing.T) {
	dir, lock, env := aptEnv(t, "1")
	holdLock(t, lock)
	// Sourced, as test.sh and containers.sh use it.
	cmd := exec.CommandContext(t.Context(), "bash", "-c", `set -euo pipefail; . "$1"; apt_get update -qq`, "bash", filepath.Join(repoRoot(t), aptScript))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("apt.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	end := regexp.MustCompile(`^\[apt\] ` + regexp.QuoteMeta(lock) + ` is still held \(process \d+\) after 1s: running apt-get anyway$`)
	if len(lines) != 2 || !strings.Contains(lines[0], "waiting up to 1s") || !end.MatchString(lines[1]) {
		t.Errorf("stderr %q, want the wait and its end said once each", lines)
	}
	if got := readLog(t, dir); got != "apt-get -o DPkg::Lock::Timeout=1 update -qq\nheld\n" {
		t.Errorf("apt-get ran as %q, want once, after the bound", got)
	}
}

// TestAptFreeLockRunsAtOnce: nothing held, nothing said.
func TestAptFreeLockRunsAtOnce(t *testing.T) {
	dir, _, env := aptEnv(t, "600")
	cmd := exec.CommandContext(context.Background(), "bash", filepath.Join(repoRoot(t), aptScript), "update")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Fatalf("apt.sh: %v, output %q", err, out)
	}
	if got := readLog(t, dir); got != "apt-get -o DPkg::Lock::Timeout=600 update\nfree\n" {
		t.Errorf("apt-get ran as %q", got)
	}
}

// directAptGet matches a line of a script that runs apt-get itself: at
// the start of a command, after env assignments.
var directAptGet = regexp.MustCompile(`(^|[;&|({]\s*|\bthen\s+|\bdo\s+)(\w+=\S*\s+)*apt-get\s`)

// TestEveryAptGetGoesThroughTheHelper fails when a script runs apt-get
// other than through scripts/lib/apt.sh, or when the emulators' installer
// is not pointed at it.
func TestEveryAptGetGoesThroughTheHelper(t *testing.T) {
	root := repoRoot(t)
	scripts, err := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	lib, _ := filepath.Glob(filepath.Join(root, "scripts", "lib", "*.sh"))
	for _, f := range append(scripts, lib...) {
		if strings.HasSuffix(f, aptScript) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for i, line := range strings.Split(string(b), "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "#") {
				continue
			}
			code = regexp.MustCompile(`"[^"]*"|'[^']*'`).ReplaceAllString(code, `""`) // messages
			if directAptGet.MatchString(code) {
				t.Errorf("%s:%d runs apt-get itself; call apt_get (scripts/lib/apt.sh), which waits for the lock: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "scripts", "emulators.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "export "+AptGetEnv+`="${`+AptGetEnv+`:-$ROOT/`+aptScript+`}"`) {
		t.Errorf("scripts/emulators.sh does not point %s at %s", AptGetEnv, aptScript)
	}
}

// TestInstallRunsTheHelper: the emulators' installer runs apt-get through
// scripts/lib/apt.sh, also when started without scripts/emulators.sh.
func TestInstallRunsTheHelper(t *testing.T) {
	t.Setenv(AptGetEnv, "")
	if got, want := aptGetCommand(), filepath.Join(repoRoot(t), aptScript); got != want {
		t.Errorf("aptGetCommand() = %q, want %q", got, want)
	}
	t.Setenv(AptGetEnv, "/opt/apt-wrapper")
	if got := aptGetCommand(); got != "/opt/apt-wrapper" {
		t.Errorf("aptGetCommand() with %s set = %q", AptGetEnv, got)
	}
}

func readLog(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatalf("apt-get did not run: %v", err)
	}
	return string(b)
}
