// Loading through the Hub code path from Node, against the local server with the Hub's layout
// (test/support/hub-server.mjs): ids and revisions (refs/pr/N encoded as one segment), sizes
// known before the first byte from the listing (paged) or HEAD, folder URLs, cancellation that
// stops the download, and the errors a broken server or a bad id gets.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  hubFileUrl,
  loadModelFiles,
  validateHubId,
  validateRevision,
} from '../src/models/files/index.js';
import { startHubServer } from './support/hub-server.mjs';
import { writeTinyModel } from './support/model-fixtures.mjs';

const root = mkdtempSync(join(tmpdir(), 'attnlens-hub-'));
const weights = writeTinyModel(join(root, 'attnlens', 'tiny-gpt2', 'main'), { hidden: 64 });
const prWeights = writeTinyModel(
  join(root, 'attnlens', 'tiny-gpt2', encodeURIComponent('refs/pr/1')),
  { seed: 9 },
);
writeTinyModel(join(root, 'gpt2', 'v1.0'), { seed: 3 });
let hub;
before(async () => (hub = await startHubServer({ root, pageSize: 2 })));
after(async () => {
  await hub.close();
  rmSync(root, { recursive: true, force: true });
});

describe('Hub ids and revisions', () => {
  it('builds resolve URLs with the revision as one encoded segment', () => {
    assert.equal(
      hubFileUrl('roneneldan/TinyStories-1M', 'refs/pr/1', 'config.json'),
      'https://huggingface.co/roneneldan/TinyStories-1M/resolve/refs%2Fpr%2F1/config.json',
    );
    assert.equal(
      hubFileUrl('gpt2', 'main', 'model.safetensors', 'http://h/'),
      'http://h/gpt2/resolve/main/model.safetensors',
    );
  });

  it('accepts real ids and revisions', () => {
    for (const id of [
      'gpt2',
      'distilgpt2',
      'roneneldan/TinyStories-1M',
      'bert-base-uncased',
      'prajjwal1/bert-tiny',
      'a_b.c/d-e.f',
    ]) {
      assert.equal(validateHubId(id), id);
    }
    for (const revision of [
      'main',
      'v1.0',
      'refs/pr/12',
      '6c0e6080953db56375760c0471a8c5f2929baf11',
      'feature/x_y',
    ]) {
      assert.equal(validateRevision(revision), revision);
    }
  });

  it('refuses ids and revisions that could leave their path', () => {
    for (const id of [
      '..',
      'a/..',
      '../etc',
      'a/b/c',
      'a..b',
      '/gpt2',
      'gpt2/',
      'a b',
      'a--b',
      '-a',
      'a.',
      'x'.repeat(97),
      '',
      'ünï',
    ]) {
      assert.throws(
        () => validateHubId(id),
        { name: 'TypeError', code: 'invalid_argument', parameter: 'source' },
        id,
      );
    }
    for (const revision of [
      '..',
      'a/../b',
      '/main',
      'main/',
      'a//b',
      'a b',
      'a\\b',
      'x:y',
      'a?b',
      'a%2Fb',
      '.hidden',
      'a/.b',
      'x.lock',
      '@{1}',
      '',
    ]) {
      assert.throws(
        () => validateRevision(revision),
        { name: 'TypeError', parameter: 'revision' },
        revision,
      );
    }
  });
});

