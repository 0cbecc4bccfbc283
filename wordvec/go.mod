module github.com/agentmem/agentmem/wordvec

go 1.26.5
