# Attention Q&A — every command sets itself up: the first run creates .venv and installs
# the pinned requirements; later runs reuse it until requirements change.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JB := $(VENV)/bin/jupyter-book
SITE := _build/html
PORT ?= 8000

.PHONY: help gettext setup book test lint unit nbval nbval-portable nbval-native determinism build build-zh site site-en site-zh site-after-build site-zh-after-build classroom lab serve execute bench student drill anki handouts dist clean

## Per-environment state. matplotlib's font list, IPython's profile and Jupyter's config,
## data and runtime files live in .venv/state, not in the home directory, so no check reads
## what another environment left there (a stale ~/.cache/matplotlib font list once made
## figures fall back to another font). Every command below, and all it starts, inherits these.
STATE := $(CURDIR)/$(VENV)/state
export MPLCONFIGDIR := $(STATE)/matplotlib
export IPYTHONDIR := $(STATE)/ipython
export JUPYTER_CONFIG_DIR := $(STATE)/jupyter/config
export JUPYTER_DATA_DIR := $(STATE)/jupyter/data
export JUPYTER_RUNTIME_DIR := $(STATE)/jupyter/runtime
## The models q22 and q30 train (src/attention_qa/training.py, trained_once) are trained once
## per machine setting and package state and kept in _build/.trained for the other notebooks,
## explorers and tests that need them; each setting trains for itself.
export ATTENTION_QA_TRAINED := $(CURDIR)/_build/.trained

## help: every target, one line each
help:
	@awk '/^## [a-z-]+: / && prev !~ /^##/ { line = substr($$0, 4); name = substr(line, 1, index(line, ":") - 1); \
	  printf "  make %-13s %s\n", name, substr(line, length(name) + 3) } { prev = $$0 }' $(MAKEFILE_LIST)

## setup: create .venv and install the pinned requirements (every target does it first)
setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml package-lock.json
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "the book needs Python 3.11, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	npm ci --no-audit --no-fund --silent
	rm -rf $(STATE)  # a font list written for the packages replaced here would be stale
	mkdir -p $(MPLCONFIGDIR) $(IPYTHONDIR) $(JUPYTER_CONFIG_DIR) $(JUPYTER_DATA_DIR) $(JUPYTER_RUNTIME_DIR)
	touch $(STAMP)

## book: build the site into _build/html from the notebooks' saved outputs (explorer panels
## are rendered once and kept in _build/.frames), and the Chinese edition beside it in
## _build/html/zh, from the same pages and the translations in locales/zh_CN
BUILD_EN := $(JB) build . -W -n --keep-going
BUILD_ZH := $(PY) scripts/build_language.py zh_CN
book: build build-zh
	@echo
	@echo "The book is built. Open $(SITE)/index.html (中文版: $(SITE)/zh/index.html), or run 'make serve'."

## gettext: after an edit of the English text, bring the Chinese edition's translation files
## up to date: a changed paragraph's entry turns fuzzy (the test names it), a new one is
## empty; the explorers' words too. Then translate them (CONTRIBUTING.md) and `make book`.
gettext: $(STAMP)
	$(PY) scripts/build_language.py gettext
	$(PY) scripts/translations.py alts
	$(VENV)/bin/sphinx-intl update -p _build/gettext -l zh_CN -d locales -w 100
	$(PY) scripts/translations.py explorers
	$(PY) scripts/translations.py stats

## Machine settings. PyTorch picks its CPU kernels when it starts (ATEN_CPU_CAPABILITY), MKL
## its own code path (MKL_ENABLE_INSTRUCTIONS), and the thread count (OMP_NUM_THREADS) sets
## the order of sums. Every saved output must come out the same under each of these:
## `make execute` saves under PORTABLE, nbval checks under PORTABLE too and under the
## machine's own capability with two threads, and the determinism check under a third.
## An idle OpenMP thread sleeps instead of spinning (OMP_WAIT_POLICY=PASSIVE): `make test`
## runs two stages at once on two cores, and a thread spinning in one stage takes the core the
## other needs (nbval on two threads beside a busy core: 64 s spinning, 34 s passive, on five
## chapters). The policy changes when a thread waits, never how work is split or summed.
export OMP_WAIT_POLICY ?= PASSIVE
PORTABLE := ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1
NBVAL_NATIVE := OMP_NUM_THREADS=2
AVX2 := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo avx2 || echo default)
DETERMINISM_SETTING := ATEN_CPU_CAPABILITY=$(AVX2) MKL_ENABLE_INSTRUCTIONS=AVX2 OMP_NUM_THREADS=3
TIMED = $(PY) scripts/timed.py
## The stages that run every chapter start their kernels by forking one that has already
## imported PyTorch (scripts/kernel_forks.py): the same kernels, two seconds sooner each.
FORKS = $(PY) scripts/kernel_forks.py run

## test: everything CI checks — lint, unit tests, nbval under two machine settings, the
## determinism check under a third, strict builds of both editions, site and browser tests of
## both, handouts, and the classroom kit (drill, launch buttons, a fresh install, JupyterLab).
## The independent stages run two at a time (two cores), longest first: the English build
## and its site tests as one chain, beside it the determinism check and nbval-native; then
## the Chinese build and its site tests (which need both sites), nbval-portable, the unit
## tests (which read the explorer panels the build rendered instead of rendering them
## again), the classroom kit. In this order both cores finish at about the same time.
## Each stage's time goes to benchmarks/results/, which `make bench` reports.
TEST_STEPS := site-after-build determinism nbval-native site-zh-after-build nbval-portable \
  unit classroom lint
