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
echo "== ntfs-3g (tests/platforms mounts a case-insensitive NTFS image with lowntfs-3g)"
if command -v mkntfs >/dev/null && command -v lowntfs-3g >/dev/null; then
    echo "present"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq ntfs-3g >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null && apt-get install -y -qq ntfs-3g >/dev/null; } \
        || echo "WARNING: could not install ntfs-3g; the case-insensitive mount tests will skip"
else
    echo "WARNING: mkntfs/lowntfs-3g missing and not root; the case-insensitive mount tests will skip"
fi

echo "== pytest"
.venv/bin/pytest -q -rs -p no:cacheprovider -n auto \
    tests/unit tests/cli tests/lsp tests/neovim tests/dialects tests/platforms

# The lowest versions pyproject.toml allows: a second environment, made afresh, gets the
# lowest release of each direct dependency and test tool (uv's lowest-direct resolution;
# not the linters, whose mypy would lift pathspec) and runs the unit tier, so every lower
# bound there is a version that has been tested.
echo "== pytest tests/unit with the lowest versions pyproject.toml allows"
SECONDS=0
.venv/bin/python -m pip install --quiet uv
"$PY" -m venv --clear .venv-lowest
.venv/bin/uv pip install --quiet --python .venv-lowest/bin/python --resolution lowest-direct \
    -e '.[test]'
.venv-lowest/bin/pytest -q -p no:cacheprovider -n auto tests/unit
echo "(lowest versions: ${SECONDS}s)"

# The read path once more in processes where the kernel refuses openat2 (a seccomp
# filter every child inherits), so the jail's portable walk runs for real, as on
# macOS or an old kernel. About a minute on two cores.
READ_PATH_SUITES=(
    tests/unit/test_read_path_adversarial.py
    tests/unit/test_read_file.py
    tests/unit/test_list_search.py
    tests/unit/test_ignore_hardening.py
    tests/unit/test_search_hardening.py
    tests/unit/test_policy_names.py
    tests/unit/test_redteam_continued.py
    tests/unit/test_redteam_ignore_globs.py
    tests/unit/test_redteam_scope_names.py
    tests/unit/test_references.py
    tests/unit/test_names.py
    tests/unit/test_line_endings.py
    tests/cli/test_tool_cli.py
)
echo "== pytest, read path with openat2 answering ENOSYS: ${READ_PATH_SUITES[*]##*/}"
SECONDS=0
.venv/bin/python tests/platforms/no_openat2.py \
    .venv/bin/pytest -q -p no:cacheprovider -n auto "${READ_PATH_SUITES[@]}"
echo "(without openat2: ${SECONDS}s)"

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
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_first_hour.mjs
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_context.mjs
