// `npm pack` / `npm publish` run this first (package.json "prepack"): the tarball must hold
// every wasm module the package may load, built from the sources beside it. When src/wasm/ is
// incomplete or stale, it runs ../scripts/build-wasm.sh where that script and Emscripten are
// present, and otherwise stops the pack saying what to run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { wasmProblems } from './wasm-artifacts.mjs';

const buildScript = fileURLToPath(new URL('../../scripts/build-wasm.sh', import.meta.url));
const fail = (lines) => {
  console.error(['attnlens: cannot pack:', ...lines].join('\n  '));
  process.exit(1);
};

let problems = wasmProblems();
if (problems.length) {
  const haveEmscripten = spawnSync('emcc', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!existsSync(buildScript) || !haveEmscripten) {
    fail([
      ...problems,
      existsSync(buildScript)
        ? 'build the wasm modules with ./scripts/build-wasm.sh from the repository root ' +
          '(it needs Emscripten: apt-get install emscripten), then pack again'
        : 'build the wasm modules with ./scripts/build-wasm.sh in the attnlens repository, ' +
          'then pack from its web/ folder',
    ]);
  }
  console.error(`attnlens: building the wasm modules first:\n  ${problems.join('\n  ')}`);
  // Its output goes to stderr: `npm pack --json` prints the pack's report on stdout.
  const build = spawnSync('bash', [buildScript], { stdio: ['ignore', 2, 2] });
  if (build.status !== 0) fail([`${buildScript} failed (exit status ${build.status})`]);
  problems = wasmProblems();
  if (problems.length) fail(problems);
}
