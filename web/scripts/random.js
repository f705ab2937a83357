// Seeded inputs for the tests and the benchmarks (web/test/, bench/), in Node and in pages. One
// generator: mulberry32 from the package's own text/hash.js, which is integer arithmetic, so every
// JavaScript engine draws the same numbers. Dev tooling: not part of the package.

import { mulberry32 } from '../src/text/hash.js';

export { mulberry32 };

/** A stream of uniform numbers in [-1, 1) from `seed` (a uint32). */
export function random(seed) {
  const next = mulberry32(seed);
  return () => next() / 2 ** 31 - 1;
}

/** A Float32Array of `length` seeded values in [-amplitude, amplitude). */
export function tensor(length, seed, amplitude = 1) {
  const next = random(seed);
  return Float32Array.from({ length }, () => next() * amplitude);
}
