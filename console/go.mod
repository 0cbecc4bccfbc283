module github.com/agentmem/agentmem/console

go 1.26.5

require github.com/agentmem/agentmem/core v0.1.0

require github.com/yuin/goldmark v1.8.7

replace github.com/agentmem/agentmem/core => ../core
