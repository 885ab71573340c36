# SPDX-License-Identifier: MIT
"""KVCache, append and the fused step against the float64 reference (reference.py: tolerance and why): a ragged batch
prefilled in one step and decoded token by token must match attention over each sequence's cache."""
import unittest

import numpy as np

import attngen
from reference import Case, sdpa64, uniform

HEADS, KV_HEADS, D, CAPACITY = 8, 2, 64, 48


class Append(unittest.TestCase):
    def test_rows_land_at_each_sequence_length_rounded_as_numpy_rounds(self):
        rng = np.random.default_rng(11)
        k, v = uniform(rng, 2, 5, KV_HEADS, D), uniform(rng, 2, 5, KV_HEADS, D)
        for kv_dtype, widen in (("f32", lambda x: x), ("f16", lambda x: x.astype(np.float16).astype(np.float32)),
                                ("bf16", lambda x: attngen.bf16_to_float32(attngen.bf16_from_float32(x)))):
            cache = attngen.KVCache.allocate(2, CAPACITY, KV_HEADS, D, kv_dtype)
            cache.lengths[:] = [3, 10]
            attngen.select(HEADS, KV_HEADS, D, kv_dtype=kv_dtype).append(cache, k, v)
            self.assertEqual(cache.lengths.tolist(), [8, 15])
            k32, v32 = cache.dequantized(np.float32)
            for b, start in ((0, 3), (1, 10)):
                self.assertTrue(np.array_equal(k32[b, start:start + 5], widen(k[b])), kv_dtype)
                self.assertTrue(np.array_equal(v32[b, start:start + 5], widen(v[b])), kv_dtype)
                self.assertTrue((k32[b, :start] == 0).all() and (k32[b, start + 5:] == 0).all(), kv_dtype)

    def test_the_runtimes_widening_is_numpys(self):
        # an encoding NumPy has no type for is widened by the runtime (attngen_kv_to_float); bf16, which NumPy
        # widens itself, checks that path on every pattern, NaNs by NaN-ness
        from attngen import dtypes
        bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).reshape(16, 4096)
        got, want = dtypes._runtime_to_float(bits, "bf16"), attngen.bf16_to_float32(bits)
        self.assertTrue(np.array_equal(got, want, equal_nan=True))
        self.assertTrue(np.array_equal(np.isnan(got), np.isnan(want)))

    def test_int8_rows_within_half_a_step_of_the_input(self):
        # one scale per group: max|x| / 127; every element then reads back within scale / 2 (plus fp32 rounding)
        rng = np.random.default_rng(12)
        k = uniform(rng, 1, 4, KV_HEADS, D)
        for kv_dtype, group in (("int8", D), ("int8_g32", 32)):
            cache = attngen.KVCache.allocate(1, 8, KV_HEADS, D, kv_dtype)
            attngen.select(HEADS, KV_HEADS, D, kv_dtype=kv_dtype).append(cache, k, k)
            grouped = k.reshape(1, 4, KV_HEADS, D // group, group)
            step = np.abs(grouped).max(axis=-1) / 127
            self.assertTrue(np.allclose(cache.k_scale[:, :4], step, rtol=1e-6, atol=0), kv_dtype)
            back = cache.dequantized(np.float64)[0][:, :4].reshape(grouped.shape)
            self.assertTrue((np.abs(back - grouped) <= step[..., None] * (0.5 + 1e-5)).all(), kv_dtype)


class Step(Case):
    def run_sequence(self, kv_dtype, threads=1):
        """A ragged batch: sequence 0 starts with a 7-token prompt, sequence 1 with 12 (appended first), then both
        prefill a 5-token chunk in one step and decode 4 tokens one step at a time."""
        rng = np.random.default_rng(5)
        cache = attngen.KVCache.allocate(2, CAPACITY, KV_HEADS, D, kv_dtype)
        prefill = attngen.select(HEADS, KV_HEADS, D, mask="causal", phase="prefill", kv_dtype=kv_dtype)
        decode = attngen.select(HEADS, KV_HEADS, D, mask="causal", phase="decode", kv_dtype=kv_dtype)
        k0, v0 = uniform(rng, 2, 12, KV_HEADS, D), uniform(rng, 2, 12, KV_HEADS, D)
        prefill.append(cache, k0, v0)
        cache.lengths[:] = [7, 12]  # sequence 0 keeps 7 of the 12 rows written
        for kernel, n_new in ((prefill, 5), (decode, 1), (decode, 1), (decode, 1), (decode, 1)):
            q = uniform(rng, 2, n_new, HEADS, D)
            k_new, v_new = uniform(rng, 2, n_new, KV_HEADS, D), uniform(rng, 2, n_new, KV_HEADS, D)
            before = cache.lengths.copy()
            out, lse = kernel.step(cache, q, k_new, v_new, return_lse=True, threads=threads)
            self.assertEqual((cache.lengths - before).tolist(), [n_new, n_new])
            k64, v64 = cache.dequantized(np.float64)
            for b in range(2):
                rows = int(cache.lengths[b])
                ref, ref_lse = sdpa64(q[b:b + 1], k64[b:b + 1], v64[b:b + 1], causal=True, kv_len=rows)
                self.assertAttention(out[b:b + 1], ref, lse[b:b + 1], ref_lse,
                                     f"{kv_dtype} {kernel.phase} sequence {b} at {rows} rows")

    def test_fp32(self):
        self.run_sequence("f32")

    def test_fp32_two_threads(self):
        self.run_sequence("f32", threads=2)

    def test_reduced_precision(self):
        for kv_dtype in ("f16", "bf16", "int8"):
            self.run_sequence(kv_dtype)

    def test_a_strided_cache_view(self):
        # the cache as a view into a larger buffer (every other row of a head-major store): written in place
        store = np.zeros((2, KV_HEADS, 2 * CAPACITY, D), np.float32)
        k = store.transpose(0, 2, 1, 3)[:, ::2]
        v = np.zeros_like(k)
        cache = attngen.KVCache(k, v)
        rng = np.random.default_rng(9)
        q, k_new, v_new = uniform(rng, 2, 3, HEADS, D), uniform(rng, 2, 3, KV_HEADS, D), uniform(rng, 2, 3, KV_HEADS, D)
        out = attngen.select(HEADS, KV_HEADS, D, mask="causal").step(cache, q, k_new, v_new)
        self.assertTrue(np.array_equal(store[:, :, 0:6:2].transpose(0, 2, 1, 3), k_new))
        self.assertTrue((store[:, :, 1::2] == 0).all())
        self.assertAttention(out, sdpa64(q, k_new, v_new, causal=True)[0], what="strided cache")


if __name__ == "__main__":
    unittest.main()
