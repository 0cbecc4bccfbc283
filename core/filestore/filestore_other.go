//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import (
	"os"
	"sync"
)

// multiProcess reports that the lock also excludes other processes. On
// this platform it does not: one process per directory.
const multiProcess = false

var processLock sync.RWMutex

// lockFile serialises the drivers of this process (no advisory file locks
// on this platform).
func lockFile(_ *os.File, exclusive bool) (func(), error) {
	if exclusive {
		processLock.Lock()
		return processLock.Unlock, nil
	}
	processLock.RLock()
	return processLock.RUnlock, nil
}

// readSmall reads the whole file name (os.ReadFile).
func readSmall(name string) ([]byte, error) { return os.ReadFile(name) }
