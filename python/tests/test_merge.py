# SPDX-License-Identifier: MIT
"""attngen.merge_states against NumPy float64: attention over parts of the keys, merged, equals attention over all of
them (reference.py: TOL and why); the merge alone against a float64 merge of the same fp32 states."""
import unittest

import numpy as np

import attngen
from reference import Case, TOL, sdpa64, uniform


def merge64(outs, lses):
    """The float64 merge: lse = log sum exp(lse_i), out = sum exp(lse_i - lse) out_i; parts with lse -inf count for
    nothing (their out is not read), rows no part saw give zeros and -inf."""
    lses = np.asarray([np.asarray(x, np.float64) for x in lses])
    lse = np.logaddexp.reduce(lses, axis=0)
    seen = np.isfinite(lse)
    w = np.where(np.isfinite(lses), np.exp(lses - np.where(seen, lse, 0)), 0.0)  # [n, batch, heads, q_len]
    parts = np.asarray([np.where(np.isfinite(x.transpose(0, 2, 1))[..., None], np.asarray(o, np.float64), 0.0)
                        for o, x in zip(outs, lses)])
    out = np.einsum("nbhs,nbshd->bshd", w, parts)
    return out, lse


class MergeStates(Case):
    def setUp(self):
        self.rng = np.random.default_rng(11)

    def test_key_ranges_merge_into_the_whole_attention(self):
        batch, q_len, kv_len, heads, kv_heads, d = 2, 5, 90, 8, 2, 32
        q = uniform(self.rng, batch, q_len, heads, d)
        k, v = uniform(self.rng, batch, kv_len, kv_heads, d), uniform(self.rng, batch, kv_len, kv_heads, d)
        ref, ref_lse = sdpa64(q, k, v, causal=True)
        for cuts in ((0, 40, kv_len), (0, 11, 50, 86, kv_len)):  # every range but the last is seen whole by every query
            outs, lses = [], []
            for lo, hi in zip(cuts, cuts[1:]):
                o, lse = attngen.attention(q, k[:, lo:hi], v[:, lo:hi], causal=hi == kv_len, return_lse=True)
                outs.append(o), lses.append(lse)
            out, lse = attngen.merge_states(outs, lses)
            self.assertAttention(out, ref, lse, ref_lse, f"{len(cuts) - 1} ranges")

    def test_against_a_float64_merge_with_empty_and_large_states(self):
        n, batch, q_len, heads, d = 3, 2, 4, 3, 16
        outs = [uniform(self.rng, batch, q_len, heads, d) for _ in range(n)]
        lses = [self.rng.uniform(-20, 20, (batch, heads, q_len)).astype(np.float32) for _ in range(n)]
        lses[0][0, 0, :] = 1e4 + np.arange(q_len, dtype=np.float32)  # exp would overflow without the max subtracted
        lses[1][0, 0, :] = 1e4
        lses[2][0, 0, :] = -np.inf
        for x in lses:
            x[1, 2, 1] = -np.inf  # a row no part saw
        lses[1][1, 1, 3] = -np.inf  # one part without keys: its out is not read
        outs[1][1, 3, 1] = np.nan
        out, lse = attngen.merge_states(outs, lses)
        ref, ref_lse = merge64(outs, lses)
        self.assertAttention(out, ref, lse, ref_lse, "fp32 states")
        self.assertTrue((np.asarray(out)[1, 1, 2] == 0).all() and np.isneginf(lse[1, 2, 1]))

    def test_in_place_and_strided(self):
        batch, q_len, heads, d = 2, 3, 4, 8
        outs = [uniform(self.rng, batch, q_len, heads, d) for _ in range(2)]
        lses = [self.rng.uniform(-3, 3, (batch, heads, q_len)).astype(np.float32) for _ in range(2)]
        want, want_lse = attngen.merge_states(outs, lses)
        # a head-major output and a [batch, q_len, heads] lse, seen through transposed views
        strided = np.zeros((batch, heads, q_len, d), np.float32).transpose(0, 2, 1, 3)
        strided_lse = np.zeros((batch, q_len, heads), np.float32).transpose(0, 2, 1)
        attngen.merge_states(outs, lses, out=strided, lse_out=strided_lse)
        np.testing.assert_array_equal(strided, want)
        np.testing.assert_array_equal(strided_lse, want_lse)
        out, lse = attngen.merge_states(outs, lses, out=outs[1], lse_out=lses[0])
        self.assertIs(out, outs[1])
        np.testing.assert_array_equal(outs[1], want)
        np.testing.assert_array_equal(lses[0], want_lse)

    def test_refusals(self):
        outs = [uniform(self.rng, 1, 2, 2, 4) for _ in range(2)]
        lses = [np.zeros((1, 2, 2), np.float32) for _ in range(2)]
        buf = np.zeros(64, np.float32)
        cases = [("ATTNGEN_ERR_SIZE", dict(outs=[], lses=[])),
                 ("ATTNGEN_ERR_SIZE", dict(outs=outs, lses=lses[:1])),
                 ("ATTNGEN_ERR_SHAPE", dict(outs=[outs[0], outs[1][:, :1]], lses=lses)),
                 ("ATTNGEN_ERR_SHAPE", dict(outs=outs, lses=[lses[0], lses[1].transpose(0, 2, 1)[:, :, :1]])),
                 ("ATTNGEN_ERR_DTYPE", dict(outs=[outs[0], outs[1].astype(np.float64)], lses=lses)),
                 ("ATTNGEN_ERR_ALIAS", dict(outs=[buf[:16].reshape(1, 2, 2, 4), outs[1]], lses=lses,
                                            out=buf[1:17].reshape(1, 2, 2, 4))),
                 ("ATTNGEN_ERR_ALIAS", dict(outs=outs, lses=lses, lse_out=outs[0].reshape(-1)[:4].reshape(1, 2, 2)))]
        for code, kw in cases:
            before = [o.copy() for o in outs]
            with self.assertRaises(attngen.Error) as caught:
                attngen.merge_states(**kw)
            self.assertEqual(caught.exception.code, code, caught.exception)
            self.assertTrue(caught.exception.message)
            for o, b in zip(outs, before):
                np.testing.assert_array_equal(o, b)


if __name__ == "__main__":
    unittest.main()
