// Finds, compiles and instantiates the embind module of one flavour ('relaxed', 'simd' or
// 'scalar', or the threaded 'relaxed-threads' and 'simd-threads').
//
// The Emscripten glue (./wasm/attnlens-<flavour>.js, built with -sENVIRONMENT=web,worker) never
// fetches anything itself: this loader compiles the .wasm and hands it over via the glue's
// `instantiateWasm` hook. That keeps one code path for every host:
//   - browsers and workers fetch the URL (streaming compilation when served as application/wasm);
//   - Node (where fetch() cannot read file: URLs) reads file: URLs with fs;
//   - bundlers see the literal `new URL('./wasm/...', import.meta.url)` below and emit the file.
// Compiled modules are cached per URL, so later instances only instantiate.

// The smallest module that uses a SIMD128 instruction:
//   (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt))
// WebAssembly.validate accepts it exactly when the engine supports SIMD128.
// prettier-ignore
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,  // magic, version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b,        // type section: () -> v128
  0x03, 0x02, 0x01, 0x00,                          // function section: one function of type 0
  0x0a, 0x0a, 0x01, 0x08, 0x00,                    // code section: one body, no locals
  0x41, 0x00,                                      //   i32.const 0
  0xfd, 0x0f,                                      //   i8x16.splat
  0xfd, 0x62,                                      //   i8x16.popcnt
  0x0b,                                            //   end
]);

// The one relaxed-SIMD instruction the relaxed build uses (scripts/wasm_relaxed_madd.py stops its
// build on any other):
//   (module (func (param v128 v128 v128) (result v128)
//     local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd))
// Chromium validates it since 114; Node 20 only with --experimental-wasm-relaxed-simd.
// prettier-ignore
const RELAXED_MADD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,        // magic, version 1
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b,  // type: (v128 v128 v128) -> v128
  0x03, 0x02, 0x01, 0x00,                                // function section: one function
  0x0a, 0x0d, 0x01, 0x0b, 0x00,                          // code section: one body, no locals
  0x20, 0x00, 0x20, 0x01, 0x20, 0x02,                    //   local.get 0, 1, 2
  0xfd, 0x85, 0x02,                                      //   f32x4.relaxed_madd
  0x0b,                                                  //   end
]);

let simdSupport;
let relaxedSimdSupport;

/** True when this engine runs WebAssembly SIMD128 (decided once, with a probe module). */
export function simdSupported() {
  simdSupport ??= WebAssembly.validate(SIMD_PROBE);
  return simdSupport;
}

/** True when this engine also runs f32x4.relaxed_madd, what the 'relaxed' flavour adds. */
export function relaxedSimdSupported() {
  relaxedSimdSupport ??= simdSupported() && WebAssembly.validate(RELAXED_MADD_PROBE);
  return relaxedSimdSupport;
}

/** The fastest flavour this engine runs: 'relaxed', then 'simd', then 'scalar'. */
export function bestFlavour() {
  if (relaxedSimdSupported()) return 'relaxed';
  return simdSupported() ? 'simd' : 'scalar';
}

/**
 * Why this host cannot run the threaded module, or '' when it can. It needs SharedArrayBuffer
 * (browsers expose it only on cross-origin isolated pages: COOP same-origin + COEP
 * require-corp), Web Workers for the helper threads (the module is built for browsers: Node
 * runs attnlens on one thread), and SIMD128 (the threaded modules are the SIMD and relaxed ones).
 */
export function threadsUnavailableReason() {
  if (typeof globalThis.process?.versions?.node === 'string' && typeof Worker !== 'function') {
    return 'threads run in browsers only (their helper threads are Web Workers)';
  }
  if (typeof SharedArrayBuffer !== 'function' || globalThis.crossOriginIsolated !== true) {
    return (
      'the page is not cross-origin isolated, so it has no SharedArrayBuffer (serve it with ' +
      "'Cross-Origin-Opener-Policy: same-origin' and 'Cross-Origin-Embedder-Policy: require-corp')"
    );
  }
  if (typeof Worker !== 'function') return 'this context cannot start Web Workers';
  // The threaded glue finds its worker script, and each worker re-imports the glue, by the
  // glue's own import.meta.url; inside a bundle that URL is the bundle's.
  if (!import.meta.url.endsWith('/loader.js')) {
    return "attnlens was bundled, and the threaded module runs only from the package's own files";
  }
  if (!simdSupported())
    return 'the threaded modules need WebAssembly SIMD128, which this engine lacks';
  return '';
}

const FLAVOURS = {
  relaxed: {
    fileName: 'attnlens-relaxed.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-relaxed.wasm', import.meta.url),
    importGlue: () => import('./wasm/attnlens-relaxed.js'),
  },
  simd: {
    fileName: 'attnlens-simd.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-simd.wasm', import.meta.url),
    importGlue: () => import('./wasm/attnlens-simd.js'),
  },
  'relaxed-threads': {
    fileName: 'attnlens-relaxed-threads.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-relaxed-threads.wasm', import.meta.url),
    importGlue: () => import('./wasm/attnlens-relaxed-threads.js'),
  },
  'simd-threads': {
    fileName: 'attnlens-simd-threads.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-simd-threads.wasm', import.meta.url),
    importGlue: () => import('./wasm/attnlens-simd-threads.js'),
  },
  scalar: {
    fileName: 'attnlens-scalar.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-scalar.wasm', import.meta.url),
    importGlue: () => import('./wasm/attnlens-scalar.js'),
  },
};

