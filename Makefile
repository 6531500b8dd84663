# `make test` and `make train` work on a fresh clone: they create .venv and install first.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TRAIN_CONFIG ?= configs/default.yaml

.PHONY: install test lint train bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# constraints.txt pins the tested set, torch included (the CPU build 2.13.0).
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,ray]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check crib_env agents training tests bench

train: $(STAMP)
	$(VENV)/bin/crib train --config $(TRAIN_CONFIG)

clean:
	rm -rf $(VENV) .pytest_cache
