// `attnlens --model ... --lens`: the logit lens as a table, one row per token, one column per
// hidden state (the embeddings', then each layer's), each cell the state's most likely next token
// (BERT: the token at that position) and its probability: where the final answer appears.

import { sanitize } from './terminal-text.js';

const CELL = 10; // a token's text, cut to fit, and its probability below 100%

/**
 * @param {{ top: { text: string, token: string, p: number }[][][] }} lens run.lens
 * @param {string[]} labels each token as printed
 */
export function lensLines(lens, labels) {
  const states = lens.top.length;
  const width = Math.min(12, Math.max(5, ...labels.map((l) => sanitize(l).length))) + 5;
  const cell = (text) => text.slice(0, CELL).padEnd(CELL);
  const header = ['emb', ...Array.from({ length: states - 1 }, (_, l) => `L${l}`)];
  const lines = [
    "logit lens: each layer's output through the final norm and output layer, top token and p",
    `  ${'token'.padEnd(width)}  ${header.map((h) => cell(h)).join(' ')}`.trimEnd(),
  ];
  labels.forEach((label, i) => {
    const name = `${i}·${sanitize(label)}`.slice(0, width).padEnd(width);
    const cells = lens.top.map((rows) => {
      const best = rows[i][0];
      const shown = sanitize(best.text.trim() === '' ? best.token : best.text.trim());
      return cell(`${shown.slice(0, CELL - 4)} ${Math.round(100 * best.p)}%`);
    });
    lines.push(`  ${name}  ${cells.join(' ')}`.trimEnd());
  });
  return lines;
}
