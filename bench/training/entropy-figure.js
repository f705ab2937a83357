// The figure of the training benchmark: each head's mean row entropy (nats) against the step,
// one panel per run (temperature 1, falling temperature), a line per head (layer 1 dashed,
// layer 2 solid), and a mark at the step an induction head was found. Plain SVG, written by
// hand like bench/peers/report/plot-svg.js.

const PANEL = { width: 380, height: 260, left: 48, right: 12, top: 34, bottom: 40 };
const COLORS = [
  '#1b9e77',
  '#d95f02',
  '#7570b3',
  '#e7298a',
  '#66a61e',
  '#e6ab02',
  '#a6761d',
  '#666',
];

const escape = (text) =>
  String(text).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  );
const fixed = (x) => Number(x.toFixed(1));

function niceTicks(max, count = 5) {
  const step = 10 ** Math.floor(Math.log10(max / count));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => max / s <= count) ?? step * 10;
  // Up to the first tick at or above max, so the axis holds every value.
  const ticks = [0];
  while (ticks[ticks.length - 1] < max - 1e-9) {
    ticks.push(Number((ticks[ticks.length - 1] + nice).toPrecision(6)));
  }
  return ticks;
}

/** @param {{ name: string, snapshots: { step, heads }[], found }[]} runs */
export function entropyFigureSvg(runs, { title }) {
  const maxStep = Math.max(...runs.flatMap((r) => r.snapshots.map((s) => s.step)), 1);
  const maxEntropy = Math.max(
    ...runs.flatMap((r) => r.snapshots.flatMap((s) => s.heads.map((h) => h.entropy))),
    0.1,
  );
  const xTicks = niceTicks(maxStep);
  const yTicks = niceTicks(maxEntropy);
  const [xMax, yMax] = [xTicks[xTicks.length - 1], yTicks[yTicks.length - 1]];
  const plotWidth = PANEL.width - PANEL.left - PANEL.right;
  const plotHeight = PANEL.height - PANEL.top - PANEL.bottom;
  const x = (step) => PANEL.left + (step / xMax) * plotWidth;
  const y = (value) => PANEL.top + (1 - value / yMax) * plotHeight;
  const width = PANEL.width * runs.length;
  const heads = runs[0].snapshots[0].heads;
  const legendRows = Math.ceil(heads.length / 4);
  const height = 28 + PANEL.height + 18 * legendRows + 8;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="13">${escape(title)}</text>`,
  ];
  runs.forEach((run, panel) => {
    const dx = panel * PANEL.width;
    out.push(`<g transform="translate(${dx},28)">`);
    out.push(
      `<text x="${PANEL.left + plotWidth / 2}" y="${PANEL.top - 12}" text-anchor="middle">${escape(run.name)}</text>`,
    );
    for (const t of yTicks) {
      out.push(
        `<line x1="${PANEL.left}" x2="${PANEL.left + plotWidth}" y1="${fixed(y(t))}" y2="${fixed(y(t))}" stroke="#e5e5e5"/>`,
        `<text x="${PANEL.left - 4}" y="${fixed(y(t)) + 4}" text-anchor="end">${t}</text>`,
      );
    }
    for (const t of xTicks) {
      out.push(
        `<text x="${fixed(x(t))}" y="${PANEL.top + plotHeight + 14}" text-anchor="middle">${t}</text>`,
      );
    }
    out.push(
      `<text x="${PANEL.left + plotWidth / 2}" y="${PANEL.top + plotHeight + 30}" text-anchor="middle">step</text>`,
      `<text transform="translate(12,${PANEL.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">mean row entropy (nats)</text>`,
      `<rect x="${PANEL.left}" y="${PANEL.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
    );
    if (run.found) {
      const fx = fixed(x(run.found.step));
      out.push(
        `<line x1="${fx}" x2="${fx}" y1="${PANEL.top}" y2="${PANEL.top + plotHeight}" stroke="#000" stroke-dasharray="3 3"/>`,
        `<text x="${fx + 3}" y="${PANEL.top + 12}">induction head, step ${run.found.step}</text>`,
      );
    }
    heads.forEach(({ layer, head }, i) => {
      const points = run.snapshots
        .map((s) => `${fixed(x(s.step))},${fixed(y(s.heads[i].entropy))}`)
        .join(' ');
      const dash = layer === 0 ? ' stroke-dasharray="4 2"' : '';
      out.push(
        `<polyline points="${points}" fill="none" stroke="${COLORS[head % COLORS.length]}" stroke-width="1.5"${dash}><title>layer ${layer + 1} head ${head + 1}</title></polyline>`,
      );
    });
    out.push('</g>');
  });
  heads.forEach(({ layer, head }, i) => {
    const lx = 10 + (i % 4) * 180;
    const ly = 28 + PANEL.height + 14 + Math.floor(i / 4) * 18;
    const dash = layer === 0 ? ' stroke-dasharray="4 2"' : '';
    out.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly - 4}" y2="${ly - 4}" stroke="${COLORS[head % COLORS.length]}" stroke-width="1.5"${dash}/>`,
      `<text x="${lx + 30}" y="${ly}">layer ${layer + 1} head ${head + 1}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
