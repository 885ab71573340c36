# SPDX-License-Identifier: MIT
"""attngen.attention and Kernel calls with the generic kernels, against the float64 reference (reference.py: the
tolerance and why)."""
import unittest

import numpy as np

import attngen
from reference import Case, sdpa64, uniform

SHAPES = [  # (heads, kv_heads, head_dim): MHA, GQA, MQA, an odd head_dim
    (4, 4, 32), (8, 2, 64), (6, 1, 40), (4, 2, 17)]


class Attention(Case):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def qkv(self, batch, q_len, kv_len, heads, kv_heads, head_dim):
        return (uniform(self.rng, batch, q_len, heads, head_dim), uniform(self.rng, batch, kv_len, kv_heads, head_dim),
                uniform(self.rng, batch, kv_len, kv_heads, head_dim))

    def test_masks_and_head_groupings(self):
        for heads, kv_heads, d in SHAPES:
            for causal in (False, True):
                for q_len, kv_len in ((13, 13), (5, 29), (1, 40)):  # prefill, a chunk against a cache, decode
                    q, k, v = self.qkv(2, q_len, kv_len, heads, kv_heads, d)
                    out, lse = attngen.attention(q, k, v, causal=causal, return_lse=True)
                    ref, ref_lse = sdpa64(q, k, v, causal=causal)
                    self.assertAttention(out, ref, lse, ref_lse, f"h{heads} kv{kv_heads} d{d} causal={causal} "
                                                                 f"q{q_len} kv{kv_len}")

    def test_every_isa_of_this_cpu(self):
        q, k, v = self.qkv(2, 9, 21, 8, 2, 64)
        ref, ref_lse = sdpa64(q, k, v, causal=True)
        for isa in attngen.cpu_isas():
            out, lse = attngen.attention(q, k, v, causal=True, isa=isa, return_lse=True)
            self.assertAttention(out, ref, lse, ref_lse, isa)

    def test_kv_lens_padding_and_an_empty_sequence(self):
        q, k, v = self.qkv(3, 6, 20, 4, 2, 32)
        lens = [20, 7, 0]  # the last sequence sees no key: zeros and lse -inf
        for causal in (False, True):
            out, lse = attngen.attention(q, k, v, causal=causal, kv_lens=lens, return_lse=True)
            ref, ref_lse = sdpa64(q, k, v, causal=causal, kv_lens=lens)
            self.assertAttention(out, ref, lse, ref_lse, f"kv_lens causal={causal}")
            self.assertTrue((np.asarray(out)[2] == 0).all())

    def test_kv_len_below_capacity_and_scale(self):
        q, k, v = self.qkv(2, 4, 32, 4, 4, 32)
        out = attngen.attention(q, k, v, causal=True, kv_len=19, scale=0.3)
        self.assertAttention(out, sdpa64(q, k, v, causal=True, kv_len=19, scale=0.3)[0], what="kv_len 19 of 32")

    def test_decode_phase(self):
        for q_len in (1, 3, 8):
            q, k, v = self.qkv(2, q_len, 300, 8, 2, 64)
            kernel = attngen.select(8, 2, 64, mask="causal", phase="decode")
            self.assertEqual(kernel.phase, "decode")
            self.assertAttention(kernel(q, k, v), sdpa64(q, k, v, causal=True)[0], what=f"decode q{q_len}")

    def test_threads_give_the_same_bits(self):
        q, k, v = self.qkv(1, 64, 64, 8, 2, 64)
        one = attngen.attention(q, k, v, causal=True)
        for threads in (2, 0):
            self.assertTrue(np.array_equal(one, attngen.attention(q, k, v, causal=True, threads=threads)), threads)
        self.assertAttention(one, sdpa64(q, k, v, causal=True)[0])

    def test_strided_inputs_and_output_are_read_in_place(self):
        # q, k, v slices of one fused [batch, seq, heads + 2 kv_heads, d] projection, K/V also head-major, and out a
        # slice of a wider buffer: nothing contiguous, nothing copied
        heads, kv_heads, d = 8, 2, 32
        qkv = uniform(self.rng, 2, 11, heads + 2 * kv_heads, d)
        q, k, v = qkv[:, :, :heads], qkv[:, :, heads:heads + kv_heads], qkv[:, :, heads + kv_heads:]
        ref = sdpa64(q, k, v, causal=True)[0]
        wide = np.full((2, 11, heads, 2 * d), np.nan, np.float32)
        out = wide[:, :, :, :d]
        returned = attngen.attention(q, k, v, causal=True, out=out)
        self.assertIs(returned, out)
        self.assertAttention(out, ref, what="fused qkv slices")
        self.assertTrue(np.isnan(wide[:, :, :, d:]).all(), "wrote outside out")
        head_major = [np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3) for x in (k, v)]
        self.assertFalse(head_major[0].flags.c_contiguous)
        self.assertAttention(attngen.attention(q, *head_major, causal=True), ref, what="head-major K/V")
        every_other = uniform(self.rng, 2, 22, heads, d)[:, ::2]
        self.assertAttention(attngen.attention(every_other, k, v), sdpa64(every_other, k, v)[0], what="q rows 2 apart")

    def test_a_bound_call_reads_its_tensors_anew(self):
        q, k, v = self.qkv(1, 5, 9, 4, 4, 32)
        call = attngen.select(4, 4, 32, mask="causal").bind(q, k, v)
        first = call().copy()
        q *= -0.5
        second = call()
        self.assertAttention(first, sdpa64(q / -0.5, k, v, causal=True)[0], what="first call")
        self.assertAttention(second, sdpa64(q, k, v, causal=True)[0], what="after q changed in place")

    def test_reduced_precision_caches(self):
        heads, kv_heads, d = 4, 2, 64
        q, k, v = self.qkv(2, 3, 37, heads, kv_heads, d)
        for kv_dtype in ("f16", "bf16", "int8", "int8_g64", "int8_g32"):
            cache = attngen.KVCache.allocate(2, 37, kv_heads, d, kv_dtype)
            attngen.select(heads, kv_heads, d, mask="causal", kv_dtype=kv_dtype).append(cache, k, v)
            k64, v64 = cache.dequantized(np.float64)
            out = attngen.attention(q, cache.k, cache.v, causal=True, k_scale=cache.k_scale, v_scale=cache.v_scale,
                                    kv_dtype=kv_dtype)
            self.assertAttention(out, sdpa64(q, k64, v64, causal=True)[0], what=kv_dtype)

    def test_caches_filled_by_numpy(self):
        # f16 is numpy's float16, bf16 the uint16 bits of bf16_from_float32: the same values the runtime writes
        q, k, v = self.qkv(1, 4, 16, 4, 4, 32)
        f16 = [x.astype(np.float16) for x in (k, v)]
        out = attngen.attention(q, *f16, causal=True)
        self.assertAttention(out, sdpa64(q, *(x.astype(np.float64) for x in f16), causal=True)[0], what="f16")
        bf16 = [attngen.bf16_from_float32(x) for x in (k, v)]
        out = attngen.attention(q, *bf16, causal=True)
        self.assertAttention(out, sdpa64(q, *(attngen.bf16_to_float32(x) for x in bf16), causal=True)[0], what="bf16")


class Bf16Conversion(unittest.TestCase):
    def test_matches_the_runtime_rounding(self):
        import ctypes
        lib = attngen.load_library()
        lib.attngen_bf16_from_float.argtypes, lib.attngen_bf16_from_float.restype = [ctypes.c_float], ctypes.c_uint16
        rng = np.random.default_rng(3)
        bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
        x = np.concatenate([bits.view(np.float32), np.float32([0, -0.0, np.inf, -np.inf, np.nan, 1 + 2**-8])])
        want = np.array([lib.attngen_bf16_from_float(float(e)) for e in x], np.uint16)
        self.assertTrue(np.array_equal(attngen.bf16_from_float32(x), want))


if __name__ == "__main__":
    unittest.main()
