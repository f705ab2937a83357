#!/usr/bin/env bash
# The benchmark command: attnlens against onnxruntime-web, TensorFlow.js (wasm) and plain
# JavaScript, in Node and in headless Chromium, plus analyze() latency; then docs/benchmarks.md,
# its plots and the README summary are rewritten from the results. Numbers are printed, never
# asserted. Not part of ./scripts/test.sh: a full run takes a while and installs the peers from
# npm (into bench/peers/node_modules only; they never enter the attnlens package).
#
#   ./scripts/bench.sh               everything (Node, then Chromium; sizes 128 to 8192)
#   ./scripts/bench.sh --quick       N = 128 and 512, fewer calls; prints, leaves the docs alone
#   ./scripts/bench.sh --docs-only   rewrite the docs from the saved results
#   ./scripts/bench.sh ARGS...       any bench/peers/run.mjs options, e.g.
#                                    --where node --sizes 512,2048 --runners attnlens-simd,ort-mha
# A run with ARGS still writes the docs from whatever results it saved; check what they cover.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

results=bench/peers/results
quick=0
docs_only=0
args=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --docs-only) docs_only=1 ;;
    *) args+=("$arg") ;;
  esac
done

write_docs() {
  step "writing docs/benchmarks.md, its plots and the README summary from $results/"
  node bench/peers/report/write-docs.mjs --results "$results"
}

if [ "$docs_only" = 1 ]; then
  write_docs
  exit 0
fi

ensure_build_tools
ensure_packages chromium python3-onnx

step "building the wasm modules (incremental)"
./scripts/build-wasm.sh >/dev/null
[ -d web/node_modules/playwright-core ] || (cd web && npm ci --no-audit --no-fund)
if [ ! -d bench/peers/node_modules/onnxruntime-web ] ||
   [ bench/peers/package-lock.json -nt bench/peers/node_modules/.package-lock.json ]; then
  step "installing the peers into bench/peers/node_modules"
  (cd bench/peers && npm ci --no-audit --no-fund)
fi
step "building the ONNX graphs with Debian's python3-onnx"
/usr/bin/python3 bench/peers/models/build_models.py bench/peers/models/build

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (2 shared cores: a high load means noisy numbers)"
if [ "$quick" = 1 ]; then
  out=$results/quick
  step "peers benchmark, quick"
  node bench/peers/run.mjs --quick --sizes 128,512 --out "$out" "${args[@]}"
  step "analyze() latency, quick"
  node bench/analyze-latency.mjs --calls 100 --json "$out/latency.json"
  echo "quick run: results in $out/, docs left alone"
  exit 0
fi

step "peers benchmark"
node bench/peers/run.mjs --out "$results" "${args[@]}"
step "analyze() latency, 64 tokens, 4 heads"
node bench/analyze-latency.mjs --json "$results/latency.json"
write_docs
