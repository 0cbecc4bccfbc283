package store

import "time"

// SetCloseTimeout shortens s's Close bound ([CloseTimeout]) for a test.
func SetCloseTimeout(s *Store, d time.Duration) { s.closeTimeout = d }
