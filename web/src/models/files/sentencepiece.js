// A SentencePiece model file (`*.model`, Marian's `source.spm` / `target.spm`): the ModelProto
// protobuf of sentencepiece_model.proto, read field by field as hostile input.
//
//   ModelProto      1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec
//   SentencePiece   1 piece (string), 2 score (float), 3 type (enum, default NORMAL)
//   TrainerSpec     3 model_type (UNIGRAM 1, BPE 2, WORD 3, CHAR 4), 24 treat_whitespace_as_suffix,
//                   35 byte_fallback, 40 unk_id (default 0)
//   NormalizerSpec  1 name, 2 precompiled_charsmap, 3 add_dummy_prefix, 4 remove_extra_whitespaces,
//                   5 escape_whitespaces (the three default true)
//
// A small reader rather than a protobuf library: the file needs three messages and a dozen
// fields, and a generated reader would still need every length, count and size capped here.
// Nesting is fixed by the schema (a message inside ModelProto, nothing deeper is entered), every
// length is checked against the bytes left, varints stop at 10 bytes, and the counts are capped
// before anything is allocated for them.

import { attnlensError } from '../../errors.js';

// Piece types (sentencepiece_model.proto's SentencePiece.Type).
export const PIECE_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 };
const TYPE_NAMES = new Map(Object.entries(PIECE_TYPE).map(([name, code]) => [code, name]));
const MODEL_TYPES = { 1: 'unigram', 2: 'bpe', 3: 'word', 4: 'char' };

// Far above any real model (Marian's are ~65,000 pieces, 800 KB; nmt_nfkc's charsmap ~240 KB).
export const SENTENCEPIECE_LIMITS = {
  fileBytes: 64 * 1024 * 1024,
  pieces: 1 << 20,
  pieceBytes: 1024,
  charsmapBytes: 16 * 1024 * 1024,
};

const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 };

/**
 * @param {Uint8Array} bytes the file
 * @param {string} file its name, for errors
 * @returns {{ pieces: { piece: string, score: number, type: string }[], modelType: string,
 *   unkId: number, byteFallback: boolean, treatWhitespaceAsSuffix: boolean,
 *   normalizer: { name: string, precompiledCharsmap: Uint8Array, addDummyPrefix: boolean,
 *     removeExtraWhitespaces: boolean, escapeWhitespaces: boolean } }}
 */
