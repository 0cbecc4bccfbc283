//go:build !unix

package search

import "time"

// nnCPU is not measured here (0: the cpu-ns/op metric reads 0).
func nnCPU() time.Duration { return 0 }
