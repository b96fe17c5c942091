# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-plain test-all lint bench fuzz clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

demo: $(BIN)/python
	$(BIN)/pip install -q -e ".[plot,datasets]"
	$(BIN)/chainrule train breast-cancer
	@echo "Its metrics, curves and model are in runs/breast-cancer/."

# pytest exits 5 when it collected no test: that fails here too.
test: $(BIN)/python
	$(BIN)/pip install -q -e ".[test]"
	$(BIN)/python -m pytest -n 2 -q tests

# The plain framework: the same suite with every speed trick off (fastpath/table.py lists them).
test-plain: $(BIN)/python
	$(BIN)/pip install -q -e ".[test]"
	CHAINRULE_FASTPATH=0 $(BIN)/python -m pytest -n 2 -q tests

# Everything, the slow runs too: each recipe trained at its full defaults to its goal.
test-all: $(BIN)/python
	$(BIN)/pip install -q -e ".[test]"
	$(BIN)/python -m pytest -n 2 -q -m "slow or not slow" tests

lint: $(BIN)/python
	$(BIN)/pip install -q -e ".[dev]"
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy src

bench: $(BIN)/python
	$(BIN)/pip install -q -e ".[bench,datasets]"
	$(BIN)/python benchmarks/run_all.py

fuzz: $(BIN)/python
	$(BIN)/pip install -q -e ".[test]"
	CHAINRULE_FUZZ_EXAMPLES=3000 $(BIN)/python -m pytest -q tests/ops/test_fuzz.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
