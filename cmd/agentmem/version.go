package main

import (
	"runtime/debug"
	"strings"
)

// version describes the build from its build info: the module version
// ("v0.1.0" when installed from a release, "(devel)" from a clone), then
// the VCS revision and whether the tree was modified, when the build
// recorded them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown: built without module information)"
	}
	return versionOf(bi)
}

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
