#!/usr/bin/env bash
# Builds the embind modules web/ ships and copies them into web/src/wasm/:
#   attnlens-simd.{js,wasm}    from build/wasm-simd (the core compiled with -msimd128)
#   attnlens-scalar.{js,wasm}  from build/wasm-nosimd (ATTNLENS_NO_SIMD: no SIMD opcodes at all)
#   attnlens-simd-threads.{js,wasm,worker.js}  from build/wasm-threads (SIMD128 + -pthread: shared
#                              memory, so only cross-origin isolated pages load it; the worker
#                              script runs each helper thread)
# All are the -sDYNAMIC_EXECUTION=0 links (no eval: strict-CSP pages can load them). The *-eval
# links are built alongside for bench/call_overhead.mjs and are not shipped.
# The configures are the ones ./scripts/test.sh uses for its wasm stages, so either reuses the
# other's build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_build_tools

build_modules() {
  local dir=$1 targets=$2; shift 2
  EMSCRIPTEN_BUILD=1 configure "$dir" "$@"
  cmake --build "$dir" -j "$JOBS" --target $targets
}

step "building the wasm modules for web/"
build_modules build/wasm-simd "attnlens_web attnlens_web_eval"
build_modules build/wasm-nosimd "attnlens_web attnlens_web_eval" -DATTNLENS_NO_SIMD=ON
build_modules build/wasm-threads attnlens_web -DATTNLENS_THREADS=ON

mkdir -p web/src/wasm
for flavour in simd scalar; do
  dir=build/wasm-simd
  [ "$flavour" = scalar ] && dir=build/wasm-nosimd
  cp "$dir/bindings/attnlens-$flavour.js" "$dir/bindings/attnlens-$flavour.wasm" web/src/wasm/
done
cp build/wasm-threads/bindings/attnlens-simd-threads.{js,wasm,worker.js} web/src/wasm/

# Strict-CSP pages ('script-src' without 'unsafe-eval') must be able to load every module.
for glue in web/src/wasm/*.js; do
  ! grep -qE '\beval\(|new Function\(' "$glue" || die "$glue uses eval or new Function"
done

# The scalar module is what engines without SIMD128 load: it must not contain one SIMD
# instruction (the core would otherwise fail to compile there). Binaryen's disassembler comes
# with Emscripten.
simd_instructions() { wasm-dis "$1" | grep -cE 'v128|[if](8x16|16x8|32x4|64x2)\.' || true; }
[ "$(simd_instructions web/src/wasm/attnlens-scalar.wasm)" = 0 ] ||
  die "attnlens-scalar.wasm contains SIMD instructions"
[ "$(simd_instructions web/src/wasm/attnlens-simd.wasm)" -gt 0 ] ||
  die "attnlens-simd.wasm contains no SIMD instruction: was it built with -msimd128?"
ls -l web/src/wasm