test: $(STAMP)
	@rm -rf benchmarks/results/stages
	@start=$$(date +%s); \
	  $(MAKE) --no-print-directory -j2 --output-sync=target $(TEST_STEPS) && \
	  mkdir -p benchmarks/results && \
	  $(PY) scripts/record_make_test.py $$(( $$(date +%s) - start ))
	@echo "make test: all checks passed ($$(cat benchmarks/results/make_test.json))"

## lint: ruff over the package, the tests, the scripts, the extension and every notebook
lint: $(STAMP)
	$(TIMED) lint $(PY) -m ruff check src tests scripts benchmarks _ext book

## unit: the unit tests (every helper against its reference, every checker's forms)
unit: $(STAMP)
	$(TIMED) unit $(PY) -m pytest tests --ignore=tests/site --ignore=tests/classroom -q

## nbval: every chapter's saved outputs must come out again, in full (no lax mode), under two
## machine settings; the checkers' right answers in every dtype run under both as well.
nbval: nbval-portable nbval-native

nbval-portable: $(STAMP)
	env $(PORTABLE) $(TIMED) nbval-portable \
	  $(FORKS) $(PY) -m pytest --nbval book tests/test_checks_dtypes.py -q

nbval-native: $(STAMP)
	env $(NBVAL_NATIVE) $(TIMED) nbval-native \
	  $(FORKS) $(PY) -m pytest --nbval book tests/test_checks_dtypes.py -q

## determinism: re-run every notebook in a scratch folder under DETERMINISM_SETTING; it must
## match the saved file byte for byte. The same kernel runs each chapter's student copy from
## its first solution on (see scripts/check_determinism.py).
determinism: $(STAMP)
	env $(DETERMINISM_SETTING) $(TIMED) determinism $(FORKS) $(PY) scripts/check_determinism.py

## build: the English site alone, strict (warnings are errors)
build: $(STAMP)
	$(TIMED) build $(BUILD_EN)

## build-zh: the Chinese site alone, strict (after `make build`, which renders the panels)
build-zh: $(STAMP)
	$(TIMED) build-zh $(BUILD_ZH)

## site: the site tests of both editions (after `make book`); site-en and site-zh split them
site: site-en site-zh

site-en: $(STAMP)
	$(TIMED) site $(PY) -m pytest tests/site -q -k "not zh"

site-zh: $(STAMP)
	$(TIMED) site-zh $(PY) -m pytest tests/site -q -k "zh"

# make test's way to the site tests: each edition's after its build (the Chinese tests
# compare each page with its English twin, so they wait for both builds)
site-after-build: build
	@$(MAKE) --no-print-directory site-en

site-zh-after-build: build build-zh
	@$(MAKE) --no-print-directory site-zh

## classroom: the classroom kit (drill pages current, launch buttons, fresh install, Lab)
classroom: $(STAMP)
	$(TIMED) classroom $(PY) -m pytest tests/classroom -q

## lab: JupyterLab on book/, where the explorers are live (as root too, e.g. in a container)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	@$(if $(ROOT_FLAG),echo "Running as root: starting JupyterLab with --allow-root")
	$(VENV)/bin/jupyter lab --ip 127.0.0.1 --notebook-dir book $(ROOT_FLAG)

## serve: the built site on http://127.0.0.1:$(PORT)/
serve: $(STAMP)
	@test -f $(SITE)/index.html || $(MAKE) book
	@echo "Serving http://127.0.0.1:$(PORT)/ (Ctrl-C stops)"
	$(PY) -m http.server --bind 127.0.0.1 --directory $(SITE) $(PORT)

## execute: re-run every notebook in place (after editing one), saving its outputs, under
## PORTABLE (PyTorch's portable kernels, one thread); NB=book/qNN_x.ipynb for one
execute: $(STAMP)
	env $(PORTABLE) $(PY) scripts/execute_notebooks.py $(NB)

## student: student copies of the chapters, solutions replaced by scaffolds, in student/
student: $(STAMP)
	$(PY) scripts/make_student.py

## drill: regenerate book/drill.md from the chapters' short answers
drill: $(STAMP)
	$(PY) scripts/make_drill.py

## anki: the drill as Anki decks, one per edition, where each edition's drill pages link to
## them: $(SITE)/anki/attention-qa-en.apkg and $(SITE)/zh/anki/attention-qa-zh.apkg (both
## builds of `make book` write them too). A card links to its chapter once _config.yml's
## html.baseurl names the published site.
anki: $(STAMP)
	$(PY) scripts/make_anki.py

## handouts: every chapter printed to PDF in handouts/, the Chinese edition's in handouts/zh/
## (needs the built site and Chromium)
handouts: $(STAMP)
	@test -f $(SITE)/index.html || $(MAKE) book
	$(PY) scripts/make_handouts.py

## dist: the attention_qa package as a wheel and an sdist in dist/, checked by twine
dist: $(STAMP)
	$(PY) scripts/make_dist.py

## bench: explorer latency, build and test times, page weights; table + JSON
bench: $(STAMP)
	$(PY) benchmarks/run.py

## clean: remove the built sites, their caches and dist/
clean:
	rm -rf _build dist
