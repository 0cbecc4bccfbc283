//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import "syscall"

// syncDisk writes every file system's dirty data back (sync(2)).
func syncDisk() { syscall.Sync() }
