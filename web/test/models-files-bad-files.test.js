// Every kind of bad model file, each with the error it gets: the class, the code, the file it
// names and what the message says. Files from outside are hostile until validated.

import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { zipSync } from 'fflate';
import { loadModelFiles } from '../src/models/files/index.js';
import { readSafetensors, writeSafetensors } from '../src/models/files/safetensors.js';
import { createTensorSet } from '../src/models/files/tensor-set.js';
import { readTorchZip } from '../src/models/files/torch-zip.js';
import { callBounded } from './support/bounded.mjs';
import { writeTinyModel } from './support/model-fixtures.mjs';
import { op, stateDictPickle, tensorOps, torchZip } from './support/torch-pickle.mjs';

const FILE = 'model.safetensors';
const good = writeSafetensors({
  a: { dtype: 'F32', shape: [2, 2], data: Float32Array.of(1, 2, 3, 4) },
  b: { dtype: 'F16', shape: [2], data: Uint16Array.of(0x3c00, 0x4000) },
});
// A safetensors file with the given header object (padded) and `dataLength` data bytes.
function withHeader(header, dataLength = 24, { rawHeader } = {}) {
  const json = new TextEncoder().encode(rawHeader ?? JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + dataLength);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  return out;
}
const tensor = (dtype, shape, data_offsets) => ({ dtype, shape, data_offsets });

