#!/usr/bin/env node
// The production build of the demo and the widget: web/dist/, a folder any static host can serve.
//
//   node scripts/build-site.mjs [--out DIR]
//
// No bundler: the pages use native ES modules with relative imports, so the build copies the
// browser-facing files in the same layout they have in web/ and checks that every relative
// import and every page asset resolves inside the output:
//
//   dist/index.html           redirects to demo/
//   dist/demo/                the demo page (index.html, CSS, modules, worker, favicon)
//   dist/widget/              attnlens-widget.js (+ widget-style.js), the sample blog post, the CSP page
//   dist/src/                 the package's browser code: index.js and its modules, text/, views/,
//                             i18n/, models/, wasm/ (*.js, *.wasm.gz and the uncompressed *.wasm;
//                             the Node-only CLI in src/cli/ and the inline entry are left out)
//   dist/src/vendor/          the package's dependencies (fflate, @huggingface/tokenizers) as the
//                             single ES modules they ship, with their licences: the copied sources
//                             import them by relative path, so attnlens/models loads in a module
//                             worker (which no import map reaches) and under the strict CSP
//   dist/sw.js                the service worker that keeps the site working offline, with the
//                             list of files to precache and a version made from their contents
//                             (scripts/site-offline.mjs); dist/register-sw.js registers it, and
//                             the built demo page loads that
//
// Embedding the widget from the dist: <script type="module" src="<dist>/widget/attnlens-widget.js">.
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { packagedWasmFiles } from '../web/scripts/wasm-artifacts.mjs';
import { writeServiceWorker } from './site-offline.mjs';
import { CONTENT_SECURITY_POLICY } from '../web/scripts/static-server.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(repo, 'web');
const { values } = parseArgs({ options: { out: { type: 'string', default: join(web, 'dist') } } });
const out = resolve(values.out);

// The Node-only CLI, and attnlens/inline with the modules it embeds (the pages load the files).
const SKIPPED_SOURCES = new Set(['cli', 'inline.js', 'wasm-inline.js', 'wasm/inline']);
const SERVED_EXTENSIONS = new Set([
  '.txt',
  '.html',
  '.js',
  '.mjs',
  '.css',
  '.svg',
  '.wasm',
  '.gz',
  '.json',
  '.png',
  '.ico',
  '.bin', // the bundled model (src/models/bundled/): precached, so it loads offline
]);

function fail(message) {
  console.error(`build-site: ${message}`);
  process.exit(1);
}

