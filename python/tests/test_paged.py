# SPDX-License-Identifier: MIT
"""PagedKVCache: pools of pages and shuffled block tables, against a contiguous KVCache fed the same calls by the same
table's contiguous kernels, and against the float64 reference (reference.py: tolerance and why).

Paged and contiguous results must be the same bits (one thread each): a paged decode kernel reads each row from its
page with the contiguous kernel's tiling, and paged prefill reads the runtime's gathered copy, so pages change where
rows are read, never the arithmetic. Against float64 the bound is reference.py's TOL on the values the cache holds
(dequantized), K rotated as stored and Q rotated in float64 by its position (rope64). The cascade merges two partial
softmaxes in fp32, so it is held to TOL against float64 and against attention over the whole cache, not to bits."""
import os
import shutil
import tempfile
import unittest

import numpy as np

import attngen
from reference import Case, rope64, sdpa64, uniform

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "py-paged-h4-kv2-d32.lua")
H, KVH, D = 4, 2, 32
TYPES = ("f32", "f16", "bf16", "int8")
MASK = "causal_padding"  # the config's one mask: kv_lens for ragged batches; the step fills them itself


MODEL = {}


def setUpModule():
    if shutil.which(os.environ.get("CC", "cc")):  # one build for both classes
        MODEL["dir"] = tempfile.mkdtemp(prefix="attngen-paged-")
        MODEL["model"] = attngen.build(CONFIG, MODEL["dir"])


def tearDownModule():
    if "dir" in MODEL:
        shutil.rmtree(MODEL["dir"])


def shuffled_cache(rng, batch, page_size, max_pages, kv_dtype, spare=3):
    """A paged cache whose block table names a random permutation of its pool's pages (spare pages unused)."""
    num_pages = batch * max_pages + spare
    cache = attngen.PagedKVCache.allocate(batch, num_pages, page_size, KVH, D, max_pages, kv_dtype)
    cache.block_table[:] = rng.permutation(num_pages)[:batch * max_pages].reshape(batch, max_pages)
    return cache


