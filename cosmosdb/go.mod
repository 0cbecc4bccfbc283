module github.com/agentmem/agentmem/cosmosdb

go 1.26

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.21.0
	github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos v1.5.0
	github.com/agentmem/agentmem/contract v0.0.0
	github.com/agentmem/agentmem/core v0.0.0
)

require (
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.11.2 // indirect
	golang.org/x/net v0.52.0 // indirect
	golang.org/x/text v0.35.0 // indirect
)

replace (
	github.com/agentmem/agentmem/adk => ../adk
	github.com/agentmem/agentmem/contract => ../contract
	github.com/agentmem/agentmem/core => ../core
)
