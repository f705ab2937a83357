// `attnlens --model ... --rollout`: where one position's information comes from, as attention
// rollout and attention flow (interpret/rollout.js, flow.js) read it, one line per input token
// with a bar for each. Plain text (no colour), so it reads the same in a pipe.

import { displayWidth, fitToWidth, sanitize } from './terminal-text.js';

// Columns of a bar at 100%.
const BAR = 20;
const bar = (share) => '█'.repeat(Math.round(share * BAR)).padEnd(BAR, ' ');
const percent = (share) => `${(100 * share).toFixed(1)}%`.padStart(6);

/**
 * @param {{ rollout: { positions: number[], values: Float32Array },
 *   flow: { position: number, values: Float32Array } | null, flowRefused: string | null }} read
 * @param {string[]} labels each token as the heatmap labels it
 * @param {boolean} causal a causal model's later tokens are not listed: nothing reaches back
 * @returns {string[]}
 */
export function rolloutLines({ rollout, flow, flowRefused }, labels, causal) {
  const position = rollout.positions[0];
  const names = labels.map((label, i) => `${i}·${sanitize(label)}`);
  const width = Math.min(24, Math.max(...names.map(displayWidth)));
  const lines = [
    `where token ${names[position]} draws from, through all layers:`,
    '  rollout: head-averaged attention plus the residual, multiplied over the layers',
    '    (assumes information mixes linearly);',
    '  flow: the same weights as pipe capacities, the max-flow to each input token',
    '    (assumes paths compete: none carries more than its narrowest layer lets through)',
    `  ${'token'.padEnd(width)}  ${'rollout'.padEnd(BAR + 6)}  ${flow ? 'flow' : ''}`,
  ];
  const listed = causal ? names.slice(0, position + 1) : names;
  listed.forEach((name, j) => {
    const r = rollout.values[j];
    const f = flow ? `  ${bar(flow.values[j])}${percent(flow.values[j])}` : '';
    lines.push(`  ${fitToWidth(name, width)}  ${bar(r)}${percent(r)}${f}`.trimEnd());
  });
  if (listed.length < names.length) lines.push('  (later tokens: not visible to a causal model)');
  if (flowRefused) lines.push(`  (no flow: ${flowRefused})`);
  return lines;
}
