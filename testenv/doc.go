// Package testenv gives a backend's test binary the emulators it needs,
// started once for all the tests of the package and stopped when they end.
//
//	func TestMain(m *testing.M) { testenv.Main(m, testenv.Postgres) }
//
// For each emulator asked for, in this order:
//
//  1. an endpoint in the environment wins (AGENTMEM_POSTGRES_URL,
//     AGENTMEM_DYNAMODB_ENDPOINT, AGENTMEM_FIRESTORE_EMULATOR_HOST,
//     AGENTMEM_COSMOS_ENDPOINT), and nothing is started;
//  2. otherwise, where a Docker daemon answers, testcontainers-go starts a
//     container (the PostgreSQL module; generic containers for DynamoDB
//     Local, the Firestore emulator and the Cosmos DB server) from the images
//     that `scripts/emulators.sh images` builds from local files, or from the
//     images named by AGENTMEM_<NAME>_IMAGE;
//  3. otherwise a local process runs the same artifacts `scripts/emulators.sh
//     install` put under .cache/emulators (a throwaway PostgreSQL cluster,
//     DynamoDB Local, the official Firestore emulator, the patched
//     @vercel/cosmosdb-server), on a free 127.0.0.1 port.
//
// AGENTMEM_EMULATORS=containers or =processes forces one of 2 and 3. The
// endpoints of what was started go into the same environment variables, so
// tests read them with contract/emulator as before.
//
// # Errors
//
// An emulator that cannot start fails the whole test binary with a message
// that says what to install or set; the tests are never skipped. The
// sentinels are [ErrMode], [ErrNoDocker], [ErrNotInstalled] and
// [ErrNotReady].
//
// # Cleanup
//
// Processes run in their own process group and are stopped by that group's
// id; containers are terminated by id (Ryuk, the reaper container, needs a
// registry and is disabled unless TESTCONTAINERS_RYUK_DISABLED is set).
// Cleanup is registered before a start's error is checked, so a half-started
// emulator is stopped too. When a test binary dies without its cleanup (a
// panic, -timeout, SIGKILL), Linux kills its processes (parent-death
// signal); its containers stay, labelled agentmem.testenv=1, for
// scripts/containers.sh to remove.
package testenv
