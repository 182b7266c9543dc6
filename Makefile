# Moon Arena. `make demo` runs a real ladder among the example bots; `make test` runs
# every check. Both set themselves up on a fresh machine (a virtualenv in .venv).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# buf (proto lint and breaking-change checks) comes from npm, pinned in tools/package-lock.json.
NPM ?= npm
BUF := tools/node_modules/.bin/buf
BUF_STAMP := tools/node_modules/.installed
# `buf breaking` compares proto/ with the published protocol: a buf image of moon.v1 as
# released, committed in tools/ (`make proto-baseline` writes it, deliberately, at a release).
BUF_BASELINE := tools/protocol-v1.binpb

.PHONY: all setup test check lint typecheck pytest demo host-demo screenshots proto clean
.PHONY: buf buflint proto-baseline docker-up docker-down

all: test

# Two steps: the SDK and the arena alone, all `make demo` needs (about 1.3 min on 2 cores the
# first time), then the SDK's research extra (PettingZoo, OpenSpiel: tests/research) and the
# arena's [host,dev] for everything else (about 2.3 min more). A venv set up whole before the
# split counts as both (its $(STAMP) is fresh). pip is quiet: the echo lines say what runs.
DEMO_STAMP := $(VENV)/.installed-demo

$(DEMO_STAMP): pyproject.toml sdk/python/pyproject.toml
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ] && \
		[ $(STAMP) -nt sdk/python/pyproject.toml ]; then touch $@; else \
	echo "setup: a virtualenv in $(VENV) with moon-sdk and moon-arena (about 1.3 min the first time)..." && \
	$(PYTHON) -m venv $(VENV) && \
	$(PY) -m pip install --quiet --upgrade pip && \
	$(PY) -m pip install --quiet -e sdk/python -e . && \
	touch $@ && echo "setup: moon-sdk and moon-arena installed"; fi

# order-only: a newer $(DEMO_STAMP) does not make the whole set-up run again
$(STAMP): pyproject.toml sdk/python/pyproject.toml | $(DEMO_STAMP)
	@echo "setup: the research, host and dev extras (about 2.3 min more the first time)..."
	$(PY) -m pip install --quiet -e 'sdk/python[research]' -e '.[host,dev]'
	touch $(STAMP)
	@echo "setup: every package installed"

setup: $(STAMP) engine

