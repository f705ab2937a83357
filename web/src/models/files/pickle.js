// A restricted unpickler for PyTorch checkpoints: it understands the opcodes a state dict is
// written with (protocols 2 to 5) and the handful of globals that rebuild tensors, and refuses
// everything else by name. Nothing from the file is ever called: the allowed globals are small
// JavaScript functions below that build plain descriptions of tensors.
//
// What it returns: the unpickled object, dicts as Maps, tensors as
//   { tensor: true, storage: { key, dtype, numel, location }, offset, shape, strides }
// where `storage` comes from the caller's persistentLoad(pid) for each ('storage', ...) id.

import { attnlensError } from '../../errors.js';

/** PyTorch storage classes -> safetensors dtype names. */
export const STORAGE_DTYPES = Object.freeze({
  FloatStorage: 'F32',
  HalfStorage: 'F16',
  BFloat16Storage: 'BF16',
  DoubleStorage: 'F64',
  LongStorage: 'I64',
  IntStorage: 'I32',
  ShortStorage: 'I16',
  CharStorage: 'I8',
  ByteStorage: 'U8',
  BoolStorage: 'BOOL',
});

class StorageType {
  constructor(name) {
    this.name = name;
    this.dtype = STORAGE_DTYPES[name];
  }
}

const isInt = (v) => Number.isSafeInteger(v) && v >= 0;
const isIntList = (v) => Array.isArray(v) && v.every(isInt);

// The only callables a checkpoint may name. Each checks its arguments and returns data.
function rebuildTensor(fail, [storage, offset, shape, strides]) {
  if (!storage?.isStorage || !isInt(offset) || !isIntList(shape) || !isIntList(strides)) {
    throw fail(
      'torch._utils._rebuild_tensor_v2 got arguments that are not (storage, offset, size, stride)',
    );
  }
  if (shape.length !== strides.length)
    throw fail('a tensor has sizes and strides of different lengths');
  return { tensor: true, storage, offset, shape, strides };
}

const GLOBALS = {
  'collections.OrderedDict': (fail, args) => {
    if (args.length) throw fail('collections.OrderedDict is only rebuilt empty, then filled');
    return new Map();
  },
  'torch._utils._rebuild_tensor_v2': rebuildTensor,
  'torch._utils._rebuild_tensor': rebuildTensor,
  'torch._utils._rebuild_parameter': (fail, [data]) => {
    if (!data?.tensor)
      throw fail('torch._utils._rebuild_parameter got something that is not a tensor');
    return data;
  },
};
for (const name of Object.keys(STORAGE_DTYPES)) GLOBALS[`torch.${name}`] = new StorageType(name);

const MARK = Symbol('mark');

/**
 * Unpickles `bytes` (the file's data.pkl), calling persistentLoad(pid) for each persistent id.
 * @param {Uint8Array} bytes
 * @param {string} file the checkpoint's name, for errors
 * @param {(pid: unknown[]) => object} persistentLoad
 */
