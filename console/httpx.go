package console

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/store"
)

// ETag returns the strong entity-tag (quoted) that stands for a store
// version in ETag, If-Match and If-None-Match. A version of the
// characters [A-Za-z0-9._~-] is its own tag ("01JF…"); any other is
// "b64:" plus its unpadded base64url, so every tag is valid HTTP.
func ETag(version string) string {
	return `"` + etagValue(version) + `"`
}

func etagValue(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-') {
			return "b64:" + base64.RawURLEncoding.EncodeToString([]byte(v))
		}
	}
	return v
}

// versionOfTag is the version a quoted strong entity-tag stands for.
func versionOfTag(tag string) (string, bool) {
	if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return "", false
	}
	v := tag[1 : len(tag)-1]
	if strings.ContainsAny(v, `", `) {
		return "", false
	}
	if b, ok := strings.CutPrefix(v, "b64:"); ok {
		raw, err := base64.RawURLEncoding.DecodeString(b)
		if err != nil || !utf8.Valid(raw) {
			return "", false
		}
		return string(raw), true
	}
	return v, true
}

// precondition is what a mutation's If-Match / If-None-Match headers ask.
type precondition struct {
	ifMatch     string // the header as sent, for the fingerprint
	ifNoneMatch string
	expected    string // the version the store must find; "" = absent
	given       bool   // a header was given (else a create is asked, and an existing file is 428)
}

// mutationPrecondition reads If-Match (one strong entity-tag) or
// If-None-Match: * (create only). "If-Match: *" is refused: it would
// overwrite whatever is there.
func mutationPrecondition(r *http.Request) (precondition, error) {
	pc := precondition{ifMatch: strings.TrimSpace(r.Header.Get("If-Match")), ifNoneMatch: strings.TrimSpace(r.Header.Get("If-None-Match"))}
	bad := func(detail string) (precondition, error) {
		return precondition{}, problemOf(http.StatusBadRequest, "invalid-precondition", detail)
	}
	switch {
	case pc.ifMatch != "" && pc.ifNoneMatch != "":
		return bad("send If-Match (update) or If-None-Match: * (create), not both")
	case pc.ifMatch == "*":
		return bad("If-Match: * would overwrite any version: send the ETag you read")
	case pc.ifMatch != "":
		v, ok := versionOfTag(pc.ifMatch)
		if !ok {
			return bad("If-Match must be one strong entity-tag, the ETag of a read (a quoted version)")
		}
		pc.expected, pc.given = v, true
	case pc.ifNoneMatch == "*":
		pc.given = true
	case pc.ifNoneMatch != "":
		return bad("only If-None-Match: * (create only) is supported on a mutation")
	}
	return pc, nil
}

// errPreconditionRequired answers a mutation that needs a precondition:
// what it found, and how to ask. orAbsent, when not "", is the other
// way, If-None-Match: * and when it applies ("to create"); a delete has
// none.
func errPreconditionRequired(what, orAbsent string) error {
	hint := "send If-Match with the ETag you read"
	if orAbsent != "" {
		hint += " (or If-None-Match: * " + orAbsent + ")"
	}
	return problemOf(http.StatusPreconditionRequired, "precondition-required", what+": "+hint+"; nothing is overwritten blindly")
}

// MaxIdempotencyKeyChars bounds an Idempotency-Key.
const MaxIdempotencyKeyChars = 255

// operation is the store operation of c's Idempotency-Key, or nil without
// one. Its id is derived from the key, the principal and the namespace,
// so that one principal's key never replays another's request; its
// fingerprint digests parts (the method, path, body and preconditions),
// so that the same key with another request is refused
// (store.ErrOperationConflict, 422).
func (c *call) operation(parts ...string) (*store.Operation, error) {
	key := strings.TrimSpace(c.r.Header.Get("Idempotency-Key"))
	if key == "" {
		return nil, nil
	}
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1] // a structured-field string, as the IETF draft sends it
	}
	ok := key != "" && len(key) <= MaxIdempotencyKeyChars
	for i := 0; ok && i < len(key); i++ {
		ok = key[i] >= 0x21 && key[i] <= 0x7e
	}
	if !ok {
		return nil, problemOf(http.StatusBadRequest, "invalid-idempotency-key", "an Idempotency-Key is 1-255 visible ASCII characters (a UUID is a good one)")
	}
	return c.operationFor(key, append([]string{c.r.Method}, parts...)...), nil
}