# The compiled core of the rules engine (sdk/rust: Rust with PyO3, built by maturin through
# pip) into the venv, rebuilt when its sources change. Optional: without cargo the SDK runs
# the pure-Python engine and tests/rules/test_fast.py skips; with a cargo that runs (a rustup
# proxy with no toolchain does not) a failed build fails.
CARGO ?= cargo
ENGINE_STAMP := $(VENV)/.engine-installed
ENGINE_SOURCES := $(wildcard sdk/rust/src/*.rs) sdk/rust/Cargo.toml sdk/rust/Cargo.lock \
	sdk/rust/pyproject.toml sdk/rust/moon_engine.pyi

.PHONY: engine
engine: $(STAMP)
	@if $(CARGO) --version >/dev/null 2>&1; then $(MAKE) -s --no-print-directory $(ENGINE_STAMP); \
	else echo "engine: skipped (no working cargo: '$(CARGO) --version' failed or is missing;" \
		"the rules engine runs pure Python; tests/rules/test_fast.py skips)"; fi

$(ENGINE_STAMP): $(STAMP) $(ENGINE_SOURCES)
	@echo "engine: building the compiled rules engine (sdk/rust; about 4.5 min on 2 cores the" \
		"first time; optional: \`make demo\` does not need it, CARGO=false skips it)..."
	$(PY) -m pip install --quiet ./sdk/rust
	touch $@
	@echo "engine: built"

lint: setup
	$(VENV)/bin/ruff check .

# `mypy --strict` (pyproject.toml's [tool.mypy], the pydantic plugin on) over the whole of
# the arena and the SDK; moon_sdk/v1 is generated (its errors are ignored, its stubs used)
# and the starters' templates are a new bot's own files, not the arena's.
TYPED := arena sdk/python/moon_sdk

typecheck: setup
	$(VENV)/bin/mypy $(TYPED)

pytest: setup
	$(PY) -m pytest $(PYTEST_ARGS)

# The fast tier: lint, types, and the tests that run in process (the rules, the referee's
# parts, records, the CLI through CliRunner, ladders' policy, the host's parts, ratings,
# the layering: tests/conftest.py's FAST list), a few minutes on 2 cores. Run it often.
check: lint typecheck
	$(PY) -m pytest -m fast $(if $(FAST_WORKERS),-n $(FAST_WORKERS)) $(PYTEST_ARGS)

# Every check: the fast tier first, then the rest (real processes, gRPC, Docker,
# PostgreSQL, a browser, a Dask cluster) in TEST_WORKERS pytest-xdist workers: those tests
# mostly wait (on games' clocks, builds, servers), so more workers than cores pays; the
# tests of one shared resource (Docker, a cluster) keep to one worker (tests/conftest.py).
# The fast tier runs in FAST_WORKERS workers here (its tests are CPU-bound: 2, one a core;
# `make check` alone runs it in one process unless FAST_WORKERS is given).
TEST_WORKERS ?= 4
test: FAST_WORKERS ?= 2
test: buflint check bots go-plugins grpcurl
	$(PY) -m pytest -m "not fast" -n $(TEST_WORKERS) $(PYTEST_ARGS)

# A Docker engine for the sandbox tests (tests/sandbox, marker `docker`) and Docker bots:
# installs docker.io and starts dockerd if needed (as root), imports the base image.
# `make docker-down` stops a dockerd that docker-up started (and only that). See docs/sandbox.md.
docker-up: setup
	scripts/docker-up.sh

docker-down:
	scripts/docker-down.sh

# Regenerate the Python stubs (sdk/python/moon_sdk/v1) from proto/ with tools/gen_python.py
# (protoc from the pinned grpcio-tools, imports between the modules made relative so that no
# top-level `moon` package is needed); the output is committed, and tests/test_proto.py
# fails when it is stale.
proto: setup
	$(PY) tools/gen_python.py

$(BUF_STAMP): tools/package.json tools/package-lock.json
	cd tools && $(NPM) ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $(BUF_STAMP)

buf: $(BUF_STAMP)

# buf lint; buf format (fails on a diff: `$(BUF) format -w` fixes it); buf breaking against
# the published protocol $(BUF_BASELINE), so a change that would break existing bots fails
# here, in CI too (a clone of main compared with main itself would prove nothing).
buflint: buf
	$(BUF) lint
	$(BUF) format --diff --exit-code
	$(BUF) breaking --against $(BUF_BASELINE)

# Record the current protocol as the published one (at a release, after review: every bot
# written against the old baseline must still work, or the package becomes moon.v2).
proto-baseline: buf
	$(BUF) build -o $(BUF_BASELINE)

# Sdists and wheels of moon-sdk and moon-arena in dist/ (tools/dist.py: `python -m build`,
# each wheel built from its sdist; the arena's wheel carries example_bots/ and proto/).
# `make image`: the referee's image (Dockerfile) from those wheels and dist/wheelhouse (the
# wheels of their dependencies), FROM this machine's Python made into an image: no registry.
.PHONY: dist image
REFEREE_IMAGE ?= moon-arena/referee

# The wheels are pure Python: they need the packages and `build` (the [dev] extra), not the
# rules engine's compiled core that `make setup` builds too (minutes of Rust the first time).
dist: $(STAMP)
	$(PY) tools/dist.py --outdir dist

image: setup
	$(PY) tools/dist.py --outdir dist --wheelhouse dist/wheelhouse
	base=$$($(PY) -m arena.sandbox python-image) && \
	version=$$($(PY) -c 'import arena; print(arena.__version__)') && \
	docker build --build-arg BASE=$$base --label moon-arena=1 \
		-t $(REFEREE_IMAGE):$$version -t $(REFEREE_IMAGE):latest .

# The main job: a short but real duplicate ladder among the example bots over gRPC. It needs
# the packages and the bots, not the rules engine's compiled core (`make setup` builds that:
# the referee plays the same games with the pure engine).
demo: $(DEMO_STAMP) bots
	rm -f runs/demo.sqlite runs/demo.sqlite-wal runs/demo.sqlite-shm
	rm -rf runs/demo.sqlite.records
	$(VENV)/bin/moon ladder run ladders/demo.toml --results runs/demo.sqlite

# A competition host on the embedded defaults (SQLite, local pool) with the example bots
# submitted by three demo participants; prints the API address and plays until Ctrl-C.
host-demo: setup
	$(PY) scripts/host_demo.py

# The README's pictures: a small competition photographed by the system's Chromium
# (Playwright, the [dev] extra) into docs/screenshots/.
screenshots: setup
	$(PY) scripts/screenshots.py
	$(PY) scripts/table_screenshots.py
	$(PY) scripts/table_host_screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache sdk/rust/target

# Bots and tools in other languages. Their toolchains (go, node/npm, cargo) are on CI; where
# one is missing, or is there but does not run (`cargo --version` fails: a rustup with no
# default toolchain), its bots and tests are skipped with the reason instead of failing.
GO ?= go
GRPCURL_VERSION := v1.9.4
GRPCURL_STAMP := tools/bin/.grpcurl-$(GRPCURL_VERSION)

.PHONY: bots gen-go go-plugins grpcurl

# Build the example bots whose build is stale (their bot.toml `build`: npm ci, go build,
# cargo build); python -m arena.sandbox.stamps keeps a stamp per bot folder.
bots: $(DEMO_STAMP)
	@echo "bots: building the example bots whose build is stale (about a minute the first time)"
	$(PY) -m arena.sandbox.stamps example_bots/*

# Regenerate the Go code of the protocol (example_bots/go-heuristic/gen/moonv1); it is
# committed, and tests/test_codegen.py fails when it is stale. protoc comes from grpcio-tools,
# protoc-gen-go and protoc-gen-go-grpc (pinned in tools/gen_go.py) are installed into tools/bin.
gen-go: setup
	$(PY) tools/gen_go.py

go-plugins: setup
	@if command -v $(GO) >/dev/null 2>&1; then $(PY) tools/gen_go.py --install; \
	else echo "go-plugins: skipped (no go toolchain; tests/test_codegen.py will skip)"; fi

# grpcurl, a third-party gRPC client for tests/e2e/test_grpcurl.py, into tools/bin.
grpcurl: $(GRPCURL_STAMP)

$(GRPCURL_STAMP):
	@if command -v $(GO) >/dev/null 2>&1; then \
		echo "GOBIN=tools/bin $(GO) install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)"; \
		GOBIN=$(CURDIR)/tools/bin $(GO) install \
			github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION) && touch $@; \
	else echo "grpcurl: skipped (no go toolchain; tests/e2e/test_grpcurl.py will skip)"; fi
