// Package cosmosdb is the Azure Cosmos DB (NoSQL) driver for agentmem.
package cosmosdb