// [what, bytes, class, code, message]
const BAD_SAFETENSORS = [
  ['an empty file', new Uint8Array(0), RangeError, 'out_of_range', /0 bytes, too short/],
  [
    'a file truncated inside the header',
    good.subarray(0, 20),
    RangeError,
    'out_of_range',
    /runs past the end of the file/,
  ],
  [
    'a file truncated inside the data',
    good.subarray(0, good.length - 3),
    RangeError,
    'out_of_range',
    /tensor 'b': data_offsets \[16, 20\] lie outside the data/,
  ],
  [
    'a header length past the end',
    (() => {
      const c = good.slice();
      new DataView(c.buffer).setBigUint64(0, 1000n, true);
      return c;
    })(),
    RangeError,
    'out_of_range',
    /header length 1000 runs past the end/,
  ],
  [
    'a huge header length',
    (() => {
      const c = good.slice();
      new DataView(c.buffer).setBigUint64(0, 1n << 60n, true);
      return c;
    })(),
    RangeError,
    'out_of_range',
    /exceeds the 100000000-byte limit/,
  ],
  [
    'offsets outside the file',
    withHeader({ a: tensor('F32', [2], [16, 24]) }, 16),
    RangeError,
    'out_of_range',
    /tensor 'a': data_offsets \[16, 24\] lie outside the data \(16 bytes/,
  ],
  [
    'overlapping tensors',
    withHeader({ a: tensor('F32', [4], [0, 16]), b: tensor('F32', [2], [8, 16]) }),
    RangeError,
    'out_of_range',
    /tensors 'a' \[0, 16\] and 'b' \[8, 16\] overlap/,
  ],
  [
    'a gap between tensors',
    withHeader({ a: tensor('F32', [2], [0, 8]), b: tensor('F32', [2], [12, 20]) }, 20),
    RangeError,
    'out_of_range',
    /bytes \[8, 12\) of the data belong to no tensor \(a gap before 'b'\)/,
  ],
  [
    'trailing bytes after the last tensor',
    withHeader({ a: tensor('F32', [2], [0, 8]) }, 12),
    RangeError,
    'out_of_range',
    /4 bytes after the last tensor belong to no tensor \(the data is 12 bytes, the tensors end/,
  ],
  [
    'an unknown dtype',
    withHeader({ a: tensor('F4', [2], [0, 1]) }),
    TypeError,
    'invalid_argument',
    /tensor 'a' has unknown dtype "F4"/,
  ],
  [
    'a shape that disagrees with the bytes',
    withHeader({ 'h.0.mlp.c_fc.weight': tensor('F32', [2, 3], [0, 16]) }),
    RangeError,
    'shape_mismatch',
    new RegExp(
      "tensor 'h\\.0\\.mlp\\.c_fc\\.weight': shape \\[2,3\\] of F32 needs 24 bytes, " +
        'data_offsets \\[0, 16\\] hold 16',
    ),
  ],
  [
    'a negative size',
    withHeader({ a: tensor('F32', [-1], [0, 0]) }),
    TypeError,
    'invalid_argument',
    /shape \[-1\]: not a list of sizes/,
  ],
  [
    'a fractional size',
    withHeader({ a: tensor('F32', [1.5], [0, 6]) }),
    TypeError,
    'invalid_argument',
    /not a list of sizes/,
  ],
  [
    'reversed offsets',
    withHeader({ a: tensor('F32', [1], [8, 4]) }),
    TypeError,
    'invalid_argument',
    /data_offsets \[8,4\]: not \[begin, end\]/,
  ],
  [
    'malformed JSON',
    withHeader(null, 0, { rawHeader: '{"a": {' }),
    TypeError,
    'invalid_argument',
    /the header is not valid JSON/,
  ],
  [
    'a header that is not an object',
    withHeader(null, 0, { rawHeader: '[1, 2]' }),
    TypeError,
    'invalid_argument',
    /not a JSON object/,
  ],
  [
    'a header that is not UTF-8',
    withHeader(null, 0, { rawHeader: '{"\udc00": 1}' }).map((b, i) => (i === 10 ? 0xff : b)),
    TypeError,
    'invalid_argument',
    /not valid UTF-8/,
  ],
  [
    'a tensor named twice',
    withHeader(null, 8, {
      rawHeader:
        '{"a": {"dtype":"F32","shape":[1],"data_offsets":[0,4]}, ' +
        '"a" : {"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
    }),
    TypeError,
    'invalid_argument',
    /tensor 'a' appears twice/,
  ],
  [
    'metadata that is not strings',
    withHeader({ __metadata__: { format: 1 } }),
    TypeError,
    'invalid_argument',
    /__metadata__\.format is not a string/,
  ],
];

describe('bad safetensors files', () => {
  for (const [what, bytes, ErrorClass, code, message] of BAD_SAFETENSORS) {
    it(what, () => {
      assert.throws(
        () => readSafetensors(bytes, FILE),
        (error) => {
          assert.ok(error instanceof ErrorClass, `${error.constructor.name}: ${error.message}`);
          assert.equal(error.code, code);
          assert.equal(error.parameter, FILE);
          assert.match(error.message, /^model\.safetensors: /);
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }
});

// [what, bytes, code, message]
const storage = Float32Array.of(1, 2, 3, 4);
const BAD_TORCH = [
  [
    'a pickle naming os.system',
    torchZip(stateDictPickle({ rebuild: ['os', 'system'] })),
    'invalid_argument',
    /^pytorch_model\.bin: pickle global 'os\.system' is not allowed$/,
  ],
  [
    'a pickle naming builtins.eval through STACK_GLOBAL',
    torchZip(
      Uint8Array.from([
        ...op.proto,
        ...op.unicode('builtins'),
        ...op.unicode('eval'),
        0x93,
        ...op.stop,
      ]),
    ),
    'invalid_argument',
    /pickle global 'builtins\.eval' is not allowed/,
  ],
  [
    'a pickle naming torch.load',
    torchZip(stateDictPickle({ storage: ['torch', 'load'] })),
    'invalid_argument',
    /pickle global 'torch\.load' is not allowed/,
  ],
  [
    'a pickle naming a tensor subclass rebuild',
    torchZip(stateDictPickle({ rebuild: ['torch._tensor', '_rebuild_from_type_v2'] })),
    'invalid_argument',
    /pickle global 'torch\._tensor\._rebuild_from_type_v2' is not allowed/,
  ],
  [
    'a pickle with the INST opcode',
    torchZip(
      Uint8Array.from([...op.proto, 0x69, ...new TextEncoder().encode('os\nsystem\n'), ...op.stop]),
    ),
    'invalid_argument',
    /opcode 0x69 \('INST'\) at byte 2 is not allowed/,
  ],
  [
    'a pickle with NEWOBJ',
    torchZip(
      Uint8Array.from([
        ...op.proto,
        ...op.global('collections', 'OrderedDict'),
        ...op.emptyTuple,
        0x81,
        ...op.stop,
      ]),
    ),
    'invalid_argument',
    /'NEWOBJ'/,
  ],
  [
    'a truncated pickle',
    torchZip(stateDictPickle().subarray(0, 60)),
    'invalid_argument',
    /pickle: truncated at byte/,
  ],
  [
    'a persistent id of another kind',
    torchZip(
      Uint8Array.from([
        ...op.proto,
        ...op.mark,
        ...op.unicode('module'),
        ...op.tuple,
        ...op.persid,
        ...op.stop,
      ]),
    ),
    'invalid_argument',
    /a persistent id is not \('storage'/,
  ],
  [
    'a tensor reaching past its storage',
    torchZip(stateDictPickle({ shape: [3], strides: [2] })),
    'out_of_range',
    /tensor 'w' \(shape \[3\], strides \[2\], offset 0\) reaches past its storage of 4 elements/,
  ],
  [
    'a storage shorter than it says',
    torchZip(stateDictPickle({ numel: 8 })),
    'shape_mismatch',
    /storage 0: 8 elements of F32 need 32 bytes, its entry has 16/,
  ],
  [
    'a storage entry that is missing',
    zipSync({ 'archive/data.pkl': stateDictPickle() }, { level: 0 }),
    'not_found',
    /storage 0 has no entry archive\/data\/0/,
  ],
  [
    'a zip without data.pkl',
    zipSync({ 'archive/data/0': new Uint8Array(16) }, { level: 0 }),
    'invalid_argument',
    /expected one <archive>\/data\.pkl/,
  ],
  [
    'not a zip at all',
    new TextEncoder().encode('hello, this is not a checkpoint at all.'),
    'invalid_argument',
    /no end-of-central-directory record/,
  ],
  [
    'a legacy pickle checkpoint',
    Uint8Array.from([0x80, 0x02, 0x8a, 0x0a]),
    'invalid_argument',
    /legacy \(torch < 1\.6\) pickle checkpoint/,
  ],
  [
    'big-endian storages',
    torchZip(undefined, storage, { 'archive/byteorder': new TextEncoder().encode('big') }),
    'invalid_argument',
    /stores big-endian data/,
  ],
];

// Zips with one broken entry: each edit is applied to a valid checkpoint.
function editedZip(edit) {
  const bytes = torchZip(stateDictPickle(), storage);
  const view = new DataView(bytes.buffer);
  // The first central directory entry is archive/data.pkl's (fflate writes entries in order).
  let first = -1;
  for (let i = 0; i + 4 <= bytes.length; i++) {
    if (view.getUint32(i, true) === 0x02014b50) {
      first = i;
      break;
    }
  }
  edit(view, { first, bytes });
  return bytes;
}
const BAD_ZIPS = [
  [
    'an entry with a bad local header',
    editedZip((v, { first }) => v.setUint32(v.getUint32(first + 42, true), 0x12345678, true)),
    'invalid_argument',
    /entry 'archive\/data\.pkl' has no local header/,
  ],
  [
    'an entry whose data runs past the end',
    editedZip((v, { first }) => {
      v.setUint32(first + 20, 1e6, true);
      v.setUint32(first + 24, 1e6, true);
    }),
    'out_of_range',
    /zip: the data of 'archive\/data\.pkl' lies outside the file/,
  ],
  [
    'an entry compressed with bzip2',
    editedZip((v, { first }) => v.setUint16(first + 10, 12, true)),
    'invalid_argument',
    /entry 'archive\/data\.pkl' uses compression method 12/,
  ],
  [
    'an encrypted entry',
    editedZip((v, { first }) => v.setUint16(first + 8, 1, true)),
    'invalid_argument',
    /entry 'archive\/data\.pkl' is encrypted/,
  ],
  [
    'a local header with another name',
    editedZip((v, { first }) => v.setUint8(v.getUint32(first + 42, true) + 30, 0x41)),
    'invalid_argument',
    /has another name in its local header/,
  ],
  [
    'a central directory outside the file',
    editedZip((v, { bytes }) => v.setUint32(bytes.length - 6, 1e7, true)),
    'out_of_range',
    /the central directory lies outside the file/,
  ],
  [
    'a local header offset outside the file',
    editedZip((v, { first }) => v.setUint32(first + 42, 1e7, true)),
    'out_of_range',
    /the local header of 'archive\/data\.pkl' lies outside the file/,
  ],
];

describe('bad pytorch_model.bin files', () => {
  for (const [what, bytes, code, message] of [...BAD_TORCH, ...BAD_ZIPS]) {
    it(what, () => {
      assert.throws(
        () => readTorchZip(bytes, 'pytorch_model.bin'),
        (error) => {
          assert.ok(
            error instanceof Error && error.code === code,
            `${error.code}: ${error.message}`,
          );
          assert.equal(error.parameter, 'pytorch_model.bin');
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }

  it('the hand-made checkpoint itself is valid', () => {
    const set = createTensorSet(readTorchZip(torchZip(), 'pytorch_model.bin'));
    assert.deepEqual(set.readFloat32('w'), storage);
  });
});

describe('bad model folders and sources', () => {
  const root = mkdtempSync(join(tmpdir(), 'attnlens-bad-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const folder = (name, files) => {
    const dir = join(root, name);
    mkdirSync(dir);
    for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), content);
    return dir;
  };
  const config = '{"model_type":"gpt2"}';
  const tokenizer = '{"model":{}}';

  it('a missing file is an error naming it', async () => {
    await assert.rejects(
      loadModelFiles(folder('no-tokenizer', { 'config.json': config, [FILE]: good })),
      {
        code: 'not_found',
        parameter: 'tokenizer.json',
        message: /^tokenizer\.json: is missing from file:\/\/.*no-tokenizer$/,
      },
    );
    await assert.rejects(
      loadModelFiles(folder('no-config', { 'tokenizer.json': tokenizer, [FILE]: good })),
      {
        code: 'not_found',
        parameter: 'config.json',
      },
    );
    await assert.rejects(
      loadModelFiles(folder('no-weights', { 'config.json': config, 'tokenizer.json': tokenizer })),
      {
        code: 'not_found',
        message: new RegExp(
          'no weights in .*: expected one of model\\.safetensors, ' +
            'model\\.safetensors\\.index\\.json, pytorch_model\\.bin, ' +
            'pytorch_model\\.bin\\.index\\.json',
        ),
      },
    );
    await assert.rejects(loadModelFiles(join(root, 'nowhere')), {
      code: 'not_found',
      message: /no model folder at/,
    });
    await assert.rejects(
      loadModelFiles(
        folder('no-shard', {
          'config.json': config,
          'tokenizer.json': tokenizer,
          'model.safetensors.index.json': '{"weight_map":{"a":"model-1.safetensors"}}',
        }),
      ),
      { code: 'not_found', parameter: 'model-1.safetensors' },
    );
  });

  it('malformed JSON files name the file', async () => {
    await assert.rejects(
      loadModelFiles(
        folder('bad-config', {
          'config.json': '{"model_type":',
          'tokenizer.json': tokenizer,
          [FILE]: good,
        }),
      ),
      {
        name: 'TypeError',
        parameter: 'config.json',
        message: /config\.json: is not valid JSON/,
      },
    );
    await assert.rejects(
      loadModelFiles(
        folder('array-config', { 'config.json': '[]', 'tokenizer.json': tokenizer, [FILE]: good }),
      ),
      {
        parameter: 'config.json',
        message: /must hold a JSON object, got an array/,
      },
    );
    await assert.rejects(
      loadModelFiles(
        folder('bad-tokenizer', { 'config.json': config, 'tokenizer.json': 'nul', [FILE]: good }),
      ),
      {
        parameter: 'tokenizer.json',
      },
    );
    await assert.rejects(
      loadModelFiles(
        folder('bad-weights', {
          'config.json': config,
          'tokenizer.json': tokenizer,
          [FILE]: good.subarray(0, 30),
        }),
      ),
      {
        parameter: FILE,
        code: 'out_of_range',
      },
    );
  });

  it('picked files with two of one name, and sources of the wrong kind', async () => {
    const files = [new File([config], 'config.json'), new File([config], 'config.json')];
    await assert.rejects(loadModelFiles(files), {
      parameter: 'source',
      message: /two files are named config\.json/,
    });
    await assert.rejects(loadModelFiles(42), { name: 'TypeError', parameter: 'source' });
    await assert.rejects(loadModelFiles('owner/../name'), {
      name: 'TypeError',
      parameter: 'source',
      message: /may not contain '\.\.'/,
    });
    await assert.rejects(loadModelFiles('gpt2', { signal: 'stop' }), { parameter: 'signal' });
  });

  it('picked File objects load like a folder', async () => {
    const files = await loadModelFiles([
      new File([config], 'config.json'),
      new File([tokenizer], 'tokenizer.json'),
      new File([good], FILE),
    ]);
    assert.deepEqual(files.source, { kind: 'files', fromCache: false });
    assert.deepEqual(files.tensors.readFloat32('b'), Float32Array.of(1, 2));
  });
});

// Pickles that cost the reader work or memory far beyond their size, and zips that would inflate
// far beyond theirs: each ends quickly (in a worker stopped after a few seconds) with a named
// error or a usable checkpoint, never a hang, a stack overflow or gigabytes of memory.
describe('hostile pickles and zips', () => {
  const READER = new URL('../src/models/files/torch-zip.js', import.meta.url);
  const u32 = (n) => [...new Uint8Array(Uint32Array.of(n).buffer)];
  const put = (k) => [0x72, ...u32(k)]; // LONG_BINPUT
  const get = (k) => [0x6a, ...u32(k)]; // LONG_BINGET
  const emptyDict = [0x7d];
  const pop = [0x30];
  // d_0 = {w: tensor}; d_k = {a: d_{k-1}, b: d_{k-1}}: 2^K paths through K + 1 dicts.
  const sharedDicts = (K) =>
    Uint8Array.from([
      ...op.proto,
      ...emptyDict,
      ...op.mark,
      ...op.unicode('w'),
      ...tensorOps(),
      ...op.setitems,
      ...put(0),
      ...pop,
      ...Array.from({ length: K }, (_, k) => [
        ...emptyDict,
        ...op.mark,
        ...op.unicode('a'),
        ...get(k),
        ...op.unicode('b'),
        ...get(k),
        ...op.setitems,
        ...put(k + 1),
        ...pop,
      ]).flat(),
      ...get(K),
      ...op.stop,
    ]);

  it('dicts shared through the memo are walked once (2^40 paths)', async () => {
    const result = await callBounded(READER, 'readTorchZip', [torchZip(sharedDicts(40))], {
      ms: 5000,
    });
    assert.ok(result.ok, JSON.stringify(result.error));
    assert.equal(result.value.length, 1, 'the one tensor, once');
    assert.equal(result.value[0].name, `${'a.'.repeat(40)}w`);
  });

  it('a dict that holds itself, and dicts nested 200,000 deep', async () => {
    // d = {}; d['self'] = d; d['w'] = tensor
    const selfish = Uint8Array.from([
      ...op.proto,
      ...emptyDict,
      ...put(0),
      ...op.mark,
      ...op.unicode('self'),
      ...get(0),
      ...op.unicode('w'),
      ...tensorOps(),
      ...op.setitems,
      ...op.stop,
    ]);
    const set = createTensorSet(readTorchZip(torchZip(selfish), 'pytorch_model.bin'));
    assert.deepEqual(set.names, ['w']);
    assert.deepEqual(set.readFloat32('w'), storage);
    // {'a': {'a': ... {}}}: EMPTY_DICT, then per level 'a', EMPTY_DICT ... SETITEM from inside out.
    const depth = 200000;
    const nested = new Uint8Array(2 + 1 + depth * 4 + depth + 1);
    let at = 0;
    nested.set(op.proto, at);
    at += 2;
    nested[at++] = 0x7d;
    for (let i = 0; i < depth; i++) {
      nested.set([0x8c, 1, 0x61, 0x7d], at); // 'a', EMPTY_DICT
      at += 4;
    }
    for (let i = 0; i < depth; i++) nested[at++] = 0x73; // SETITEM
    nested[at++] = 0x2e;
    const result = await callBounded(READER, 'readTorchZip', [torchZip(nested.subarray(0, at))], {
      ms: 5000,
    });
    assert.equal(result.ok, false);
    assert.equal(result.error.name, 'TypeError');
    assert.equal(result.error.code, 'invalid_argument');
    assert.equal(result.error.parameter, 'pytorch_model.bin');
    assert.match(result.error.message, /dicts nested more than 64 deep .*not a state dict/);
    // The reader is a function of its input: the next file reads as ever.
    assert.deepEqual(createTensorSet(readTorchZip(torchZip())).readFloat32('w'), storage);
  });

  // A checkpoint whose storage '0' is the tensor's, plus storages `extra` ({ key: bytes }) that
  // the pickle names (in a second tensor of each, not a weight) and the zip deflates. `claim`:
  // the size each extra storage claims (in the pickle and the zip directory), its bytes left as
  // they are, as a zip bomb would have them.
  function withDeflatedStorages(extra, { tensorShape = (n) => [n], claim } = {}) {
    const pickle = [...op.proto, ...emptyDict, ...op.mark, ...op.unicode('w'), ...tensorOps()];
    for (const [key, bytes] of Object.entries(extra)) {
      const numel = (claim ?? bytes.length) / 4;
      const shape = tensorShape(numel);
      pickle.push(...op.unicode(`unused.${key}`), ...tensorOps({ key, numel, shape }));
    }
    pickle.push(...op.setitems, ...op.stop);
    const files = {
      'archive/data.pkl': Uint8Array.from(pickle),
      'archive/data/0': new Uint8Array(storage.buffer),
    };
    for (const [key, bytes] of Object.entries(extra)) {
      files[`archive/data/${key}`] = [bytes, { level: 1 }];
    }
    const zip = zipSync(files, { level: 0 });
    const view = new DataView(zip.buffer);
    for (let i = 0; claim && i + 46 <= zip.length; i++) {
      if (view.getUint32(i, true) !== 0x02014b50) continue;
      const name = zip.subarray(i + 46, i + 46 + view.getUint16(i + 28, true));
      if (!/data\/0$|pkl$/.test(new TextDecoder().decode(name)))
        view.setUint32(i + 24, claim, true);
    }
    return zip;
  }

  it('a zip bomb of storages no weight reads is never inflated', async () => {
    // Four deflated storages of 1 GiB each (just under the ratio cap), in tensors that are not
    // weights: inflating them would take 4 GiB; the weight reads at once.
    const bomb = Object.fromEntries([1, 2, 3, 4].map((key) => [key, new Uint8Array(1 << 20)]));
    const zip = withDeflatedStorages(bomb, { claim: 2 ** 30 - 4, tensorShape: () => [4] });
    const result = await callBounded(
      new URL('./support/read-tensor.mjs', import.meta.url),
      'readTensor',
      [zip, 'w'],
      { ms: 5000, memoryMB: 256 },
    );
    assert.ok(result.ok, JSON.stringify(result.error));
    assert.deepEqual(result.value, [...storage]);
    const set = createTensorSet(readTorchZip(zip));
    assert.throws(() => set.readFloat32('unused.1'), {
      code: 'out_of_range',
      parameter: 'pytorch_model.bin',
      message: /storage 1 would inflate to 1073741820 bytes, but its tensors use only 16/,
    });
  });

  it('a deflated storage larger than its tensors need is refused before inflating', () => {
    const zip = withDeflatedStorages({ 1: new Uint8Array(1 << 20) }, { tensorShape: () => [4] });
    const set = createTensorSet(readTorchZip(zip));
    assert.deepEqual(set.readFloat32('w'), storage, 'the stored tensor reads');
    assert.throws(() => set.readFloat32('unused.1'), {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'pytorch_model.bin',
      message: /storage 1 would inflate to 1048576 bytes, but its tensors use only 16/,
    });
    assert.deepEqual(set.readFloat32('w'), storage, 'and the set stays usable');
    // Used in full, the deflated storage inflates, CRC-checked.
    const whole = createTensorSet(readTorchZip(withDeflatedStorages({ 1: new Uint8Array(64) })));
    assert.deepEqual(whole.readFloat32('unused.1'), new Float32Array(16));
  });

  it('a storage whose bytes do not match the CRC-32 is refused when read', () => {
    const zip = torchZip();
    // The stored floats 1, 2, 3, 4: change the last one.
    const at = zip.findIndex((_, i) => new DataView(zip.buffer).getFloat32(i, true) === 4);
    new DataView(zip.buffer).setFloat32(at, 5, true);
    const set = createTensorSet(readTorchZip(zip));
    assert.throws(() => set.readFloat32('w'), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'pytorch_model.bin',
      message:
        /zip: entry 'archive\/data\/0' is corrupt \(CRC-32 0x[0-9a-f]{8}, the directory says/,
    });
  });
});

describe('hostile indexes and values', () => {
  const root = mkdtempSync(join(tmpdir(), 'attnlens-hostile-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('a shard index naming 200,000 shards is read in linear time', async () => {
    const dir = join(root, 'many-shards');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{"model_type":"gpt2"}');
    writeFileSync(join(dir, 'tokenizer.json'), '{"model":{}}');
    const weightMap = {};
    for (let i = 0; i < 200000; i++) weightMap[`t${i}`] = `model-${i}.safetensors`;
    writeFileSync(
      join(dir, 'model.safetensors.index.json'),
      JSON.stringify({ weight_map: weightMap }),
    );
    const result = await callBounded(
      new URL('../src/models/files/index.js', import.meta.url),
      'loadModelFiles',
      [dir],
      { ms: 8000 },
    );
    assert.equal(result.ok, false);
    assert.equal(result.error.code, 'not_found');
    assert.equal(result.error.parameter, 'model-0.safetensors');
    assert.match(result.error.message, /^model-0\.safetensors: is missing from file:/);
  });

  it('an F64 weight beyond float32 says the checkpoint is broken', () => {
    const file = writeSafetensors({
      w: { dtype: 'F64', shape: [3], data: Float64Array.of(1, 1e300, 2) },
    });
    const set = createTensorSet(readSafetensors(file, FILE).entries);
    assert.throws(() => set.readFloat32('w'), {
      name: 'RangeError',
      code: 'out_of_range',
      parameter: 'w',
      message:
        'w: element 1 (1e+300) does not fit in float32 (at most 3.4e38), the widest type the ' +
        'model computes in: the weight is out of range, the checkpoint is broken',
    });
    assert.throws(() => set.readFloat16('w'), { message: /load the model with dtype 'f32'/ });
  });

  it('GPT-Neo attention_types describing millions of layers', async () => {
    const { gptNeo } = await import('../src/models/architectures/gpt-neo.js');
    const config = {
      hidden_size: 8,
      num_heads: 2,
      num_layers: 2,
      attention_types: Array.from({ length: 1000 }, () => [['global', 'local'], 4096]),
    };
    assert.throws(() => gptNeo.coreConfig(config), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'config.json',
      message: /attention_types describes more than 4096 layers/,
    });
  });
});

describe('a Hugging Face cache snapshot as a folder', () => {
  const root = mkdtempSync(join(tmpdir(), 'attnlens-hf-cache-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  // ~/.cache/huggingface/hub/models--org--tiny/{blobs/SHA, snapshots/REV/FILE -> ../../blobs/SHA}
  function cache(name, { outside = {} } = {}) {
    const source = join(root, `${name}-files`);
    const weights = writeTinyModel(source);
    const repository = join(root, name, 'hub', 'models--org--tiny');
    const snapshot = join(repository, 'snapshots', 'abc123');
    mkdirSync(join(repository, 'blobs'), { recursive: true });
    mkdirSync(snapshot, { recursive: true });
    mkdirSync(join(repository, 'refs'));
    writeFileSync(join(repository, 'refs', 'main'), 'abc123');
    for (const file of readdirSync(source)) {
      const blob = `sha-${file.replace(/\W/g, '')}`;
      renameSync(join(source, file), join(repository, 'blobs', blob));
      symlinkSync(outside[file] ?? join('..', '..', 'blobs', blob), join(snapshot, file));
    }
    return { snapshot, weights };
  }

  it('loads through its links into blobs/', async () => {
    const { snapshot, weights } = cache('good');
    const files = await loadModelFiles(snapshot);
    assert.equal(files.source.kind, 'folder');
    assert.deepEqual(files.tensors.readFloat32('wte.weight'), weights['wte.weight'].data);
    assert.equal(files.config.model_type, 'gpt2');
  });

  it('a link that leaves the cache is refused when read, naming the file', async () => {
    const secret = join(root, 'secret.json');
    writeFileSync(secret, '{"model":{}}');
    const { snapshot } = cache('escape', { outside: { 'tokenizer.json': secret } });
    await assert.rejects(loadModelFiles(snapshot), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'tokenizer.json',
      message: /^tokenizer\.json: is a link to .*secret\.json, outside the model folder and its /,
    });
    // A plain folder's links stay inside the folder.
    const plain = join(root, 'plain');
    writeTinyModel(plain);
    renameSync(join(plain, 'config.json'), join(root, 'config.json'));
    symlinkSync(join(root, 'config.json'), join(plain, 'config.json'));
    await assert.rejects(loadModelFiles(plain), {
      code: 'invalid_argument',
      parameter: 'config.json',
      message: /is a link to .*config\.json, outside the model folder$/,
    });
    // Loading goes on as before.
    assert.equal((await loadModelFiles(cache('after').snapshot)).config.model_type, 'gpt2');
  });
});