export function unpickle(bytes, file, persistentLoad) {
  const fail = (detail) => attnlensError('invalid_argument', file, `pickle: ${detail}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const stack = [];
  const marks = [];
  const memo = new Map();
  let at = 0;

  const need = (n) => {
    if (!(n >= 0) || at + n > bytes.length) throw fail(`truncated at byte ${at}`);
    const start = at;
    at += n;
    return start;
  };
  const u8 = () => bytes[need(1)];
  const u16 = () => view.getUint16(need(2), true);
  const u32 = () => view.getUint32(need(4), true);
  const u64 = () => {
    const value = view.getBigUint64(need(8), true);
    if (value > BigInt(bytes.length)) throw fail(`length ${value} runs past the end`);
    return Number(value);
  };
  const text = (n) => {
    const start = need(n);
    try {
      return utf8.decode(bytes.subarray(start, start + n));
    } catch {
      throw fail(`a string at byte ${start} is not valid UTF-8`);
    }
  };
  const latin1 = (n) => {
    const start = need(n);
    let out = '';
    for (let i = start; i < at; i += 4096) {
      out += String.fromCharCode(...bytes.subarray(i, Math.min(at, i + 4096)));
    }
    return out;
  };
  const line = () => {
    const end = bytes.indexOf(0x0a, at);
    if (end < 0) throw fail(`truncated at byte ${at}`);
    return latin1(end - at + 1).slice(0, -1);
  };
  const pop = () => {
    if (stack.length === 0 || (marks.length && stack.length <= marks.at(-1))) {
      throw fail(`stack underflow at byte ${at - 1}`);
    }
    return stack.pop();
  };
  const popMark = () => {
    if (marks.length === 0) throw fail(`no MARK before byte ${at - 1}`);
    return stack.splice(marks.pop());
  };
  const top = () => {
    if (stack.length === 0) throw fail(`stack underflow at byte ${at - 1}`);
    return stack.at(-1);
  };
  const global = (module, name) => {
    const qualified = `${module}.${name}`;
    if (!Object.hasOwn(GLOBALS, qualified)) {
      throw attnlensError('invalid_argument', file, `pickle global '${qualified}' is not allowed`, {
        global: qualified,
      });
    }
    return GLOBALS[qualified];
  };
  const setItems = (dict, items) => {
    if (!(dict instanceof Map)) throw fail('SETITEM on something that is not a dict');
    if (items.length % 2) throw fail('SETITEMS with an odd number of items');
    for (let i = 0; i < items.length; i += 2) {
      const key = items[i];
      if (typeof key !== 'string' && typeof key !== 'number')
        throw fail('a dict key is not a string or number');
      dict.set(key, items[i + 1]);
    }
  };
  const append = (list, items) => {
    if (!Array.isArray(list) || Object.isFrozen(list))
      throw fail('APPEND on something that is not a list');
    for (const item of items) list.push(item);
  };
  const memoGet = (key) => {
    if (!memo.has(key)) throw fail(`memo ${key} was never stored`);
    return memo.get(key);
  };
  const tuple = (items) => Object.freeze(items);

  for (;;) {
    const opcode = u8();
    switch (opcode) {
      case 0x80: // PROTO
        if (u8() > 5) throw fail('pickle protocol above 5');
        break;
      case 0x95: // FRAME
        need(8);
        break;
      case 0x2e: // STOP
        if (stack.length !== 1 || marks.length)
          throw fail('the stack does not end with one object');
        return stack[0];
      case 0x28: // MARK
        marks.push(stack.length);
        break;
      case 0x7d: // EMPTY_DICT
        stack.push(new Map());
        break;
      case 0x5d: // EMPTY_LIST
        stack.push([]);
        break;
      case 0x29: // EMPTY_TUPLE
        stack.push(tuple([]));
        break;
      case 0x74: // TUPLE
        stack.push(tuple(popMark()));
        break;
      case 0x85: // TUPLE1
      case 0x86: // TUPLE2
      case 0x87: {
        // TUPLE3
        const n = opcode - 0x84;
        const items = [];
        for (let i = 0; i < n; i++) items.unshift(pop());
        stack.push(tuple(items));
        break;
      }
      case 0x64: {
        // DICT
        const dict = new Map();
        setItems(dict, popMark());
        stack.push(dict);
        break;
      }
      case 0x6c: // LIST
        stack.push(popMark());
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
      case 0x89: // NEWFALSE
        stack.push(opcode === 0x88);
        break;
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        stack.push(u16());
        break;
      case 0x4a: // BININT
        stack.push(view.getInt32(need(4), true));
        break;
      case 0x8a: {
        // LONG1: little-endian two's complement
        const n = u8();
        const start = need(n);
        let value = 0n;
        for (let i = n - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[start + i]);
        if (n && bytes[start + n - 1] & 0x80) value -= 1n << BigInt(8 * n);
        stack.push(
          value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
            ? Number(value)
            : value,
        );
        break;
      }
      case 0x47: // BINFLOAT (big-endian)
        stack.push(view.getFloat64(need(8), false));
        break;
      case 0x58: // BINUNICODE
        stack.push(text(u32()));
        break;
      case 0x8c: // SHORT_BINUNICODE
        stack.push(text(u8()));
        break;
      case 0x8d: // BINUNICODE8
        stack.push(text(u64()));
        break;
      case 0x55: // SHORT_BINSTRING (Python 2 str)
        stack.push(latin1(u8()));
        break;
      case 0x54: // BINSTRING
        stack.push(latin1(u32()));
        break;
      case 0x43: // SHORT_BINBYTES
      case 0x42: // BINBYTES
      case 0x8e: {
        // BINBYTES8
        const n = opcode === 0x43 ? u8() : opcode === 0x42 ? u32() : u64();
        stack.push(bytes.slice(need(n), at));
        break;
      }
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top());
        break;
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x68: // BINGET
        stack.push(memoGet(u8()));
        break;
      case 0x6a: // LONG_BINGET
        stack.push(memoGet(u32()));
        break;
      case 0x30: // POP
        pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        stack.push(top());
        break;
      case 0x73: {
        // SETITEM
        const value = pop();
        const key = pop();
        setItems(top(), [key, value]);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        setItems(top(), items);
        break;
      }
      case 0x61: {
        // APPEND
        const value = pop();
        append(top(), [value]);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        append(top(), items);
        break;
      }
      case 0x63: {
        // GLOBAL "module\nname\n"
        const module = line();
        stack.push(global(module, line()));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string')
          throw fail('STACK_GLOBAL without two strings');
        stack.push(global(module, name));
        break;
      }
      case 0x52: {
        // REDUCE
        const args = pop();
        const callable = pop();
        if (typeof callable !== 'function')
          throw fail('REDUCE on something that is not an allowed function');
        if (!Array.isArray(args)) throw fail('REDUCE without an argument tuple');
        stack.push(callable(fail, args));
        break;
      }
      case 0x62: {
        // BUILD: only the attributes torch sets on a state dict (e.g. _metadata), which are ignored
        pop();
        if (!(top() instanceof Map)) throw fail('BUILD on something that is not a dict');
        break;
      }
      case 0x51: {
        // BINPERSID
        const pid = pop();
        stack.push(persistentLoad(pid));
        break;
      }
      default:
        throw fail(
          `opcode 0x${opcode.toString(16).padStart(2, '0')}` +
            (OPCODE_NAMES[opcode] ? ` ('${OPCODE_NAMES[opcode]}')` : '') +
            ` at byte ${at - 1} is not allowed`,
        );
    }
  }
}

// Names of the opcodes that are refused, for the error message.
const OPCODE_NAMES = {
  0x69: 'INST',
  0x6f: 'OBJ',
  0x81: 'NEWOBJ',
  0x92: 'NEWOBJ_EX',
  0x50: 'PERSID',
  0x82: 'EXT1',
  0x83: 'EXT2',
  0x84: 'EXT4',
  0x49: 'INT',
  0x4c: 'LONG',
  0x53: 'STRING',
  0x56: 'UNICODE',
  0x46: 'FLOAT',
  0x67: 'GET',
  0x70: 'PUT',
  0x8b: 'LONG4',
  0x8f: 'EMPTY_SET',
  0x90: 'ADDITEMS',
  0x91: 'FROZENSET',
  0x96: 'BYTEARRAY8',
  0x97: 'NEXT_BUFFER',
  0x98: 'READONLY_BUFFER',
};

/** A storage type value from the pickle (the second field of a persistent id), or null. */
export function storageDtype(value) {
  return value instanceof StorageType ? value.dtype : null;
}
