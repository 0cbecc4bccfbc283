package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0 (go1.26.0)"},
		{"clone", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "44886f2abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel) (revision 44886f2abc, 2026-01-02T03:04:05Z, modified, go1.26.0)"},
		{"clone, no VCS information", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			"(devel) (" + noRevision + ", go1.26.0)"},
		{"modified clone", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "44886f2abc"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel) (revision 44886f2abc, modified, go1.26.0)"},
		{"bare", debug.BuildInfo{}, "(devel) (" + noRevision + ")"},
	} {
		if got := versionOf(&c.bi); got != c.want {
			t.Errorf("%s: versionOf = %q, want %q", c.name, got, c.want)
		}
	}
}
