// The package's runtime exports and the values index.d.ts declares are the same set, so neither
// side can grow an export the other lacks.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import * as attnlens from '../src/index.js';

it('index.d.ts declares exactly the runtime exports', () => {
  const declarations = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');
  const declared = [...declarations.matchAll(/^export declare (?:function|const) (\w+)/gm)].map(
    (m) => m[1],
  );
  assert.deepEqual([...new Set(declared)].sort(), Object.keys(attnlens).sort());
});

it('the package.json exports map lists types first and points at real files', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.deepEqual(Object.keys(pkg.exports['.']), ['types', 'default']);
  for (const file of [pkg.exports['.'].types, pkg.exports['.'].default, pkg.bin.attnlens]) {
    assert.ok(readFileSync(new URL(`../${file}`, import.meta.url)).length > 0, file);
  }
});
