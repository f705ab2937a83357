// Markdown for docs/benchmarks.md and the README summary, from saved results (results.js).

import { RUNNERS } from '../libraries/index.js';
import { HEADS, DEPTH, WINDOW_HALF_WIDTH } from '../core/workload.js';
import { FULL_CHECK_MAX_N, TOLERANCE } from '../core/reference.js';
import {
  LIBRARY_ORDER,
  attnlensCase,
  bestOfLibrary,
  distinct,
  findCase,
  masksOf,
  peakMemoryDelta,
  runnersOf,
} from './results.js';

const MIB = 2 ** 20;
export const MASK_TITLES = {
  none: 'no mask',
  causal: 'causal',
  window128: `window 128 (±${WINDOW_HALF_WIDTH})`,
};

const ms = (x) =>
  x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3);
const gflops = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const mib = (bytes) => (bytes === undefined ? '' : (bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0));
const percent = (x) => `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;
/** How many times faster attnlens is than a peer (below 1: slower). */
const times = (peer, ours) => `×${(peer.ms / ours.ms).toFixed(peer.ms / ours.ms >= 10 ? 0 : 1)}`;

function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** The environment's name as the docs write it. */
export function whereTitle(report) {
  return report.machine.where === 'chromium'
    ? `headless Chromium ${report.machine.chromium}`
    : `Node ${report.machine.node}`;
}

/** Library versions as the runs reported them (first timed case of each library). */
export function libraryVersions(reports) {
  const versions = {};
  for (const report of reports) {
    for (const r of report.results) {
      if (r.version && !versions[r.library]) versions[r.library] = r.version;
    }
  }
  return versions;
}

export function machineTable(reports, latency) {
  const first = reports[0].machine;
  const versions = libraryVersions(reports);
  const rows = [
    ['CPU', `${first.cpu}, ${first.cores} logical cores`],
    ['memory', `${(first.memoryBytes / 2 ** 30).toFixed(1)} GiB`],
    ['OS', `${first.os}, Linux ${first.kernel}`],
    ['Node', `${first.node} (V8 ${first.v8})`],
  ];
  const chromium = reports.find((r) => r.machine.chromium);
  if (chromium) rows.push(['Chromium', `${chromium.machine.chromium} (Debian package, headless)`]);
  rows.push(['attnlens', `core ${versions.attnlens ?? '?'}, commit ${first.commit}`]);
  rows.push(['onnxruntime-web', versions['onnxruntime-web'] ?? 'not run']);
  rows.push([
    'TensorFlow.js',
    versions['tensorflow.js']
      ? `tfjs-core and tfjs-backend-wasm ${versions['tensorflow.js']}`
      : 'not run',
  ]);
  for (const report of reports) {
    const m = report.machine;
    rows.push([
      `run in ${whereTitle(report)}`,
      `${m.date.replace('T', ' ').slice(0, 16)} UTC; load average ` +
        `${m.loadBefore.join(' / ')} at the start, ${m.loadAfter.join(' / ')} at the end`,
    ]);
    for (const later of m.laterRuns ?? []) {
      rows.push([
        `later run in ${whereTitle(report)}`,
        `${later.date.replace('T', ' ').slice(0, 16)} UTC, commit ` +
          `${later.commit}, load average ${later.loadBefore.join(' / ')}: replaced ${later.cases.join(', ')}`,
      ]);
    }
  }
  if (latency) {
    for (const l of latency)
      rows.push([
        `analyze() latency, '${l.label}'`,
        `${l.date.replace('T', ' ').slice(0, 16)} UTC, commit ${l.commit}`,
      ]);
  }
  return table(['', ''], rows);
}

export function peakLines(reports) {
  return reports
    .map((r) => {
      const p = r.peak;
      if (!p || p.unavailable) return `- ${whereTitle(r)}: ${p?.unavailable ?? 'not measured'}`;
      return `- ${whereTitle(r)}: **${p.best.toFixed(1)} GFLOP/s** (best call; median ${p.median.toFixed(1)} over ${p.calls} calls)`;
    })
    .join('\n');
}

/**
 * One environment's summary at one thread: per mask and size, attnlens against each library's
 * fastest runner.
 */
export function summaryTable(report, { sizes } = {}) {
  const peak = report.peak?.best;
  const rows = [];
  for (const mask of masksOf(report)) {
    for (const n of sizes ?? distinct(report, 'n')) {
      const ours = attnlensCase(report, { n, mask, threads: 1 });
      if (!ours) continue;
      const row = [MASK_TITLES[mask], String(n)];
      if (ours.status === 'ok') {
        row.push(
          `${ms(ours.ms)} ms, **${gflops(ours.gflops)}**${peak ? ` (${percent(ours.gflops / peak)} of peak)` : ''}, ${ours.runner}`,
        );
      } else {
        row.push(ours.status);
      }
      for (const library of LIBRARY_ORDER.slice(1)) {
        const best = bestOfLibrary(report, library, { n, mask, threads: 1 });
        if (!best) {
          row.push('not run');
        } else {
          row.push(
            `${gflops(best.gflops)} (${best.runner})${ours.status === 'ok' ? `, attnlens ${times(best, ours)}` : ''}`,
          );
        }
      }
      rows.push(row);
    }
  }
  return table(
    [
      'mask',
      'N',
      'attnlens (fastest build), GFLOP/s',
      'onnxruntime-web',
      'TensorFlow.js (wasm)',
      'plain JS',
    ],
    rows,
  );
}

/** The same build on one thread: attnlens's threaded runners are twins of single-thread ones. */
function singleThreadRunner(runner) {
  if (runner === 'attnlens-threads') return 'attnlens-simd';
  return runner.replace(/-threads$/, '');
}

/** Two-thread runs: each against its own one-thread run, and against attnlens's fastest on 2. */
export function threadsTable(report) {
  const rows = [];
  for (const r of report.results) {
    if (r.threads < 2 || r.status !== 'ok') continue;
    const single = findCase(report, { ...r, runner: singleThreadRunner(r.runner), threads: 1 });
    const ours = attnlensCase(report, { n: r.n, mask: r.mask, threads: r.threads });
    rows.push([
      r.runner,
      MASK_TITLES[r.mask],
      String(r.n),
      `${ms(r.ms)} ms, ${gflops(r.gflops)}`,
      single?.status === 'ok' ? `×${(single.ms / r.ms).toFixed(2)}` : '',
      r.cpuPerWall ? r.cpuPerWall.toFixed(2) : '',
      ours?.status === 'ok' && ours.runner !== r.runner ? times(r, ours) : '',
    ]);
  }
  if (rows.length === 0) return '_No library ran with 2 threads here._';
  // Results saved before the two-thread probe existed have no probeThreads.
  const twoThreads = report.results.filter((r) => r.threads > 1 && r.status === 'ok');
  const earlier = twoThreads.filter((r) => !r.probeThreads).length;
  return (
    table(
      [
        'runner',
        'mask',
        'N',
        '2 threads: median, GFLOP/s',
        'speed-up over its 1 thread',
        'CPU time / wall time',
        'fastest attnlens on 2 threads vs it',
      ],
      rows,
    ) +
    (earlier > 0
      ? `\n\n${earlier === twoThreads.length ? 'These rows come' : 'Some of these rows come'} from runs ` +
        'made before the two-thread probe: their calls counted ' +
        "when the calling thread's probe reached 95% of the case's own best rate, which a run on one " +
        'physical core can pass.'
      : '')
  );
}

/** Every case of one environment, grouped by mask and thread count. */
export function fullTables(report) {
  const peak = report.peak?.best;
  const sections = [];
  for (const mask of masksOf(report)) {
    for (const threads of distinct(report, 'threads')) {
      const rows = [];
      for (const n of distinct(report, 'n')) {
        const ours = attnlensCase(report, { n, mask, threads: 1 });
        for (const runner of runnersOf(report)) {
          const r = findCase(report, { runner, n, mask, threads });
          if (!r || r.status !== 'ok') continue;
          rows.push([
            String(n),
            runner,
            ms(r.ms),
            gflops(r.gflops),
            peak ? percent(r.gflops / (threads * peak)) : '',
            runner !== ours?.runner && ours?.status === 'ok' ? times(r, ours) : '',
            r.check.maxAbsError.toExponential(1),
            mib(peakMemoryDelta(r)),
            mib(r.memory?.wasmBytes),
            r.counted === undefined ? '' : `${r.counted}/${(r.allRuns ?? r.runs).length}`,
          ]);
        }
      }
      if (rows.length === 0) continue;
      sections.push(
        `#### ${MASK_TITLES[mask]}, ${threads} thread${threads > 1 ? 's' : ''}\n\n${table(
          [
            'N',
            'runner',
            'median ms',
            'GFLOP/s',
            `% of ${threads > 1 ? `${threads} × ` : ''}peak`,
            `attnlens${threads > 1 ? ' (1 thread)' : ''} vs it`,
            'max error',
            'peak memory MiB',
            'wasm memory MiB',
            'full speed',
          ],
          rows,
        )}`,
      );
    }
  }
  return sections.join('\n\n');
}

/** Cases that were not timed, with the reason, one line per distinct reason and runner. */
export function notRunList(report) {
  const groups = new Map();
  for (const r of report.results) {
    if (r.status === 'ok') continue;
    const why = `${r.status}: ${r.reason ?? r.error ?? r.check?.worst ?? ''}`.replace(
      / \(from [^)]*\)/,
      '',
    );
    const key = `${r.runner}|${r.threads}|${r.status === 'skipped' ? r.reason?.replace(/\d[\d.]* s.*$/, '') : why}`;
    if (!groups.has(key)) groups.set(key, { runner: r.runner, threads: r.threads, why, cases: [] });
    groups.get(key).cases.push(`N=${r.n} ${r.mask}`);
  }
  if (groups.size === 0) return '_Every case ran._';
  return [...groups.values()]
    .map(
      (g) =>
        `- ${g.runner}, ${g.threads} thread${g.threads > 1 ? 's' : ''} (${g.cases.join(', ')}): ${g.why}`,
    )
    .join('\n');
}

export function runnerList() {
  return Object.entries(RUNNERS)
    .map(
      ([name, r]) =>
        `\`${name}\` (${r.library}${r.masks.length < 3 ? `, ${r.masks.join('/')} only` : ''})`,
    )
    .join(', ');
}

export function latencyTable(latency) {
  const rows = [];
  for (const saved of latency) {
    for (const r of saved.results) {
      rows.push([
        `${saved.label} (${saved.commit})`,
        r.where,
        ms(r.analyze.median),
        `${ms(r.analyze.p10)} - ${ms(r.analyze.p90)}`,
        ms(r.engine.median),
        ms(r.tokenize.median),
        ms(r.embed.median),
        ms(r.firstAnalyze),
      ]);
    }
  }
  return table(
    [
      'code',
      'where',
      'analyze() median ms',
      'p10 - p90',
      'engine (multiHead) ms',
      'tokenize() ms',
      'embed() ms',
      'first analyze() ms',
    ],
    rows,
  );
}

export function methodText() {
  return `- **Workload**: multi-head attention with H = ${HEADS} heads of depth D = ${DEPTH}, float32, N queries
  against N keys, for each mask: none, causal, and a window of ${WINDOW_HALF_WIDTH} keys on each side of
  the query (what \`bench/bench_main.cpp\` calls window128). Every library gets the same seeded q, k,
  v (\`core/workload.js\`), laid out as it takes them (the layout change is not timed).
- **A call** is what a user would run: typed arrays in, a typed array out, copies into and out of
  wasm memory included. attnlens: \`attn.attention(q, k, v, { heads, headDim, causal | window })\`.
  onnxruntime-web: \`session.run()\` on the wasm execution provider, one graph per way of writing
  attention (\`models/build_models.py\`, built with Debian's python3-onnx). TensorFlow.js: the wasm
  backend, a batched matMul or one 2-D matMul per head (K transposed first: only 2-D matMuls
  without transpose flags reach XNNPACK's GEMM). Plain JS: loops over the visible keys.
  Libraries without a native mask add an additive [N, N] mask (0 or -1e9), built once per size
  and added on every call.
- **Checked first**: each library's first output is compared with a float64 reference (every row
  up to N = ${FULL_CHECK_MAX_N}, 64 sampled rows above, and the whole output scanned for NaN); a
  library whose output differs by more than ${TOLERANCE} would be reported, not timed.
- **Timing**: after warm-up calls (at least 0.3 s), at least 3 calls and 2 s; N = 128 runs up to
  40 calls. One process (Node) or one fresh page (Chromium) per case, so libraries never share a
  heap. Sizes run in ascending order; a case whose single call would exceed its time budget
  (estimated from the size below) is skipped and listed with the reason.
- **Full-speed calls only**: this machine is a VM whose host takes part of a core for seconds at a
  time. Then even the register-only loop below runs 15-40% slower, and attention kernels, which
  also need the caches, up to 50% slower; a whole case could land in such a stretch, which is
  what made earlier runs show one case at 19 ms in one process and 36 ms in another. So every
  timed call is bracketed by 3-10 ms runs of that loop, and a call counts only when the loop ran
  at 95% or more of the best one-thread rate seen so far in the run on both sides. For two-thread
  cases the loop runs on two threads at once and the slower one counts: this machine's two
  virtual CPUs are at times two hyperthreads of one physical core, and then both loops run at
  half speed, as would any library's two threads. Timing goes on until 3 calls count, up to 3x
  the calls; the table times are medians of the calls that count, and "full speed" says how
  many those were (0: none did, all calls count). The median of every call is in the JSON
  (\`allMedianMs\`).
- **GFLOP/s** count 4·H·N²·D per call for every mask, so a library that skips masked work shows a
  higher rate; "% of peak" divides by the register-only SIMD128 peak below (times the threads).
- **Memory**: peak resident set of the process (Node) or renderer (Chromium, read from /proc)
  above what it held just before the first call; "wasm memory" is the library's wasm memory size
  after the runs, where the library exposes it.`;
}
