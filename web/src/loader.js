// Finds, compiles and instantiates the embind module of one flavour ('relaxed', 'simd' or
// 'scalar', or the threaded 'relaxed-threads' and 'simd-threads').
//
// The Emscripten glue (./wasm/attnlens-<flavour>.js, built with -sENVIRONMENT=web,worker and
// without import.meta) never fetches anything itself: this loader compiles the .wasm and hands it
// over via the glue's `instantiateWasm` hook, and names the threaded glue's worker script. That
// keeps one code path for every host:
//   - browsers and workers fetch the URL;
//   - Node (where fetch() cannot read file: URLs) reads file: URLs with fs;
//   - bundlers see the literal `new URL('./wasm/...', import.meta.url)` below and emit the file;
//   - the inline entry (inline.js) hands over the bytes embedded in ./wasm/inline/.
// The packaged .wasm files are gzip-compressed (.wasm.gz, a third of the size: each stays under
// webpack's 244 KiB asset-size hint); uncompressed ones are read as they are (locateFile may name
// the .wasm beside them, and a server may have decoded the .gz already).
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
  if (embeddedWasm) return 'attnlens/inline embeds the single-threaded modules only';
  if (!simdSupported())
    return 'the threaded modules need WebAssembly SIMD128, which this engine lacks';
  return '';
}

// Every module the package may load, by flavour: the compressed .wasm, the glue, and for the
// threaded ones the script each helper Worker runs and the glue that script imports (plain files
// a bundler copies: bundling the worker with the glue it imports would make a chunk cycle).
// `?no-inline` keeps Vite from turning the small worker script into a data: URL (a Worker of
// which would have an opaque origin); servers and other bundlers ignore it.
// scripts/pack-smoke.mjs checks that the tarball holds every file named here.
export const FLAVOURS = {
  relaxed: {
    fileName: 'attnlens-relaxed.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-relaxed.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-relaxed.js'),
  },
  simd: {
    fileName: 'attnlens-simd.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-simd.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-simd.js'),
  },
  'relaxed-threads': {
    fileName: 'attnlens-relaxed-threads.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-relaxed-threads.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-relaxed-threads.js'),
    workerUrl: () =>
      new URL('./wasm/attnlens-relaxed-threads.worker.js?no-inline', import.meta.url),
    glueUrl: () => new URL('./wasm/attnlens-relaxed-threads.js', import.meta.url),
  },
  'simd-threads': {
    fileName: 'attnlens-simd-threads.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-simd-threads.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-simd-threads.js'),
    workerUrl: () => new URL('./wasm/attnlens-simd-threads.worker.js?no-inline', import.meta.url),
    glueUrl: () => new URL('./wasm/attnlens-simd-threads.js', import.meta.url),
  },
  scalar: {
    fileName: 'attnlens-scalar.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-scalar.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-scalar.js'),
  },
};

// The same engine plus whole models and the trainer (bindings/models/, bindings/training/), in
// the same flavours: what createAttention({ models: true }), attnlens/models and attnlens/train
// load. A table of its own, so pages that
// run attention alone never fetch it.
export const MODEL_FLAVOURS = {
  relaxed: {
    fileName: 'attnlens-models-relaxed.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-models-relaxed.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-models-relaxed.js'),
  },
  simd: {
    fileName: 'attnlens-models-simd.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-models-simd.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-models-simd.js'),
  },
  'relaxed-threads': {
    fileName: 'attnlens-models-relaxed-threads.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-models-relaxed-threads.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-models-relaxed-threads.js'),
    workerUrl: () =>
      new URL('./wasm/attnlens-models-relaxed-threads.worker.js?no-inline', import.meta.url),
    glueUrl: () => new URL('./wasm/attnlens-models-relaxed-threads.js', import.meta.url),
  },
  'simd-threads': {
    fileName: 'attnlens-models-simd-threads.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-models-simd-threads.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-models-simd-threads.js'),
    workerUrl: () =>
      new URL('./wasm/attnlens-models-simd-threads.worker.js?no-inline', import.meta.url),
    glueUrl: () => new URL('./wasm/attnlens-models-simd-threads.js', import.meta.url),
  },
  scalar: {
    fileName: 'attnlens-models-scalar.wasm',
    packagedUrl: () => new URL('./wasm/attnlens-models-scalar.wasm.gz', import.meta.url),
    importGlue: () => import('./wasm/attnlens-models-scalar.js'),
  },
};

