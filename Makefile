# otelcol-accel — build, run and test the distribution.
#
#   make run    build everything and run the demo fleet
#   make test   lint + unit tests + ocb build + end-to-end tests
#
# Everything the targets need is installed by them: ocb, mdatagen and
# golangci-lint (pinned) into a tool cache outside the clone, Go modules
# through the module proxy, and Debian packages (prometheus, for the
# dashboard test) with apt-get.

SHELL        := /usr/bin/env bash
.SHELLFLAGS  := -eu -o pipefail -c
GO           ?= go
# Built tools live outside the clone (CI runs on a fresh clone of the same
# machine, where ./bin would start empty), each under its pinned version, so
# changing a version builds the new one and a clone reuses the old build.
TOOLS_CACHE  ?= $(HOME)/.cache/otelcol-accel/tools
BIN          := $(TOOLS_CACHE)
OCB_VERSION  := v0.165.0
OCB          := $(BIN)/builder-$(OCB_VERSION)
MDATAGEN_VERSION := $(shell awk '$$1 == "go.opentelemetry.io/collector/cmd/mdatagen" {print $$2}' internal/tools/mdatagen/go.mod)
MDATAGEN     := $(BIN)/mdatagen-$(MDATAGEN_VERSION)
GOLANGCI_LINT_VERSION := $(shell awk '$$1 == "require" && $$2 == "github.com/golangci/golangci-lint/v2" {print $$3} $$1 == "github.com/golangci/golangci-lint/v2" {print $$2}' internal/tools/golangci-lint/go.mod)
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUBE_APISERVER_VERSION := $(shell awk '$$1 == "require" && $$2 == "k8s.io/kubernetes" {print $$3}' internal/tools/kube-apiserver/go.mod)
KUBE_APISERVER := $(BIN)/kube-apiserver-$(KUBE_APISERVER_VERSION)
BUILD_DIR    := _build
DIST         := $(BUILD_DIR)/otelcol-accel
AGENT        := $(BUILD_DIR)/otelcol-accel-agent
ACCELSIM     := $(BUILD_DIR)/accelsim
# Component folders that carry an mdatagen metadata.yaml.
COMPONENTS   := $(patsubst %/metadata.yaml,%,$(wildcard receiver/*/metadata.yaml processor/*/metadata.yaml exporter/*/metadata.yaml))
# Fuzz time per target: short in `make test`, longer in `make fuzz`.
FUZZTIME     ?= 10s
GOTEST_FLAGS ?=

export OTELCOL_ACCEL_BIN := $(CURDIR)/$(DIST)
export OTELCOL_ACCEL_AGENT_BIN := $(CURDIR)/$(AGENT)
export ACCELSIM_BIN      := $(CURDIR)/$(ACCELSIM)
# The remediation exporter's tests run a real kube-apiserver (with Debian's
# etcd); under make they fail, rather than skip, when it is missing.
export KUBE_APISERVER_BIN := $(KUBE_APISERVER)
export OTELCOL_ACCEL_REQUIRE_KUBE_APISERVER := 1

# Go modules besides the root one (their own go.mod keeps heavy test-only
# dependencies, like kustomize, out of the collector's build).
SUBMODULES   := test/manifests test/browser

.PHONY: all build dist accelsim FORCE run test unit e2e lint generate manifests bench fuzz fuzz-short tools deps-debian gpu-check clean help

all: build

help:
	@echo "make run        build and run the demo fleet (collector + simulator)"
	@echo "make test       lint, unit tests, ocb build, end-to-end tests"
	@echo "make build      generate code and build $(DIST) (gateways), $(AGENT) (nodes) and $(ACCELSIM)"
	@echo "make bench      Go benchmarks and the load harness against the built binary"
	@echo "make fuzz       every fuzz target for FUZZTIME (default 2m; make test runs each for $(FUZZTIME))"
	@echo "make manifests  rebuild the Kubernetes ConfigMaps, the Helm chart's files and the alert rule files from their sources"
	@echo "make gpu-check  exercise the real NVML path (needs an NVIDIA GPU and driver)"

## ---- tools ---------------------------------------------------------------

tools: $(OCB) $(MDATAGEN) $(GOLANGCI_LINT) $(KUBE_APISERVER)

# ocb is installed under a versioned name so that changing OCB_VERSION
# reinstalls it, while a CI cache of ./bin keeps it between runs.
$(OCB):
	@mkdir -p $(BIN)
	@echo ">> installing ocb $(OCB_VERSION) into $(BIN)"
	GOBIN=$(BIN)/.ocb-$(OCB_VERSION) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)
	mv $(BIN)/.ocb-$(OCB_VERSION)/builder $(OCB)

# mdatagen is built from a small tools module: releases after v0.159.0 are not
# served here, and `go install …@v0.159.0` fails on the proxy's version list.
$(MDATAGEN):
	@mkdir -p $(BIN)
	@echo ">> building mdatagen $(MDATAGEN_VERSION) (see internal/tools/mdatagen)"
	cd internal/tools/mdatagen && $(GO) build -o $(MDATAGEN).tmp go.opentelemetry.io/collector/cmd/mdatagen
	mv $(MDATAGEN).tmp $(MDATAGEN)

# golangci-lint is built from its own tools module, like mdatagen, so its
# dependencies never enter the collector's go.mod.
$(GOLANGCI_LINT):
	@mkdir -p $(BIN)
	@echo ">> building golangci-lint $(GOLANGCI_LINT_VERSION) (see internal/tools/golangci-lint; a cold build takes a few minutes)"
	cd internal/tools/golangci-lint && $(GO) build -o $(GOLANGCI_LINT).tmp github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	mv $(GOLANGCI_LINT).tmp $(GOLANGCI_LINT)

# kube-apiserver is built from a tools module (k8s.io/kubernetes replaces its
# staging modules with local paths, so `go install` refuses it); the
# remediation exporter's tests start it with etcd (internal/kubetest).
$(KUBE_APISERVER):
	@mkdir -p $(BIN)
	@echo ">> building kube-apiserver $(KUBE_APISERVER_VERSION) (see internal/tools/kube-apiserver; a cold build takes several minutes)"
	cd internal/tools/kube-apiserver && $(GO) build -o $(KUBE_APISERVER).tmp k8s.io/kubernetes/cmd/kube-apiserver
	mv $(KUBE_APISERVER).tmp $(KUBE_APISERVER)

## ---- code generation -------------------------------------------------------

generate: $(MDATAGEN) manifests
	@for c in $(COMPONENTS); do echo ">> mdatagen $$c"; (cd $$c && $(MDATAGEN) metadata.yaml); done
	$(GO) run ./internal/accelschema/gendocs -out docs/metrics.md

# The Kubernetes ConfigMaps are built from distributions/otelcol-accel/config,
# the alert rule files from distributions/otelcol-accel/alerts/rules.go.
# The Helm chart's files/ are copied from both (so the alerts go first).
manifests:
	$(GO) test -count=1 -run TestGeneratedFilesAreUpToDate ./distributions/otelcol-accel/alerts -update
	cd test/manifests && $(GO) test -count=1 -run 'TestGeneratedConfigMapsMatchConfigs|TestHelmChartFilesMatchConfigs' . -update

## ---- build -----------------------------------------------------------------

build: generate dist accelsim

# Two distributions from two ocb manifests: the full one (gateways; every
# component) and the node agent (builder-config-agent.yaml: what the shipped
# DaemonSet, ECS and sidecar configs use, nothing only a gateway needs).
# ocb regenerates and recompiles each only when its own inputs changed
# (content hash of the manifest and of the packages it compiles in, so
# regenerated-but-identical files and changes to the other build's
# components do not trigger a rebuild).
dist: $(DIST) $(AGENT)

# $(call ocb_build,manifest,binary,ocb output dir,hash file)
define ocb_build
	@hash=$$(scripts/dist-inputs-hash.sh $(1)); \
	if [[ -x $(2) && "$$(cat $(4) 2>/dev/null)" == "$$hash" ]]; then \
	  echo ">> $(2) is up to date"; \
	else \
	  echo ">> building $(2) from $(1) with ocb $(OCB_VERSION) (a cold build takes several minutes)"; \
	  $(OCB) --config $(1); \
	  if [[ $(3)/$(notdir $(2)) != $(2) ]]; then mv -f $(3)/$(notdir $(2)) $(2); fi; \
	  echo "$$hash" > $(4); \
	fi
endef

# Phony through FORCE: the hash, not make's timestamps, decides.
$(DIST): $(OCB) FORCE
	$(call ocb_build,builder-config.yaml,$(DIST),$(BUILD_DIR),$(BUILD_DIR)/.inputs-hash)

# ocb writes the agent's generated sources (main.go, go.mod) to their own
# folder, so they never mix with the full distribution's in $(BUILD_DIR);
# the binary is moved beside the full one.
$(AGENT): $(OCB) FORCE
	$(call ocb_build,builder-config-agent.yaml,$(AGENT),$(BUILD_DIR)/agent,$(BUILD_DIR)/.inputs-hash-agent)

FORCE:

accelsim:
	@if [[ -d cmd/accelsim ]]; then $(GO) build -o $(ACCELSIM) ./cmd/accelsim; fi

## ---- run -------------------------------------------------------------------

run: build
	scripts/run-demo.sh

## ---- test ------------------------------------------------------------------

test: lint unit build e2e fuzz-short

lint: $(GOLANGCI_LINT)
	@echo ">> gofmt"
	@unformatted=$$(gofmt -l $$(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	@echo ">> go vet"
	$(GO) vet ./...
	@for m in $(SUBMODULES); do echo ">> go vet ($$m)"; (cd $$m && $(GO) vet ./...); done
	@echo ">> golangci-lint $(GOLANGCI_LINT_VERSION) (.golangci.yml)"
	$(GOLANGCI_LINT) run ./...
	@for m in $(SUBMODULES); do echo ">> golangci-lint ($$m)"; (cd $$m && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...); done

unit: $(KUBE_APISERVER) deps-debian
	$(GO) test $(GOTEST_FLAGS) ./...
	@for m in $(SUBMODULES); do echo ">> go test ($$m)"; (cd $$m && $(GO) test $(GOTEST_FLAGS) ./...); done

# End-to-end tests run the built binary; they are behind the e2e build tag so
# that `go test ./...` never depends on a build that may not exist.
e2e: deps-debian
	$(GO) test -tags e2e -count=1 -timeout 25m $(GOTEST_FLAGS) ./test/e2e/...
	@echo ">> go test -tags e2e (test/browser: the insights console in headless Chromium)"
	cd test/browser && $(GO) test -tags e2e -count=1 -timeout 20m $(GOTEST_FLAGS) ./...
	@echo ">> screenshots of every console page: $(CURDIR)/_build/screenshots/insights/{memory,prometheus,scale} (INSIGHTS_SCREENSHOTS moves them)"

# Every parser's fuzz target for a fixed short time.
fuzz-short:
	@scripts/fuzz.sh $(FUZZTIME)

fuzz:
	@scripts/fuzz.sh $${FUZZTIME:-2m}

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...
	@if [[ -d test/load ]]; then $(GO) test -tags load -count=1 -timeout 60m -v ./test/load/...; fi

# Debian packages used by tests: Prometheus proves the dashboards' PromQL
# against real data, promtool the alert rules; etcd backs the kube-apiserver
# of the remediation tests.
deps-debian:
	@scripts/install-debian-deps.sh

gpu-check:
	scripts/gpu-check.sh

clean:
	rm -rf $(BUILD_DIR)
