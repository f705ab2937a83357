// The text path's promise, checked where it matters: Chromium computes the same embeddings,
// seeded weights and attention weights, bit for bit, as Node (the fingerprints pinned in
// test/text-embed.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { newPage, openBrowser } from './harness.mjs';
import { analyze } from '../../src/analyze.js';
import {
  embed,
  fingerprint,
  positionEncoding,
  projectionWeights,
  tokenize,
} from '../../src/text/index.js';

const SENTENCE = "The animal didn't cross the street because it was too tired";

// Runs in both Node and the page (serialised with toString), so both sides do the same work.
async function fingerprints(text, api) {
  const tokens = api.tokenize(text);
  const weights = api.projectionWeights({ heads: 4, headDim: 16, seed: 1 });
  const analysis = await api.analyze(text, { causal: true, score: 'additive' });
  return {
    chineseWords: api.tokenize('我爱自然语言处理').map((t) => t.text),
    embeddings: api.fingerprint(api.embed(tokens, { dim: 64, seed: 1 })),
    positions: api.fingerprint(api.positionEncoding(512, 64)),
    projections: ['wQuery', 'wKey', 'wValue', 'wOut'].map((k) => api.fingerprint(weights[k])),
    attention: analysis.heads.map((h) => api.fingerprint(h.weights)),
  };
}

test('Chromium and Node produce the same bits', async () => {
  const browser = await openBrowser();
  try {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/src/text/limits.js`);
    const inBrowser = await page.evaluate(
      async ({ source, text }) => {
        const api = {
          ...(await import('/src/text/index.js')),
          ...(await import('/src/analyze.js')),
        };
        // eslint-disable-next-line no-new-func -- the same function body as in Node
        return new Function(`return (${source})`)()(text, api);
      },
      { source: fingerprints.toString(), text: SENTENCE },
    );
    const inNode = await fingerprints(SENTENCE, {
      tokenize,
      embed,
      fingerprint,
      positionEncoding,
      projectionWeights,
      analyze,
    });
    assert.deepEqual(inBrowser.chineseWords, ['我', '爱', '自然', '语言', '处理']);
    assert.deepEqual(inBrowser, inNode);
  } finally {
    await browser.close();
  }
});
