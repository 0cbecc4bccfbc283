//go:build !linux

package testenv

import "os/exec"

// setDeathSignal does nothing where the kernel has no parent-death signal:
// there an emulator outlives a test binary that dies without its cleanup.
func setDeathSignal(*exec.Cmd) {}