for (const file of packagedWasmFiles()) {
  if (!existsSync(join(web, file)))
    fail(`web/${file} is missing; run ./scripts/build-wasm.sh first`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const copyTree = (from, to, skip = () => false) =>
  cpSync(from, to, {
    recursive: true,
    filter: (source) => {
      const name = relative(from, source);
      if (!name) return true;
      if (skip(name, source)) return false;
      return statSync(source).isDirectory() || SERVED_EXTENSIONS.has(extname(source));
    },
  });

copyTree(join(web, 'demo'), join(out, 'demo'));
copyTree(join(web, 'widget'), join(out, 'widget'));
copyTree(join(web, 'src'), join(out, 'src'), (name) =>
  [...SKIPPED_SOURCES].some((dir) => name === dir || name.startsWith(`${dir}/`)),
);

// The bare imports of the package's sources, each to the one ES module its package ships.
const VENDORED = {
  fflate: { file: 'fflate/esm/browser.js', license: 'fflate/LICENSE', as: 'fflate.js' },
  '@huggingface/tokenizers': {
    file: '@huggingface/tokenizers/dist/tokenizers.mjs',
    license: '@huggingface/tokenizers/LICENSE',
    as: 'huggingface-tokenizers.js',
  },
};
const vendor = join(out, 'src', 'vendor');
mkdirSync(vendor, { recursive: true });
for (const { file, license, as } of Object.values(VENDORED)) {
  const modules = join(web, 'node_modules');
  if (!existsSync(join(modules, file)))
    fail(`web/node_modules/${file} is missing; run npm ci in web/`);
  cpSync(join(modules, file), join(vendor, as));
  cpSync(join(modules, license), join(vendor, `${as.replace(/\.js$/, '')}.LICENSE.txt`));
}
// `import ... from 'name'` and `} from 'name'` at the start of a line (statements, not text in
// strings or comments), and `import('name')`.
const bareImport =
  /(^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*|^\s*\}\s*from\s*|\bimport\(\s*)(['"])([@a-z][\w./-]*)\2/gm;
for (const file of walk(join(out, 'src'))) {
  if (extname(file) !== '.js' || file.startsWith(vendor)) continue;
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(bareImport, (match, lead, quote, name) => {
    if (!VENDORED[name])
      fail(`${relative(out, file)} imports '${name}', which the site does not vendor`);
    const path = relative(dirname(file), join(vendor, VENDORED[name].as)).split('\\').join('/');
    return `${lead}${quote}${path.startsWith('.') ? path : `./${path}`}${quote}`;
  });
  if (rewritten !== text) writeFileSync(file, rewritten);
}

writeFileSync(
  join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="refresh" content="0; url=./demo/">
  <link rel="icon" href="./demo/favicon.svg" type="image/svg+xml">
  <title>attnlens</title>
</head>
<body>
  <p><a href="./demo/">attnlens demo</a> · <a href="./widget/blog.html">widget sample</a></p>
</body>
</html>
`,
);

// The built demo registers the service worker that keeps the site working offline.
const demoPage = join(out, 'demo', 'index.html');
writeFileSync(
  demoPage,
  readFileSync(demoPage, 'utf8').replace(
    '</head>',
    '  <script type="module" src="../register-sw.js"></script>\n</head>',
  ),
);
const { precache } = writeServiceWorker(out);

// Every relative import in the copied modules and every src/href in the pages must exist in the
// output: a file left behind would only show up as a 404 in a reader's browser.
function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

const problems = [];
let files = 0;
let bytes = 0;
for (const file of walk(out)) {
  files += 1;
  bytes += statSync(file).size;
  const ext = extname(file);
  if (ext !== '.js' && ext !== '.html') continue;
  // Comments may quote import syntax; only code counts.
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const references =
    ext === '.js'
      ? [
          ...text.matchAll(
            /(?:import|export)[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|new URL\(\s*['"](\.{1,2}\/[^'"]+)['"],\s*import\.meta\.url/g,
          ),
        ].map((m) => m[1] ?? m[2] ?? m[3])
      : [...text.matchAll(/(?:src|href)="(\.{1,2}\/[^"#?]+)/g)].map((m) => m[1]);
  for (const reference of references) {
    const target = resolve(dirname(file), reference.replace(/[?#].*$/, ''));
    const isPageDir = reference.endsWith('/') && existsSync(join(target, 'index.html'));
    if (!isPageDir && !existsSync(target)) problems.push(`${relative(out, file)} -> ${reference}`);
  }
}
if (problems.length) fail(`unresolved references in the output:\n  ${problems.join('\n  ')}`);

// The demo and widget pages carry the site's Content-Security-Policy themselves, so any static
// host serves them under it (scripts/serve.mjs also sends it as a header).
const policyMeta = `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`;
const unprotected = ['demo', 'widget']
  .flatMap((folder) => [...walk(join(out, folder))])
  .filter((file) => extname(file) === '.html' && !readFileSync(file, 'utf8').includes(policyMeta))
  .map((file) => relative(out, file));
if (unprotected.length) {
  fail(
    `pages without the Content-Security-Policy <meta> (${policyMeta}):\n  ${unprotected.join('\n  ')}`,
  );
}

console.log(
  `attnlens site: ${files} files, ${(bytes / 1024).toFixed(0)} KiB in ${relative(process.cwd(), out) || out}`,
);
console.log('  demo:   demo/index.html');
console.log(`  offline: sw.js precaches ${precache.length} URLs (register-sw.js registers it)`);
console.log(
  '  widget: widget/attnlens-widget.js (sample: widget/blog.html, strict CSP: widget/csp.html)',
);
