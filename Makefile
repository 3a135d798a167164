# Entry points: `make demo` (train on 20 Newsgroups), `make test` (the whole suite, as CI),
# `make test-quick` (the tests not marked slow), `make docs` (the site, into site/),
# `make recompile` (the CPU kernels from scratch).
# All create .venv, install the CPU build of torch pinned first, then the project.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Offline copies of the data, when this checkout sits beside ../shared (as in CI).
SHARED ?= $(abspath ../shared/data)
ifneq ($(wildcard $(SHARED)/sklearn),)
export SCIKIT_LEARN_DATA ?= $(SHARED)/sklearn
export NLTK_DATA ?= $(SHARED)/nltk_data
export BPETOPICS_DATA ?= $(SHARED)
endif

.PHONY: venv demo test test-quick docs bench recompile clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	$(VENV)/bin/bpetopics compile    # the CPU kernels, once: a first training need not compile
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(VENV)/bin/bpetopics train 20newsgroups --out runs/20ng

test: venv
	$(PY) -m pytest -q

test-quick: venv
	$(PY) -m pytest -q -m "not slow"

docs: venv
	$(PY) -m mkdocs build --strict --site-dir site

bench: venv
	$(PY) -m benchmarks pursuit

# numba's cache renews a kernel when its own file changes, not when a kernel it inlines
# from another module does: after editing the kernels, drop them all and compile again.
recompile: venv
	find bpetopics -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) -delete
	$(VENV)/bin/bpetopics compile

clean:
	rm -rf $(VENV) build site *.egg-info
