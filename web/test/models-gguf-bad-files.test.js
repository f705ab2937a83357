// Hostile GGUF files: each is refused with an error naming the file (or tensor) and the problem,
// in bounded time and memory (the header cases run in a worker stopped after a few seconds with
// a heap cap), and the loader stays usable: a good GGUF loads and runs after them all.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, test } from 'node:test';
import { loadModel, loadModelFiles } from '../src/models/index.js';
import { readGgufHeader } from '../src/models/files/gguf.js';
import { callBounded } from './support/bounded.mjs';
import {
  ggufString,
  parseForRewrite,
  rawHeader,
  u32,
  u64,
  writeGguf,
} from './support/gguf-writer.mjs';
import { rejectsWith } from './support/tiny-models.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const READER = new URL('../src/models/files/gguf.js', import.meta.url);
let good;
let model;

before(() => {
  const work = mkdtempSync(join(tmpdir(), 'attnlens-gguf-bad-'));
  execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/make_gguf.py'), work]);
  good = new Uint8Array(readFileSync(join(work, 'stories260K-q8_0.gguf')));
  model = parseForRewrite(good);
});

const load = (bytes) => loadModelFiles([new File([bytes], 'bad.gguf')]);
const edited = (edit, raw) => {
  const copy = structuredClone(model);
  edit(copy);
  return writeGguf(copy, raw);
};

// The reader in a worker (bounded time and heap): resolves the error it threw.
async function headerError(bytes) {
  const result = await callBounded(READER, 'readGgufHeader', [bytes, 'bad.gguf'], {
    ms: 5000,
    memoryMB: 256,
  });
  assert.equal(result.ok, false, 'the file was accepted');
  return result.error;
}

const HEADER_CASES = [
  ['not GGUF', new Uint8Array(64), 'invalid_argument', /no "GGUF" magic/],
  ['version 1', rawHeader({ version: 1 }), 'out_of_range', /version 1; versions 2 and 3/],
  ['2^40 tensors', rawHeader({ tensorCount: 2 ** 40 }), 'out_of_range', /tensor_count .* cap/],
  ['2^40 metadata keys', rawHeader({ keyCount: 2 ** 40 }), 'out_of_range', /metadata_kv.* cap/],
  [
    'a key of length 2^63',
    rawHeader({ keyCount: 1 }, [u64(2n ** 63n)]),
    'out_of_range',
    /more than any file holds/,
  ],
  [
    'a string value of length 2^63 - 1',
    rawHeader({ keyCount: 1 }, [ggufString('k'), u32(8), u64(2n ** 63n - 1n)]),
    'out_of_range',
    /more than any file holds/,
  ],
  [
    'a string past the end',
    rawHeader({ keyCount: 1 }, [ggufString('k'), u32(8), ggufString('abc', 1e6)]),
    'out_of_range',
    /runs past the end of the file/,
  ],
  [
    'an array of 2^50 uint32',
    rawHeader({ keyCount: 1 }, [ggufString('k'), u32(9), u32(4), u64(2 ** 50)]),
    'out_of_range',
    /runs past the end/,
  ],
  [
    'an array of 2^23 bytes (more elements than the metadata cap)',
    rawHeader({ keyCount: 1 }, [
      ggufString('k'),
      u32(9),
      u32(0),
      u64(2 ** 23),
      new Uint8Array(2 ** 23),
    ]),
    'out_of_range',
    /past the cap of 4194304 elements/,
  ],
  [
    'an array of arrays',
    rawHeader({ keyCount: 1 }, [ggufString('k'), u32(9), u32(9), u64(1)]),
    'invalid_argument',
    /array of arrays/,
  ],
  [
    'an unknown value type',
    rawHeader({ keyCount: 1 }, [ggufString('k'), u32(77)]),
    'invalid_argument',
    /unknown value type 77/,
  ],
  [
    'a tensor of 5 dimensions',
    rawHeader({ tensorCount: 1 }, [ggufString('t'), u32(5)]),
    'out_of_range',
    /5 dimensions/,
  ],
];

for (const [label, bytes, code, message] of HEADER_CASES) {
  test(`refused: ${label}`, async () => {
    const error = await headerError(bytes);
    assert.equal(error.code, code, error.message);
    assert.equal(error.parameter, 'bad.gguf', error.message);
    assert.match(error.message, message);
  });
}