const compiledByUrl = new Map(); // href -> Promise<WebAssembly.Module>

/**
 * The instantiated Emscripten module of `flavour`.
 * @param {'relaxed' | 'simd' | 'scalar' | 'relaxed-threads' | 'simd-threads'} flavour
 * @param {{ wasmUrl?: string | URL,
 *   locateFile?: (fileName: string, directory: string) => string | URL }} [where]
 * @param {number} [helperThreads] threaded flavours only: Web Workers to start with the module
 */
export async function loadWasmModule(flavour, { wasmUrl, locateFile } = {}, helperThreads = 0) {
  const { fileName, packagedUrl, importGlue } = FLAVOURS[flavour];
  let url = packagedUrl();
  if (wasmUrl !== undefined) {
    url = await resolveUrl(wasmUrl, 'wasmUrl');
  } else if (locateFile !== undefined) {
    url = await resolveUrl(locateFile(fileName, new URL('./', url).href), 'locateFile');
  }
  const [glue, compiled] = await Promise.all([importGlue(), compileCached(url)]);
  const module = instantiate(glue.default, compiled, helperThreads);
  return helperThreads > 0 ? withTimeout(module, THREADS_LOAD_TIMEOUT_MS) : module;
}

// The threaded module resolves only once every helper Worker has loaded; a Worker whose script
// fails (blocked by a policy, not copied by a bundler) reports it only as an error event, and the
// glue would then wait forever. Past this, the caller falls back to one thread.
const THREADS_LOAD_TIMEOUT_MS = 20000;

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`its Web Workers did not start within ${ms / 1000} s`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function compileCached(url) {
  let compiled = compiledByUrl.get(url.href);
  if (!compiled) {
    compiled = compile(url);
    compiledByUrl.set(url.href, compiled);
    compiled.catch(() => compiledByUrl.delete(url.href)); // let a later call try again
  }
  return compiled;
}

async function compile(url) {
  try {
    if (url.protocol === 'file:') {
      const { readFile } = await nodeBuiltin('fs/promises');
      return await WebAssembly.compile(await readFile(url));
    }
    const response = await fetch(url, { credentials: 'same-origin' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const type = response.headers.get('content-type') ?? '';
    if (typeof WebAssembly.compileStreaming === 'function' && type.startsWith('application/wasm')) {
      return await WebAssembly.compileStreaming(response);
    }
    return await WebAssembly.compile(await response.arrayBuffer());
  } catch (cause) {
    const where = url.protocol === 'data:' ? 'a data: URL' : url.href;
    throw new Error(`attnlens: cannot load the wasm module from ${where}: ${cause.message}`, {
      cause,
    });
  }
}

// Absolute URLs as they are; relative strings against the page in browsers, against the
// working directory in Node.
async function resolveUrl(value, name) {
  if (value instanceof URL) return value;
  if (typeof value !== 'string') {
    throw Object.assign(new TypeError(`${name}: must give a string or URL, got ${typeof value}`), {
      code: 'invalid_argument',
      parameter: name,
    });
  }
  if (globalThis.location?.href) return new URL(value, globalThis.location.href);
  try {
    return new URL(value);
  } catch {
    const { pathToFileURL } = await nodeBuiltin('url');
    return pathToFileURL(value);
  }
}

// Node's built-in modules without a static import, which would break browser builds:
// process.getBuiltinModule where it exists (Node >= 20.16), else import() of a computed
// specifier that bundlers leave alone.
export async function nodeBuiltin(name) {
  if (typeof globalThis.process?.getBuiltinModule === 'function') {
    return globalThis.process.getBuiltinModule(name);
  }
  const specifier = `node:${name}`;
  return import(/* webpackIgnore: true */ /* @vite-ignore */ specifier);
}

// The threaded glue warns the first time the main thread waits for a helper ("Blocking on the
// main thread is very dangerous"). A call blocks its caller until it is done, threaded or not;
// with threads the wait is just shorter. Everything else the glue prints goes to console.warn.
function quietPrintErr(text) {
  if (!String(text).startsWith('Blocking on the main thread')) console.warn(text);
}

// The threaded glue exposes its shared WebAssembly.Memory as `wasmMemory`; it becomes
// `attnlensMemory`, so heap.js can see growth made by helper threads (the single-threaded glue
// has none to expose and needs none: its own views follow every growth).
function instantiate(createModule, compiled, helperThreads) {
  return new Promise((resolve, reject) => {
    createModule({
      instantiateWasm(imports, receiveInstance) {
        WebAssembly.instantiate(compiled, imports).then(
          (instance) => receiveInstance(instance, compiled),
          reject,
        );
        return {}; // exports arrive asynchronously through receiveInstance
      },
      onAbort: (what) => reject(new Error(`attnlens: the wasm module aborted: ${what}`)),
      pthreadPoolSize: helperThreads, // read by the threaded glue (bindings/CMakeLists.txt)
      printErr: quietPrintErr,
    }).then((module) => {
      module.attnlensMemory = module.wasmMemory;
      resolve(module);
    }, reject);
  });
}
