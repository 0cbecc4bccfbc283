module github.com/agentmem/agentmem/releasecheck

go 1.26.5

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/mod v0.42.0
)

require (
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
