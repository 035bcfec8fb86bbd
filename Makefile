# Two entry points: `make run` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 5006
# Every script and stylesheet from the server itself, never a CDN: the page works offline. The
# browser tests' server (tests/browser_support.py) and app/resources.py use the same setting.
export BOKEH_RESOURCES := server

.PHONY: run test install install-test chromium bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamp files so repeated runs skip the install when pyproject.toml has not changed.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# Browser tests drive Debian's Chromium (Playwright cannot download a browser here).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing Debian's chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
		|| { echo "could not install chromium" >&2; exit 1; }; \
	fi

# Loopback only: the app serves files from the data root to whoever can reach it.
run: install
	@echo "tilescope: open http://127.0.0.1:$(PORT)/app"
	$(BIN)/panel serve app --port $(PORT) --address 127.0.0.1 --allow-websocket-origin=127.0.0.1:$(PORT) --allow-websocket-origin=localhost:$(PORT)

test: install-test chromium
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python -m benchmarks

docs: install-test chromium
	$(BIN)/python docs/make_screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache
