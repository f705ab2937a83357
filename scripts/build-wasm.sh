#!/usr/bin/env bash
# Builds the embind modules web/ ships and copies them into web/src/wasm/:
#   attnlens-relaxed.{js,wasm} from build/wasm-relaxed (SIMD128 plus f32x4.relaxed_madd: FMA)
#   attnlens-simd.{js,wasm}    from build/wasm-simd (the core compiled with -msimd128)
#   attnlens-scalar.{js,wasm}  from build/wasm-nosimd (ATTNLENS_NO_SIMD: no SIMD opcodes at all)
# web/src/loader.js loads the first of them the engine validates.
# Both are the -sDYNAMIC_EXECUTION=0 links (no eval: strict-CSP pages can load them). The *-eval
# links are built alongside for bench/call_overhead.mjs and are not shipped.
# The configures are the ones ./scripts/test.sh uses for its wasm stages, so either reuses the
# other's build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_build_tools

build_modules() {
  local dir=$1; shift
  EMSCRIPTEN_BUILD=1 configure "$dir" "$@"
  cmake --build "$dir" -j "$JOBS" --target attnlens_web attnlens_web_eval
}

step "building the wasm modules for web/"
build_modules build/wasm-simd
build_modules build/wasm-relaxed -DATTNLENS_RELAXED_SIMD=ON
build_modules build/wasm-nosimd -DATTNLENS_NO_SIMD=ON

mkdir -p web/src/wasm
for flavour in simd relaxed scalar; do
  case "$flavour" in
    simd) dir=build/wasm-simd ;;
    relaxed) dir=build/wasm-relaxed ;;
    scalar) dir=build/wasm-nosimd ;;
  esac
  cp "$dir/bindings/attnlens-$flavour.js" "$dir/bindings/attnlens-$flavour.wasm" web/src/wasm/
done

# The scalar module is what engines without SIMD128 load: it must not contain one SIMD
# instruction (the core would otherwise fail to compile there). Binaryen's disassembler comes
# with Emscripten.
simd_instructions() { wasm-dis "$1" | grep -cE 'v128|[if](8x16|16x8|32x4|64x2)\.' || true; }
[ "$(simd_instructions web/src/wasm/attnlens-scalar.wasm)" = 0 ] ||
  die "attnlens-scalar.wasm contains SIMD instructions"
[ "$(simd_instructions web/src/wasm/attnlens-simd.wasm)" -gt 0 ] ||
  die "attnlens-simd.wasm contains no SIMD instruction: was it built with -msimd128?"
# The relaxed module must need relaxed SIMD (else it is the simd one under another name) and be
# valid with it: Node 20 validates relaxed SIMD only behind a flag.
validates() {
  node "$@" -e 'const fs = require("fs");
    process.stdout.write(String(WebAssembly.validate(fs.readFileSync(process.argv[1]))));' \
    web/src/wasm/attnlens-relaxed.wasm
}
[ "$(validates)" = false ] && [ "$(validates --experimental-wasm-relaxed-simd)" = true ] ||
  die "attnlens-relaxed.wasm: must validate with relaxed SIMD and only with it"
ls -l web/src/wasm
