module github.com/agentmem/agentmem/embedapi

go 1.26.5

require github.com/agentmem/agentmem/core v0.1.0

replace github.com/agentmem/agentmem/core => ../core
