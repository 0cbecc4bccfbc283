package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// EscapeNamespace maps any identifier (an email, a UUID, "team/alice") to a
// namespace that is one valid path segment, injectively: two different ids
// never share a notebook. Letters, digits, "-" and a "." that neither
// starts the id nor follows another "." stay as they are; every other
// byte, "_" itself and those dots become "_" plus two hex digits, so no
// namespace is hidden, reserved or a lone "." ("kamal@example.com" →
// "kamal_40example.com", "user_1" → "user_5f1", "a/b" → "a_2fb",
// ".agentmem" → "_2eagentmem"). An id whose escaped form would be longer
// than a path segment (200 characters) becomes "_h" plus the SHA-256 of
// the id. The empty id stays empty (no namespace).
//
// Adapters use it for ids that come from outside (such as the ADK user id),
// so that an id can neither be refused as an invalid path nor address
// another tenant's files.
func EscapeNamespace(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		case c == '.' && i > 0 && id[i-1] != '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	if b.Len() > 200 {
		sum := sha256.Sum256([]byte(id))
		return "_h" + hex.EncodeToString(sum[:])
	}
	return b.String()
}
