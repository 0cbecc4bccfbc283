module github.com/agentmem/agentmem/cosmosdb

go 1.26.5

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.21.0
	github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos v1.5.0
	github.com/agentmem/agentmem/contract v0.1.0
	github.com/agentmem/agentmem/core v0.1.0
)

require (
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.11.2 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace (
	github.com/agentmem/agentmem/contract => ../contract
	github.com/agentmem/agentmem/core => ../core
)
