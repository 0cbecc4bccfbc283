// Metadata: its bounds and normalisation.

package store

import (
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/canon"
)

// MaxMetadataChars bounds write metadata encoded as canonical JSON (sorted
// keys, no whitespace, non-ASCII kept as is), counted in runes.
const MaxMetadataChars = 4096

// ValidateMetadata reports whether m is acceptable write metadata: no NUL,
// valid UTF-8, at most MaxMetadataChars runes as canonical JSON. The error
// wraps ErrInvalidMetadata.
func ValidateMetadata(m map[string]string) error {
	_, err := normalizeMetadata(m)
	return err
}

// normalizeMetadata validates m and returns a private copy, or nil for an
// empty map.
func normalizeMetadata(m map[string]string) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	for k, v := range m {
		if strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("%w: keys and values must not contain NUL", ErrInvalidMetadata)
		}
		if strings.HasPrefix(k, driver.StoreKeyPrefix) {
			return nil, fmt.Errorf("%w: key %q: keys starting with %q are the store's own; set a file's expiry and pin with WriteRequest.ExpiresAt and Pinned", ErrInvalidMetadata, k, driver.StoreKeyPrefix)
		}
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, fmt.Errorf("%w: keys and values must be valid UTF-8", ErrInvalidMetadata)
		}
	}
	if n := utf8.RuneCountInString(canon.EncodeText(m)); n > MaxMetadataChars {
		return nil, fmt.Errorf("%w: %d chars as JSON, limit %d", ErrInvalidMetadata, n, MaxMetadataChars)
	}
	return maps.Clone(m), nil
}
