# toolgate: the two set-up commands are `make demo` and `make test`.
# Everything is installed into the project (bin/, .cache/, .stack/); each step
# reuses what is already there, so a second run takes seconds.
SHELL := /bin/bash
GO ?= go
ROOT := $(CURDIR)
BIN := $(ROOT)/bin
export TOOLGATE_LIBCHDB ?= $(ROOT)/.cache/chdb/libchdb.so
export TOOLGATE_OTELCOL ?= $(BIN)/otelcol-toolgate
export TOOLGATE_JAEGER ?= $(BIN)/jaeger
export TOOLGATE_AUDITQ ?= $(BIN)/auditq
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all demo test stop status deps modules libchdb collector jaeger cluster chromium agents mcpservers build vet unit race exportertest bench bench-store fuzz clean

all: build

## demo: start the local stack and replay real agent runs through the gate
demo: deps build
	@scripts/demo.sh

## test: install and build what the tests need, then run the whole suite
test: deps cluster chromium agents mcpservers build vet
	@echo "==> go test ./... (integration tests use the real ClickHouse engine, collector and Jaeger)"
	TOOLGATE_INTEGRATION=1 $(GO) test -count=1 -timeout 25m ./...
	@echo "==> go test -race (executor, gate, otelbridge, replay)"
	TOOLGATE_INTEGRATION=1 $(GO) test -race -count=1 -timeout 10m ./executor/... ./gate/... ./otelbridge/... ./replay/...
	@$(MAKE) --no-print-directory exportertest

## stop: end the stack the demo leaves running
stop:
	@scripts/stack.sh stop

status:
	@scripts/stack.sh status || true

## deps: Go modules, libchdb, our collector and Jaeger (cached after the first run)
deps: modules libchdb collector jaeger

modules:
	@echo "==> Go modules"
	@$(GO) mod download
	@cd audit/exportertest && $(GO) mod download

libchdb:
	@echo "==> libchdb (the embedded ClickHouse engine, npm @chdb/lib-linux-x64-gnu)"
	@scripts/install-libchdb.sh >/dev/null

collector:
	@echo "==> OpenTelemetry Collector (our build, bin/otelcol-toolgate)"
	@scripts/build-collector.sh

jaeger:
	@echo "==> Jaeger v2 (bin/jaeger)"
	@scripts/build-jaeger.sh

## chromium: Debian's Chromium, for the browser test of the approvals page
chromium:
	@echo "==> Chromium (Debian package; the approvals page's browser test)"
	@scripts/install-chromium.sh >/dev/null

## mcpservers: the MCP servers and the Inspector CLI the gateway's tests drive (npm, cached in ~/.cache/toolgate/npm/mcp)
mcpservers:
	@echo "==> MCP servers from npm (server-filesystem, server-everything, inspector; ~/.cache/toolgate/npm/mcp)"
	@scripts/install-mcp-servers.sh >/dev/null

## agents: the coding agents' CLIs (Claude Code, Codex, Gemini CLI from npm, pinned), for the hook tests
## (cmd/toolgate); cached outside the repository in ~/.cache/toolgate/agents
agents:
	@echo "==> coding-agent CLIs (npm: @anthropic-ai/claude-code, @openai/codex, @google/gemini-cli; cached)"
	@scripts/install-agents.sh >/dev/null

## cluster: the load-balancing collector of the cluster variant (bin/otelcol-toolgate-cluster)
cluster:
	@echo "==> OpenTelemetry Collector, cluster variant (bin/otelcol-toolgate-cluster)"
	@scripts/build-collector.sh --manifest deploy/otel-collector/builder-cluster.yaml

## build: our binaries into bin/
build:
	@mkdir -p $(BIN)
	@echo "==> go build ./cmd/... -> bin/"
	@$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

vet:
	@echo "==> gofmt, go vet"
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [[ -n "$$out" ]]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@if git grep -n -E '^(<<<<<<<|>>>>>>>) ' -- . ; then echo "merge conflict markers (above)"; exit 1; fi
	@$(GO) vet ./...
	@cd audit/exportertest && $(GO) vet ./...

exportertest:
	@echo "==> audit/exportertest (the collector's clickhouseexporter against the embedded server)"
	cd audit/exportertest && TOOLGATE_INTEGRATION=1 $(GO) test -race -count=1 -timeout 10m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-store: the audit store at scale (not part of make test; bounded, about 10 min for the
## default sizes on 2 cores): loads BENCH_STORE_SIZES synthetic decisions through otel_traces,
## reports each auditq question's median and the export's rows/s (table in .cache/bench-store.md),
## then checks the dashboard's roll-up panels against gate_decisions at 1M decisions.
## BENCH_STORE_SIZES=100000,1000000,10000000 adds 10M (about 25 more minutes, 3 GB of disk).
BENCH_STORE_SIZES ?= 100000,1000000
bench-store: libchdb
	@mkdir -p $(ROOT)/.cache
	TOOLGATE_INTEGRATION=1 TOOLGATE_STORE_BENCH=$(BENCH_STORE_SIZES) TOOLGATE_STORE_BENCH_OUT=$(ROOT)/.cache/bench-store.md \
	  $(GO) test -count=1 -timeout 90m -run '^TestStoreScale$$' -v ./audit/
	TOOLGATE_INTEGRATION=1 TOOLGATE_PANEL_DECISIONS=1000000 $(GO) test -count=1 -timeout 30m -run '^TestRollupPanelsOnTheEngine$$' ./deploy/grafana/

## fuzz: a short run of every fuzz target
fuzz:
	@for t in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$t/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "==> $$t $$f"; $(GO) test $$t -run '^$$' -fuzz "^$$f$$" -fuzztime 20s || exit 1; \
	  done; \
	done

clean:
	rm -rf $(BIN) .demo
