// Package releasecheck proves that a candidate release of agentmem installs
// from outside the repository, as a new user would. It has no API: its
// tests are the check, and `make test` runs them (scripts/test.sh).
//
//	go test -count=1 ./releasecheck/            # the check
//	go test -count=1 ./releasecheck/ -update    # rewrite the golden dependency lists
//
// TestMain copies the work tree (tracked and untracked files, as git would
// commit them) into a scratch repository, cuts a candidate release there
// with `make release` (v0.99.0-candidate.<unix time>: the go command caches
// what it learns about a module version for good, so a version cut again
// from other commits would be built from what an earlier run saw), and
// serves every tagged module from a local module proxy (a GOPROXY=file://
// directory in front of the usual proxy; nothing reaches the network for
// agentmem). Then:
//
//   - TestRelease: make release tagged every module and left the tree clean,
//     the workspace still builds, and it refuses a used, malformed or v2+
//     version and a dirty tree;
//   - TestModulesAtCandidate: every module at the candidate is tidy and
//     vets with GOWORK=off;
//   - TestConsumers: one testscript per consumer (testdata/consumers): a
//     fresh outside module go-gets agentmem modules at the candidate,
//     builds and runs a program, and compares its `go list -m all` with a
//     golden list in the script, so a new dependency shows as a diff; the
//     script also names the SDKs it may pull (no-sdk) and, for the
//     standard-library-only modules, that nothing else comes (only). The
//     quickstart runs with go run …@CANDIDATE and cmd/agentmem installs
//     with go install …@CANDIDATE and stores a file on SQLite.
//
// One check runs at a time per machine (a lock file under TMPDIR): each
// removes agentmem's modules from the shared module cache when it ends.
package releasecheck
