# Two entry points: `make run` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 5006

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

run: install
	$(BIN)/panel serve app --port $(PORT) --address 127.0.0.1 --show

test: install-test chromium
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python -m benchmarks

docs: install-test chromium
	$(BIN)/python -m tests.screenshots docs

clean:
	rm -rf $(VENV) .pytest_cache
