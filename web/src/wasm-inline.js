// The modules attnlens/inline embeds: flavour -> import() of ./wasm/inline/attnlens-<flavour>.js,
// whose default export is the base64 of that flavour's .wasm.gz (written by scripts/build-wasm.sh
// through web/scripts/wasm-artifacts.mjs). Each is its own module, so a bundler that splits
// chunks loads only the flavour the engine picks. The threaded modules are not embedded: their
// helper Workers need files of their own.
export const EMBEDDED_WASM = {
  relaxed: () => import('./wasm/inline/attnlens-relaxed.js'),
  simd: () => import('./wasm/inline/attnlens-simd.js'),
  scalar: () => import('./wasm/inline/attnlens-scalar.js'),
};
