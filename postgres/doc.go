// Package postgres is the PostgreSQL driver for agentmem.
package postgres
