#!/usr/bin/env node
// Folds the cases of a later, partial run into the saved results: a case (runner, N, mask,
// threads) measured again replaces the saved one, and the report records the later run (date,
// commit, load, which cases) so docs/benchmarks.md says which numbers come from it.
//
//   node bench/peers/report/merge-results.mjs --from DIR [--into bench/peers/results]
//
// For re-measuring a few cases (after a fix, say) without re-running the whole benchmark:
//   node bench/peers/run.mjs --sizes 8192 --runners attnlens-simd --out /tmp/again
//   node bench/peers/report/merge-results.mjs --from /tmp/again
//   node bench/peers/report/write-docs.mjs

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    from: { type: 'string' },
    into: { type: 'string', default: fileURLToPath(new URL('../results/', import.meta.url)) },
  },
});
if (!values.from) throw new Error('--from DIR: the results of the later run');

const key = (r) => `${r.runner}|${r.n}|${r.mask}|${r.threads}`;
for (const where of ['node', 'chromium']) {
  const laterFile = `${values.from.replace(/\/$/, '')}/${where}.json`;
  const savedFile = `${values.into.replace(/\/$/, '')}/${where}.json`;
  if (!existsSync(laterFile)) continue;
  if (!existsSync(savedFile)) throw new Error(`${savedFile}: nothing to merge into`);
  const later = JSON.parse(readFileSync(laterFile, 'utf8'));
  const saved = JSON.parse(readFileSync(savedFile, 'utf8'));
  const replacing = new Map(
    later.results.filter((r) => r.status !== 'unavailable').map((r) => [key(r), r]),
  );
  saved.results = saved.results.map((r) => replacing.get(key(r)) ?? r);
  const known = new Set(saved.results.map(key));
  for (const [k, r] of replacing) if (!known.has(k)) saved.results.push(r);
  saved.machine.laterRuns = [
    ...(saved.machine.laterRuns ?? []),
    {
      date: later.machine.date,
      commit: later.machine.commit,
      loadBefore: later.machine.loadBefore,
      loadAfter: later.machine.loadAfter,
      cases: [...replacing.values()].map((r) => `${r.runner} N=${r.n} ${r.mask} ${r.threads}t`),
    },
  ];
  writeFileSync(savedFile, `${JSON.stringify(saved, null, 1)}\n`);
  console.log(`${savedFile}: ${replacing.size} cases from ${laterFile}`);
}
