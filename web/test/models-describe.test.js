// What a model will take before it is loaded: listModelFiles() reads the Hub's listing (or HEAD)
// and config.json and never the weights; describeModel() adds the memory the core will allocate
// (the loaded model's own count) and refuses, with loadModel's reason, models that do not fit.

import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeModel, listModelFiles, loadModel } from '../src/models/index.js';
import { startHubServer } from './support/hub-server.mjs';
import { tinyModel } from './support/tiny-models.mjs';

const root = mkdtempSync(join(tmpdir(), 'attnlens-describe-'));
const NEO = 'roneneldan/TinyStories-1M'; // the tiny GPT-Neo fixture, under a real id's name
cpSync(tinyModel('gpt-neo'), join(root, ...NEO.split('/'), 'main'), { recursive: true });
// GPT-2 large's config.json beside files that are never read (only listed).
const LARGE = 'attnlens/gpt2-large-shape';
const largeFolder = join(root, ...LARGE.split('/'), 'main');
mkdirSync(largeFolder, { recursive: true });
writeFileSync(
  join(largeFolder, 'config.json'),
  JSON.stringify({
    model_type: 'gpt2',
    n_embd: 1280,
    n_head: 20,
    n_layer: 36,
    n_positions: 1024,
    vocab_size: 50257,
  }),
);
// No tokenizer.json: a repository with only vocab.txt, which loading would fail on.
for (const file of ['vocab.txt', 'model.safetensors']) writeFileSync(join(largeFolder, file), '{}');
let hub;
before(async () => (hub = await startHubServer({ root })));
after(async () => {
  await hub.close();
  rmSync(root, { recursive: true, force: true });
});

const folder = join(root, ...NEO.split('/'), 'main');
const sizeOf = (file) => statSync(join(folder, file)).size;

describe('listModelFiles', () => {
  it('gives every file and its size from the listing, downloading only config.json', async () => {
    hub.requests.length = 0;
    const listed = await listModelFiles(NEO, { hubUrl: hub.url });
    const names = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors'];
    assert.deepEqual(
      listed.files,
      names.map((name) => ({ name, size: sizeOf(name) })),
    );
    assert.deepEqual(listed.weightFiles, ['model.safetensors']);
    assert.deepEqual(listed.missing, []);
    assert.equal(listed.weightBytes, sizeOf('model.safetensors'));
    assert.equal(
      listed.downloadBytes,
      names.reduce((sum, name) => sum + sizeOf(name), 0),
    );
    assert.equal(listed.config.model_type, 'gpt_neo');
    assert.equal(listed.allCached, false, 'Node has no model cache');
    const gets = hub.requests.filter((r) => r.startsWith('GET') && r.includes('/resolve/'));
    assert.deepEqual(gets, [`GET /${NEO}/resolve/main/config.json`]);
  });

  it('asks a folder URL for sizes by HEAD when there is no listing', async () => {
    const mirror = await startHubServer({ root, listing: false });
    try {
      const listed = await listModelFiles(`${mirror.url}/${NEO}/resolve/main/`);
      assert.equal(listed.weightBytes, sizeOf('model.safetensors'));
      assert.ok(!mirror.requests.some((r) => r.startsWith('GET') && r.endsWith('.safetensors')));
    } finally {
      await mirror.close();
    }
  });

  it('refuses onProgress, which it has nothing to report for', async () => {
    await assert.rejects(listModelFiles(NEO, { hubUrl: hub.url, onProgress: () => {} }), {
      name: 'TypeError',
      parameter: 'options',
    });
  });
});

describe('describeModel', () => {
  it('counts the memory loadModel then allocates', async () => {
    for (const dtype of ['f32', 'f16']) {
      const about = await describeModel(NEO, { hubUrl: hub.url, dtype });
      const model = await loadModel(NEO, { hubUrl: hub.url, dtype });
      assert.equal(about.parameters, model.info.parameters);
      assert.equal(about.memoryBytes, model.info.bytes);
      assert.ok(about.loadScratchBytes > 0);
      assert.deepEqual(
        [about.modelType, about.layers, about.heads, about.causal, about.fits, about.reason],
        ['gpt_neo', 3, 2, true, true, null],
      );
      // A text model: neither a picture reader's nor a translator's field.
      assert.equal(about.vision, undefined);
      assert.equal(about.encoderLayers, undefined);
      model.dispose();
    }
  });

  it("refuses a model too large for wasm memory with loadModel's reason", async () => {
    const f32 = await describeModel(LARGE, { hubUrl: hub.url });
    assert.equal(f32.parameters, 774030080); // GPT-2 large
    assert.equal(f32.fits, false);
    assert.match(f32.reason, /needs 2\.9\d GiB .*f16 storage halves the matrices/);
    assert.deepEqual(f32.missing, ['tokenizer.json']);
    const f16 = await describeModel(LARGE, { hubUrl: hub.url, dtype: 'f16' });
    assert.equal(f16.fits, true, f16.reason);
    assert.ok(f16.memoryBytes < f32.memoryBytes / 1.9);
  });

  it('names a bad config.json field as loading would', async () => {
    writeFileSync(join(largeFolder, 'config.json'), JSON.stringify({ model_type: 'gpt2' }));
    await assert.rejects(describeModel(LARGE, { hubUrl: hub.url }), {
      name: 'TypeError',
      parameter: 'config.json',
      message: /n_embd/,
    });
  });
});
