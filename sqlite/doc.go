// Package sqlite is the SQLite driver for agentmem (pure Go, no cgo).
package sqlite
