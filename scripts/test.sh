#!/usr/bin/env bash
# The one test command: sets up a fresh Debian machine (installs what is missing), builds every
# configuration and runs every test suite attnlens has. Any failure stops it with a non-zero exit.
#
#   ./scripts/test.sh            everything (what CI runs)
#   ./scripts/test.sh format     only the format check (clang-format, Prettier: scripts/format.sh)
#   ./scripts/test.sh native     only the stages whose name contains "native"
#   ./scripts/test.sh native-tsan the threaded tests under ThreadSanitizer
#   ./scripts/test.sh wasm-threads the suite in the -pthread wasm build under Node
#   ./scripts/test.sh native-fuzz  the libFuzzer target for a bounded time (FUZZ_SECONDS, 60)
#   ./scripts/test.sh web        only the web stages: the npm package, the browser tests, WebGPU
#   ./scripts/test.sh web-webgpu only the WebGPU backend (SwiftShader, in Node and in Chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

only=${1:-}
want() { [ -z "$only" ] || [[ "$1" == *"$only"* ]]; }

ensure_build_tools

# Every module web/ ships is in web/src/wasm/, built from these sources (the list and the check
# are web/scripts/wasm-artifacts.mjs, which npm pack uses too).
wasm_modules_built() { node web/scripts/wasm-artifacts.mjs --check >/dev/null 2>&1; }

run_ctest() { ctest --test-dir "$1" --output-on-failure -j "$JOBS"; }

if want format; then
  step "format: C++ clang-formatted, JavaScript Prettier-formatted, no JavaScript line in web/ over 100 columns"
  ./scripts/format.sh --check
fi

if want native-simd; then
  step "native build, SIMD kernels: C++ test suite"
  configure_and_build build/native -DCMAKE_BUILD_TYPE=Release
  run_ctest build/native
fi

if want native-nosimd; then
  step "native build, scalar kernels only (ATTNLENS_NO_SIMD): C++ test suite"
  configure_and_build build/native-nosimd -DCMAKE_BUILD_TYPE=Release -DATTNLENS_NO_SIMD=ON
  run_ctest build/native-nosimd
fi

if want native-sanitize; then
  step "native build under AddressSanitizer + UndefinedBehaviorSanitizer: C++ test suite"
  configure_and_build build/native-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLENS_SANITIZE=ON \
    -DATTNLENS_BUILD_BENCH=OFF
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build/native-asan
fi

if want native-tsan; then
  step "native build under ThreadSanitizer (ATTNLENS_TSAN): the threaded tests"
  configure build/native-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLENS_TSAN=ON \
    -DATTNLENS_BUILD_BENCH=OFF
  cmake --build build/native-tsan -j "$JOBS" --target attnlens_tests
  # Only the cases that run threads: the rest of the suite is single-threaded and slow here.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build/native-tsan/tests/attnlens_tests "[threads]"
fi

if want native-fuzz; then
  step "libFuzzer (clang, ASan + UBSan): random problems against the reference for ${FUZZ_SECONDS:-60} s"
  ensure_packages clang libclang-rt-14-dev  # clang 14, as Emscripten's LLVM; the libFuzzer runtime
  CC=clang CXX=clang++ configure build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLENS_FUZZ=ON \
    -DATTNLENS_BUILD_TESTS=OFF -DATTNLENS_BUILD_BENCH=OFF
  cmake --build build/fuzz -j "$JOBS" --target attnlens_fuzz
  # A fixed seed and a fresh corpus: the same inputs on every run, so a failure reproduces.
  corpus=$(mktemp -d)
  log=build/fuzz/last-run.log
  if ! build/fuzz/fuzz/attnlens_fuzz -seed=1 -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=build/fuzz/ "$corpus" >"$log" 2>&1; then
    grep -vE '^#[0-9]+' "$log" | tail -40
    die "the fuzzer found a failing input (saved as build/fuzz/crash-*; rerun it: build/fuzz/fuzz/attnlens_fuzz FILE)"
  fi
  grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' "$log"
  rm -rf "$corpus"
fi

if want wasm-simd; then
  step "WebAssembly build (SIMD128) under Node: C++ test suite"
  EMSCRIPTEN_BUILD=1 configure_and_build build/wasm-simd
  run_ctest build/wasm-simd
fi

if want wasm-relaxed; then
  step "WebAssembly build with relaxed SIMD (f32x4.relaxed_madd) under Node: C++ test suite"
  python3 scripts/test_wasm_relaxed_madd.py
  EMSCRIPTEN_BUILD=1 configure_and_build build/wasm-relaxed -DATTNLENS_RELAXED_SIMD=ON
  run_ctest build/wasm-relaxed
fi

if want wasm-threads; then
  step "WebAssembly build with threads (-pthread, SIMD128) under Node: C++ test suite"
  EMSCRIPTEN_BUILD=1 configure_and_build build/wasm-threads -DATTNLENS_THREADS=ON
  run_ctest build/wasm-threads
fi

if want wasm-nosimd; then
  step "WebAssembly build without SIMD under Node: C++ test suite"
  EMSCRIPTEN_BUILD=1 configure_and_build build/wasm-nosimd -DATTNLENS_NO_SIMD=ON
  run_ctest build/wasm-nosimd
fi

if want web-package; then
  step "npm package (web/): wasm modules, node:test suite, types (with and without the DOM lib), npm pack test, bundles of esbuild, Rollup, Vite and webpack in Chromium, size"
  ensure_packages chromium  # the bundle smoke test runs the bundles in headless Chromium
  # The model tests make PyTorch checkpoints (torch.save, tests/models/make_tiny_models.py) and
  # check the forward pass against tests/models/reference.py; the token offset tests train a
  # SentencePiece model (tests/models/spm_tokenizers.py).
  ensure_packages python3-torch python3-sentencepiece
  ./scripts/build-wasm.sh
  (
    cd web
    npm ci --no-audit --no-fund
    npm test
    npm run test:types
    npm run test:pack
    npm run test:bundle
    npm run size
  )
fi

if want web-browser; then
  step "demo and widget in headless Chromium: production build (web/dist), then the browser tests"
  ensure_packages chromium fonts-wqy-microhei
  ensure_packages python3-torch  # the tiny models the model tests run (tests/models/)
  if ! wasm_modules_built; then
    ./scripts/build-wasm.sh
  fi
  [ -d web/node_modules/playwright-core ] || (cd web && npm ci --no-audit --no-fund)
  node scripts/build-site.mjs
  (cd web && ATTNLENS_SITE_ROOT=dist npm run test:browser)
fi

if want web-webgpu; then
  step "WebGPU backend on SwiftShader (no GPU needed): in Node through the webgpu package, in headless Chromium with --enable-unsafe-webgpu"
  ensure_packages chromium  # ships SwiftShader's Vulkan driver, used by both
  if ! wasm_modules_built; then
    ./scripts/build-wasm.sh
  fi
  [ -d web/node_modules/webgpu ] || (cd web && npm ci --no-audit --no-fund)
  (cd web && npm run test:webgpu)
fi

step "all test suites passed"