describe('loading from a Hub-layout server', () => {
  it('loads an id with sizes from the (paged) listing and progress against the total', async () => {
    const events = [];
    hub.requests.length = 0;
    const files = await loadModelFiles('attnlens/tiny-gpt2', {
      hubUrl: hub.url,
      onProgress: (e) => events.push(e),
    });
    assert.deepEqual(files.source, {
      kind: 'hub',
      id: 'attnlens/tiny-gpt2',
      revision: 'main',
      fromCache: false,
    });
    assert.deepEqual(files.tensors.readFloat32('wte.weight'), weights['wte.weight'].data);
    assert.ok(
      hub.requests.some((r) => r.includes('/api/models/attnlens/tiny-gpt2/tree/main?cursor=2')),
      'followed the Link header',
    );
    assert.ok(!hub.requests.some((r) => r.startsWith('HEAD')), 'the listing gave every size');
    const total = events[0].totalBytes;
    assert.ok(total > 0 && events.every((e) => e.totalBytes === total));
    assert.equal(events.at(-1).totalLoaded, total);
    const weightEvents = events.filter((e) => e.file === 'model.safetensors');
    assert.ok(weightEvents.length > 2, 'the weights stream in chunks');
    assert.ok(weightEvents.every((e) => e.total === files.bytes));
    for (let i = 1; i < events.length; i++)
      assert.ok(events[i].totalLoaded >= events[i - 1].totalLoaded);
  });

  it('loads refs/pr/1 and a tag', async () => {
    hub.requests.length = 0;
    const pr = await loadModelFiles('attnlens/tiny-gpt2', {
      hubUrl: hub.url,
      revision: 'refs/pr/1',
    });
    assert.deepEqual(pr.tensors.readFloat32('wpe.weight'), prWeights['wpe.weight'].data);
    assert.ok(hub.requests.includes('GET /attnlens/tiny-gpt2/resolve/refs%2Fpr%2F1/config.json'));
    const tagged = await loadModelFiles('gpt2', { hubUrl: hub.url, revision: 'v1.0' });
    assert.equal(tagged.source.revision, 'v1.0');
  });

  it('uses HEAD for sizes where the server has no listing, and loads folder URLs', async () => {
    const mirror = await startHubServer({ root, listing: false });
    try {
      const events = [];
      const files = await loadModelFiles('attnlens/tiny-gpt2', {
        hubUrl: mirror.url,
        onProgress: (e) => events.push(e),
      });
      assert.ok(
        mirror.requests.some(
          (r) => r === 'HEAD /attnlens/tiny-gpt2/resolve/main/model.safetensors',
        ),
      );
      assert.equal(
        events[0].totalBytes,
        events.at(-1).totalLoaded,
        'HEAD sizes (X-Linked-Size) make the total',
      );
      assert.equal(files.tensors.names.length, 3);
      const byUrl = await loadModelFiles(`${mirror.url}/attnlens/tiny-gpt2/resolve/main`);
      assert.equal(byUrl.source.kind, 'url');
      assert.deepEqual(byUrl.tensors.readFloat32('ln_f.weight'), weights['ln_f.weight'].data);
    } finally {
      await mirror.close();
    }
  });

  it('cancels a download with an AbortError and the server sees it stop', async () => {
    const slow = await startHubServer({ root, chunkDelayMs: 20 });
    try {
      const controller = new AbortController();
      const load = loadModelFiles('attnlens/tiny-gpt2', {
        hubUrl: slow.url,
        signal: controller.signal,
        onProgress: ({ file, loaded }) =>
          file === 'model.safetensors' && loaded > 0 && controller.abort(),
      });
      await assert.rejects(load, { name: 'AbortError' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(slow.aborted, ['model.safetensors']);
      const early = new AbortController();
      early.abort(new Error('user left'));
      await assert.rejects(
        loadModelFiles('gpt2', { hubUrl: slow.url, signal: early.signal }),
        (error) => error.name === 'AbortError' && error.cause.message === 'user left',
      );
    } finally {
      await slow.close();
    }
  });

  it('names the model, revision or file the server does not have', async () => {
    // `reason` says it for a page's own words: the Hub's 401 for a missing or private repo.
    await assert.rejects(loadModelFiles('attnlens/nothing', { hubUrl: hub.url }), {
      code: 'not_found',
      reason: 'denied',
      status: 401,
      message: /model 'attnlens\/nothing' is not on the Hub/,
    });
    await assert.rejects(loadModelFiles('gpt2', { hubUrl: hub.url }), {
      code: 'not_found',
      reason: 'not_found',
      parameter: 'revision',
      message: /no revision 'main'/,
    });
    await assert.rejects(loadModelFiles('gpt2', { hubUrl: hub.url, revision: '../main' }), {
      name: 'TypeError',
      parameter: 'revision',
    });
    await assert.rejects(loadModelFiles('attnlens/../gpt2', { hubUrl: hub.url }), {
      name: 'TypeError',
      parameter: 'source',
    });
    await assert.rejects(loadModelFiles('gpt2', { hubUrl: 'ftp://x' }), { parameter: 'hubUrl' });
    await assert.rejects(loadModelFiles('gpt2', { revison: 'main' }), {
      parameter: 'options',
      message: /unknown option 'revison'/,
    });
    await assert.rejects(loadModelFiles(`${hub.url}/nope/resolve/main`), {
      code: 'http_error',
      reason: 'denied',
      status: 401,
    });
    const dead = await startHubServer({ root });
    await dead.close();
    await assert.rejects(loadModelFiles('gpt2', { hubUrl: dead.url, revision: 'v1.0' }), {
      code: 'network',
      reason: 'unreachable',
      message: /could not fetch http:\/\/127\.0\.0\.1:\d+\/api\/models\/gpt2\/tree\/v1\.0/,
    });
  });

  it('refuses a download that ends short of its size', async () => {
    const broken = await startHubServer({ root, truncate: { 'model.safetensors': 1000 } });
    try {
      await assert.rejects(
        loadModelFiles('attnlens/tiny-gpt2', { hubUrl: broken.url }),
        (error) =>
          error.code === 'network' &&
          error.reason === 'interrupted' &&
          /model\.safetensors/.test(error.message),
      );
    } finally {
      await broken.close();
    }
  });
});
