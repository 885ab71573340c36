# SPDX-License-Identifier: MIT
"""Bad arguments raise attngen.Error with the runtime's status and message (or, for what only Python can see, the
status the runtime would give and a message naming the argument), and write nothing."""
import os
import unittest

import numpy as np

import attngen
from attngen import _library
from reference import uniform


class RuntimeRefusals(unittest.TestCase):
    """Refused by the C runtime: the exception carries attngen_last_error() and attngen_status_name()."""

    def setUp(self):
        rng = np.random.default_rng(1)
        self.q, self.k, self.v = uniform(rng, 2, 4, 4, 32), uniform(rng, 2, 9, 2, 32), uniform(rng, 2, 9, 2, 32)
        self.lib = attngen.load_library()

    def assertRefused(self, code, call, *words):
        with self.assertRaises(attngen.Error) as caught:
            call()
        e = caught.exception
        self.assertEqual(e.code, code, str(e))
        self.assertEqual(e.message, self.lib.attngen_last_error().decode())
        self.assertEqual(e.status_name, self.lib.attngen_status_name(e.status).decode())
        for word in words:
            self.assertIn(word, e.message)
        return e

    def test_select(self):
        self.assertRefused("ATTNGEN_ERR_UNSUPPORTED", lambda: attngen.select(6, 4, 32), "multiple")
        self.assertRefused("ATTNGEN_ERR_UNSUPPORTED", lambda: attngen.select(4, 4, 513), "513")

    def test_run_writes_nothing_when_refused(self):
        kernel = attngen.select(4, 2, 32, mask="causal")
        out = np.full(self.q.shape, np.nan, np.float32)
        self.assertRefused("ATTNGEN_ERR_CAPACITY", lambda: kernel(self.q, self.k, self.v, kv_len=10, out=out), "10")
        self.assertTrue(np.isnan(out).all())

    def test_lengths(self):
        padding = attngen.select(4, 2, 32, mask="padding")
        self.assertRefused("ATTNGEN_ERR_LENGTHS", lambda: padding(self.q, self.k, self.v, kv_lens=[3, 10]), "10")
        self.assertRefused("ATTNGEN_ERR_LENGTHS", lambda: padding(self.q, self.k, self.v), "kv_lens")

    def test_alias_shape_dtype_stride(self):
        kernel = attngen.select(4, 2, 32, mask="causal")
        self.assertRefused("ATTNGEN_ERR_ALIAS", lambda: kernel(self.q, self.k, self.v, out=self.q))
        decode = attngen.select(4, 2, 32, mask="causal", phase="decode")
        q9 = uniform(np.random.default_rng(2), 2, 9, 4, 32)
        self.assertRefused("ATTNGEN_ERR_SHAPE", lambda: decode(q9, self.k, self.v), "q_len")
        f16 = attngen.select(4, 2, 32, mask="causal", kv_dtype="f16")
        self.assertRefused("ATTNGEN_ERR_DTYPE", lambda: f16(self.q, self.k, self.v), "f16")
        other_heads = attngen.select(8, 2, 32)
        self.assertRefused("ATTNGEN_ERR_SHAPE", lambda: other_heads(self.q, self.k, self.v), "heads")
        self.assertRefused("ATTNGEN_ERR_STRIDE", lambda: kernel(self.q, self.k[:, ::-1], self.v), "stride")

    def test_step_past_capacity_appends_nothing(self):
        cache = attngen.KVCache.allocate(2, 9, 2, 32)
        cache.lengths[:] = [2, 8]
        kernel = attngen.select(4, 2, 32, mask="causal")
        self.assertRefused("ATTNGEN_ERR_CAPACITY", lambda: kernel.step(cache, self.q[:, :2], self.k[:, :2],
                                                                       self.v[:, :2]))
        self.assertEqual(cache.lengths.tolist(), [2, 8])
        self.assertTrue((cache.k == 0).all())


