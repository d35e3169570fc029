#!/usr/bin/env bash
# Set up everything on a fresh machine and run every check:
#   Python: ruff, mypy --strict; pytest three ways: every tier with the newest versions
#     allowed, tests/unit with the lowest, the read path with openat2 refused
#   extension: typecheck, unit tests, .vsix packaging
#   end to end: a real VS Code (code-server) driven by Playwright in Chromium
# LANTERN_SKIP_E2E=1 skips the last part (it installs Chromium and code-server).
# Each step below says what it checks that no other step does.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

echo "== Python environment"
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'

# Lint and style (and cyclomatic complexity, C901) of the server, the tests and the benchmarks.
echo "== ruff"
.venv/bin/ruff check server tests benchmarks
# Types: mypy --strict over server/lantern (the configuration is in pyproject.toml).
echo "== mypy --strict server/"
.venv/bin/mypy
# Not a check: the tool tests/platforms needs for a real case-insensitive mount.
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

# Not a check: the real language server tests/neovim's navigation test answers with
# (pyright, pinned in tests/language-servers/package-lock.json; it runs on Node).
echo "== pyright (tests/language-servers)"
npm ci --prefix tests/language-servers --no-audit --no-fund

# Every Python tier, once, with the newest versions pyproject.toml allows and openat2
# where the kernel has it: the run that all the others vary one thing of.
echo "== pytest"
.venv/bin/pytest -q -rs -p no:cacheprovider -n auto \
    tests/unit tests/cli tests/lsp tests/neovim tests/dialects tests/platforms

# tests/unit again, with one thing changed: the lowest versions pyproject.toml allows. A
# second environment, made afresh, gets the lowest release of each direct dependency and
# test tool (uv's lowest-direct resolution; not the linters, whose mypy would lift
# pathspec), so every lower bound there is a version that has been tested.
echo "== pytest tests/unit with the lowest versions pyproject.toml allows"
SECONDS=0
.venv/bin/python -m pip install --quiet uv
"$PY" -m venv --clear .venv-lowest
.venv/bin/uv pip install --quiet --python .venv-lowest/bin/python --resolution lowest-direct \
    -e '.[test]'
.venv-lowest/bin/pytest -q -p no:cacheprovider -n auto tests/unit
echo "(lowest versions: ${SECONDS}s)"

# The read-path suites again, with one thing changed: the kernel refuses openat2 (a seccomp
# filter every child inherits), so the jail's portable walk serves them for real, as on
# macOS or an old kernel; in the runs above openat2 serves them. Not in the list:
# test_read_path_adversarial.py, whose `jail_mode` fixture already runs its whole table
# through the walk in the first run (that a refused openat2 leads to the walk is shown
# there too, by tests/platforms/test_no_openat2.py). Under a minute on two cores.
READ_PATH_SUITES=(
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

# The extension on its own: its types, its unit tests, and the .vsix people install.
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
# The whole product as a user meets it: the built .vsix in a real VS Code (code-server),
# driven by Playwright, with the real server behind it. e2e_a11y.mjs runs axe-core, which the
# extension's `npm ci` above installed (a pinned devDependency), inside the view.
echo "== end-to-end in a real VS Code"
bash tests/vscode/setup.sh
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e.mjs
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_first_hour.mjs
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_context.mjs
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_navigation.mjs
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_mentions.mjs
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_keyboard.mjs
LANTERN_E2E_SKIP_BUILD=1 node tests/vscode/e2e_a11y.mjs