@unittest.skipUnless(shutil.which(os.environ.get("CC", "cc")), "no C compiler")
class Paged(Case):
    @classmethod
    def setUpClass(cls):
        cls.model = MODEL["model"]

    def kernels(self, kv_dtype, page_size):
        """(prefill, decode) for the paged cache, and the same two for the contiguous one."""
        sel = lambda phase, ps: self.model.select(mask=MASK, phase=phase, kv_dtype=kv_dtype, page_size=ps)
        return (sel("prefill", page_size), sel("decode", page_size)), (sel("prefill", 0), sel("decode", 0))

    def assertSameBits(self, paged, contiguous, what):
        for p, c in zip(paged if isinstance(paged, tuple) else (paged,), contiguous if isinstance(contiguous, tuple)
                        else (contiguous,)):
            self.assertTrue(np.array_equal(p, c), f"{what}: paged differs from contiguous by "
                                                  f"{np.abs(np.asarray(p, np.float64) - c).max():.3g}")

    def reference(self, cache, q, lengths):
        """float64 attention of q (each sequence's last q_len rows) over each sequence's rows, Q rotated in float64."""
        k64, v64 = cache.dequantized(np.float64)
        q_len = q.shape[1]
        out = np.zeros(q.shape)
        for b, rows in enumerate(lengths):
            q64 = rope64(q[b:b + 1], np.arange(rows - q_len, rows)[None], self.model.rope)
            out[b:b + 1] = sdpa64(q64, k64[b:b + 1], v64[b:b + 1], causal=True, kv_len=int(rows))[0]
        return out

    def test_every_type_and_page_size_equals_the_contiguous_cache(self):
        # a ragged batch (5 and 9 rows appended), a 6-token chunk of prefill, 3 decode steps (lengths 14 and 18:
        # the last pages partly filled), then attention over the cache alone, prefill and decode
        rng = np.random.default_rng(21)
        for kv_dtype in TYPES:
            for ps in self.model.page_sizes:
                what = f"{kv_dtype} page_size {ps}"
                (p_pre, p_dec), (c_pre, c_dec) = self.kernels(kv_dtype, ps)
                self.assertEqual((p_pre.page_size, p_dec.page_size, p_dec.generic), (ps, ps, False), what)
                paged = shuffled_cache(rng, 2, ps, -(-24 // ps), kv_dtype)
                flat = attngen.KVCache.allocate(2, paged.capacity, KVH, D, kv_dtype)
                k0, v0 = uniform(rng, 2, 9, KVH, D), uniform(rng, 2, 9, KVH, D)
                p_pre.append(paged, k0, v0)
                c_pre.append(flat, k0, v0)
                paged.lengths[:] = flat.lengths[:] = [5, 9]
                for (pk, ck), n_new in (((p_pre, c_pre), 6), ((p_dec, c_dec), 1), ((p_dec, c_dec), 1),
                                        ((p_dec, c_dec), 1)):
                    q = uniform(rng, 2, n_new, H, D)
                    k_new, v_new = uniform(rng, 2, n_new, KVH, D), uniform(rng, 2, n_new, KVH, D)
                    got = pk.step(paged, q, k_new, v_new, return_lse=True)
                    self.assertSameBits(got, ck.step(flat, q, k_new, v_new, return_lse=True), f"{what} step {n_new}")
                self.assertEqual(paged.lengths.tolist(), [14, 18], what)
                self.assertAttention(got[0], self.reference(paged, q, paged.lengths), what=f"{what} last step")
                self.assertSameBits(paged.dequantized(np.float32), flat.dequantized(np.float32), f"{what} rows")
                for kernel, flat_kernel, q_len in ((p_dec, c_dec, 1), (p_pre, c_pre, 5)):
                    q = uniform(rng, 2, q_len, H, D)
                    got = kernel(q, paged, return_lse=True)
                    want = flat_kernel(q, flat.k, flat.v, k_scale=flat.k_scale, v_scale=flat.v_scale,
                                       kv_lens=flat.lengths, kv_len=18, return_lse=True)
                    self.assertSameBits(got, want, f"{what} {kernel.phase} over the cache")

    def test_shared_prompt_pages_and_the_cascade(self):
        # a 37-row prompt appended once into sequence 0's pages (a one-sequence view of the same pools); sequence 1's
        # table names the same full pages and a copy of the partly filled one; then both decode 3 tokens
        rng = np.random.default_rng(22)
        P = 37
        for kv_dtype, ps in (("f32", 4), ("int8", 16), ("f16", 16)):
            what = f"{kv_dtype} page_size {ps}"
            (p_pre, p_dec), (c_pre, c_dec) = self.kernels(kv_dtype, ps)
            paged = shuffled_cache(rng, 2, ps, -(-48 // ps), kv_dtype)
            flat = attngen.KVCache.allocate(2, paged.capacity, KVH, D, kv_dtype)
            full = P // ps
            paged.block_table[1, :full] = paged.block_table[0, :full]
            first = attngen.PagedKVCache(paged.k, paged.v, paged.block_table[:1], k_scale=paged.k_scale,
                                         v_scale=paged.v_scale)
            k0, v0 = uniform(rng, 1, P, KVH, D), uniform(rng, 1, P, KVH, D)
            p_pre.append(first, k0, v0)
            c_pre.append(flat, np.concatenate([k0, k0]), np.concatenate([v0, v0]))
            src, dst = paged.block_table[:, full]
            for pool in (paged.k, paged.v) + ((paged.k_scale, paged.v_scale) if paged.k_scale is not None else ()):
                pool[dst] = pool[src]  # copy on write of the partly filled page
            paged.lengths[:] = P
            for _ in range(3):
                q = uniform(rng, 2, 1, H, D)
                k_new, v_new = uniform(rng, 2, 1, KVH, D), uniform(rng, 2, 1, KVH, D)
                got = p_dec.step(paged, q, k_new, v_new)
                self.assertSameBits(got, c_dec.step(flat, q, k_new, v_new), f"{what} shared prompt")
            self.assertAttention(got, self.reference(paged, q, paged.lengths), what=f"{what} shared prompt")
            out, lse = p_dec.cascade(paged, q, full, return_lse=True)
            whole, whole_lse = p_dec(q, paged, return_lse=True)
            self.assertAttention(out, self.reference(paged, q, paged.lengths), what=f"{what} cascade")
            self.assertAttention(out, whole.astype(np.float64), lse, whole_lse.astype(np.float64),
                                 f"{what} cascade against the whole cache")

    def test_a_head_major_pool_view(self):
        # pools stored [num_pages, kv_heads, page_size, head_dim], passed as their transposed views, against a
        # head-major contiguous cache (decode picks its P·V blocks by layout: same layout, same bits)
        rng = np.random.default_rng(23)
        (pre, dec), (c_pre, c_dec) = self.kernels("f16", 4)
        table = shuffled_cache(rng, 2, 4, 5, "f16").block_table
        store = [np.zeros((table.size + 3, KVH, 4, D), np.float16) for _ in range(2)]
        paged = attngen.PagedKVCache(*(s.transpose(0, 2, 1, 3) for s in store), table)
        flat = attngen.KVCache(*(np.zeros((2, KVH, 20, D), np.float16).transpose(0, 2, 1, 3) for _ in range(2)))
        k, v = uniform(rng, 2, 11, KVH, D), uniform(rng, 2, 11, KVH, D)
        q = uniform(rng, 2, 1, H, D)
        pre.append(paged, k, v)
        c_pre.append(flat, k, v)
        self.assertTrue(np.array_equal(store[0][table[1, 1]].transpose(1, 0, 2), flat.k[1, 4:8]), "rows 4..7 in place")
        got = dec(q, paged)
        self.assertSameBits(got, c_dec(q, flat.k, flat.v, kv_lens=flat.lengths, kv_len=11), "head-major pool")
        self.assertAttention(got, self.reference(paged, q, paged.lengths), what="head-major pool")


@unittest.skipUnless(shutil.which(os.environ.get("CC", "cc")), "no C compiler")
class PagedErrors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = MODEL["model"]

    def setUp(self):
        rng = np.random.default_rng(24)
        self.cache = shuffled_cache(rng, 2, 4, 3, "f32")
        self.dec = self.model.select(mask=MASK, phase="decode", page_size=4)
        self.k, self.q = uniform(rng, 2, 5, KVH, D), uniform(rng, 2, 1, H, D)
        self.dec.append(self.cache, self.k, self.k)

    def assertRefused(self, code, text, call, *args, **kwargs):
        with self.assertRaises(attngen.Error) as caught:
            call(*args, **kwargs)
        self.assertEqual(caught.exception.code, code, str(caught.exception))
        self.assertIn(text, caught.exception.message)
        return caught.exception

    def test_block_table_entries(self):
        c = self.cache
        pools = c.k.copy(), c.v.copy()
        c.block_table[1, 1] = c.num_pages
        self.assertRefused("ATTNGEN_ERR_PAGE", "block_table[1][1] = 9 is outside [0, num_pages = 9)", self.dec, self.q,
                           c)
        c.block_table[1, 1] = -1  # no page yet: attention may not read it, an append may not write it
        self.assertRefused("ATTNGEN_ERR_PAGE", "block_table[1][1] = -1", self.dec, self.q, c)
        self.assertRefused("ATTNGEN_ERR_CAPACITY", "nothing was appended", self.dec.append, c, self.k, self.k)
        self.assertEqual(c.lengths.tolist(), [5, 5])
        self.assertTrue(np.array_equal(c.k, pools[0]) and np.array_equal(c.v, pools[1]), "refused append wrote")

    def test_too_few_pages(self):
        k = uniform(np.random.default_rng(1), 2, 8, KVH, D)  # 5 + 8 rows, 3 pages of 4
        self.assertRefused("ATTNGEN_ERR_CAPACITY", "8 more do not fit", self.dec.append, self.cache, k, k)
        self.assertEqual(self.cache.lengths.tolist(), [5, 5])

    def test_pools_and_table(self):
        P = attngen.PagedKVCache
        k, t = np.zeros((4, 4, KVH, D), np.float32), np.zeros((2, 2), np.int32)
        self.assertRefused("ATTNGEN_ERR_SHAPE", "v pool must be", P, k, k[:3], t)
        self.assertRefused("ATTNGEN_ERR_DTYPE", "v pool must be float32", P, k, k.astype(np.float16), t)
        self.assertRefused("ATTNGEN_ERR_SHAPE", "k pool must be 4-D", P, k[0], k[0], t)
        self.assertRefused("ATTNGEN_ERR_SIZE", "power of two", P, k[:, :3], k[:, :3], t)
        self.assertRefused("ATTNGEN_ERR_DTYPE", "block_table must be int32", P, k, k, t.astype(np.int64))
        self.assertRefused("ATTNGEN_ERR_SHAPE", "block_table must be 2-D", P, k, k, t[0])
        self.assertRefused("ATTNGEN_ERR_STRIDE", "C-contiguous", P, k, k, np.zeros((2, 4), np.int32)[:, ::2])
        self.assertRefused("ATTNGEN_ERR_NULL", "needs k_scale and v_scale", P, k.astype(np.int8), k.astype(np.int8), t)
        self.assertRefused("ATTNGEN_ERR_SHAPE", "the cache 2 sequences", setattr, self.cache, "block_table", t[:1])

    def test_kernel_and_cache_disagree(self):
        c, q = self.cache, self.q
        self.assertRefused("ATTNGEN_ERR_SHAPE", "pages are set but the kernel reads a contiguous cache",
                           self.model.select(mask=MASK, phase="decode"), q, c)
        self.assertRefused("ATTNGEN_ERR_SHAPE", "pages.page_size (4) is not the kernel's page_size (16)",
                           self.model.select(mask=MASK, phase="decode", page_size=16), q, c)
        self.assertRefused("ATTNGEN_ERR_DTYPE", "reads a K/V cache of type f16",
                           self.model.select(mask=MASK, phase="decode", kv_dtype="f16", page_size=4), q, c)
        g32 = attngen.PagedKVCache.allocate(2, 9, 4, KVH, D, 3, "int8_g32")  # int8's layout at d32: told apart here
        self.assertRefused("ATTNGEN_ERR_DTYPE", "reads int8, the cache holds int8_g32",
                           self.model.select(mask=MASK, phase="decode", kv_dtype="int8", page_size=4), q, g32)
        self.assertRefused("ATTNGEN_ERR_SHAPE", "pass no v", self.dec, q, c, c.v)
        self.assertRefused("ATTNGEN_ERR_NULL", "v is missing", self.dec, q, c.k)
        self.assertRefused("ATTNGEN_ERR_SHAPE", "the paged cache 2 sequences", self.dec, q[:1], c)
        self.assertRefused("ATTNGEN_ERR_UNSUPPORTED", "no decode kernel for page_size 8", self.model.select, mask=MASK,
                           phase="decode", page_size=8)
        c.lengths[:] = [5, 3]  # ragged, and a mask that reads no kv_lens
        self.assertRefused("ATTNGEN_ERR_LENGTHS", "reads no kv_lens",
                           attngen.select(H, KVH, D, mask="causal", phase="prefill", page_size=4), q, c)

    def test_cascade_arguments(self):
        c, q = self.cache, self.q
        self.assertRefused("ATTNGEN_ERR_PAGE", "are not sequence 0's", self.dec.cascade, c, q, 1)
        c.block_table[1, 0] = c.block_table[0, 0]
        self.assertRefused("ATTNGEN_ERR_SIZE", "above max_pages", self.dec.cascade, c, q, 4)
        self.assertRefused("ATTNGEN_ERR_SIZE", "shared_pages", self.dec.cascade, c, q, 0)
        c.block_table[1, :2] = c.block_table[0, :2]
        self.assertRefused("ATTNGEN_ERR_LENGTHS", "fewer than the 8 rows", self.dec.cascade, c, q, 2)


if __name__ == "__main__":
    unittest.main()
