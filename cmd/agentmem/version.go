package main

import (
	"runtime/debug"
	"strings"
)

// version describes the build from its build info: the module version
// ("v0.1.0" when installed from a release, "(devel)" from a clone), then
// the VCS revision and whether the tree was modified, when the build
// recorded them; a build from a clone that recorded none says so, and how
// to get one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown: built without module information)"
	}
	return versionOf(bi)
}

// noRevision is what version says of a build from a clone without VCS
// information: go run never records it, nor -buildvcs=false, nor a linked
// git worktree (the go command finds no .git directory there).
const noRevision = "no VCS revision: built by go run, with -buildvcs=false or in a linked git worktree"

// versionOf is version for the build info bi.
func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var parts []string
	if rev == "" && v == "(devel)" {
		parts = append(parts, noRevision)
	}
	if rev != "" {
		parts = append(parts, "revision "+rev)
		if when != "" {
			parts = append(parts, when)
		}
		if modified {
			parts = append(parts, "modified")
		}
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	if len(parts) == 0 {
		return v
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}
