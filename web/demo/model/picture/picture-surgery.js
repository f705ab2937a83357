// The Picture mode's mask surgery: full attention, or a K x K local window over the patch grid
// (the mask notation's patch:K, run in every layer: each patch sees only the patches around
// it; the class token and registers still see everything). The panel runs the picture again
// under the window; this draws the shown map and the labels of both runs side by side, the way
// the Translate mode puts the full-attention translation beside a surgery's.
import { el } from '../../../src/views/dom.js';
import { t } from '../../i18n.js';
import { drawOverlay } from '../../../src/views/picture-overlay.js';

const SIDE = 224; // CSS pixels of each compared map (scaled down on a phone)
const FIRST_WINDOW = 3;

export class PictureSurgery {
  /** @param {(mask: string | null) => void} changed the surgery was turned on, off or resized */
  constructor(changed) {
    this.window = FIRST_WINDOW;
    this.toggle = el('input', { type: 'checkbox', class: 'picture-surgery-on' });
    this.size = el('select', { class: 'picture-surgery-window', disabled: true });
    this.toggle.addEventListener('change', () => {
      this.size.disabled = !this.toggle.checked;
      changed(this.mask);
    });
    this.size.addEventListener('change', () => {
      this.window = Number(this.size.value);
      changed(this.mask);
    });
    this.full = pane('full');
    this.masked = pane('masked');
    this.summary = el('p', { class: 'picture-surgery-summary', role: 'status' });
    this.compare = el(
      'div',
      { class: 'picture-surgery-compare', hidden: true },
      this.full.element,
      this.masked.element,
    );
    this.element = el(
      'fieldset',
      { class: 'picture-surgery' },
      el('legend', { text: t('pictureSurgeryTitle') }),
      el(
        'div',
        { class: 'picture-controls' },
        el(
          'label',
          { class: 'picture-surgery-toggle' },
          this.toggle,
          el('span', { text: t('pictureSurgeryOn') }),
        ),
        el(
          'label',
          { class: 'picture-field' },
          el('span', { text: t('pictureSurgeryWindow') }),
          this.size,
        ),
      ),
      el('p', { class: 'hint', text: t('pictureSurgeryHint') }),
      this.summary,
      this.compare,
    );
  }

  /** The surgery in the mask notation, or null for full attention. */
  get mask() {
    return this.toggle.checked ? `patch:${this.window}` : null;
  }

  /**
   * The window sizes this grid takes: odd K up to 2 * max(rows, columns) - 1, the window that
   * reaches every patch (run() refuses wider). A size the new grid cannot take becomes its widest.
   */
  setGrid({ rows, columns }) {
    const widest = 2 * Math.max(rows, columns) - 1;
    this.window = Math.min(this.window, widest);
    const sizes = [];
    for (let k = 1; k <= widest; k += 2) sizes.push(k);
    this.size.replaceChildren(
      ...sizes.map((k) => el('option', { value: k, text: t('pictureSurgerySize', { k }) })),
    );
    this.size.value = String(this.window);
  }

  /**
   * Draws the two runs' maps for `pick(run)` (the main view's layer, head and focus) and their
   * labels; `masked` null while it runs or with the surgery off.
   */
  render({ full, masked, view, pick, focus, size }) {
    const on = Boolean(this.mask);
    this.compare.hidden = !on || !masked;
    this.summary.textContent = on && !masked ? t('pictureSurgeryRunning') : '';
    if (!on || !masked) return;
    const k = masked.mask.replace('patch:', '');
    this.full.caption.textContent = t('pictureSurgeryFull');
    this.masked.caption.textContent = t('pictureSurgeryWindowed', { k });
    for (const [part, run] of [
      [this.full, full],
      [this.masked, masked],
    ]) {
      size(part.canvas, view, SIDE);
      drawOverlay(part.canvas, view, pick(run), {
        grid: run.grid,
        patchSize: run.patchSize,
        opacity: 0.8,
        focus,
      });
      part.canvas.setAttribute('aria-label', part.caption.textContent);
      part.labels.replaceChildren(
        ...(run.labels ?? []).map(({ label, p }) =>
          el('li', { text: t('pictureLabel', { label, p: (p * 100).toFixed(1) }) }),
        ),
      );
      part.labels.hidden = !run.labels;
    }
    const [before, after] = [full.labels?.[0]?.label, masked.labels?.[0]?.label];
    if (before === undefined) return;
    this.summary.textContent =
      before === after
        ? t('pictureSurgerySame', { label: before, k })
        : t('pictureSurgeryChanged', { before, after, k });
  }
}

// One side of the comparison: its map, caption and labels.
function pane(kind) {
  const canvas = el('canvas', { class: 'picture-pair-map', role: 'img' });
  const caption = el('figcaption');
  const labels = el('ol', { class: 'picture-labels' });
  const element = el('figure', { class: `picture-surgery-${kind}` }, canvas, caption, labels);
  return { element, canvas, caption, labels };
}
