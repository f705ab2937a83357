// The compute thread's side of the page's "Which heads matter" and "Logit lens" panels
// (demo/model/lens-compute.js) on the bundled stories260K: the effects grid is headEffects()'s
// ranking laid out by layer and head, progress counts every head, Cancel stops between layers,
// the predictions before and after are those of run() with and without the heads off, and the
// lens is run()'s, in the form a snapshot holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadModel as loadOnPage, releaseModel } from '../demo/model/compute.js';
import { measureHeadEffects, runAblated, runLogitLens } from '../demo/model/lens-compute.js';
import { loadModel } from '../src/models/index.js';
import { readLogitLens } from '../src/snapshot/read-panels.js';
import { logitLensField } from '../src/snapshot/write-panels.js';

const KEY = 'hub:stories260K@main:f32';
const TEXT = 'Once upon a time, there was a little girl named Lily. She';
const quiet = { signal: new AbortController().signal, progress: () => {} };
let info, reference;

before(async () => {
  const params = { key: KEY, source: { kind: 'hub', id: 'stories260K' }, dtype: 'f32' };
  info = await loadOnPage(params, quiet);
  reference = await loadModel('stories260K');
});
after(() => {
  releaseModel();
  reference.dispose();
});

describe('the heads panel in the compute thread', () => {
  it("lays out headEffects() by layer and head, counting every head's progress", async () => {
    const progress = [];
    const measured = await measureHeadEffects(
      { key: KEY, text: TEXT, target: null },
      { signal: new AbortController().signal, progress: (p) => progress.push(p) },
    );
    const expected = await reference.headEffects(TEXT);
    assert.equal(measured.target.id, expected.target.id);
    assert.equal(measured.effects.length, info.layers * info.heads);
    for (const { layer, head, delta } of expected.heads) {
      assert.equal(measured.effects[layer * info.heads + head], Math.fround(delta));
    }
    assert.deepEqual(
      progress.map((p) => p.done),
      Array.from({ length: info.layers }, (_, l) => (l + 1) * info.heads),
    );
    assert.ok(progress.every((p) => p.total === info.layers * info.heads));
  });

  it('measures for a target the reader picked', async () => {
    const picked = (await reference.run(TEXT, { topK: 3 })).predictions[2].id;
    const measured = await measureHeadEffects({ key: KEY, text: TEXT, target: picked }, quiet);
    assert.equal(measured.target.id, picked);
  });

  it('Cancel stops the measurement between layers with an AbortError', async () => {
    const controller = new AbortController();
    let reports = 0;
    await assert.rejects(
      measureHeadEffects(
        { key: KEY, text: TEXT, target: null },
        {
          signal: controller.signal,
          progress: () => {
            reports += 1;
            controller.abort();
          },
        },
      ),
      { name: 'AbortError' },
    );
    assert.equal(reports, 1, 'no layer ran after the cancel');
  });

  it('gives the predictions with every head on and with the chosen heads off', async () => {
    const off = [
      { layer: 4, head: 6, mode: 'zero' },
      { layer: 0, head: 1, mode: 'mean' },
    ];
    const { before, after } = await runAblated({ key: KEY, text: TEXT, off });
    const own = await reference.run(TEXT, { topK: 10 });
    const ablated = await reference.run(TEXT, { topK: 10, ablate: off });
    assert.deepEqual(before, own.predictions);
    assert.deepEqual(after, ablated.predictions);
    assert.notDeepEqual(before, after);
    const none = await runAblated({ key: KEY, text: TEXT, off: [] });
    assert.deepEqual(none.after, none.before);
  });

  it('refuses a head outside the model with the error that names it', async () => {
    await assert.rejects(
      runAblated({ key: KEY, text: TEXT, off: [{ layer: 9, head: 0, mode: 'zero' }] }),
      { name: 'RangeError', parameter: 'ablate[0].layer' },
    );
  });
});

describe('the logit lens panel in the compute thread', () => {
  it("is run()'s lens with the tokens' labels, and reads back as a snapshot holds it", async () => {
    const answer = await runLogitLens({ key: KEY, text: TEXT });
    const own = await reference.run(TEXT, { lens: { topK: 5 } });
    assert.equal(answer.tokens.length, own.tokens.length);
    assert.deepEqual(answer.top, own.lens.top);
    const lens = readLogitLens(logitLensField(answer), info);
    assert.equal(lens.states, info.layers + 1);
    const n = answer.tokens.length;
    const last = (info.layers * n + n - 1) * 5;
    // The last layer's guess at the last position is the model's own prediction.
    assert.equal(lens.vocabulary[lens.top[last]].id, own.predictions[0].id);
  });
});
