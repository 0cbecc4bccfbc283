// Package imagetest builds the container image of the repository's
// Dockerfile from a static agentmem built here and smoke-tests it:
// /healthz, /readyz and one API write with a user key. It needs a Docker
// daemon; scripts/containers.sh (make test) runs it with -tags image where
// it starts one. No registry is used: the Dockerfile starts FROM scratch.
package imagetest
