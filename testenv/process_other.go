//go:build !unix

package testenv

import (
	"errors"
	"os/exec"
)

// credential is unused where processes are not started.
type credential struct{}

var errNoProcesses = errors.New("testenv: use containers or set the AGENTMEM_* endpoints: local emulator processes need a Unix system")

func postgresCredential() (*credential, error)   { return nil, errNoProcesses }
func chownForPostgres(string, *credential) error { return nil }
func setCredential(*exec.Cmd, *credential)       {}
func setGroup(*exec.Cmd)                         {}
func signalGroup(int, bool) error                { return errNoProcesses }
