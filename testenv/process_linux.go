//go:build linux

package testenv

import (
	"os/exec"
	"syscall"
)

// setDeathSignal kills the emulator when the test binary dies without
// running its cleanup (a panic, a timeout, SIGKILL). PostgreSQL's backends
// follow their postmaster.
func setDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
