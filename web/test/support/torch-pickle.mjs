// Hand-made PyTorch checkpoints for the bad-file and fuzz tests: the pickle torch.save writes
// for a one-tensor state dict (the same opcodes, protocol 2), with any part replaceable, zipped
// with fflate (stored, as torch does).

import { zipSync } from 'fflate';

const ascii = (text) => [...new TextEncoder().encode(text)];
const unicode = (text) => {
  const bytes = ascii(text);
  return [0x58, ...new Uint8Array(Uint32Array.of(bytes.length).buffer), ...bytes];
};
export const op = {
  proto: [0x80, 2],
  global: (module, name) => [0x63, ...ascii(`${module}\n${name}\n`)],
  mark: [0x28],
  tuple: [0x74],
  tuple1: [0x85],
  emptyTuple: [0x29],
  reduce: [0x52],
  persid: [0x51],
  setitems: [0x75],
  stop: [0x2e],
  newfalse: [0x89],
  int: (n) => [0x4a, ...new Uint8Array(Int32Array.of(n).buffer)],
  unicode,
};

/** The opcodes that push one rebuilt tensor over storage `key` of `numel` floats. */
export function tensorOps({
  key = '0',
  numel = 4,
  offset = 0,
  shape = [4],
  strides = [1],
  storage = ['torch', 'FloatStorage'],
  rebuild = ['torch._utils', '_rebuild_tensor_v2'],
} = {}) {
  const ints = (list) => [...op.mark, ...list.flatMap(op.int), ...op.tuple];
  return [
    ...op.global(...rebuild),
    ...op.mark,
    ...op.mark,
    ...unicode('storage'),
    ...op.global(...storage),
    ...unicode(key),
    ...unicode('cpu'),
    ...op.int(numel),
    ...op.tuple,
    ...op.persid,
    ...op.int(offset),
    ...ints(shape),
    ...ints(strides),
    ...op.newfalse,
    ...op.global('collections', 'OrderedDict'),
    ...op.emptyTuple,
    ...op.reduce,
    ...op.tuple,
    ...op.reduce,
  ];
}

/** data.pkl of { [name]: tensor } over storage '0' of `numel` floats. */
export function stateDictPickle({ name = 'w', ...tensor } = {}) {
  return Uint8Array.from([
    ...op.proto,
    ...op.global('collections', 'OrderedDict'),
    ...op.emptyTuple,
    ...op.reduce,
    ...op.mark,
    ...unicode(name),
    ...tensorOps(tensor),
    ...op.setitems,
    ...op.stop,
  ]);
}

/** A pytorch_model.bin zip: archive/data.pkl plus archive/data/0 (`values` as float32). */
export function torchZip(
  pickle = stateDictPickle(),
  values = Float32Array.of(1, 2, 3, 4),
  extra = {},
) {
  return zipSync(
    {
      'archive/data.pkl': pickle,
      'archive/data/0': new Uint8Array(values.buffer),
      'archive/version': new TextEncoder().encode('3\n'),
      ...extra,
    },
    { level: 0 },
  );
}
