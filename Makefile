# Attention Q&A — every command sets itself up: the first run creates .venv and installs
# the pinned requirements; later runs reuse it until requirements change.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JB := $(VENV)/bin/jupyter-book
SITE := _build/html
PORT ?= 8000

.PHONY: setup book test lint unit nbval determinism build site classroom lab serve execute bench student drill handouts clean

setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml package-lock.json
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "the book needs Python 3.11, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	npm ci --no-audit --no-fund --silent
	touch $(STAMP)

## book: build the site into _build/html (notebooks run once; later builds use the cache)
book: $(STAMP)
	$(JB) build . -W -n --keep-going
	@echo
	@echo "The book is built. Open $(SITE)/index.html, or run 'make serve'."

## test: everything CI checks — lint, unit tests, nbval, strict build, site and browser
## tests, handouts, and the classroom kit (student notebooks, drill, launch buttons).
## Its wall time goes to benchmarks/results/make_test.json, which `make bench` reports.
TEST_STEPS := lint unit nbval determinism build site classroom
test: $(STAMP)
	@start=$$(date +%s); $(MAKE) --no-print-directory $(TEST_STEPS) && \
	  mkdir -p benchmarks/results && \
	  echo "{\"make_test_s\": $$(( $$(date +%s) - start )), \"date\": \"$$(date -u +%F)\"}" \
	  > benchmarks/results/make_test.json
	@echo "make test: all checks passed ($$(cat benchmarks/results/make_test.json))"

lint: $(STAMP)
	$(PY) -m ruff check src tests scripts benchmarks _ext book

unit: $(STAMP)
	$(PY) -m pytest tests --ignore=tests/site --ignore=tests/classroom -q

## nbval: every chapter's saved outputs must come out again, twice in a row (a run must
## leave nothing behind that changes the next one)
nbval: $(STAMP)
	$(PY) -m pytest --nbval book -q
	$(PY) -m pytest --nbval book -q

## determinism: re-run every notebook in a scratch folder; it must match the saved file
determinism: $(STAMP)
	$(PY) scripts/check_determinism.py

build: book

site: $(STAMP)
	$(PY) -m pytest tests/site -q

classroom: $(STAMP)
	$(PY) -m pytest tests/classroom -q

## lab: JupyterLab on book/, where the explorers are live
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ip 127.0.0.1 --notebook-dir book

## serve: the built site on http://127.0.0.1:$(PORT)/
serve: $(STAMP)
	@test -f $(SITE)/index.html || $(MAKE) book
	@echo "Serving http://127.0.0.1:$(PORT)/ (Ctrl-C stops)"
	$(PY) -m http.server --bind 127.0.0.1 --directory $(SITE) $(PORT)

## execute: re-run every notebook in place (after editing one), saving its outputs
execute: $(STAMP)
	$(PY) scripts/execute_notebooks.py

## student: student copies of the chapters, solutions replaced by scaffolds, in student/
student: $(STAMP)
	$(PY) scripts/make_student.py

## drill: regenerate book/drill.md from the chapters' short answers
drill: $(STAMP)
	$(PY) scripts/make_drill.py

## handouts: every chapter printed to PDF in handouts/ (needs the built site and Chromium)
handouts: $(STAMP)
	@test -f $(SITE)/index.html || $(MAKE) book
	$(PY) scripts/make_handouts.py

## bench: explorer latency, build and test times, page weights; table + JSON
bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf _build
