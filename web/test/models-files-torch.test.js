// PyTorch checkpoints (pytorch_model.bin) made by real torch.save (torch 1.13, Debian's
// python3-torch) at test time: the zip and the restricted unpickler rebuild every tensor exactly,
// views and shared storages included; a deflated re-zip reads through fflate; and a pickle that
// names any other global (os.system through __reduce__) is refused without running anything.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadModelFiles } from '../src/models/files/index.js';
import { createTensorSet } from '../src/models/files/tensor-set.js';
import { readTorchZip } from '../src/models/files/torch-zip.js';
import { stateDictPickle, torchZip } from './support/torch-pickle.mjs';

const dir = mkdtempSync(join(tmpdir(), 'attnlens-torch-'));
const marker = join(dir, 'pwned');
after(() => rmSync(dir, { recursive: true, force: true }));

// Writes the checkpoints and, for each, every tensor's values (row-major, as float) in JSON.
const MAKE_CHECKPOINTS = String.raw`
import collections, json, os, sys, zipfile, torch
out, marker = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
expected = {}

def save(name, state):
    torch.save(state, os.path.join(out, name))
    expected[name] = {k: {"shape": list(v.shape), "dtype": str(v.dtype),
                          "values": v.detach().double().flatten().tolist()}
                      for k, v in state.items() if torch.is_tensor(v) and v.is_floating_point()}

base = torch.randn(4, 6)
views = collections.OrderedDict()
views["w"] = base
views["w_t"] = base.t()                 # non-contiguous: strides (1, 6)
views["w_slice"] = base[1:, 2:5]        # storage offset 8, strides (6, 1)
views["w_col"] = base[:, 3]             # stride 6
views["w_tied"] = base                  # the same tensor twice
views["half"] = torch.randn(5).half()
views["half_view"] = views["half"][1:4]
views["bf16"] = torch.randn(3, 2).bfloat16().t()
views["f64"] = torch.randn(2, 2, dtype=torch.float64)
views["scalar"] = torch.tensor(2.5)
views["empty"] = torch.zeros(0, 3)
views["ids"] = torch.arange(3)
save("views.bin", views)

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(7, 4)
        self.ln = torch.nn.LayerNorm(4)
        self.lm_head = torch.nn.Linear(4, 7, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as GPT-2's LM head
        self.register_buffer("bias", torch.tril(torch.ones(3, 3)).view(1, 1, 3, 3))
save("module.bin", Tiny().state_dict())       # an OrderedDict carrying _metadata

with zipfile.ZipFile(os.path.join(out, "module.bin")) as src, \
     zipfile.ZipFile(os.path.join(out, "deflated.bin"), "w", zipfile.ZIP_DEFLATED) as dst:
    for item in src.infolist():
        dst.writestr(item.filename, src.read(item.filename))
expected["deflated.bin"] = expected["module.bin"]

class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + marker,))
torch.save({"weight": torch.ones(1), "payload": Evil()}, os.path.join(out, "evil.bin"))
json.dump(expected, open(os.path.join(out, "expected.json"), "w"))
`;

let expected;
before(() => {
  execFileSync('/usr/bin/python3', ['-c', MAKE_CHECKPOINTS, dir, marker]);
  expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));
});
const open = (name) =>
  createTensorSet(readTorchZip(new Uint8Array(readFileSync(join(dir, name))), name));

function checkAll(name) {
  const set = open(name);
  for (const [tensor, { shape, values }] of Object.entries(expected[name])) {
    assert.deepEqual(set.info(tensor).shape, shape, `${name} ${tensor} shape`);
    assert.deepEqual(
      Array.from(set.readFloat32(tensor)),
      values.map(Math.fround),
      `${name} ${tensor}`,
    );
  }
  return set;
}

describe('pytorch_model.bin from torch.save', () => {
  it('rebuilds views, offsets, shared storages and every float dtype', () => {
    const set = checkAll('views.bin');
    assert.deepEqual(set.info('half').dtype, 'F16');
    assert.deepEqual(set.info('bf16').dtype, 'BF16');
    assert.deepEqual(set.info('f64').dtype, 'F64');
    assert.deepEqual(set.info('ids'), { name: 'ids', dtype: 'I64', shape: [3], byteLength: 24 });
    assert.deepEqual(set.info('scalar').shape, []);
    // Halves read as half bits unchanged, from a view with an offset.
    const half = set.readFloat16('half_view');
    assert.deepEqual(
      Array.from(set.readFloat32('half_view')),
      expected['views.bin'].half_view.values,
    );
    assert.equal(half.length, 3);
  });

  it("reads a module's state dict with tied weights and buffers", () => {
    const set = checkAll('module.bin');
    assert.deepEqual(set.names.sort(), [
      'bias',
      'lm_head.weight',
      'ln.bias',
      'ln.weight',
      'wte.weight',
    ]);
    assert.deepEqual(set.readFloat32('lm_head.weight'), set.readFloat32('wte.weight'));
  });

  it('reads a deflated re-zip of the same checkpoint', () => {
    checkAll('deflated.bin');
  });

  it('refuses a pickle that calls os.system, without running it', () => {
    assert.throws(() => open('evil.bin'), {
      name: 'TypeError',
      code: 'invalid_argument',
      parameter: 'evil.bin',
      message: /^evil\.bin: pickle global '(posix|os)\.system' is not allowed$/,
    });
    assert.equal(existsSync(marker), false, 'nothing ran');
  });

  it('loads a folder whose only weights are pytorch_model.bin', async () => {
    const folder = join(dir, 'model');
    execFileSync('mkdir', ['-p', folder]);
    execFileSync('cp', [join(dir, 'module.bin'), join(folder, 'pytorch_model.bin')]);
    execFileSync(
      'sh',
      ['-c', `echo '{"model_type":"gpt2"}' > config.json; echo '{"model":{}}' > tokenizer.json`],
      {
        cwd: folder,
      },
    );
    const files = await loadModelFiles(folder);
    assert.equal(files.tensors.has('wte.weight'), true);
    assert.equal(files.bytes, readFileSync(join(folder, 'pytorch_model.bin')).byteLength);
  });

  it('loads a sharded pytorch_model.bin through its index', async () => {
    const folder = join(dir, 'sharded');
    mkdirSync(folder);
    const shards = {
      'pytorch_model-00001-of-00002.bin': torchZip(stateDictPickle({ name: 'a' })),
      'pytorch_model-00002-of-00002.bin': torchZip(
        stateDictPickle({ name: 'b' }),
        Float32Array.of(5, 6, 7, 8),
      ),
    };
    const weightMap = {
      a: 'pytorch_model-00001-of-00002.bin',
      b: 'pytorch_model-00002-of-00002.bin',
    };
    for (const [name, bytes] of Object.entries(shards)) writeFileSync(join(folder, name), bytes);
    writeFileSync(
      join(folder, 'pytorch_model.bin.index.json'),
      JSON.stringify({ weight_map: weightMap }),
    );
    writeFileSync(join(folder, 'config.json'), '{"model_type":"gpt2"}');
    writeFileSync(join(folder, 'tokenizer.json'), '{"model":{}}');
    const files = await loadModelFiles(folder);
    assert.deepEqual(files.tensors.readFloat32('b'), Float32Array.of(5, 6, 7, 8));
    assert.deepEqual(files.tensors.names, ['a', 'b']);
  });
});
