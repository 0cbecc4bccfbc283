//go:build unix

package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// credential is the user a process runs as (nil: the current one).
type credential = syscall.Credential

// postgresCredential returns the postgres user's ids when running as root
// (initdb refuses root), nil otherwise.
func postgresCredential() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w: the user postgres, needed as root because initdb refuses root (apt-get install postgresql-15)", ErrNotInstalled)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("testenv: the postgres user has ids %s:%s", u.Uid, u.Gid)
	}
	return &credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func chownForPostgres(dir string, cred *credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(dir, int(cred.Uid), int(cred.Gid))
}

func setCredential(cmd *exec.Cmd, cred *credential) {
	if cred == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = cred
}

func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// signalGroup sends SIGINT, or SIGKILL, to the process group pgid.
func signalGroup(pgid int, kill bool) error {
	if pgid <= 1 {
		return nil
	}
	sig := syscall.SIGINT
	if kill {
		sig = syscall.SIGKILL
	}
	return syscall.Kill(-pgid, sig)
}
