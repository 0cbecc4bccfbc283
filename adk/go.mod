module github.com/agentmem/agentmem/adk

go 1.26

require (
	github.com/agentmem/agentmem/contract v0.0.0
	github.com/agentmem/agentmem/core v0.0.0
)

replace (
	github.com/agentmem/agentmem/contract => ../contract
	github.com/agentmem/agentmem/core => ../core
)
