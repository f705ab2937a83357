// A small SVG line plot, written by hand so the benchmark needs no plotting package: one panel
// per mask, GFLOP/s (log scale) against N (log scale), one line per series, a dashed line for
// the machine's SIMD128 peak, and a shared legend.

const PANEL = { width: 300, height: 250, left: 52, right: 12, top: 30, bottom: 40 };
const LEGEND_ROW = 18;

const escape = (text) =>
  String(text).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  );
const fixed = (x) => Number(x.toFixed(1));

function decadeTicks(min, max) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++)
    ticks.push(10 ** e);
  return ticks;
}

function tickLabel(value) {
  return value >= 1 ? String(value) : String(Number(value.toPrecision(1)));
}

/**
 * @param {{ title: string, subtitle?: string, sizes: number[], peak?: number, panels: Array<{
 *   title: string, series: Array<{ label: string, color: string, dash?: string,
 *   points: Array<[number, number]> }> }> }} plot
 * @returns {string} an SVG document
 */
export function lineChartSvg({ title, subtitle, sizes, peak, panels }) {
  const values = panels
    .flatMap((p) => p.series.flatMap((s) => s.points.map(([, y]) => y)))
    .filter((y) => y > 0);
  if (peak) values.push(peak);
  const ticksY = decadeTicks(Math.min(...values), Math.max(...values));
  const [yMin, yMax] = [ticksY[0], ticksY[ticksY.length - 1]];
  const [xMin, xMax] = [Math.min(...sizes), Math.max(...sizes)];
  const plotWidth = PANEL.width - PANEL.left - PANEL.right;
  const plotHeight = PANEL.height - PANEL.top - PANEL.bottom;
  const xOf = (n) =>
    PANEL.left + (xMax === xMin ? 0.5 : Math.log2(n / xMin) / Math.log2(xMax / xMin)) * plotWidth;
  const yOf = (v) => PANEL.top + (1 - Math.log10(v / yMin) / Math.log10(yMax / yMin)) * plotHeight;

  const legend = [];
  for (const s of panels.flatMap((p) => p.series)) {
    if (!legend.some((l) => l.label === s.label)) legend.push(s);
  }
  if (peak)
    legend.push({
      label: `SIMD128 register-only peak (${peak.toFixed(1)} GFLOP/s)`,
      color: '#444',
      dash: '2 3',
    });
  const width = PANEL.width * panels.length;
  const header = subtitle ? 44 : 28;
  const height = header + PANEL.height + LEGEND_ROW * Math.ceil(legend.length / 2) + 10;

  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${escape(title)}</text>`,
  ];
  if (subtitle)
    out.push(
      `<text x="${width / 2}" y="34" text-anchor="middle" fill="#555">${escape(subtitle)}</text>`,
    );

  panels.forEach((panel, index) => {
    out.push(`<g transform="translate(${index * PANEL.width},${header})">`);
    out.push(
      `<text x="${PANEL.left + plotWidth / 2}" y="16" text-anchor="middle" font-size="12" font-weight="bold">${escape(panel.title)}</text>`,
    );
    for (const t of ticksY) {
      const y = fixed(yOf(t));
      out.push(
        `<line x1="${PANEL.left}" x2="${PANEL.left + plotWidth}" y1="${y}" y2="${y}" stroke="#ddd"/>`,
      );
      out.push(
        `<text x="${PANEL.left - 5}" y="${y + 4}" text-anchor="end" fill="#333">${tickLabel(t)}</text>`,
      );
    }
    for (const n of sizes) {
      const x = fixed(xOf(n));
      out.push(
        `<line x1="${x}" x2="${x}" y1="${PANEL.top}" y2="${PANEL.top + plotHeight}" stroke="#eee"/>`,
      );
      out.push(
        `<text x="${x}" y="${PANEL.top + plotHeight + 15}" text-anchor="middle" fill="#333">${n}</text>`,
      );
    }
    out.push(
      `<text x="${PANEL.left + plotWidth / 2}" y="${PANEL.height - 6}" text-anchor="middle" fill="#333">N (tokens)</text>`,
    );
    if (index === 0) {
      out.push(
        `<text transform="translate(12,${PANEL.top + plotHeight / 2}) rotate(-90)" text-anchor="middle" fill="#333">GFLOP/s (4·H·N²·D per call)</text>`,
      );
    }
    out.push(
      `<rect x="${PANEL.left}" y="${PANEL.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
    );
    if (peak) {
      const y = fixed(yOf(peak));
      out.push(
        `<line x1="${PANEL.left}" x2="${PANEL.left + plotWidth}" y1="${y}" y2="${y}" stroke="#444" stroke-dasharray="2 3"/>`,
      );
    }
    for (const s of panel.series) {
      const points = s.points
        .filter(([, y]) => y > 0)
        .map(([n, y]) => `${fixed(xOf(n))},${fixed(yOf(y))}`);
      if (points.length === 0) continue;
      const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
      out.push(
        `<polyline points="${points.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`,
      );
      for (const p of points) {
        const [x, y] = p.split(',');
        out.push(`<circle cx="${x}" cy="${y}" r="3" fill="${s.color}"/>`);
      }
    }
    out.push('</g>');
  });

  legend.forEach((s, i) => {
    const x = 20 + (i % 2) * (width / 2);
    const y = header + PANEL.height + 6 + Math.floor(i / 2) * LEGEND_ROW;
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
    out.push(
      `<line x1="${x}" x2="${x + 24}" y1="${y}" y2="${y}" stroke="${s.color}" stroke-width="2"${dash}/>`,
    );
    out.push(`<text x="${x + 30}" y="${y + 4}">${escape(s.label)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
