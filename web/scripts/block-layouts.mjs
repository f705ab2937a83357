// The JavaScript side of the three wasm seams, generated from their one description: the
// X-macro lists of bindings/call_block.h, bindings/models/model_block.h and
// bindings/training/trainer_block.h. It writes
//   web/src/call-block-layout.js, web/src/models/model-block-layout.js and
//   web/src/train/trainer-block-layout.js   every list, name by name, in the headers' order;
//   the string unions of index.d.ts and models.d.ts under a `// generated from <seam>.<list>` line.
// The C++ stays the source because the native build, the fuzzers and the bindings compile it with
// no generation step; JavaScript only has to read a list of (enumerator, "name") pairs.
//
//   node web/scripts/block-layouts.mjs          rewrites the generated files (build-wasm.sh does)
//   node web/scripts/block-layouts.mjs --check  changes nothing; fails naming those that differ
// test/block-layouts.test.js runs the check, so a copy that drifts from its header fails the suite.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Each seam: its header, the generated module, and which X-macro list fills which entry. */
export const SEAMS = {
  call: {
    header: 'bindings/call_block.h',
    output: 'web/src/call-block-layout.js',
    exportName: 'CALL_BLOCK_LAYOUT',
    what: '_callBlockLayout()',
    lists: {
      slots: 'ATTNLENS_CALL_BLOCK_SLOTS',
      arrays: 'ATTNLENS_CALL_BLOCK_ARRAYS',
      scores: 'ATTNLENS_CALL_BLOCK_SCORES',
      strategies: 'ATTNLENS_CALL_BLOCK_STRATEGIES',
      sparsePatterns: 'ATTNLENS_CALL_BLOCK_SPARSE_PATTERNS',
    },
    // Lists whose sections (macroSections) JavaScript reads: the call block's shape slots.
    sections: { slots: 'ATTNLENS_CALL_BLOCK_SLOTS' },
    sectionsName: 'CALL_BLOCK_SECTIONS',
  },
  model: {
    header: 'bindings/models/model_block.h',
    output: 'web/src/models/model-block-layout.js',
    exportName: 'MODEL_BLOCK_LAYOUT',
    what: '_modelBlockLayout()',
    lists: {
      'create.slots': 'ATTNLENS_MODEL_CREATE_SLOTS',
      'create.arrays': 'ATTNLENS_MODEL_CREATE_ARRAYS',
      'forward.slots': 'ATTNLENS_MODEL_FORWARD_SLOTS',
      'forward.arrays': 'ATTNLENS_MODEL_FORWARD_ARRAYS',
      architectures: 'ATTNLENS_MODEL_ARCHITECTURES',
      activations: 'ATTNLENS_MODEL_ACTIVATIONS',
      dtypes: 'ATTNLENS_MODEL_DTYPES',
      ropeScalings: 'ATTNLENS_MODEL_ROPE_SCALINGS',
      ablationModes: 'ATTNLENS_MODEL_ABLATION_MODES',
      crossMasks: 'ATTNLENS_MODEL_CROSS_MASKS',
    },
  },
  trainer: {
    header: 'bindings/training/trainer_block.h',
    output: 'web/src/train/trainer-block-layout.js',
    exportName: 'TRAINER_BLOCK_LAYOUT',
    what: '_trainerBlockLayout()',
    lists: {
      'create.slots': 'ATTNLENS_TRAINER_CREATE_SLOTS',
      'create.arrays': 'ATTNLENS_TRAINER_CREATE_ARRAYS',
      'step.slots': 'ATTNLENS_TRAINER_STEP_SLOTS',
      'step.arrays': 'ATTNLENS_TRAINER_STEP_ARRAYS',
    },
  },
};

/** The type files whose marked unions are generated. */
const TYPE_FILES = ['web/index.d.ts', 'web/models.d.ts'];

// The text of one `#define MACRO(X) X(kEnumerator, "name") ...` list of a header.
function macroBody(header, macro) {
  const start = header.search(new RegExp(`#define ${macro}\\(X\\)`));
  if (start < 0) throw new Error(`no #define ${macro}(X)`);
  let end = start;
  // The definition runs on while its lines end in a backslash.
  while (end < header.length) {
    const next = header.indexOf('\n', end);
    const line = header.slice(end, next < 0 ? header.length : next);
    end = next < 0 ? header.length : next + 1;
    if (!line.trimEnd().endsWith('\\')) break;
  }
  return header.slice(start, end);
}

const entryNames = (text) =>
  Array.from(
    text.replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/X\(\s*k\w+\s*,\s*"([^"]*)"\s*\)/g),
    (match) => match[1],
  );

/** The names of one `#define MACRO(X) X(kEnumerator, "name") ...` list of a header, in order. */
export function macroNames(header, macro) {
  return entryNames(macroBody(header, macro));
}

