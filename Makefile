# toolgate: the two set-up commands are `make demo` and `make test`.
# Everything is installed into the project (bin/, .cache/); nothing global.
SHELL := /bin/bash
GO ?= go
ROOT := $(CURDIR)
BIN := $(ROOT)/bin
export TOOLGATE_LIBCHDB ?= $(ROOT)/.cache/chdb/libchdb.so

.PHONY: all demo test stop deps libchdb build vet unit fmt bench clean

all: build

## deps: Go modules and libchdb (idempotent)
deps: libchdb
	@echo "==> go mod download"
	@$(GO) mod download

libchdb:
	@echo "==> libchdb (embedded ClickHouse engine)"
	@scripts/install-libchdb.sh >/dev/null

## build: the project's binaries into bin/
build:
	@mkdir -p $(BIN)
	@echo "==> go build ./cmd/..."
	@$(GO) build -o $(BIN)/ ./cmd/...

vet:
	@echo "==> gofmt + go vet"
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	@$(GO) vet ./...

## test: everything the tests need, then the whole suite
test: deps vet
	@echo "==> go test ./... (integration tests required)"
	TOOLGATE_INTEGRATION=1 $(GO) test -race -count=1 -timeout 20m ./...

## demo: the main job on the embedded default
demo: deps build
	@echo "==> demo"
	@$(BIN)/toolgate-demo

## stop: end the stack the demo leaves running
stop:
	@echo "==> stop"

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN) .demo .stack
