// A real model's settings: which layer and head the views show (each head with the label its
// weights earn), words instead of pieces, a sentence pair's block, mask surgery (on, and where:
// every layer or one), what a snapshot holds, and the [MASK] button of BERT models. The mask
// itself is edited with the page's mask controls (../controls.js), which write state.surgery here.
import { el, formatBytes } from '../../src/views/dom.js';
import { snapshotBytes } from '../../src/snapshot/format.js';
import { t } from '../i18n.js';
import { headMeasuresText, labelName, shownLabel, specialNames } from './stage.js';
import { shownHead } from './view.js';

export const SNAPSHOT_SCOPES = ['head', 'layer', 'all'];

// The mask surgery starts from: a causal model keeps looking only back, with a window.
export function firstSurgery(info) {
  return info?.causal ? 'causal+local:2' : 'local:2';
}

function fill(select, options, value) {
  const key = options.map((o) => `${o.value}=${o.text}`).join('|');
  if (select.dataset.built !== key) {
    select.dataset.built = key;
    select.replaceChildren(...options.map((o) => el('option', { value: o.value, text: o.text })));
  }
  select.value = String(value);
}

export class ModelControls {
  constructor(elements, { update, getState, getInfo }) {
    this.e = elements;
    this.update = update;
    this.getState = getState;
    this.getInfo = getInfo;
    const e = elements;
    e.layerSelect.addEventListener('change', () => update({ layer: Number(e.layerSelect.value) }));
    e.modelHeadSelect.addEventListener('change', () =>
      update({ head: Number(e.modelHeadSelect.value) }),
    );
    e.wordsInput.addEventListener('change', () =>
      update({ words: e.wordsInput.checked, query: -1, key: -1 }),
    );
    e.blockInput.addEventListener('change', () =>
      update({ block: e.blockInput.checked, query: -1, key: -1 }),
    );
    e.surgeryInput.addEventListener('change', () =>
      update({ surgery: e.surgeryInput.checked ? firstSurgery(getInfo()) : '' }),
    );
    e.surgeryLayerSelect.addEventListener('change', () =>
      update({ surgeryLayer: Number(e.surgeryLayerSelect.value) }),
    );
    e.pairText.addEventListener('input', () => update({ pair: e.pairText.value }));
    // [MASK] where the cursor is, so a BERT model has something to fill in.
    e.insertMask.addEventListener('click', () => {
      const info = getInfo();
      const area = e.mainText;
      const at = area.selectionStart ?? area.value.length;
      const end = area.selectionEnd ?? at;
      const token = info?.maskToken ?? '[MASK]';
      const text = `${area.value.slice(0, at)}${token}${area.value.slice(end)}`;
      update({ text }, { immediate: true });
      area.focus();
      area.setSelectionRange(at + token.length, at + token.length);
    });
  }

  // Shows what belongs to one mode and hides the other's.
  showMode(state) {
    const real = state.model !== '';
    for (const node of this.e.playgroundOnly) node.hidden = real;
    for (const node of this.e.modelOnly) node.hidden = !real;
  }

  // result: the model's last run (or null), for the head labels and the snapshot sizes; probe:
  // the model's head scores (ModelSession.headScores), for the labels heads earn there.
  sync(state, info, result, probe = null) {
    this.showMode(state);
    const e = this.e;
    if (!state.model) return;
    const bert = info && !info.causal;
    e.pairField.hidden = !bert;
    if (e.pairText.value !== state.pair) e.pairText.value = state.pair;
    e.insertMask.hidden = !(bert && info.predicts && info.maskToken);
    e.wordsInput.checked = state.words;
    e.blockSwitch.hidden = !(bert && state.pair.trim());
    e.blockInput.checked = state.block;
    e.surgeryInput.checked = Boolean(state.surgery);
    e.maskEditor.hidden = !state.surgery;
    e.surgeryLayerSelect.disabled = !state.surgery;
    if (!info) return;
    const { layer, head } = shownHead(state, info);
    const run = result?.surgery ?? result?.own;
    fill(
      e.layerSelect,
      info.layerMasks.map((mask, l) => ({ value: l, text: t('layerOption', { n: l + 1, mask }) })),
      layer,
    );
    const labels = run?.labels?.[layer];
    const scoreOf = (h) => probe?.heads?.[layer * info.heads + h] ?? null;
    const context = { probeError: probe?.error ?? null, specials: specialNames(result) };
    fill(
      e.modelHeadSelect,
      Array.from({ length: info.heads }, (_, h) => ({
        value: h,
        text: labels
          ? t('headOption', {
              n: h + 1,
              label: labelName(shownLabel(labels[h], scoreOf(h)), context.specials),
            })
          : t('headN', { n: h + 1 }),
      })),
      head,
    );
    e.headLabelReadout.textContent = labels
      ? headMeasuresText(labels[head], scoreOf(head), context)
      : '';
    fill(
      e.surgeryLayerSelect,
      [
        { value: -1, text: t('surgeryEveryLayer') },
        ...info.layerMasks.map((mask, l) => ({
          value: l,
          text: t('layerOption', { n: l + 1, mask }),
        })),
      ],
      state.surgeryLayer,
    );
    e.surgeryNote.textContent = state.surgery
      ? t('surgeryNote', { mask: state.surgery })
      : t('surgeryOff', { masks: [...new Set(info.layerMasks)].join(', ') });
    const n = result?.rows.length ?? 0;
    const counts = { head: [1, 1], layer: [1, info.heads], all: [info.layers, info.heads] };
    fill(
      e.snapshotScope,
      SNAPSHOT_SCOPES.map((scope) => ({
        value: scope,
        text: t(`snapshotScope:${scope}`, {
          size: formatBytes(
            snapshotBytes({ layers: counts[scope][0], heads: counts[scope][1], n }),
          ),
        }),
      })),
      e.snapshotScope.value || 'layer',
    );
  }
}
