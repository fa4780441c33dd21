# Two entry points for newcomers: `make demo` and `make test`. Everything else is plumbing.
SHELL := /bin/bash
CARGO ?= cargo
WASM_TARGET := wasm32-wasip1
# Cargo's output folder: CARGO_TARGET_DIR when set, as cargo itself does.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
HOST := $(TARGET_DIR)/debug/sidecarset-host
CONFORMANCE := $(TARGET_DIR)/debug/conformance
# The project's own copy of the shared cases, plus the shared folder itself when it is present.
CONFORMANCE_DIRS := tests/conformance $(wildcard ../shared/conformance)

.PHONY: setup demo test policy.wasm policy-unit-wasm32 annotated-policy.wasm build lint conformance bench loadgen clean

# Installs what the build and tests need: the wasm target, Debian's registry (OCI tests), binaryen
# (wasm-opt for policy.wasm) and kubectl (stand-in and kustomize tests) when the machine lacks them.
setup:
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@command -v docker-registry >/dev/null || /usr/bin/docker-registry --version >/dev/null 2>&1 || \
	  { command -v apt-get >/dev/null && \
	    (if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	     $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq docker-registry >/dev/null) \
	  || echo "warning: docker-registry could not be installed; the OCI push/pull tests will fail"; }
	@command -v wasm-opt >/dev/null || \
	  { command -v apt-get >/dev/null && \
	    (if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	     $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq binaryen >/dev/null) \
	  || echo "warning: binaryen (wasm-opt) could not be installed; policy.wasm will be larger and slower"; }
	@command -v kubectl >/dev/null || \
	  { command -v apt-get >/dev/null && \
	    (if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	     $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq kubernetes-client >/dev/null) \
	  || echo "warning: kubectl could not be installed; the kubectl and kustomize tests will fail"; }

# rustc's opt-level 2 keeps serde inlined (a third faster than opt-level "s"); wasm-opt -Oz then
# brings the module under 1 MB (as fast as -O2 within noise, 15 KB smaller: BENCHMARKS.md).
WASM_FEATURES := --enable-simd --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue
policy.wasm: setup
	$(CARGO) build -p sidecarset-policy --target $(WASM_TARGET) --release
	@if command -v wasm-opt >/dev/null; then \
	  wasm-opt -Oz $(WASM_FEATURES) --strip-debug --strip-producers \
	    $(TARGET_DIR)/$(WASM_TARGET)/release/sidecarset_policy.wasm -o policy.wasm; \
	else cp $(TARGET_DIR)/$(WASM_TARGET)/release/sidecarset_policy.wasm policy.wasm; fi
	@ls -l policy.wasm

# Binaries and test targets in one invocation: one feature resolution, so `cargo test` afterwards
# reuses every artifact instead of rebuilding the dependencies with dev-dependency features.
build:
	$(CARGO) test --workspace --no-run

annotated-policy.wasm: policy.wasm build
	$(HOST) annotate -m policy/metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

# Runs the policy on the built-in examples, exactly as `kwctl run` would.
demo: annotated-policy.wasm
	@for request in examples/requests/*.json; do \
	  echo "== $$request"; \
	  $(HOST) run --allow-context-aware --context examples/cluster --request-path $$request annotated-policy.wasm \
	    | tee /tmp/sidecarset-demo.json | cut -c1-200; \
	  python3 -c 'import json,base64,sys; r=json.load(open("/tmp/sidecarset-demo.json")); print("   allowed:", r["allowed"], "|", (r.get("status") or {}).get("message","")); [print("   ", op["op"], op["path"]) for op in json.loads(base64.b64decode(r["patch"]))] if r.get("patch") else print("    (no patch)")'; \
	done

conformance: annotated-policy.wasm
	$(CONFORMANCE) --module annotated-policy.wasm $(CONFORMANCE_DIRS)

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The policy's unit tests built for the module's own target; tests/tests/policy_unit_wasm32.rs
# runs them in wasmtime.
policy-unit-wasm32: setup
	$(CARGO) test -p sidecarset-policy --target $(WASM_TARGET) --lib --no-run

# The whole suite: wasm module, unit and end-to-end tests (the policy's also in wasm32),
# conformance cases through the wasm.
test: annotated-policy.wasm policy-unit-wasm32
	$(CARGO) test --workspace
	$(MAKE) --no-print-directory conformance

# Policy injection, native and through policy.wasm (criterion; BENCHMARKS.md). `--workspace`, not
# `-p`: the same feature resolution as `make build`, so only the bench file itself is compiled.
bench: policy.wasm build
	$(CARGO) bench --profile dev --workspace --bench policy

# `sidecarset-host serve` under load on loopback (host/BENCHMARKS.md); LOADGEN_ARGS e.g. --no-pooling.
# `make build` (cargo test --no-run) already builds the host's examples with the test features.
loadgen: annotated-policy.wasm
	$(TARGET_DIR)/debug/examples/loadgen --module annotated-policy.wasm --seconds 5 $(LOADGEN_ARGS)

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm
