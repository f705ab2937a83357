// createAttention({ threads }): how many threads a wasm call may use, and when.
//
// Threads need a threaded module (attnlens-<flavour>-threads: -pthread, shared memory), which only
// loads on cross-origin isolated pages with Web Workers (loader.js threadsUnavailableReason).
//   'auto' (default)  threads where they can run: up to MAX_AUTO_THREADS (and the cores the
//                     browser reports); silently one thread elsewhere (plain hosting, iOS
//                     pages that are not isolated, Node).
//   1                 one thread; the threaded module is never loaded.
//   n >= 2            n threads; where that is impossible, one console.warn per reason, then
//                     one thread.
// Either way only calls of at least THREADS_MIN_FLOPS are split: below it, waking the helper
// Workers costs more than the time they save.

import { attnlensError, describe } from './errors.js';

/** The most threads the core accepts (AttentionOptions::threads). */
export const MAX_THREADS = 256;

/** 'auto' uses at most this many threads: each is a Web Worker holding its own JS heap. */
export const MAX_AUTO_THREADS = 4;

/**
 * Calls below this many attention flops (2 * heads * Nq * Nk * (headDim + valueDim)) run on one
 * thread. Measured on a shared 2-core machine, H=4, D=32, weights returned, 1 vs 2 threads:
 * the core alone in Node (bench/attnlens_bench.js, threaded build, best of 200) is even at
 * N=32 (2^19 flops, 0.06 ms) and 1.4x faster at N=64 (2^21); whole calls in headless Chromium
 * (bench/threads-break-even.mjs, medians, other jobs running) are even at N=64 (2^21) and at
 * most 1.1x faster up to N=256. Below 2^21 the helper's wake-up (tens of microseconds) and the
 * call's serial copies leave nothing to gain.
 */
export const THREADS_MIN_FLOPS = 2 ** 21;

/** createAttention's `threads`: 'auto' or an integer in [1, MAX_THREADS]. */
export function checkThreadsOption(threads) {
  if (threads === undefined || threads === 'auto') return 'auto';
  if (typeof threads !== 'number') {
    throw attnlensError(
      'invalid_argument',
      'threads',
      `must be 'auto' or a whole number of threads, got ${describe(threads)}`,
    );
  }
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    throw attnlensError(
      'out_of_range',
      'threads',
      `must be 'auto' or a whole number from 1 to ${MAX_THREADS}, got ${threads}`,
    );
  }
  return threads;
}

const warned = new Set();

/** console.warn once per distinct message (per page), so a loop of createAttention stays quiet. */
function warnOnce(message) {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(message);
}

/**
 * The threads an instance will use: `{ threads, reason }`, reason saying why it is 1 when more
 * were possible to ask for. Warns when threads were asked for explicitly and cannot be had.
 * @param {'auto' | number} requested checked by checkThreadsOption
 * @param {string} unavailable '' when the threaded module can load here, else why not
 */
export function resolveThreads(requested, unavailable) {
  if (requested === 1) return { threads: 1, reason: '' };
  if (unavailable) {
    if (requested !== 'auto') {
      warnOnce(
        `attnlens: threads: ${requested} threads were asked for, but ${unavailable}; ` +
          'running on one thread',
      );
    }
    return { threads: 1, reason: unavailable };
  }
  if (requested !== 'auto') return { threads: requested, reason: '' };
  const cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  const threads = Math.max(1, Math.min(MAX_AUTO_THREADS, cores));
  return { threads, reason: threads === 1 ? 'this device reports one core' : '' };
}

/** Warns (once) that the threaded module failed to load after all, when threads were asked for. */
export function warnThreadsFailed(requested, error) {
  if (requested === 'auto') return;
  warnOnce(
    `attnlens: threads: the threaded module could not be loaded (${error.message}); ` +
      'running on one thread',
  );
}
