// Package e2e holds agentmem's end-to-end tests: each framework adapter
// driven by its real runtime, with a scripted model, on every backend
// (memstore, filestore, SQLite, PostgreSQL, DynamoDB, Firestore, Cosmos DB)
// in both of the conformance suite's modes.
//
// It is a module of its own so that no backend module depends on an agent
// framework: a program that imports one backend pulls only that backend's
// SDK. The cloud backends run against the emulators that `make test`
// starts (see the contract/emulator package); an endpoint from the
// environment wins.
package e2e
