//go:build unix

package search

import (
	"syscall"
	"time"
)

// nnCPU returns the CPU time (user and system) this process has used: on
// a shared machine it measures the work better than the wall clock.
func nnCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
