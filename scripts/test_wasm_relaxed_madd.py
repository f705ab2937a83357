#!/usr/bin/env python3
"""Tests for wasm_relaxed_madd.py: it must rewrite the FMA instructions and nothing else.

    python3 scripts/test_wasm_relaxed_madd.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wasm_relaxed_madd as rm  # noqa: E402

FMA = bytes([0xFD, 0xAF, 0x01])
MADD = bytes([0xFD, 0x85, 0x02])


def leb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def module(*bodies):
    """A module with one code section holding `bodies` (each: locals + instructions + end)."""
    code = leb(len(bodies)) + b"".join(leb(len(b)) + b for b in bodies)
    return bytearray(b"\0asm\1\0\0\0" + bytes([10]) + leb(len(code)) + code)


def body(*instructions):
    return b"\x01\x03\x7b" + b"".join(instructions) + b"\x0b"  # 3 v128 locals ... end


GET3 = b"\x20\x00\x20\x01\x20\x02"


class RewriteTest(unittest.TestCase):
    def test_rewrites_each_fma_instruction(self):
        data = module(body(GET3, FMA, b"\x1a"), body(GET3, FMA, b"\x21\x00", GET3, FMA, b"\x1a"))
        self.assertEqual(rm.rewrite(data), 3)
        self.assertEqual(data.count(FMA), 0)
        self.assertEqual(data.count(MADD), 3)

    def test_leaves_immediates_that_look_like_fma(self):
        # The FMA's bytes inside a v128.const, a shuffle mask, an f64.const and a memarg offset.
        lookalikes = [
            b"\xfd\x0c" + FMA + bytes(13) + b"\x1a",         # v128.const
            b"\x20\x00\x20\x00\xfd\x0d" + FMA * 5 + b"\x00" + b"\x1a",  # i8x16.shuffle
            b"\x44" + FMA + bytes(5) + b"\x1a",              # f64.const
            b"\x41\x00\xfd\x00\x04\xfd\xaf\x01\x1a",         # v128.load offset=LEB(0xfd 0xaf 0x01)
        ]
        data = module(body(*lookalikes))
        before = bytes(data)
        self.assertEqual(rm.rewrite(data), 0)
        self.assertEqual(bytes(data), before)

    def test_walks_atomics_of_threaded_builds(self):
        # -pthread builds: memory.atomic.wait32 and i32.atomic.rmw.add whose memarg offsets look
        # like the FMA, atomic.fence, then a real FMA that must still be found.
        atomics = (b"\x41\x00\x41\x00\x42\x00\xfe\x01\x02\xfd\xaf\x01\x1a"  # wait32
                   b"\x41\x00\x41\x01\xfe\x1e\x02\xfd\xaf\x01\x1a"           # rmw.add
                   b"\xfe\x03\x00")                                                # fence
        data = module(body(atomics, GET3, FMA, b"\x1a"))
        self.assertEqual(rm.rewrite(data), 1)
        self.assertEqual(data.count(MADD), 1)
        with self.assertRaises(rm.DecodeError):
            rm.rewrite(module(body(b"\xfe\x7f")))  # not an atomic opcode

    def test_refuses_other_prestandard_fma_opcodes(self):
        data = module(body(GET3, b"\xfd\xb0\x01", b"\x1a"))  # f32x4.fms of the draft
        with self.assertRaises(rm.DecodeError):
            rm.rewrite(data)

    def test_refuses_unknown_opcodes(self):
        data = module(body(b"\xf0"))
        with self.assertRaises(rm.DecodeError):
            rm.rewrite(data)

    def test_refuses_non_modules(self):
        with self.assertRaises(rm.DecodeError):
            rm.rewrite(bytearray(b"\0asm\2\0\0\0"))


if __name__ == "__main__":
    unittest.main()
