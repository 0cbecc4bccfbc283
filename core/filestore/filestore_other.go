//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import (
	"io/fs"
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

// inode is 0 on this platform: a lifetime fingerprint (see lifeEntry) is
// the size and modification time alone.
func inode(fs.FileInfo) uint64 { return 0 }
