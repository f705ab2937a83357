// "Watch it learn": a small GPT trains in this tab (attnlens/train, in its own worker) and the
// page plays its attention back as it learns: the loss, every head's heatmap on a probe, each
// head's mean row entropy over the steps (it falls as heads sharpen), the labels heads earn
// (induction, previous-token, sink: from scores smoothed over the snapshots, so that a score
// wavering around the threshold does not flicker) and a timeline of the snapshots.
// attnlens/train loads on the first Train or Step, so the rest of the page never waits for it.
import { el } from '../../src/views/dom.js';
import { smoothHeadScores } from '../../src/interpret/head-scores.js';
import { HeadsGrid } from '../../src/views/heads-grid.js';
import { t } from '../i18n.js';
import { drawEntropy, drawLoss, entropyKey } from './learn-plots.js';

// A run is long; Pause stops it whenever. A falling temperature starts every head flat.
const RUN_STEPS = 20000;
const SNAPSHOT_EVERY = 10;
const FALLING = { from: 4, to: 1, steps: 1000 };
// The random sequences are bench/training's: 64 tokens, so that a token rarely repeats by chance.
const RANDOM_TOKENS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-';
// Phones get a smaller model: fewer, larger heatmaps and steps that keep up.
const NARROW = '(max-width: 560px)';
const randomSequences = (narrow) => ({
  length: narrow ? { min: 4, max: 12 } : { min: 6, max: 16 },
  repeats: 2,
  seed: 1,
});

function modelFor(kind, text) {
  const narrow = matchMedia(NARROW).matches;
  return {
    layers: 2,
    heads: narrow ? 2 : 4,
    width: narrow ? 32 : 64,
    context: narrow ? 24 : 32,
    attentionOnly: kind === 'random',
    // What lets an induction head form on random sequences within a minute (docs/JS_API.md,
    // "Induction heads"); text keeps GPT-2's settings.
    ...(kind === 'random' && { finalNorm: false, tokenEmbeddingStd: 0.2 }),
    vocabulary: { characters: kind === 'random' ? RANDOM_TOKENS : text },
    seed: 1,
    threads: 1,
  };
}

const bits = (nats) => nats / Math.LN2;

export class LearnPanel {
  #els;
  #api = null;
  #trainer = null;
  #key = '';
  #corpus = null;
  #running = false;
  #shown = -1; // the snapshot the timeline shows; -1: follow the newest
  #selected = 0;
  #previous = null; // the last run's entropy lines, to compare against
  #labelled = new Set(); // "layer/head/label" already announced
  #smoothed = []; // smoothHeadScores() at each snapshot so far, in order
  #error = '';
  #frame = 0;
  #grid;

