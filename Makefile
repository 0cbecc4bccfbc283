# agentmem — every target works from a fresh clone.
#   make test                 vet + all tests (+ emulators, started and stopped here)
#   make test TESTFLAGS=-v    the same, verbose
#   make bench                benchmarks: backend requests per operation and latency ratios
#   make quickstart           the README's first command
#   make install              the agentmem command, built from this clone, into $(go env GOBIN) or ~/go/bin
#   make tidy                 one go directive, one version per dependency, every module tidy
#   make release VERSION=vX.Y.Z   commit and tag a release locally (never pushes; RELEASING.md),
#                             then cross-build agentmem into dist/ with checksums
#   make dist                 agentmem for linux/darwin/windows on amd64/arm64, SHA256SUMS, in dist/
#   make image                the container image agentmem:local (FROM scratch: no registry)

SHELL := /bin/bash
MODULES := $(shell go list -m -f '{{.Dir}}' 2>/dev/null)
BENCHFLAGS ?= -benchtime=200x

.PHONY: test bench vet fmt quickstart install tidy release dist image
test:
	scripts/test.sh

bench:
	scripts/bench.sh $(BENCHFLAGS)

vet:
	@for m in $(MODULES); do (cd $$m && go vet ./...) || exit 1; done

fmt:
	gofmt -w $(MODULES)

quickstart:
	go run ./examples/quickstart

install:
	go install ./cmd/agentmem
	@bin=$$(go env GOBIN); bin=$${bin:-$$(go env GOPATH)/bin}; echo "installed $$bin/agentmem: $$("$$bin/agentmem" --version)"

tidy:
	scripts/modules.sh tidy

release:
	scripts/release.sh $(VERSION)
	scripts/dist.sh $(VERSION)

dist:
	scripts/dist.sh

image:
	rm -rf dist/image && mkdir -p dist/image/data
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o dist/image/agentmem ./cmd/agentmem
	cp /etc/ssl/certs/ca-certificates.crt dist/image/
	docker build -f Dockerfile -t agentmem:local dist/image