// operationFor is the store operation of key for c's principal and
// namespace, fingerprinted by parts. The API's Idempotency-Key and the
// pages' per-form token (prefixed "form:", so the two never meet) both
// come here.
func (c *call) operationFor(key string, parts ...string) *store.Operation {
	who := "user"
	if c.p.Admin {
		who = "admin"
	}
	return &store.Operation{
		ID:          "console:" + digest("agentmem console operation", who, c.p.User, c.ns, key),
		Fingerprint: digest(parts...),
	}
}

// digest is the hex SHA-256 of parts, each length-prefixed.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p)) + ":" + p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digestHex is the hex SHA-256 of s.
func digestHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// setMutationHeaders sets the ETag of version and, for a replay,
// Idempotent-Replayed: true.
func setMutationHeaders(w http.ResponseWriter, version string, m store.Mutation) {
	if version != "" {
		w.Header().Set("ETag", ETag(version))
	}
	if m.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
}

// readBody reads the request body, at most h.maxBody bytes (413 beyond).
func (h *Handler) readBody(c *call) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, h.maxBody))
}

// mediaType is the request's media type, lower case, without parameters.
func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func errMediaType(want string) error {
	return problemOf(http.StatusUnsupportedMediaType, "unsupported-media-type", "send Content-Type: "+want)
}

// decodeJSON decodes body into v, refusing unknown fields and trailing
// data, and refusing text that encoding/json would silently change:
// bytes that are not UTF-8 and \u escapes of unpaired surrogates, which
// it decodes as U+FFFD. Every route that takes JSON decodes it here.
func decodeJSON(body []byte, v any) error {
	if !utf8.Valid(body) {
		return problemOf(http.StatusBadRequest, "invalid-body", "the body is not valid UTF-8: send the JSON encoded as UTF-8; nothing was written")
	}
	if esc := loneSurrogate(body); esc != "" {
		return problemOf(http.StatusBadRequest, "invalid-body", "the body's JSON escape "+esc+" is half of a surrogate pair, which is no character: send valid Unicode; nothing was written")
	}
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil && d.More() {
		err = errors.New("data after the JSON object")
	}
	if err != nil {
		return problemOf(http.StatusBadRequest, "invalid-body", "the body is not the JSON object this operation takes: "+err.Error())
	}
	return nil
}

// loneSurrogate is the first \u escape in a JSON string of body that is
// a surrogate not paired (a high one followed by a low one), "" when
// none. Malformed escapes are left to the decoder.
func loneSurrogate(body []byte) string {
	hex4 := func(i int) (rune, bool) { // the escape \uXXXX at body[i]
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	inString := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			inString = !inString
		case c != '\\' || !inString:
		case i+1 < len(body) && body[i+1] != 'u':
			i++ // a one-character escape such as \" or \\
		default:
			r, ok := hex4(i)
			if !ok {
				continue
			}
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(i + 6)
				if r >= 0xdc00 || !ok || lo < 0xdc00 || lo > 0xdfff {
					return string(body[i : i+6])
				}
				i += 6
			}
			i += 5
		}
	}
	return ""
}

// queryInt reads the integer parameter name in [1, max], def when absent.
func queryInt(r *http.Request, name string, def, max int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max {
		return 0, problemOf(http.StatusBadRequest, "invalid-parameter", name+" must be an integer from 1 to "+strconv.Itoa(max))
	}
	return n, nil
}

// Cursors are opaque to clients: base64url of the route kind, the
// namespace and the position, so that a cursor of one listing is refused
// by another.

func makeCursor(kind, ns, pos string) string {
	if pos == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "\x00" + ns + "\x00" + pos))
}

// readCursor returns the position of c's "cursor" parameter ("" without
// one), refusing a cursor made for another listing.
func readCursor(c *call, kind string) (string, error) {
	s := c.r.URL.Query().Get("cursor")
	if s == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	parts := strings.SplitN(string(b), "\x00", 3)
	if err != nil || len(parts) != 3 || parts[0] != kind || parts[1] != c.ns || parts[2] == "" {
		return "", problemOf(http.StatusBadRequest, "invalid-cursor", "cursor must be a next_cursor this listing returned")
	}
	return parts[2], nil
}
