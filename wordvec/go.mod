module github.com/agentmem/agentmem/wordvec

go 1.26.5

require github.com/agentmem/agentmem/core v0.1.0

replace github.com/agentmem/agentmem/core => ../core
