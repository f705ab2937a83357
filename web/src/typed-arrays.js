// A typed array's class, length and memory from its internal slots, through the intrinsic
// getters of %TypedArray%.prototype: an object can shadow `length` or `buffer` with own
// properties, and a Proxy of a typed array passes `instanceof` but has no slots.

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const slot = (key) => Object.getOwnPropertyDescriptor(TypedArrayPrototype, key).get;
const nameSlot = slot(Symbol.toStringTag);
const bufferSlot = slot('buffer');
const byteOffsetSlot = slot('byteOffset');
const lengthSlot = slot('length');
const byteLengthSlot = slot('byteLength');

/**
 * The class of a typed array from its [[TypedArrayName]] slot ('Float32Array', 'Uint8Array', ...;
 * the base class's name for a subclass, the same name for one from another realm), or undefined
 * for anything else, a Proxy or a DataView included. Never throws.
 */
export function typedArrayName(value) {
  return nameSlot.call(value);
}

/**
 * A fresh view of the same memory as `value`, a typed array of class `Type` (checked by the
 * caller with typedArrayName), with the offset and length of its slots: its own properties
 * are those of a plain view, whatever `value` defines on itself. Null when the buffer is
 * detached (transferred), where no view can be made.
 */
export function genuineView(value, Type) {
  const buffer = bufferSlot.call(value);
  const offset = byteOffsetSlot.call(value);
  const length = lengthSlot.call(value);
  try {
    return new Type(buffer, offset, length);
  } catch {
    return null;
  }
}

/** The bytes of a typed array, as a Uint8Array over the same memory (from its slots). */
export function bytesOf(array) {
  return new Uint8Array(
    bufferSlot.call(array),
    byteOffsetSlot.call(array),
    byteLengthSlot.call(array),
  );
}

/** The element count from the [[ArrayLength]] slot (0 once the buffer is detached). */
export function lengthOf(array) {
  return lengthSlot.call(array);
}
