//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// multiProcess reports that the lock also excludes other processes.
const multiProcess = true

// lockFile takes an advisory flock on f; closing f releases it.
func lockFile(f *os.File, exclusive bool) (func(), error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return func() {}, err
		}
	}
}

// inode returns the inode number of fi, part of a lifetime fingerprint
// (see lifeEntry).
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