// A section of a list opens with a line that is a comment of one capitalised word and a full stop
// or comma (`/* Shape. ... */`, `/* Results, written by the call. */`) and runs to the next one.
const SECTION = /^\s*\/\*\s*([A-Z][a-z]*)[.,]/;

/**
 * The sections of one list, by their lowercased word, each its names in order:
 * { shape: ['heads', ...], options: [...] }. Names before the first section belong to none.
 */
export function macroSections(header, macro) {
  const sections = {};
  let current = null;
  for (const line of macroBody(header, macro).split('\n')) {
    const opened = line.match(SECTION);
    if (opened) current = sections[opened[1].toLowerCase()] = [];
    current?.push(...entryNames(line));
  }
  return sections;
}

/** Every list of a seam as the module's layout function names it: { slots, create: {...} }. */
export function seamLayout(seam) {
  const header = readFileSync(join(REPO, seam.header), 'utf8');
  const layout = {};
  for (const [path, macro] of Object.entries(seam.lists)) {
    const keys = path.split('.');
    let at = layout;
    for (const key of keys.slice(0, -1)) at = at[key] ??= {};
    at[keys.at(-1)] = macroNames(header, macro);
  }
  return layout;
}

const frozen = (value) =>
  Array.isArray(value)
    ? `Object.freeze(${JSON.stringify(value)})`
    : `Object.freeze({${Object.entries(value)
        .map(([key, inner]) => `${JSON.stringify(key)}: ${frozen(inner)}`)
        .join(', ')}})`;

// The sections are a second export: the module's layout function answers only the lists.
function sectionsExport(seam) {
  if (!seam.sections) return '';
  const header = readFileSync(join(REPO, seam.header), 'utf8');
  const sections = Object.fromEntries(
    Object.entries(seam.sections).map(([list, macro]) => [list, macroSections(header, macro)]),
  );
  return (
    `\n/** The sections of those lists, named by the header's section comments. */\n` +
    `export const ${seam.sectionsName} = ${frozen(sections)};\n`
  );
}

function layoutModule(name, seam) {
  return (
    `// Generated from ${seam.header} by web/scripts/block-layouts.mjs: do not edit;\n` +
    `// change the header and run \`node web/scripts/block-layouts.mjs\` (build-wasm.sh does).\n` +
    `// The module's ${seam.what} answers the same lists; the JavaScript compares them\n` +
    `// name by name when it loads.\n\n` +
    `/** The ${name} seam's lists, in the header's order. */\n` +
    `export const ${seam.exportName} = ${frozen(seamLayout(seam))};\n` +
    sectionsExport(seam)
  );
}

// A type union generated from a list: the line after `// generated from seam.list (...)`, written
// `<anything> 'a' | 'b';`. 'none', the code of an absent option (sparsePatterns), is no value a
// caller writes.
const MARKED_UNION = /^( *\/\/ generated from (\w+)\.(\w+).*\n)(.*?)'[^;\n]*';$/gm;

function typesWithUnions(text, layouts) {
  return text.replace(MARKED_UNION, (_, marker, seam, list, before) => {
    const names = layouts[seam]?.[list];
    if (!Array.isArray(names)) throw new Error(`no list ${seam}.${list} for '${marker.trim()}'`);
    const union = names.filter((name) => name !== 'none').map((name) => `'${name}'`);
    return `${marker}${before}${union.join(' | ')};`;
  });
}

async function formatted(file, text) {
  const options = await prettier.resolveConfig(join(REPO, file));
  return prettier.format(text, { ...options, filepath: join(REPO, file) });
}

/** { file (relative to the repository): the text it must hold }. */
export async function generatedFiles() {
  const files = {};
  const layouts = {};
  for (const [name, seam] of Object.entries(SEAMS)) {
    layouts[name] = seamLayout(seam);
    files[seam.output] = await formatted(seam.output, layoutModule(name, seam));
  }
  for (const file of TYPE_FILES) {
    files[file] = typesWithUnions(readFileSync(join(REPO, file), 'utf8'), layouts);
  }
  return files;
}

/** The generated files whose text on disk differs from what the headers give. */
export async function driftedFiles() {
  const drifted = [];
  for (const [file, text] of Object.entries(await generatedFiles())) {
    let current = null;
    try {
      current = readFileSync(join(REPO, file), 'utf8');
    } catch {}
    if (current !== text) drifted.push(file);
  }
  return drifted;
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  if (process.argv.includes('--check')) {
    const drifted = await driftedFiles();
    if (drifted.length > 0) {
      console.error(
        `generated from the bindings' block headers but not up to date: ${drifted.join(', ')}\n` +
          'run node web/scripts/block-layouts.mjs',
      );
      process.exit(1);
    }
  } else {
    for (const [file, text] of Object.entries(await generatedFiles())) {
      writeFileSync(join(REPO, file), text);
    }
  }
}
