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

it('SVG text keeps only characters XML allows (each other one becomes U+FFFD)', async () => {
  const { xmlSafe } = await import('../src/views/export.js');
  const allowed = 'tab\t newline\n return\r 我爱 😀 \u00e9 \ud7ff \ue000 \ufffd';
  assert.equal(xmlSafe(allowed), allowed);
  for (const bad of ['\u0000', '\u0001', '\u0008', '\u000b', '\u001b', '\ufffe', '\uffff']) {
    assert.equal(xmlSafe(`a${bad}b`), 'a\ufffdb', JSON.stringify(bad));
  }
  assert.equal(xmlSafe('lone \ud800 and \udc00'), 'lone \ufffd and \ufffd', 'unpaired surrogates');
  assert.equal(xmlSafe('\ud83d\ude00'), '😀', 'a surrogate pair is one allowed character');
});
