#!/usr/bin/env bash
# Set up everything on a fresh machine and run every check:
#   Python: ruff, mypy --strict, pytest (unit, CLI, language server)
#   extension: typecheck, unit tests, .vsix packaging
#   end to end: a real VS Code (code-server) driven by Playwright in Chromium
# LANTERN_SKIP_E2E=1 skips the last part (it installs Chromium and code-server).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

echo "== Python environment"
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
.venv/bin/pytest -q -p no:cacheprovider -n auto tests/unit tests/cli tests/lsp tests/neovim tests/dialects

echo "== VS Code extension: typecheck, unit tests, package"
(
    cd vscode-extension
    npm ci --no-audit --no-fund
    npm run typecheck
    npm test
    npm run package
)

if [ "${LANTERN_SKIP_E2E:-0}" = "1" ]; then
    echo "== end-to-end in VS Code: skipped (LANTERN_SKIP_E2E=1)"
    exit 0
fi
echo "== end-to-end in a real VS Code"
bash tests/vscode/setup.sh
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e.mjs
