#!/usr/bin/env bash
# Set up a fresh virtual environment and run every check: ruff, mypy --strict, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'
echo "== ruff"
.venv/bin/ruff check server tests benchmarks
echo "== mypy --strict server/"
.venv/bin/mypy
echo "== pytest"
.venv/bin/pytest -q "$@"
