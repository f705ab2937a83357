#!/usr/bin/env python3
"""Rewrites clang 14's pre-standard relaxed-SIMD FMA into the standard f32x4.relaxed_madd.

    wasm_relaxed_madd.py MODULE.wasm [--out OUT.wasm]

clang 14 (Emscripten 3.1.6) emits __builtin_wasm_fma_f32x4(a, b, c) as the opcode 0xfd 0xaf 0x01
of an early relaxed-SIMD draft, which browsers reject. The standard instruction,
f32x4.relaxed_madd (a * b + c), is 0xfd 0x85 0x02: the same length, so the rewrite changes two
bytes per instruction and no sizes. To change only instructions (never an immediate that
happens to hold those bytes), the code section is decoded instruction by instruction; an opcode
this decoder does not know stops it with an error instead of guessing, and so does any other
opcode of the draft's FMA family (the kernels use only f32x4 FMA).

Prints the number of instructions rewritten; rewrites in place unless --out is given.
"""
import argparse
import sys

PRESTANDARD_F32X4_FMA = 0xAF
RELAXED_MADD = 0x105
# The rest of clang 14's draft FMA family (f32x4.fms, f64x2.fma, f64x2.fms), unassigned in the
# final SIMD numbering: they have no rewrite here and must not reach a browser.
PRESTANDARD_FMA_FAMILY = {0xB0, 0xCF, 0xD0}

VALTYPES = {0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F}


class DecodeError(Exception):
    pass


class Reader:
    def __init__(self, data, pos=0, end=None):
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def byte(self):
        if self.pos >= self.end:
            raise DecodeError(f"unexpected end at byte {self.pos}")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def skip(self, n):
        if self.pos + n > self.end:
            raise DecodeError(f"unexpected end at byte {self.pos}")
        self.pos += n

    def uleb(self):
        result, shift = 0, 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def sleb(self):
        self.uleb()  # the value itself is never needed, only its extent


def skip_blocktype(r):
    b = r.data[r.pos]
    if b == 0x40 or b in VALTYPES:
        r.skip(1)
    else:
        r.sleb()  # a type index, as s33


def skip_memarg(r):
    r.uleb()  # alignment
    r.uleb()  # offset


def simd_immediates(r, op, at):
    """Skips the immediates of 0xfd `op` (final SIMD numbering)."""
    if op <= 0x0B or op in (0x5C, 0x5D):  # loads, stores, load32/64_zero
        skip_memarg(r)
    elif op in (0x0C, 0x0D):  # v128.const, i8x16.shuffle
        r.skip(16)
    elif 0x15 <= op <= 0x22:  # extract_lane / replace_lane
        r.skip(1)
    elif 0x54 <= op <= 0x5B:  # load_lane / store_lane
        skip_memarg(r)
        r.skip(1)
    elif op <= 0x113:  # everything else in the final SIMD and relaxed-SIMD sets: no immediates
        pass
    else:
        raise DecodeError(f"unknown SIMD opcode 0xfd {op:#x} at byte {at}")


def misc_immediates(r, op, at):
    """Skips the immediates of 0xfc `op` (saturating truncation, bulk memory, tables)."""
    if op <= 7:
        pass
    elif op == 8:  # memory.init
        r.uleb()
        r.skip(1)
    elif op == 9:  # data.drop
        r.uleb()
    elif op == 10:  # memory.copy
        r.skip(2)
    elif op == 11:  # memory.fill
        r.skip(1)
    elif op in (12, 14):  # table.init, table.copy
        r.uleb()
        r.uleb()
    elif op in (13, 15, 16, 17):  # elem.drop, table.grow/size/fill
        r.uleb()
    else:
        raise DecodeError(f"unknown opcode 0xfc {op} at byte {at}")


