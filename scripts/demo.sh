#!/usr/bin/env bash
# The main command: sets up a fresh Debian machine (installs what is missing, the same way
# scripts/test.sh does), builds the wasm modules and the production site (web/dist/), and serves
# the demo at http://localhost:8080 (PORT=... to change it).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_build_tools
step "building the wasm modules"
./scripts/build-wasm.sh
step "building the site into web/dist/"
node scripts/build-site.mjs
step "serving (Ctrl-C to stop)"
exec node scripts/serve.mjs --root web/dist --port "${PORT:-8080}"
