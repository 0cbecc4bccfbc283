module github.com/agentmem/agentmem/embedapi

go 1.26.5