class PythonRefusals(unittest.TestCase):
    """What the runtime cannot see (array shapes and dtypes, broadcasting): refused before any C call."""

    def setUp(self):
        rng = np.random.default_rng(3)
        self.q, self.k, self.v = uniform(rng, 1, 4, 4, 32), uniform(rng, 1, 6, 4, 32), uniform(rng, 1, 6, 4, 32)

    def assertRefused(self, code, call, *words):
        with self.assertRaises(attngen.Error) as caught:
            call()
        self.assertEqual(caught.exception.code, code, str(caught.exception))
        for word in words:
            self.assertIn(word, str(caught.exception))

    def test_layouts(self):
        q, k, v = self.q, self.k, self.v
        self.assertRefused("ATTNGEN_ERR_SHAPE", lambda: attngen.attention(q[0], k, v), "4-D")
        self.assertRefused("ATTNGEN_ERR_SHAPE", lambda: attngen.attention(q, k, v[:, :5]), "v")
        self.assertRefused("ATTNGEN_ERR_SHAPE", lambda: attngen.attention(q, k[..., :16], v[..., :16]), "head_dim")
        self.assertRefused("ATTNGEN_ERR_STRIDE", lambda: attngen.attention(q, k, v[..., ::-1].copy()[..., ::-1]),
                           "last dimension")
        broadcast = np.broadcast_to(k[:, :1], k.shape)
        self.assertRefused("ATTNGEN_ERR_STRIDE", lambda: attngen.attention(q, broadcast, v), "broadcast")

    def test_dtypes(self):
        q, k, v = self.q, self.k, self.v
        self.assertRefused("ATTNGEN_ERR_DTYPE", lambda: attngen.attention(q.astype(np.float64), k, v), "float32")
        self.assertRefused("ATTNGEN_ERR_DTYPE", lambda: attngen.attention(q, k, v.astype(np.float16)), "v")
        self.assertRefused("ATTNGEN_ERR_DTYPE", lambda: attngen.attention(q, k.astype(np.int32), v.astype(np.int32)))
        i8 = k.astype(np.int8)
        self.assertRefused("ATTNGEN_ERR_NULL", lambda: attngen.attention(q, i8, i8), "scale")
        bad_scales = np.ones((1, 6, 4, 3), np.float32)
        self.assertRefused("ATTNGEN_ERR_SHAPE", lambda: attngen.attention(q, i8, i8, k_scale=bad_scales,
                                                                          v_scale=bad_scales), "scales per row")
        self.assertRefused("ATTNGEN_ERR_DTYPE", lambda: attngen.attention(q, k, v, k_scale=bad_scales,
                                                                          v_scale=bad_scales), "no scales")

    def test_names_and_counts(self):
        self.assertRefused("ATTNGEN_ERR_UNSUPPORTED", lambda: attngen.select(4, 4, 32, mask="causual"), "causal")
        self.assertRefused("ATTNGEN_ERR_UNSUPPORTED", lambda: attngen.select(4, 4, 32, isa="sse"), "avx2")
        self.assertRefused("ATTNGEN_ERR_SIZE", lambda: attngen.select(4, 4, 2**31), "head_dim")
        self.assertRefused("ATTNGEN_ERR_LENGTHS", lambda: attngen.attention(self.q, self.k, self.v, kv_lens=[1, 2]),
                           "1 entries")
        self.assertRefused("ATTNGEN_ERR_LENGTHS", lambda: attngen.attention(self.q, self.k, self.v, kv_lens=[2**33]),
                           "int32")

    def test_read_only_output(self):
        out = np.zeros(self.q.shape, np.float32)
        out.flags.writeable = False
        self.assertRefused("ATTNGEN_ERR_ALIAS", lambda: attngen.attention(self.q, self.k, self.v, out=out),
                           "read-only")


class LibraryLookup(unittest.TestCase):
    def test_a_missing_library_says_where_it_looked(self):
        with self.assertRaises(attngen.LibraryNotFound) as caught:
            _library.load("/nonexistent/libattngen.so")
        self.assertIn("/nonexistent/libattngen.so", str(caught.exception))

    def test_search_order(self):
        saved = os.environ.get("ATTNGEN_LIBRARY")
        try:
            os.environ["ATTNGEN_LIBRARY"] = "/from/env.so"
            places = [where for where, _ in _library.candidates("/explicit.so")]
            self.assertEqual([p for _, p in _library.candidates("/explicit.so")][:3],
                             ["/explicit.so", "/from/env.so", _library.SOURCE_TREE_LIBRARY])
            self.assertTrue(places[3].startswith("system"))
            with self.assertRaises(attngen.LibraryNotFound) as caught:
                _library.load("/also/missing.so")
            self.assertIn("argument: /also/missing.so", str(caught.exception))
        finally:
            if saved is None:
                del os.environ["ATTNGEN_LIBRARY"]
            else:
                os.environ["ATTNGEN_LIBRARY"] = saved


if __name__ == "__main__":
    unittest.main()
