// Stands in for Node built-ins (fs, os, path, perf_hooks) that tfjs-backend-wasm's ES bundle
// imports for its Node code path; in a page that path never runs.
export default {};