// Set by the inline entry: flavour -> () => import() of a module whose default export is the
// base64 of that flavour's .wasm.gz (attention modules only: attnlens/models loads its files).
let embeddedWasm = null;

/** attnlens/inline: load these embedded modules instead of the packaged files. */
export function useEmbeddedWasm(table) {
  embeddedWasm = table;
}

const compiledByUrl = new Map(); // href -> Promise<WebAssembly.Module>

/**
 * The instantiated Emscripten module of `flavour`.
 * @param {'relaxed' | 'simd' | 'scalar' | 'relaxed-threads' | 'simd-threads'} flavour
 * @param {{ wasmUrl?: string | URL,
 *   locateFile?: (fileName: string, directory: string) => string | URL,
 *   models?: boolean }} [where] models: the MODEL_FLAVOURS module instead of the attention one
 * @param {number} [helperThreads] threaded flavours only: Web Workers to start with the module
 */
export async function loadWasmModule(flavour, where = {}, helperThreads = 0) {
  const { wasmUrl, locateFile, models = false } = where;
  const table = models ? MODEL_FLAVOURS : FLAVOURS;
  const { fileName, packagedUrl, importGlue, workerUrl, glueUrl } = table[flavour];
  let compiling;
  if (wasmUrl !== undefined) {
    compiling = compileCached(await resolveUrl(wasmUrl, 'wasmUrl'));
  } else if (locateFile !== undefined) {
    const directory = new URL('./', packagedUrl()).href;
    compiling = compileCached(await resolveUrl(locateFile(fileName, directory), 'locateFile'));
  } else if (!models && embeddedWasm?.[flavour]) {
    compiling = compileEmbedded(flavour);
  } else {
    compiling = compileCached(packagedUrl());
  }
  let threadFiles;
  if (helperThreads > 0) {
    threadFiles = { worker: workerUrl().href, glue: glueUrl().href };
    await requireServed(threadFiles.worker);
  }
  const [glue, compiled] = await Promise.all([importGlue(), compiling]);
  const instantiating = instantiate(glue.default, compiled, helperThreads, threadFiles);
  const override = wasmUrl !== undefined ? 'wasmUrl' : locateFile !== undefined && 'locateFile';
  let module;
  try {
    module = await (helperThreads > 0
      ? withTimeout(instantiating, THREADS_LOAD_TIMEOUT_MS)
      : instantiating);
  } catch (error) {
    if (!override || !error.message.includes('does not fit its glue')) throw error;
    throw wrongModule(override, `${fileName}'s glue cannot run it (${error.message})`);
  }
  // A models module serves attention too; the other way round the models would fail only later,
  // at the first model, with a stranger message.
  if (models && typeof module._modelCreate !== 'function') {
    if (!override) throw new Error(`attnlens: the packaged ${fileName} lacks the models' bindings`);
    throw wrongModule(override, 'it is an attention-only module');
  }
  return module;
}

function wrongModule(parameter, why) {
  return Object.assign(
    new TypeError(
      `${parameter}: names the wrong module: ${why}; { models: true } loads ` +
        "attnlens-models-<flavour>.wasm, otherwise attnlens-<flavour>.wasm (the package's " +
        'src/wasm/ has both)',
    ),
    { code: 'invalid_argument', parameter },
  );
}

