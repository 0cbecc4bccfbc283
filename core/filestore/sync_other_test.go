//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

// syncDisk does nothing where sync(2) is not at hand.
func syncDisk() {}
