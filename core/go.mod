module github.com/agentmem/agentmem/core

go 1.26.5
