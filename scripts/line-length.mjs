#!/usr/bin/env node
// Lists the lines of JavaScript under web/ wider than 100 columns, and fails if there are any.
// Prettier wraps code at 100 columns but keeps strings, template literals and comments as they
// are written, so this check holds those to the same width. Columns are counted as a terminal
// and Prettier count them: CJK characters and emoji take two.
//
//   node scripts/line-length.mjs     (part of ./scripts/format.sh --check)
//
// Left out: node_modules, web/src/wasm (Emscripten's output) and web/dist (the site build).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { displayWidth } from '../web/src/cli/terminal-text.js';

const MAX_COLUMNS = 100;
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(repo, 'web');
const SKIPPED = new Set([join(web, 'node_modules'), join(web, 'src', 'wasm'), join(web, 'dist')]);
const JAVASCRIPT = /\.(js|mjs|cjs)$/;

function* javascriptFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED.has(path) && entry.name !== 'node_modules') yield* javascriptFiles(path);
    } else if (JAVASCRIPT.test(entry.name)) {
      yield path;
    }
  }
}

const long = [];
for (const file of javascriptFiles(web)) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const columns = displayWidth(line);
      if (columns > MAX_COLUMNS) long.push(`${relative(repo, file)}:${i + 1}: ${columns} columns`);
    });
}
if (long.length) {
  console.error(`lines of JavaScript over ${MAX_COLUMNS} columns:\n${long.join('\n')}`);
  process.exit(1);
}
