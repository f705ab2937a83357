// The styles of head-effects-view.js and logit-lens-view.js, one sheet for the demo page (its
// panels adopt it when they load) and the widget's shadow roots (a snapshot that carries them).
export const LENS_PANELS_CSS = `
.al-panel h3 { font-size: 14px; margin: 12px 0 2px; }
.al-caption { margin: 6px 0; font-size: 13px; color: var(--al-muted, #6a655b); }
.al-scroll { overflow: auto; max-width: 100%; -webkit-overflow-scrolling: touch; }
.al-lens-scroll { max-height: 26em; }
.al-effects-grid, .al-lens-grid { border-collapse: separate; border-spacing: 2px; font-size: 12px; }
.al-effects-grid th, .al-lens-grid th {
  font-weight: 600; color: var(--al-muted, #6a655b); padding: 0 4px; white-space: nowrap;
}
.al-lens-grid thead th { font-family: ui-monospace, Menlo, Consolas, monospace; font-weight: 500; }
.al-effects-grid tbody th, .al-lens-grid tbody th {
  position: sticky; left: 0; z-index: 1; text-align: right;
  background: var(--al-background, #fffefb);
}
.al-effects-grid td, .al-lens-grid td { padding: 0; }
.al-effect, .al-lens-cell {
  display: block; box-sizing: border-box; min-width: 3.6em; min-height: 24px; margin: 0;
  padding: 2px 4px; border: 1px solid rgb(0 0 0 / 10%); border-radius: 3px;
  font: 12px ui-monospace, Menlo, Consolas, monospace; text-align: center; white-space: nowrap;
  color: var(--al-ink, #1d1b18); background: transparent;
}
button.al-effect, button.al-lens-cell, .al-ranked-head { cursor: pointer; }
.al-lens-cell { min-width: 5.2em; }
.al-effect.is-off { outline: 2px solid var(--al-ink, #1d1b18); outline-offset: -2px;
  text-decoration: line-through; }
.al-lens-cell.is-first { outline: 2px solid var(--al-ink, #1d1b18); outline-offset: -2px;
  font-weight: 700; }
.al-effect:focus-visible, .al-lens-cell:focus-visible, .al-ranked-head:focus-visible {
  outline: 3px solid var(--al-focus, #e8472a); outline-offset: 1px;
}
.al-ranked h4, .al-lens-detail h4 { margin: 10px 0 4px; font-size: 13px; }
.al-ranked-list { margin: 0; padding-left: 1.6em; font-size: 13px; }
.al-ranked-head {
  font: inherit; padding: 1px 6px; border: 1px solid rgb(0 0 0 / 15%); border-radius: 3px;
  background: transparent; color: inherit;
}
.al-ranked-list li.is-off, .al-ranked-head[aria-pressed="true"] {
  text-decoration: line-through; font-weight: 650;
}
.al-before-after {
  display: grid; grid-template-columns: minmax(0, 1fr); gap: 14px; margin-top: 10px;
}
.al-before-after.comparing { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
/* The predictions' own look, for the widget: the demo page styles them in models.css. */
.al-panel .al-predictions h3 { font-size: 13px; margin: 6px 0; font-weight: 600; }
.al-panel .al-prediction-list {
  list-style: none; margin: 0; padding: 0; display: grid; gap: 3px;
}
.al-panel .al-prediction {
  display: grid; grid-template-columns: minmax(0, 7em) minmax(0, 1fr) 3.2em auto; gap: 6px;
  align-items: center; font-size: 13px;
}
.al-panel .al-prediction-token {
  font-family: ui-monospace, Menlo, Consolas, monospace; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap;
}
.al-panel .al-prediction-track { background: rgb(0 0 0 / 7%); border-radius: 3px; height: 10px; }
.al-panel .al-prediction-bar {
  display: block; height: 10px; border-radius: 3px; background: #e8472a;
}
.al-panel .al-prediction-p {
  font: 12px ui-monospace, Menlo, Consolas, monospace; text-align: right;
}
.al-panel .al-prediction-change { font-size: 11px; color: var(--al-muted, #6a655b); }
.al-lens-detail { min-height: 4em; }
@media (max-width: 520px) {
  .al-before-after.comparing { grid-template-columns: minmax(0, 1fr); }
}
`;

let adopted = null; // one sheet for every root

/** Adopts the sheet into `root` (a document or a shadow root) once. */
export function adoptLensPanelsCss(root) {
  if (root.adoptedStyleSheets === undefined) return;
  adopted ??= new CSSStyleSheet();
  if (!adopted.cssRules.length) adopted.replaceSync(LENS_PANELS_CSS);
  if (!root.adoptedStyleSheets.includes(adopted)) {
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, adopted];
  }
}

const linear = (c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const luminance = (rgb) =>
  0.2126 * linear(rgb[0] / 255) + 0.7152 * linear(rgb[1] / 255) + 0.0722 * linear(rgb[2] / 255);

/**
 * Paints a cell `rgb` at `strength` (0..1) over white, opaque, with black or white text,
 * whichever reads better: one of them always has a contrast of at least 4.58 to 1.
 */
export function tint(node, rgb, strength) {
  const mixed = rgb.map((c) => Math.round(255 - strength * (255 - c)));
  node.style.background = `rgb(${mixed.join(' ')})`;
  const l = luminance(mixed);
  node.style.color = 1.05 / (l + 0.05) > (l + 0.05) / 0.05 ? '#fff' : '#000';
}
