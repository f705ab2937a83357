#!/usr/bin/env bash
# Builds the embind modules web/ ships and copies them into web/src/wasm/ (each also as
# attnlens-models-<flavour>: the same engine plus whole models, which attnlens/models loads):
#   attnlens-relaxed.{js,wasm} from build/wasm-relaxed (SIMD128 plus f32x4.relaxed_madd: FMA)
#   attnlens-simd.{js,wasm}    from build/wasm-simd (the core compiled with -msimd128)
#   attnlens-scalar.{js,wasm}  from build/wasm-nosimd (ATTNLENS_NO_SIMD: no SIMD opcodes at all)
#   attnlens-simd-threads.{js,wasm,worker.js}     from build/wasm-threads and
#   attnlens-relaxed-threads.{js,wasm,worker.js}  from build/wasm-relaxed-threads: the SIMD and
#                              relaxed modules with -pthread (shared memory, so only cross-origin
#                              isolated pages load them; the worker script runs each helper thread)
# web/src/loader.js loads the first of relaxed, simd, scalar the engine validates (the threaded
# twin of relaxed or simd where threads can run), from the gzip-compressed copy of its .wasm.
# First, web/scripts/block-layouts.mjs writes the blocks' JavaScript lists from their headers.
# Last, web/scripts/wasm-artifacts.mjs writes those .wasm.gz files, the modules attnlens/inline
# embeds (web/src/wasm/inline/) and the hash of the sources they come from, which `npm pack`
# (web/scripts/prepack.mjs) compares with the sources before packing.
# All are the -sDYNAMIC_EXECUTION=0 links (no eval: strict-CSP pages can load them). The *-eval
# links are built alongside for bench/call_overhead.mjs and are not shipped.
# The configures are the ones ./scripts/test.sh uses for its wasm stages, so either reuses the
# other's build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

ensure_build_tools

# The JavaScript lists and .d.ts unions of the call, model and trainer blocks come from the
# bindings' X-macro headers the modules are compiled from (test/block-layouts.test.js checks it).
step "generating the block layouts from the bindings' headers"
ensure_node
[ -x web/node_modules/.bin/prettier ] || (cd web && npm ci --no-audit --no-fund)
node web/scripts/block-layouts.mjs

build_modules() {
  local dir=$1 targets=$2; shift 2
  EMSCRIPTEN_BUILD=1 configure "$dir" "$@"
  cmake --build "$dir" -j "$JOBS" --target $targets
}

step "building the wasm modules for web/"
build_modules build/wasm-simd "attnlens_web attnlens_web_eval attnlens_models_web"
build_modules build/wasm-relaxed "attnlens_web attnlens_web_eval attnlens_models_web" \
  -DATTNLENS_RELAXED_SIMD=ON
build_modules build/wasm-nosimd "attnlens_web attnlens_web_eval attnlens_models_web" \
  -DATTNLENS_NO_SIMD=ON
build_modules build/wasm-threads "attnlens_web attnlens_models_web" -DATTNLENS_THREADS=ON
build_modules build/wasm-relaxed-threads "attnlens_web attnlens_models_web" \
  -DATTNLENS_RELAXED_SIMD=ON -DATTNLENS_THREADS=ON

mkdir -p web/src/wasm
for flavour in simd relaxed scalar; do
  case "$flavour" in
    simd) dir=build/wasm-simd ;;
    relaxed) dir=build/wasm-relaxed ;;
    scalar) dir=build/wasm-nosimd ;;
  esac
  for name in "attnlens-$flavour" "attnlens-models-$flavour"; do
    cp "$dir/bindings/$name.js" "$dir/bindings/$name.wasm" web/src/wasm/
  done
done
for name in attnlens-simd-threads attnlens-models-simd-threads; do
  cp build/wasm-threads/bindings/$name.{js,wasm,worker.js} web/src/wasm/
done
for name in attnlens-relaxed-threads attnlens-models-relaxed-threads; do
  cp build/wasm-relaxed-threads/bindings/$name.{js,wasm,worker.js} web/src/wasm/
done

# Strict-CSP pages ('script-src' without 'unsafe-eval') must be able to load every module.
for glue in web/src/wasm/*.js; do
  ! grep -qE '\beval\(|new Function\(' "$glue" || die "$glue uses eval or new Function"
done

# The glue must not name itself through import.meta (USE_ES6_IMPORT_META=0, bindings/CMakeLists.txt):
# webpack would write the build machine's path into bundles and bundle the worker in a cycle.
for glue in web/src/wasm/*.js; do
  ! grep -q 'import\.meta' "$glue" || die "$glue uses import.meta"
done

# The scalar module is what engines without SIMD128 load: it must not contain one SIMD
# instruction (the core would otherwise fail to compile there). Binaryen's disassembler comes
# with Emscripten.
simd_instructions() { wasm-dis "$1" | grep -cE 'v128|[if](8x16|16x8|32x4|64x2)\.' || true; }
for name in attnlens attnlens-models; do
  [ "$(simd_instructions web/src/wasm/$name-scalar.wasm)" = 0 ] ||
    die "$name-scalar.wasm contains SIMD instructions"
  [ "$(simd_instructions web/src/wasm/$name-simd.wasm)" -gt 0 ] ||
    die "$name-simd.wasm contains no SIMD instruction: was it built with -msimd128?"
done
# The relaxed module must need relaxed SIMD (else it is the simd one under another name) and be
# valid with it: Node 20 validates relaxed SIMD only behind a flag.
validates() {
  local wasm=$1; shift
  node "$@" -e 'const fs = require("fs");
    process.stdout.write(String(WebAssembly.validate(fs.readFileSync(process.argv[1]))));' "$wasm"
}
for wasm in web/src/wasm/attnlens{,-models}-relaxed{,-threads}.wasm; do
  [ "$(validates "$wasm")" = false ] && [ "$(validates "$wasm" --experimental-wasm-relaxed-simd)" = true ] ||
    die "$wasm: must validate with relaxed SIMD and only with it"
done
node web/scripts/wasm-artifacts.mjs --write
node web/scripts/wasm-artifacts.mjs --check
ls -l web/src/wasm web/src/wasm/inline
