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

# Three test processes (pytest-xdist), each file whole in one of them: a
# notebook's cells share one kernel, a module's fixtures one process. Three
# on two cores: with two, the cores sat idle about a seventh of the run
# (tests waiting on kernels, timeouts, a browser), measured from /proc/stat;
# with three, a sixteenth.
test: lint browser
	$(BIN)/python -m pytest -n 3 --dist loadfile --durations=15

# Lint, import order, formatting and types: CI fails on any of them.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check bpe_lab tests
	$(BIN)/mypy

# The browser test drives JupyterLab in Debian's Chromium (browsers cannot be
# downloaded by Playwright here), and Chinese text and emoji need fonts
# (without them they are empty boxes in the page and in plots). Install what
# is missing when we may; otherwise that one test skips and says why.
BROWSER_PACKAGES := $(if $(shell command -v chromium 2>/dev/null),,chromium) \
  $(if $(shell fc-list 2>/dev/null | grep -i 'cjk'),,fonts-noto-cjk) \
  $(if $(shell fc-list 2>/dev/null | grep -i 'emoji'),,fonts-noto-color-emoji) \
  $(if $(shell command -v bwrap 2>/dev/null),,bubblewrap)

browser:
	@missing="$(strip $(BROWSER_PACKAGES))"; [ -z "$$missing" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $$missing for the browser test (apt-get)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	      || echo "could not install $$missing: the browser test may be skipped, and CJK or emoji may show as boxes"; \
	  else echo "missing $$missing: the browser test may be skipped (apt-get install $$missing)"; fi; }

bench: $(STAMP)
	$(BIN)/bpe-lab bench

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "BPE Lab needs Python 3.10 or newer"'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
	  echo "Could not create a virtual environment. On Debian/Ubuntu: sudo apt-get install python3-venv"; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip 'setuptools>=77'
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# Screenshots of every notebook as a learner sees it (saved and after Run All,
# light and dark theme, English and Chinese) in screenshots/, which git
# ignores: for a person to look at. Heavy (it runs every notebook twice), so
# it runs niced; SCREENSHOTS_ARGS="--only 02,05 --lang en" narrows it.
.PHONY: screenshots
screenshots: $(STAMP) browser
	nice -n 10 $(BIN)/python tests/screenshots.py screenshots $(SCREENSHOTS_ARGS)
