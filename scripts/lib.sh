# Shared by scripts/*.sh: installing what a fresh Debian machine lacks, and labelled steps.
# shellcheck shell=bash

# Emscripten 3.1.6's JS optimizer needs Debian's node modules (acorn) on NODE_PATH.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { printf '\033[31merror:\033[0m %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

# ensure_packages PKG... installs the Debian packages that are not installed yet.
ensure_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  step "installing Debian packages: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Node.js may come from Debian or elsewhere (e.g. NodeSource); only install it when absent.
ensure_node() {
  command -v node >/dev/null 2>&1 || ensure_packages nodejs
  command -v npm >/dev/null 2>&1 || ensure_packages npm
}

# The toolchain every build needs: native compiler, CMake, Emscripten, Eigen, Catch2.
ensure_build_tools() {
  ensure_packages build-essential cmake emscripten libeigen3-dev catch2
  ensure_node
}

JOBS=$(nproc 2>/dev/null || echo 2)
export JOBS

# configure DIR [cmake args...]; uses emcmake when EMSCRIPTEN_BUILD=1.
configure() {
  local dir=$1; shift
  if [ "${EMSCRIPTEN_BUILD:-0}" = 1 ]; then
    emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  else
    cmake -S . -B "$dir" "$@" >/dev/null
  fi
}

# configure_and_build DIR [cmake args...]: configure, then build every target.
configure_and_build() {
  configure "$@"
  cmake --build "$1" -j "$JOBS"
}