export function readSentencePieceModel(bytes, file) {
  const fail = (code, detail) => attnlensError(code, file, detail);
  if (!(bytes instanceof Uint8Array)) {
    throw fail('invalid_argument', 'must be the bytes of a SentencePiece model');
  }
  if (bytes.byteLength > SENTENCEPIECE_LIMITS.fileBytes) {
    throw fail(
      'out_of_range',
      `is ${bytes.byteLength} bytes, more than a SentencePiece model ` +
        `(${SENTENCEPIECE_LIMITS.fileBytes} at most)`,
    );
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const text = (raw, what) => {
    try {
      return decoder.decode(raw);
    } catch {
      throw fail('invalid_argument', `${what} is not UTF-8: not a SentencePiece model`);
    }
  };

  const model = {
    pieces: [],
    modelType: 'unigram',
    unkId: 0,
    byteFallback: false,
    treatWhitespaceAsSuffix: false,
    normalizer: {
      name: '',
      precompiledCharsmap: new Uint8Array(0),
      addDummyPrefix: true,
      removeExtraWhitespaces: true,
      escapeWhitespaces: true,
    },
  };
  let sawNormalizer = false;
  for (const field of fields(bytes, fail, 'ModelProto')) {
    if (field.number === 1 && field.wire === WIRE.bytes) {
      if (model.pieces.length >= SENTENCEPIECE_LIMITS.pieces) {
        throw fail('out_of_range', `has more than ${SENTENCEPIECE_LIMITS.pieces} pieces`);
      }
      model.pieces.push(readPiece(field.bytes, model.pieces.length, fail, text));
    } else if (field.number === 2 && field.wire === WIRE.bytes) {
      readTrainerSpec(field.bytes, model, fail);
    } else if (field.number === 3 && field.wire === WIRE.bytes) {
      sawNormalizer = true;
      readNormalizerSpec(field.bytes, model.normalizer, fail, text);
    }
  }
  if (model.pieces.length === 0 || !sawNormalizer) {
    throw fail(
      'invalid_argument',
      'has no pieces or no normalizer spec: not a SentencePiece model',
    );
  }
  if (!(model.unkId >= 0 && model.unkId < model.pieces.length)) {
    throw fail('out_of_range', `unk_id ${model.unkId} is not a piece (${model.pieces.length})`);
  }
  if (model.pieces[model.unkId].type !== 'unknown') {
    throw fail('invalid_argument', `piece ${model.unkId} (unk_id) is not the unknown piece`);
  }
  return model;
}

function readPiece(bytes, index, fail, text) {
  const piece = { piece: null, score: 0, type: 'normal' };
  for (const field of fields(bytes, fail, `piece ${index}`)) {
    if (field.number === 1 && field.wire === WIRE.bytes) {
      if (
        field.bytes.byteLength === 0 ||
        field.bytes.byteLength > SENTENCEPIECE_LIMITS.pieceBytes
      ) {
        throw fail(
          'out_of_range',
          `piece ${index} is ${field.bytes.byteLength} bytes, not 1 to ` +
            `${SENTENCEPIECE_LIMITS.pieceBytes}`,
        );
      }
      piece.piece = text(field.bytes, `piece ${index}`);
    } else if (field.number === 2 && field.wire === WIRE.fixed32) {
      piece.score = field.float;
      if (!Number.isFinite(piece.score)) {
        throw fail('non_finite', `piece ${index} has the score ${piece.score}`);
      }
    } else if (field.number === 3 && field.wire === WIRE.varint) {
      piece.type = TYPE_NAMES.get(field.value);
      if (!piece.type) throw fail('invalid_argument', `piece ${index} has type ${field.value}`);
    }
  }
  if (piece.piece === null) throw fail('invalid_argument', `piece ${index} has no text`);
  return piece;
}

function readTrainerSpec(bytes, model, fail) {
  for (const field of fields(bytes, fail, 'trainer_spec')) {
    if (field.wire !== WIRE.varint) continue;
    if (field.number === 3) {
      model.modelType = MODEL_TYPES[field.value];
      if (!model.modelType) {
        throw fail('invalid_argument', `trainer_spec.model_type is ${field.value}`);
      }
    } else if (field.number === 24) model.treatWhitespaceAsSuffix = field.value !== 0;
    else if (field.number === 35) model.byteFallback = field.value !== 0;
    else if (field.number === 40) model.unkId = signed32(field.value);
  }
}

function readNormalizerSpec(bytes, normalizer, fail, text) {
  for (const field of fields(bytes, fail, 'normalizer_spec')) {
    if (field.number === 1 && field.wire === WIRE.bytes) {
      normalizer.name = text(field.bytes, 'normalizer_spec.name');
    } else if (field.number === 2 && field.wire === WIRE.bytes) {
      if (field.bytes.byteLength > SENTENCEPIECE_LIMITS.charsmapBytes) {
        throw fail(
          'out_of_range',
          `precompiled_charsmap is ${field.bytes.byteLength} bytes ` +
            `(${SENTENCEPIECE_LIMITS.charsmapBytes} at most)`,
        );
      }
      normalizer.precompiledCharsmap = field.bytes;
    } else if (field.wire === WIRE.varint && field.number >= 3 && field.number <= 5) {
      const key = ['addDummyPrefix', 'removeExtraWhitespaces', 'escapeWhitespaces'][
        field.number - 3
      ];
      normalizer[key] = field.value !== 0;
    }
  }
}

// An int32 field is written as a 64-bit varint: negative values come as 2^64 - |v|.
function signed32(value) {
  return value >= 2 ** 63 ? value - 2 ** 64 : value;
}

/**
 * The fields of one message, in order: `{ number, wire, value }` for varints (as a Number:
 * exact up to 2^53, which every field read here stays within), `{ bytes }` for length-delimited
 * fields (a view, no copy), `{ float }` for fixed32. Groups (wire types 3, 4) are refused.
 */
function* fields(bytes, fail, where) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const varint = () => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (at >= bytes.byteLength)
        throw fail('shape_mismatch', `${where}: a varint runs past the end`);
      const byte = bytes[at++];
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw fail('invalid_argument', `${where}: a varint longer than 10 bytes`);
  };
  while (at < bytes.byteLength) {
    const key = varint();
    const number = Math.floor(key / 8);
    const wire = key % 8;
    if (number === 0) throw fail('invalid_argument', `${where}: field number 0`);
    if (wire === WIRE.varint) {
      yield { number, wire, value: varint() };
    } else if (wire === WIRE.bytes) {
      const length = varint();
      if (length > bytes.byteLength - at) {
        throw fail(
          'shape_mismatch',
          `${where}: field ${number}'s ${length} bytes run past the end ` +
            `(${bytes.byteLength - at} left)`,
        );
      }
      yield { number, wire, bytes: bytes.subarray(at, at + length) };
      at += length;
    } else if (wire === WIRE.fixed32 || wire === WIRE.fixed64) {
      const size = wire === WIRE.fixed32 ? 4 : 8;
      if (size > bytes.byteLength - at) {
        throw fail('shape_mismatch', `${where}: field ${number} runs past the end`);
      }
      const float = wire === WIRE.fixed32 ? view.getFloat32(at, true) : view.getFloat64(at, true);
      at += size;
      yield { number, wire, float };
    } else {
      throw fail(
        'invalid_argument',
        `${where}: field ${number} has wire type ${wire}: not a SentencePiece model`,
      );
    }
  }
}