  constructor(els) {
    this.#els = els;
    this.#grid = new HeadsGrid(els.heads, {
      onSelect: (h) => {
        this.#selected = h;
        this.render();
      },
      headLabel: (h) => this.#headName(h),
    });
    els.train.addEventListener('click', () => (this.#running ? this.#pause() : this.#train()));
    els.step.addEventListener('click', () => this.#step());
    els.reset.addEventListener('click', () => this.#startOver());
    els.timeline.addEventListener('input', () => {
      const value = Number(els.timeline.value);
      this.#shown = value === Number(els.timeline.max) ? -1 : value;
      this.render();
    });
    for (const input of els.corpusInputs) {
      input.addEventListener('change', () => {
        els.ownField.hidden = this.#corpusKind() !== 'own';
      });
    }
    this.render();
  }

  #corpusKind() {
    return this.#els.corpusInputs.find((input) => input.checked)?.value ?? 'random';
  }

  // The corpus and the model the controls ask for; null (and an error shown) when unusable.
  #wanted() {
    const kind = this.#corpusKind();
    const api = this.#api;
    if (kind === 'random') {
      const sequences = api.repeatedRandomSequences(randomSequences(matchMedia(NARROW).matches));
      return { key: 'random', corpus: sequences, kind };
    }
    const text = kind === 'own' ? this.#els.ownText.value : api.SAMPLE_TEXTS[kind];
    if ([...text.trim()].length < 2) return null;
    return { key: `${kind}:${text}`, corpus: text, text, kind };
  }

  #options(steps, snapshotEvery) {
    return {
      steps,
      batchSize: matchMedia(NARROW).matches ? 8 : 16,
      // Random sequences: 1e-3, at which every seed tried grew an induction head (3e-3: some).
      learningRate: this.#corpusKind() === 'random' ? 1e-3 : 3e-3,
      snapshotEvery,
      temperatureSchedule: this.#els.falling.checked ? FALLING : 1,
      onStep: () => this.#schedule(),
      onSnapshot: (snapshot) => this.#snapshotArrived(snapshot),
    };
  }

  // The trainer for what the controls ask; a new one (and a fresh timeline) when they changed.
  async #ready() {
    this.#api ??= await import('../../src/train/index.js');
    const wanted = this.#wanted();
    if (!wanted) throw Object.assign(new Error(t('learnNeedText')), { code: 'need_text' });
    const key = `${wanted.key}|${this.#els.falling.checked}|${matchMedia(NARROW).matches}`;
    if (this.#trainer && key === this.#key) return this.#trainer;
    this.#retire();
    this.#trainer = await this.#api.createTrainer(modelFor(wanted.kind, wanted.text));
    this.#key = key;
    this.#corpus = wanted.corpus;
    return this.#trainer;
  }

  /**
   * The model trained here so far, for "Compare two models": { steps, files() } (files: its
   * checkpoint, Trainer.save()), or null before it took a step.
   */
  trainedModel() {
    const trainer = this.#trainer;
    if (!trainer || trainer.steps === 0) return null;
    return { steps: trainer.steps, files: () => trainer.save() };
  }

  // The current run becomes the one to compare against; the page forgets its trainer.
  #retire() {
    if (!this.#trainer) return;
    const series = this.#entropySeries();
    if (series.some((s) => s.points.length > 1)) this.#previous = series;
    this.#trainer.dispose();
    this.#trainer = null;
    this.#shown = -1;
    this.#labelled.clear();
    this.#smoothed = [];
  }

  async #run(action) {
    this.#error = '';
    try {
      await action();
    } catch (error) {
      if (error?.code === 'need_text') this.#error = error.message;
      else if (error?.code !== 'disposed')
        this.#error = t('learnError', { message: error.message });
    }
    this.render();
  }

  #train() {
    this.#running = true;
    this.render();
    return this.#run(async () => {
      try {
        const trainer = await this.#ready();
        await trainer.train(this.#corpus, this.#options(RUN_STEPS, SNAPSHOT_EVERY));
      } finally {
        this.#running = false;
      }
    });
  }

  #pause() {
    return this.#run(() => this.#trainer?.pause());
  }

  // One step, with a snapshot after it, so the heatmaps show exactly that step.
  #step() {
    return this.#run(async () => {
      const trainer = await this.#ready();
      await trainer.train(this.#corpus, this.#options(1, 1));
    });
  }

  #startOver() {
    return this.#run(async () => {
      await this.#trainer?.pause();
      this.#retire();
      this.#key = '';
    });
  }

  #snapshotArrived(snapshot) {
    for (const head of this.#smoothedScores().at(-1) ?? []) {
      const id = `${head.layer}/${head.head}/${head.label}`;
      if (!head.label || this.#labelled.has(id)) continue;
      this.#labelled.add(id);
      this.#els.announce.textContent = t('learnLabelEmerged', {
        head: this.#headName(head.layer * this.#trainer.info.heads + head.head, false),
        label: t(`learnLabel:${head.label}`),
        step: snapshot.step,
      });
    }
    this.#schedule();
  }

  // Redraws at most once a frame, however fast the steps come.
  #schedule() {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.render();
    });
  }

  #snapshots() {
    return this.#trainer?.snapshots ?? [];
  }

  #snapshotShown() {
    const snapshots = this.#snapshots();
    if (!snapshots.length) return null;
    return snapshots[this.#shown < 0 ? snapshots.length - 1 : this.#shown] ?? null;
  }

  // The smoothed scores of every snapshot, extended to the newest.
  #smoothedScores() {
    const snapshots = this.#snapshots();
    while (this.#smoothed.length < snapshots.length) {
      const at = this.#smoothed.length;
      this.#smoothed.push(smoothHeadScores(this.#smoothed[at - 1] ?? null, snapshots[at].heads));
    }
    return this.#smoothed;
  }

  #headName(index, withLabel = true) {
    const heads = this.#trainer?.info.heads ?? 1;
    const name = t('learnHeadName', {
      layer: Math.floor(index / heads) + 1,
      head: (index % heads) + 1,
    });
    const snapshots = this.#snapshots();
    const shown = this.#shown < 0 ? snapshots.length - 1 : this.#shown;
    const label = withLabel ? this.#smoothedScores()[shown]?.[index]?.label : null;
    return label ? `${name} · ${t(`learnLabel:${label}`)}` : name;
  }

  #entropySeries() {
    const snapshots = this.#snapshots();
    if (!snapshots.length) return [];
    return snapshots[0].heads.map(({ layer, head }, i) => ({
      layer,
      head,
      points: snapshots.map((s) => [s.step, bits(s.heads[i].entropy)]),
    }));
  }

  render() {
    const els = this.#els;
    const trainer = this.#trainer;
    const snapshots = this.#snapshots();
    const shown = this.#snapshotShown();
    els.train.textContent = t(
      this.#running ? 'learnPause' : trainer?.steps ? 'learnResume' : 'learnTrain',
    );
    els.train.setAttribute('aria-pressed', String(this.#running));
    els.step.disabled = this.#running;
    els.reset.disabled = !trainer;
    document.body.dataset.learnSteps = String(trainer?.steps ?? 0);

    els.status.classList.toggle('is-error', !!this.#error);
    els.status.textContent =
      this.#error ||
      (trainer
        ? t('learnStatus', {
            steps: trainer.steps,
            loss: trainer.loss === null ? '—' : trainer.loss.toFixed(3),
            temperature: trainer.temperature.toFixed(2),
            model: t('learnModel', { ...trainer.info, vocabulary: trainer.info.vocabulary.size }),
          })
        : t('learnIdle'));

    els.timeline.disabled = snapshots.length < 2;
    els.timeline.max = String(Math.max(0, snapshots.length - 1));
    els.timeline.value = String(this.#shown < 0 ? snapshots.length - 1 : this.#shown);
    const at = shown ? t('learnAtStep', { step: shown.step }) : '—';
    els.timelineOutput.textContent = at;
    els.timeline.setAttribute('aria-valuetext', at);

    drawLoss(els.loss, trainer?.losses ?? new Float64Array(), shown?.step ?? null, {
      label: t('learnLossLabel', {
        steps: trainer?.steps ?? 0,
        first: trainer?.losses[0]?.toFixed(2) ?? '—',
        last: trainer?.loss?.toFixed(2) ?? '—',
      }),
      empty: t('learnLossEmpty'),
    });
    const series = this.#entropySeries();
    entropyKey(els.entropyKey, series, (i) => this.#headName(i, false));
    drawEntropy(
      els.entropy,
      {
        series,
        previous: this.#previous,
        selected: this.#selected,
        markStep: shown?.step ?? null,
      },
      { label: t('learnEntropyLabel'), empty: t('learnEntropyEmpty') },
    );
    els.previousNote.hidden = !this.#previous;

    if (!shown) {
      this.#grid.host.replaceChildren(el('p', { class: 'hint', text: t('learnHeadsEmpty') }));
      this.#grid.data = null;
      return;
    }
    const n = shown.tokens.length;
    const causal = new Uint8Array(n * n);
    for (let i = 0; i < n; i++) causal.fill(1, i * n, i * n + i + 1);
    const tokens = shown.tokens.map((token) => ({ text: token.text }));
    this.#grid.setData({
      heads: shown.heads.map((_, h) => ({
        weights: shown.attention.subarray(h * n * n, (h + 1) * n * n),
        mask: causal,
      })),
      rowTokens: tokens,
      colTokens: tokens,
      scale: 'viridis',
      selected: Math.min(this.#selected, shown.heads.length - 1),
      range: [0, 1],
      entropies: shown.heads.map((head) => bits(head.entropy)),
    });
  }

  // The page's language changed: everything built here speaks it.
  relabel() {
    this.render();
  }
}
