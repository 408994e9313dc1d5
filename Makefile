# Onceflow: `make help` lists the targets. CI runs `bash .ci/run`, which `make ci` runs too.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SAM := .venv-sam/bin/sam
export SAM_CLI_TELEMETRY := 0
export AWS_DEFAULT_REGION ?= us-east-1

.PHONY: help venv venv-sam venv-checkov venv-tools demo test adoption lint check ci build integration clean distclean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{ printf "  %-13s %s\n", $$1, $$2 }'

venv: $(VENV)/.stamp ## create or update .venv (pip install -e ".[dev]"); quick while pyproject.toml is unchanged

$(VENV)/.stamp: pyproject.toml
	PYTHON=$(PYTHON) bash .ci/run venv

venv-sam: ## .venv-sam with aws-sam-cli, at the version pinned in pyproject.toml
	@PYTHON=$(PYTHON) bash .ci/run venv-sam

venv-checkov: ## .venv-checkov with checkov, at the version pinned in pyproject.toml
	@PYTHON=$(PYTHON) bash .ci/run venv-checkov

venv-tools: venv-sam venv-checkov ## both tool venvs

demo: venv ## run the whole pipeline locally, on the embedded AWS
	$(VENV)/bin/onceflow demo

# Two pytest workers (pytest-xdist), one per core of the 2-core machines the suite is sized for;
# PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= 2

test: venv venv-tools ## the test suite, without tests/integration, static checks included (PYTEST_ARGS="-k name" to narrow it)
	ONCEFLOW_REQUIRE_TOOLS=1 $(PY) -m pytest tests --ignore=tests/integration -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

adoption: venv ## the wheel as a team uses it: built, installed in a new venv outside the repo, `onceflow init --example payments`, its pytest and demo
	bash .ci/run adoption

lint: venv ## ruff check and ruff format --check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

check: venv venv-tools ## static checks of template.yaml and the ASL (CHECKS="statelint cfn-lint" for some)
	$(PY) -m onceflow.devtools.static_checks $(CHECKS)

ci: ## what CI runs: venvs, lint, static checks, tests
	bash .ci/run

# sam build needs an interpreter of the function's runtime (python3.13): on PATH, or from pyenv.
build: venv-sam ## sam build into .aws-sam/ (needs python3.13 on PATH or installed with pyenv)
	@if ! python3.13 --version >/dev/null 2>&1; then \
	  v=$$(command -v pyenv >/dev/null && pyenv versions --bare | grep -E '^3\.13(\.[0-9]+)?$$' | tail -n 1 || true); \
	  if [[ -z "$$v" ]]; then echo "sam build needs python3.13 on PATH (the starter's runtime)" >&2; exit 2; fi; \
	  export PATH="$$(pyenv root)/shims:$$PATH" PYENV_VERSION="$$(pyenv version-name):$$v"; \
	  echo "python3.13 from pyenv: PYENV_VERSION=$$PYENV_VERSION"; \
	fi; \
	$(SAM) build --template-file template.yaml $(SAM_BUILD_ARGS)

integration: venv ## tests against a deployed stack: AWS_SAM_STACK_NAME=<stack> make integration
	@if [[ -z "$${AWS_SAM_STACK_NAME:-}" ]]; then \
	  echo "set AWS_SAM_STACK_NAME to the name of a deployed Onceflow stack (and AWS credentials)" >&2; exit 2; \
	fi
	$(PY) -m pytest tests/integration $(PYTEST_ARGS)

clean: ## remove generated files (build/, .aws-sam/, caches); keep the venvs
	rm -rf build .aws-sam .pytest_cache .ruff_cache .hypothesis reports
	find . -path ./.venv -prune -o -path './.venv-*' -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf

distclean: clean ## clean, and remove the venvs too
	rm -rf $(VENV) .venv-sam .venv-checkov
