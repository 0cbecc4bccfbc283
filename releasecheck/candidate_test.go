package releasecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// repoPath is the path every agentmem module's path begins with.
const repoPath = "github.com/agentmem/agentmem"

var update = flag.Bool("update", false, "rewrite the golden dependency lists in testdata/consumers")

// cand is the candidate release TestMain cuts.
var cand struct {
	version string   // v0.99.0-candidate.<unix time>
	repo    string   // the scratch repository it is tagged in
	proxy   string   // the GOPROXY=file:// directory serving its modules
	modules []string // module directories, relative to repo, in go.work order
	env     []string // the go command's environment for outside modules
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	unlock, err := lock()
	if err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		return 1
	}
	defer unlock()
	// One path for every run (the lock is held): the build cache keys the
	// workspace's packages by their directory, so a second run builds only
	// what changed.
	scratch := filepath.Join(os.TempDir(), "agentmem-releasecheck")
	if err := os.RemoveAll(scratch); err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		return 1
	}
	defer os.RemoveAll(scratch)
	purgeModuleCache()
	defer purgeModuleCache()
	t0 := time.Now()
	if err := cut(scratch); err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "releasecheck: %s cut and served from %s in %.1fs\n", cand.version, cand.proxy, time.Since(t0).Seconds())
	return m.Run()
}

// lock takes the machine-wide lock of the consumer check: each run purges
// agentmem's modules from the shared module cache, which would pull them
// from under another run's build.
func lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "agentmem-consumer-check.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// cut copies the work tree into scratch/repo, commits it, runs make release
// there and builds the module proxy of its tags.
func cut(scratch string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	cand.version = fmt.Sprintf("v0.99.0-candidate.%d", time.Now().Unix())
	if v := os.Getenv("AGENTMEM_CANDIDATE"); v != "" {
		cand.version = v
	}
	cand.repo = filepath.Join(scratch, "repo")
	cand.proxy = filepath.Join(scratch, "proxy")
	if err := copyWorkTree(root, cand.repo); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "candidate"}} {
		if _, err := git(cand.repo, args...); err != nil {
			return err
		}
	}
	// PLATFORMS=none: the six cross-builds of make release are not what
	// this checks, and would take minutes.
	if out, err := command(cand.repo, []string{"PLATFORMS=none"}, "make", "-s", "release", "VERSION="+cand.version); err != nil {
		return fmt.Errorf("make release VERSION=%s: %v\n%s", cand.version, err, out)
	}
	out, err := command(cand.repo, nil, "go", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return fmt.Errorf("go list -m: %v\n%s", err, out)
	}
	for _, d := range strings.Fields(out) {
		rel, err := filepath.Rel(cand.repo, d)
		if err != nil {
			return err
		}
		cand.modules = append(cand.modules, filepath.ToSlash(rel))
	}
	if err := buildProxy(); err != nil {
		return err
	}
	upstream, err := command(root, nil, "go", "env", "GOPROXY")
	if err != nil {
		return fmt.Errorf("go env GOPROXY: %v", err)
	}
	cand.env = []string{
		"GOWORK=off",
		"GOFLAGS=-mod=mod -buildvcs=false",
		"GOPROXY=file://" + filepath.ToSlash(cand.proxy) + "," + strings.TrimSpace(upstream),
		// The candidate is in no checksum database; nothing of agentmem is fetched directly.
		"GONOSUMDB=" + repoPath, "GOPRIVATE=", "GONOPROXY=",
		"GOTOOLCHAIN=local",
	}
	return nil
}

// repoRoot is the directory holding go.work above the test's directory.
func repoRoot() (string, error) {
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

// copyWorkTree copies root's tracked and untracked, not ignored, files to
// dst (a tracked file deleted in the work tree is left out).
func copyWorkTree(root, dst string) error {
	out, err := git(root, "ls-files", "-co", "--exclude-standard", "-z")
	if err != nil {
		return err
	}
	for _, name := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			err = os.Symlink(target, to)
		case fi.Mode().IsRegular():
			var b []byte
			if b, err = os.ReadFile(src); err == nil {
				err = os.WriteFile(to, b, fi.Mode().Perm())
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// buildProxy writes cand.proxy: for every module, its candidate's .info,
// .mod and .zip (the zip made from the tag as the go command makes it from
// git, so its hash is the one make release recorded in go.sum).
func buildProxy() error {
	for _, m := range cand.modules {
		path := repoPath + "/" + m
		esc, err := module.EscapePath(path)
		if err != nil {
			return err
		}
		dir := filepath.Join(cand.proxy, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		tag := m + "/" + cand.version
		gomod, err := git(cand.repo, "show", tag+":"+m+"/go.mod")
		if err != nil {
			return err
		}
		info, _ := json.Marshal(map[string]string{"Version": cand.version, "Time": time.Now().UTC().Format(time.RFC3339)})
		zf, err := os.Create(filepath.Join(dir, cand.version+".zip"))
		if err != nil {
			return err
		}
		err = modzip.CreateFromVCS(zf, module.Version{Path: path, Version: cand.version}, cand.repo, tag, m)
		if cerr := zf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("zip of %s at %s: %w", path, tag, err)
		}
		for name, b := range map[string][]byte{".info": info, ".mod": []byte(gomod)} {
			if err := os.WriteFile(filepath.Join(dir, cand.version+name), b, 0o644); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "list"), []byte(cand.version+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// purgeModuleCache removes agentmem's modules from the module cache (its
// downloads and extracted trees), so that the cache does not grow by a
// candidate per run. Everything else stays.
func purgeModuleCache() {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	cache := strings.TrimSpace(string(out))
	if err != nil || cache == "" {
		return
	}
	var dirs []string
	dirs = append(dirs, filepath.Join(cache, "cache", "download", repoPath))
	extracted, _ := filepath.Glob(filepath.Join(cache, repoPath+"*"))
	dirs = append(dirs, extracted...)
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(d)
	}
}

// gitEnv names the author of the scratch commits.
var gitEnv = []string{
	"GIT_AUTHOR_NAME=agentmem-ci", "GIT_AUTHOR_EMAIL=ci@agentmem.invalid",
	"GIT_COMMITTER_NAME=agentmem-ci", "GIT_COMMITTER_EMAIL=ci@agentmem.invalid",
}

func git(dir string, args ...string) (string, error) {
	out, err := command(dir, gitEnv, "git", args...)
	if err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out, nil
}

// command runs name in dir with env added to the environment (no API keys)
// and returns its combined output.
func command(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GEMINI_API_KEY" && k != "GOOGLE_API_KEY" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}
