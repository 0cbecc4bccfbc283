package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentmem/agentmem/core/store"
)

// KeyFile verifies API keys against a file of hashed keys, one per line:
//
//	# comments and blank lines are ignored
//	sha256:<64 hex digits> <user id>
//	sha256:<64 hex digits> <user id> admin
//
// The optional third field is the key's role: [RoleUser] (the default,
// so files written before roles keep working) or [RoleAdmin]. Over MCP
// every key is its user's alone (an admin key reaches its own notebook);
// the role matters to the console and its JSON API, where an admin key
// reaches every namespace. [KeyFile.Verify] reports it ([IsAdmin]).
//
// The hash is SHA-256 of the key as the client sends it (after "Bearer ");
// [HashKey] prints a line's first field. The file never holds a key. A
// user may have several keys; a hash may appear once. The file is read
// again when its modification time, size or identity changes (checked on
// every request), so keys are added and revoked without a restart. Write a
// new file and rename it over the old one: an edit in place that keeps the
// size within one tick of the file system's clock could go unseen. While the file is missing or
// malformed every request fails (HTTP 500), never open.
//
// Keys are compared in constant time against every line.
type KeyFile struct {
	path string

	mu   sync.Mutex
	info os.FileInfo
	keys []apiKey
	err  error
}

type apiKey struct {
	hash [sha256.Size]byte
	user string
	role string
}

// The roles of a key file line (its optional third field).
const (
	// RoleUser reaches its user's own namespace only: the default.
	RoleUser = "user"
	// RoleAdmin reaches every namespace of the console and its API, and
	// their admin operations (listing namespaces, forgetting one).
	RoleAdmin = "admin"
)

// RoleExtra is the key of auth.TokenInfo.Extra under which
// [KeyFile.Verify] reports a key's role ([RoleUser] or [RoleAdmin]).
const RoleExtra = "agentmem.role"

// IsAdmin reports whether info, as [KeyFile.Verify] returned it, is an
// admin key's. It is false for nil and for tokens of other verifiers.
func IsAdmin(info *auth.TokenInfo) bool {
	if info == nil {
		return false
	}
	role, _ := info.Extra[RoleExtra].(string)
	return role == RoleAdmin
}

// ErrKeyFile reports a key file that cannot be read or parsed.
var ErrKeyFile = errors.New("mcp: API key file")

// OpenKeyFile reads the key file at path. It fails, wrapping [ErrKeyFile],
// when the file cannot be read or a line is malformed (the error names the
// line number, never its content).
func OpenKeyFile(path string) (*KeyFile, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: pass the file's path to OpenKeyFile, not an empty one: %w", ErrKeyFile, store.ErrNilArgument)
	}
	k := &KeyFile{path: path}
	if err := k.reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// HashKey returns the first field of a key file line for key:
// "sha256:<hex>".
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Verify is an auth.TokenVerifier: it returns the key's user as
// TokenInfo.UserID (no expiry: a key lives until its line is removed) and
// its role as TokenInfo.Extra[RoleExtra] ([IsAdmin]), or an error
// wrapping auth.ErrInvalidToken for an unknown key (HTTP 401), or one
// wrapping [ErrKeyFile] while the file cannot be read or parsed.
func (k *KeyFile) Verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	keys, err := k.current()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(token))
	var found apiKey
	for _, key := range keys {
		if subtle.ConstantTimeCompare(sum[:], key.hash[:]) == 1 {
			found = key
		}
	}
	if found.user == "" {
		return nil, fmt.Errorf("%w: unknown API key", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: found.user, Extra: map[string]any{RoleExtra: found.role}}, nil
}

// current returns the keys, reloading the file when it changed.
func (k *KeyFile) current() ([]apiKey, error) {
	fi, err := os.Stat(k.path) // outside the lock: requests stat in parallel
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		k.info, k.keys, k.err = nil, nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
		return nil, k.err
	}
	if k.info == nil || !os.SameFile(fi, k.info) || !fi.ModTime().Equal(k.info.ModTime()) || fi.Size() != k.info.Size() {
		k.load()
	}
	return k.keys, k.err
}

func (k *KeyFile) reload() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.load()
	return k.err
}

// load reads the file; k.mu is held. On failure no key is valid.
func (k *KeyFile) load() {
	k.info, k.keys, k.err = nil, nil, nil
	fi, err := os.Stat(k.path)
	if err == nil {
		var data []byte
		if data, err = os.ReadFile(k.path); err == nil {
			k.keys, err = parseKeys(data)
		}
	}
	if err != nil {
		k.keys, k.err = nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	// Remember the stat from before the read: a change during the read
	// shows as a change on the next request.
	k.info = fi
}

func parseKeys(data []byte) ([]apiKey, error) {
	var keys []apiKey
	seen := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		hexHash, ok := strings.CutPrefix(f[0], "sha256:")
		raw, err := hex.DecodeString(hexHash)
		if len(f) < 2 || len(f) > 3 || !ok || err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("line %d: want \"sha256:<64 hex digits> <user id> [admin]\"", n)
		}
		key := apiKey{user: f[1], role: RoleUser}
		copy(key.hash[:], raw)
		if len(f) == 3 {
			if f[2] != RoleUser && f[2] != RoleAdmin {
				return nil, fmt.Errorf("line %d: the third field is the key's role: want %q or %q", n, RoleAdmin, RoleUser)
			}
			key.role = f[2]
		}
		if seen[key.hash] {
			return nil, fmt.Errorf("line %d: this key hash is already listed", n)
		}
		seen[key.hash] = true
		keys = append(keys, key)
	}
	return keys, sc.Err()
}
