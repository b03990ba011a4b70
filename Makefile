# Two commands a learner needs:  `make lab`  opens the course,  `make test`  runs every test.
# Both create .venv and install what they need on first use (again whenever pyproject.toml changes).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test lint browser bench clean

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=. notebooks/00_why_subwords.ipynb

test: lint browser
	$(BIN)/python -m pytest

# Lint, import order, formatting and types: CI fails on any of them.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check bpe_lab tests
	$(BIN)/mypy

# The browser test drives JupyterLab in Debian's Chromium (browsers cannot be
# downloaded by Playwright here). Install it when we may; otherwise that one
# test skips and says why.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Chromium for the browser test (apt-get)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "could not install Chromium: the browser test will be skipped"; \
	  else echo "no Chromium found: the browser test will be skipped (apt-get install chromium to run it)"; fi; }

bench: $(STAMP)
	$(BIN)/bpe-lab bench

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "BPE Lab needs Python 3.10 or newer"'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
	  echo "Could not create a virtual environment. On Debian/Ubuntu: sudo apt-get install python3-venv"; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