def atomic_immediates(r, op, at):
    """Skips the immediates of 0xfe `op` (threads: wait/notify, fence, atomic memory accesses),
    which -pthread builds contain."""
    if op == 0x03:  # atomic.fence
        r.skip(1)
    elif op <= 0x02 or 0x10 <= op <= 0x4E:  # notify, wait32/64, loads, stores, rmw, cmpxchg
        skip_memarg(r)
    else:
        raise DecodeError(f"unknown opcode 0xfe {op:#x} at byte {at}")


def rewrite_body(data, r, counts):
    """Walks one function body (locals, then instructions) up to r.end."""
    for _ in range(r.uleb()):  # local declarations
        r.uleb()
        r.skip(1)
    while r.pos < r.end:
        at = r.pos
        op = r.byte()
        if op in (0x02, 0x03, 0x04, 0x06):  # block, loop, if, try
            skip_blocktype(r)
        elif op in (0x0C, 0x0D, 0x07, 0x08, 0x09, 0x18, 0x10, 0x12, 0xD2) or \
                0x20 <= op <= 0x26:  # branches, exceptions, calls, variables, tables, ref.func
            r.uleb()
        elif op == 0x0E:  # br_table
            for _ in range(r.uleb() + 1):
                r.uleb()
        elif op in (0x11, 0x13):  # call_indirect, return_call_indirect
            r.uleb()
            r.uleb()
        elif op == 0x1C:  # select with types
            r.skip(r.uleb())
        elif 0x28 <= op <= 0x3E:
            skip_memarg(r)
        elif op in (0x3F, 0x40, 0xD0):  # memory.size, memory.grow, ref.null
            r.skip(1)
        elif op in (0x41, 0x42):
            r.sleb()
        elif op == 0x43:
            r.skip(4)
        elif op == 0x44:
            r.skip(8)
        elif op == 0xFC:
            misc_immediates(r, r.uleb(), at)
        elif op == 0xFE:
            atomic_immediates(r, r.uleb(), at)
        elif op == 0xFD:
            sub_at = r.pos
            sub = r.uleb()
            if sub == PRESTANDARD_F32X4_FMA and r.pos - sub_at == 2:
                data[sub_at:sub_at + 2] = bytes([0x80 | (RELAXED_MADD & 0x7F), RELAXED_MADD >> 7])
                counts["rewritten"] += 1
            elif sub in PRESTANDARD_FMA_FAMILY:
                raise DecodeError(f"pre-standard relaxed-SIMD opcode 0xfd {sub:#x} at byte {at} "
                                  "has no rewrite; only the f32x4 FMA is supported")
            else:
                simd_immediates(r, sub, at)
        elif op in (0x00, 0x01, 0x05, 0x0B, 0x0F, 0x19, 0x1A, 0x1B, 0xD1) or 0x45 <= op <= 0xC4:
            pass  # no immediates
        else:
            raise DecodeError(f"unknown opcode {op:#x} at byte {at}")
    if r.pos != r.end:
        raise DecodeError(f"function body overran its size at byte {r.pos}")


def rewrite(data):
    """Rewrites `data` (a bytearray holding a wasm module) in place; returns the count."""
    if data[:4] != b"\0asm" or data[4:8] != b"\1\0\0\0":
        raise DecodeError("not a wasm module (version 1)")
    counts = {"rewritten": 0}
    r = Reader(data, 8)
    while r.pos < len(data):
        section = r.byte()
        size = r.uleb()
        start, end = r.pos, r.pos + size
        if section == 10:  # code
            code = Reader(data, start, end)
            for _ in range(code.uleb()):
                body_size = code.uleb()
                body = Reader(data, code.pos, code.pos + body_size)
                rewrite_body(data, body, counts)
                code.pos = body.end
        r.pos = end
    return counts["rewritten"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module")
    parser.add_argument("--out")
    args = parser.parse_args()
    with open(args.module, "rb") as f:
        data = bytearray(f.read())
    try:
        count = rewrite(data)
    except DecodeError as e:
        sys.exit(f"{args.module}: {e}")
    with open(args.out or args.module, "wb") as f:
        f.write(data)
    print(f"{args.module}: {count} f32x4.relaxed_madd")


if __name__ == "__main__":
    main()