// A helper Worker whose script is missing reports it only as an error event, long after the
// fact. A bundler that leaves new URL(..., import.meta.url) as it is (esbuild, Rollup) has not
// copied the worker script: ask for it first, so the caller falls back to one thread at once.
async function requireServed(href) {
  if (href.startsWith('file:')) return; // Node: no Workers, threadsUnavailableReason said so
  const response = await fetch(href, { credentials: 'same-origin' });
  if (!response.ok) {
    throw new Error(
      `its worker script ${href} is not served (HTTP ${response.status}): ` +
        'a bundler that does not copy new URL() assets left it behind',
    );
  }
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

function compileCached(url, key = url.href, compileIt = () => compile(url)) {
  let compiled = compiledByUrl.get(key);
  if (!compiled) {
    compiled = compileIt();
    compiledByUrl.set(key, compiled);
    compiled.catch(() => compiledByUrl.delete(key)); // let a later call try again
  }
  return compiled;
}

function compileEmbedded(flavour) {
  return compileCached(null, `inline:${flavour}`, async () => {
    const { default: base64 } = await embeddedWasm[flavour]();
    return WebAssembly.compile(await wasmBytes(base64Bytes(base64), async () => null));
  });
}

async function compile(url) {
  try {
    let bytes;
    if (url.protocol === 'file:') {
      const { readFile } = await nodeBuiltin('fs/promises');
      bytes = new Uint8Array(await readFile(url));
    } else {
      const response = await fetch(url, { credentials: 'same-origin' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      bytes = new Uint8Array(await response.arrayBuffer());
    }
    return await WebAssembly.compile(await wasmBytes(bytes, () => uncompressedSibling(url)));
  } catch (cause) {
    const where = url.protocol === 'data:' ? 'a data: URL' : url.href;
    throw new Error(`attnlens: cannot load the wasm module from ${where}: ${cause.message}`, {
      cause,
    });
  }
}

const GZIP_MAGIC = [0x1f, 0x8b];
const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];
const startsWith = (bytes, magic) => magic.every((byte, i) => bytes[i] === byte);

// The module's bytes from what was read: a .wasm as it is, a gzip stream inflated. Engines
// without DecompressionStream (Safari < 16.4, Firefox < 113) read the uncompressed .wasm beside
// it instead, which the package ships (bundles and attnlens/inline have only the compressed one).
async function wasmBytes(bytes, readUncompressed) {
  if (startsWith(bytes, WASM_MAGIC)) return bytes;
  if (!startsWith(bytes, GZIP_MAGIC)) {
    throw new Error('neither a WebAssembly module nor a gzip-compressed one');
  }
  if (typeof DecompressionStream === 'function') {
    const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(inflated).arrayBuffer());
  }
  const uncompressed = await readUncompressed();
  if (uncompressed) return uncompressed;
  throw new Error(
    'this engine has no DecompressionStream to inflate the .wasm.gz, and there is no ' +
      'uncompressed .wasm beside it (give locateFile the packaged .wasm files)',
  );
}

async function uncompressedSibling(url) {
  if (!url.pathname.endsWith('.wasm.gz')) return null;
  const response = await fetch(new URL(url.href.replace(/\.gz(?=$|[?#])/, '')));
  return response.ok ? new Uint8Array(await response.arrayBuffer()) : null;
}

function base64Bytes(base64) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(base64);
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
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
// Threaded modules: the glue asks locateFile for its worker script (the only file it looks up:
// the .wasm comes through instantiateWasm), and tells each worker to import mainScriptUrlOrBlob.
function instantiate(createModule, compiled, helperThreads, threadFiles) {
  return new Promise((resolve, reject) => {
    createModule({
      ...(threadFiles && {
        locateFile: (name) => (name.endsWith('.worker.js') ? threadFiles.worker : name),
        mainScriptUrlOrBlob: threadFiles.glue,
      }),
      instantiateWasm(imports, receiveInstance) {
        // A .wasm from another link than the glue (a wasmUrl naming the wrong file) may link and
        // then trap while the glue starts it, inside receiveInstance: reject, never hang.
        WebAssembly.instantiate(compiled, imports).then((instance) => {
          try {
            receiveInstance(instance, compiled);
          } catch (error) {
            reject(new Error(`attnlens: the .wasm does not fit its glue: ${error.message}`));
          }
        }, reject);
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