test('refused: truncated files, at every kind of place', async () => {
  // The last tensor's data may be followed by padding, which a file may lack: cut into the data.
  const { tensors } = readGgufHeader(good, 'good.gguf');
  const dataEnd = Math.max(...tensors.map((t) => t.offset + t.byteLength));
  for (const length of [3, 10, 23, 100, 5000, good.length >> 1, dataEnd - 1]) {
    await assert.rejects(load(good.subarray(0, length)), (error) => {
      assert.ok(['out_of_range', 'invalid_argument'].includes(error.code), error.message);
      assert.equal(error.parameter, 'bad.gguf');
      return true;
    });
  }
});

test('refused: tensor offsets past the end, misaligned, overlapping; duplicate names', async () => {
  const name = 'blk.0.attn_q.weight';
  await rejectsWith(load(edited(() => {}, { offsets: { [name]: 2 ** 40 } })), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'bad.gguf',
    message: /blk\.0\.attn_q\.weight: its \d+ bytes at byte \d+ run past the end/,
  });
  await rejectsWith(load(edited(() => {}, { offsets: { [name]: 4 } })), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'bad.gguf',
    message: /offset 4 is not a multiple of the alignment 32/,
  });
  await rejectsWith(load(edited(() => {}, { offsets: { [name]: 0 } })), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'bad.gguf',
    message: /overlap/,
  });
  await rejectsWith(
    load(
      edited((m) => {
        m.tensors[3].name = m.tensors[2].name;
      }),
    ),
    { name: 'TypeError', code: 'invalid_argument', parameter: 'bad.gguf', message: /twice/ },
  );
  await rejectsWith(
    load(
      edited((m) => {
        m.metadata = m.metadata.map(([k, v]) => [k, k === 'general.alignment' ? 3 : v]);
      }),
    ),
    { name: 'RangeError', code: 'out_of_range', parameter: 'bad.gguf', message: /power of two/ },
  );
});

test('refused by name: unread types, other architectures, strange tensors', async () => {
  await rejectsWith(
    load(
      edited((m) => {
        m.tensors[0].typeId = 99;
      }),
    ),
    { name: 'TypeError', code: 'invalid_argument', parameter: 'bad.gguf', message: /type 99/ },
  );
  // Q4_1 has the same 32-value blocks: the file is whole, the type is not one attnlens reads.
  const q4_1 = edited((m) => {
    const t = m.tensors.find((x) => x.name === 'blk.0.attn_q.weight');
    t.typeId = 3;
    t.data = new Uint8Array((t.dims[0] * t.dims[1] * 20) / 32);
  });
  await rejectsWith(load(q4_1), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'bad.gguf',
    message:
      /attn_q\.weight is of type Q4_1; GGUF types read: F32, F16, Q4_0, Q8_0, Q4_K, Q5_K, Q6_K/,
  });
  const mamba = edited((m) => {
    m.metadata = m.metadata.map(([k, v]) => [k, k === 'general.architecture' ? 'mamba' : v]);
  });
  await rejectsWith(load(mamba), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'bad.gguf',
    message: /architecture 'mamba' is not supported \(supported: llama, qwen2, gpt2\)/,
  });
  const extra = edited((m) => {
    m.tensors.push({ ...m.tensors[1], name: 'blk.0.attn_sinks.weight' });
  });
  await rejectsWith(load(extra), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'bad.gguf',
    message: /'blk\.0\.attn_sinks\.weight' is not one a llama model has/,
  });
  const noTokens = edited((m) => {
    m.metadata = m.metadata.filter(([k]) => k !== 'tokenizer.ggml.tokens');
  });
  await rejectsWith(load(noTokens), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'bad.gguf',
    message: /tokenizer\.ggml\.tokens must be an array, got nothing/,
  });
});

test('refused: shapes that disagree with the metadata; the loader stays usable', async () => {
  // q_proj stored as [32, 128] instead of [64, 64]: the same bytes, the wrong shape.
  const wrong = edited((m) => {
    const t = m.tensors.find((x) => x.name === 'blk.0.attn_q.weight');
    t.dims = [128, 32];
  });
  await rejectsWith(loadModel([new File([wrong], 'bad.gguf')]), {
    name: 'RangeError',
    code: 'shape_mismatch',
    parameter: 'model.layers.0.self_attn.q_proj.weight',
  });
  const heads = edited((m) => {
    m.metadata = m.metadata.map(([k, v]) => [k, k === 'llama.attention.head_count' ? 0 : v]);
  });
  await rejectsWith(load(heads), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'bad.gguf',
    message: /llama\.attention\.head_count must be a positive integer, got 0/,
  });
  const fine = await loadModel([new File([good], 'good.gguf')]);
  assert.ok((await fine.run('Once upon a time')).tokens.length > 3);
  fine.dispose();
});
