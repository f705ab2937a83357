// The widget's stylesheet, adopted into each shadow root (one CSSStyleSheet shared by all). The
// host page can theme it through custom properties: --attn-lens-font, --attn-lens-max-height and
// the --al-* colours the canvas views read.
export const WIDGET_CSS = `
:host {
  display: block;
  contain: content;
  min-width: 0;
  --al-background: #fffefb;
  --al-ink: #1d1b18;
  --al-muted: #6a655b;
  --al-masked: #ece8df;
  --al-hatch: #cbc3b3;
  --al-grid: rgb(255 255 255 / 55%);
  --al-focus: #e8472a;
  --al-font: var(--attn-lens-font, system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans",
    "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "WenQuanYi Micro Hei",
    sans-serif);
  --line: #e2ddd2;
  --line-strong: #cfc8b9;
  --paper: #f5f3ee;
  --accent: #e8472a;
  --accent-soft: #fde3da;
  color: var(--al-ink);
  font: 14px/1.45 var(--al-font);
}
@media (prefers-color-scheme: dark) {
  :host {
    --al-background: #1d1c17; --al-ink: #eeeae0; --al-muted: #a49e90; --al-masked: #2b2923;
    --al-hatch: #433f36; --al-grid: rgb(0 0 0 / 35%); --line: #34312a; --line-strong: #4a463c;
    --paper: #15140f; --accent-soft: #3b2119;
  }
}
:host([hidden]) { display: none; }
.frame {
  background: var(--al-background); border: 1px solid var(--line); border-radius: 12px;
  padding: 10px 12px 8px; min-height: 120px; box-sizing: border-box;
}
.header {
  display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; font-size: 12.5px;
  color: var(--al-muted);
}
.header .count { color: var(--al-ink); font-weight: 600; }
.header code {
  font: 12px ui-monospace, Menlo, Consolas, monospace; background: var(--paper); padding: 1px 6px;
  border-radius: 5px; color: var(--al-ink);
}
.status { margin: 6px 0; font-size: 13px; color: var(--al-muted); }
.status:empty { display: none; }
.view { margin-top: 8px; position: relative; }
.footer {
  display: flex; justify-content: space-between; gap: 8px; margin-top: 6px; font-size: 11.5px;
  color: var(--al-muted);
}
.footer a { color: inherit; }
.footer .backend { margin-left: auto; font-family: ui-monospace, Menlo, Consolas, monospace; }
.sr-only, .al-sr-only {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%);
  white-space: nowrap; margin: -1px;
}
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }

.al-heatmap { position: relative; }
.al-heatmap-scroll { overflow: auto; max-height: var(--attn-lens-max-height, 520px); }
.al-heatmap-canvas {
  display: block; touch-action: pan-x pan-y; cursor: crosshair; border-radius: 4px;
}
.al-heatmap-canvas:focus-visible { outline: none; }
.al-heatmap-scroll:has(> .al-heatmap-canvas:focus-visible) {
  outline: 2px solid var(--accent); outline-offset: 2px; border-radius: 4px;
}
.header .back {
  font: inherit; font-size: 12px; border: 1px solid var(--line-strong); background: var(--paper);
  color: var(--al-ink); border-radius: 6px; padding: 1px 8px; cursor: pointer; margin-left: auto;
}
.header select {
  font: inherit; font-size: 12px; border: 1px solid var(--line-strong); background: var(--paper);
  color: var(--al-ink); border-radius: 6px; padding: 1px 4px;
}
.load-model {
  font: inherit; font-size: 14px; font-weight: 650; border: 0; border-radius: 999px;
  cursor: pointer; background: #b23218; color: #fff; padding: 9px 18px; margin: 18px auto;
  display: block;
}
.load-model:focus-visible { outline: 2px solid var(--al-ink); outline-offset: 2px; }
.al-tooltip {
  position: absolute; left: 0; top: 0; pointer-events: none; z-index: 2; background: var(--al-ink);
  color: var(--al-background); font: 12px/1.3 ui-monospace, Menlo, Consolas, monospace;
  padding: 4px 7px; border-radius: 5px; white-space: nowrap;
}
.al-lines-scroll { overflow: auto; max-height: var(--attn-lens-max-height, 520px); }
.al-lines-svg { display: block; font: 13px var(--al-font); }
.al-lines-title {
  fill: var(--al-muted); font-size: 10.5px; text-transform: uppercase; letter-spacing: 0.08em;
}
.al-token { cursor: pointer; outline: none; }
.al-token rect { fill: var(--paper); stroke: var(--line-strong); }
.al-token text { fill: var(--al-ink); }
.al-token:hover rect, .al-token:focus-visible rect { stroke: var(--al-ink); stroke-width: 1.5; }
.al-token.is-active rect { fill: var(--accent-soft); stroke: var(--accent); stroke-width: 1.5; }
.al-token.is-locked rect { fill: var(--accent); stroke: var(--accent); }
.al-token.is-locked text { fill: #fff; font-weight: 600; }
.al-token.is-masked text { opacity: 0.45; }
.al-token.is-masked rect { stroke-dasharray: 3 2; }
.al-weight { fill: var(--al-ink); font: 600 10.5px ui-monospace, Menlo, Consolas, monospace; }
.al-heads { display: flex; flex-wrap: wrap; gap: 8px; }
.al-head-tile {
  border: 1px solid var(--line); background: var(--paper); border-radius: 9px; padding: 6px;
  cursor: pointer; display: flex; flex-direction: column; gap: 4px; align-items: center;
  color: var(--al-ink); font: inherit; font-size: 12px;
}
.al-head-tile[aria-pressed="true"] { border-color: var(--accent); }
.al-head-frame { display: flex; align-items: center; justify-content: center; }
.al-head-caption { color: var(--al-muted); }
.al-head-caption strong { color: var(--al-ink); font-weight: 600; }
@media (prefers-reduced-motion: reduce) { * { transition: none !important; } }
`;
