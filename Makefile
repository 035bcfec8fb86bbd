# Two entry points: `make run` and `make test`. Both create .venv when it is missing and install
# the stack pinned in requirements/*.lock (the one CI tests), then tilescope itself without deps.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 5006
RUN_LOCK := requirements/run.lock
TEST_LOCK := requirements/test.lock
UV := $(BIN)/uv
UV_VERSION := 0.13.9
MINIMUM_VENV := .venv-minimum
# Every script and stylesheet from the server itself, never a CDN: the page works offline. The
# browser tests' server (tests/browser_support.py) and app/resources.py use the same setting.
export BOKEH_RESOURCES := server

.PHONY: run test check install install-test chromium test-js-deps bench docs clean lock lock-upgrade test-minimum

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamp files so repeated runs skip the install when neither the lock nor pyproject.toml changed.
$(VENV)/.installed: $(RUN_LOCK) pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -r $(RUN_LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip check --quiet >/dev/null || $(BIN)/pip check
	touch $@

$(VENV)/.installed-test: $(TEST_LOCK) pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -r $(TEST_LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip check --quiet >/dev/null || $(BIN)/pip check
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# Browser tests drive Debian's Chromium (Playwright cannot download a browser here).
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing Debian's chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
		|| { echo "could not install chromium" >&2; exit 1; }; \
	fi

# The JavaScript the browser tests inject (axe-core for tests/test_a11y_browser.py), pinned in
# tests/js/package-lock.json and installed from it (npm ci); node_modules itself is not committed.
JS_DEPS := tests/js/node_modules/.package-lock.json
$(JS_DEPS): tests/js/package.json tests/js/package-lock.json
	npm ci --prefix tests/js --no-audit --no-fund --silent
	touch $@
test-js-deps: $(JS_DEPS)

# tilescope serve listens on 127.0.0.1 only (the app serves files from the data root to whoever can reach it).
run: install
	$(BIN)/tilescope serve --port $(PORT)

# `make test` runs the static checks too (tests/test_static_checks.py); `make check` runs only them.
test: install-test chromium test-js-deps
	$(BIN)/python -m pytest

check: install-test
	$(BIN)/python tests/static_checks.py

bench: install
	$(BIN)/python -m benchmarks

docs: install-test chromium
	$(BIN)/python docs/make_screenshots.py

# The locks: every package pinned, with hashes, one version of each for every platform and every
# Python >= requires-python (--fork-strategy fewest), so every machine installs the stack CI tested.
# After changing dependencies in pyproject.toml run `make lock` (keeps every other pin as it is);
# `make lock-upgrade` moves everything to the newest releases the bounds allow.
$(UV): | $(BIN)/python
	$(BIN)/pip install --quiet "uv==$(UV_VERSION)"

lock: $(UV)
	$(UV) pip compile --quiet --universal --fork-strategy fewest --generate-hashes --extra test $(LOCK_FLAGS) pyproject.toml -o $(TEST_LOCK)
	$(UV) pip compile --quiet --universal --fork-strategy fewest --generate-hashes -c $(TEST_LOCK) pyproject.toml -o $(RUN_LOCK)

lock-upgrade:
	$(MAKE) lock LOCK_FLAGS=--upgrade

# The lower bounds of pyproject.toml: the oldest release of each direct dependency that the bounds
# allow, in a venv of its own, and the fast suite on it.
test-minimum: $(UV)
	$(UV) venv --quiet --seed --allow-existing --python $(PYTHON) $(MINIMUM_VENV)
	$(UV) pip install --quiet --python $(MINIMUM_VENV)/bin/python --resolution lowest-direct -e '.[test]'
	$(MINIMUM_VENV)/bin/python -m pytest -m "not browser" -q -p no:cacheprovider

clean:
	rm -rf $(VENV) $(MINIMUM_VENV) .pytest_cache
