module github.com/agentmem/agentmem/postgres

go 1.26.5

require (
	github.com/agentmem/agentmem/contract v0.1.0
	github.com/agentmem/agentmem/core v0.1.0
	github.com/jackc/pgx/v5 v5.13.0
)

require (
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace (
	github.com/agentmem/agentmem/contract => ../contract
	github.com/agentmem/agentmem/core => ../core
)
