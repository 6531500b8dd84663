# `make test` and `make train` work on a fresh clone: they create .venv and install first.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TRAIN_CONFIG ?= configs/default.yaml

.PHONY: install browser test test-slow lint train bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# constraints.txt pins the tested set, torch included (the CPU build 2.13.0).
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,ray]'
	touch $(STAMP)

install: $(STAMP)

# The browser test drives Debian's chromium (playwright's own browser download is not used). Installed
# here when missing and apt-get can (root, or password-less sudo); otherwise that one test is skipped
# and says why.
browser:
	@if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "browser: no apt-get here; tests/test_browser.py will be skipped"; \
	else \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  echo "browser: installing Debian's chromium for tests/test_browser.py"; \
	  ($$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null) \
	    || echo "browser: chromium could not be installed; tests/test_browser.py will be skipped"; \
	fi

test: $(STAMP) browser
	$(PY) -m pytest -n 2

# The long differential and random-game sweeps (the quick suite runs a sample of each).
test-slow: $(STAMP)
	$(PY) -m pytest -n 2 -m slow

lint: $(STAMP)
	$(VENV)/bin/ruff check crib_env agents training crib_play crib_cli tests bench

train: $(STAMP)
	$(VENV)/bin/crib train --config $(TRAIN_CONFIG)

clean:
	rm -rf $(VENV) .pytest_cache
