// attnlens/inline: the same API as 'attnlens', with the wasm modules embedded in JavaScript
// instead of read from files beside the package, for bundlers that do not copy
// new URL(..., import.meta.url) assets (esbuild, Rollup) and pages that cannot serve them.
// Large calls run on one thread (threadsUnavailableReason() says why).
import { useEmbeddedWasm } from './loader.js';
import { EMBEDDED_WASM } from './wasm-inline.js';

useEmbeddedWasm(EMBEDDED_WASM);

export * from './index.js';
