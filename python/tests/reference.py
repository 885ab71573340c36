# SPDX-License-Identifier: MIT
"""The float64 reference of scaled-dot-product attention the tests compare with, and their shared tolerance.

Tolerance: TOL = 1e-5 of max(1, max|ref|), the C suite's CASE_TOL (tests/cases.c has the derivation). The inputs are
uniform in [-1, 1] as there, so every output (a convex combination of V rows) is at most 1 in magnitude and the bound
is an absolute 1e-5, about 170 fp32 roundoffs: fp32 accumulation over head_dim <= 128 terms and a few hundred keys
errs by ~1e-6, while a kernel or binding bug (a wrong mask edge, a misread stride, a lost row) errs by 1e-3 and up.
Reduced-precision caches are compared with the reference on the values the cache holds (dequantized in float64), so
their rounding is not counted as error and the same tolerance applies. The log-sum-exp: 1e-5 * max(1, |lse|) per
element."""
import math
import unittest

import numpy as np

TOL = 1e-5


def sdpa64(q, k, v, causal=False, kv_lens=None, scale=None, kv_len=None):
    """float64 attention, token-major: q [B, S, H, D], k/v [B, L, KV, D] (first kv_len rows used). Causal is
    bottom-right aligned (query i sees keys j <= i + kv_len - q_len); kv_lens[b] limits sequence b's keys. Rows that
    see no key give zeros and lse -inf. Returns (out [B, S, H, D], lse [B, H, S])."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    B, S, H, D = q.shape
    L = k.shape[1] if kv_len is None else kv_len
    group = H // k.shape[2]
    scale = 1 / math.sqrt(D) if scale is None else scale
    out, lse = np.zeros((B, S, H, D)), np.full((B, H, S), -np.inf)
    i, j = np.arange(S)[:, None], np.arange(L)[None, :]
    for b in range(B):
        visible = np.ones((S, L), bool)
        if causal:
            visible &= j <= i + L - S
        if kv_lens is not None:
            visible &= j < kv_lens[b]
        for h in range(H):
            s = np.where(visible, q[b, :, h] @ k[b, :L, h // group].T * scale, -np.inf)
            m = s.max(axis=1, keepdims=True)
            seen = np.isfinite(m[:, 0])
            p = np.exp(s - np.where(np.isfinite(m), m, 0))
            total = p.sum(axis=1)
            out[b, seen, h] = (p[seen] / total[seen, None]) @ v[b, :L, h // group]
            lse[b, h, seen] = np.log(total[seen]) + m[seen, 0]
    return out, lse


def rope64(x, positions, rope):
    """x [B, S, H, D] rotated in float64 by positions [B, S], with rope's style and rotary_dim and inv_freq recomputed
    from its theta (theta^(-2p / rotary_dim): the configs here have no scaling), not read from the table."""
    x = np.array(x, np.float64)
    p = np.arange(rope.rotary_dim // 2)
    i0, i1 = (2 * p, 2 * p + 1) if rope.style == "interleaved" else (p, p + rope.rotary_dim // 2)
    angle = np.asarray(positions, np.float64)[:, :, None, None] * rope.theta ** (-2.0 * p / rope.rotary_dim)
    x0, x1 = x[..., i0], x[..., i1]
    x[..., i0], x[..., i1] = x0 * np.cos(angle) - x1 * np.sin(angle), x1 * np.cos(angle) + x0 * np.sin(angle)
    return x


def uniform(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


class Case(unittest.TestCase):
    """assertAttention: out (and lse) against float64 within TOL, with the worst error in the message."""

    def assertAttention(self, out, ref, lse=None, ref_lse=None, what=""):
        out = np.asarray(out, np.float64)
        self.assertEqual(out.shape, ref.shape, what)
        self.assertTrue(np.isfinite(out).all(), f"{what}: non-finite output")
        err = np.abs(out - ref).max() / max(1.0, np.abs(ref).max())
        self.assertLessEqual(err, TOL, f"{what}: max error {err:.3g} > {TOL:g}")
        if ref_lse is not None:
            lse = np.asarray(lse, np.float64)
            self.assertEqual(lse.shape, ref_lse.shape, what)
            finite = np.isfinite(ref_lse)
            self.assertTrue((np.isneginf(lse) == ~finite).all(), f"{what}: lse -inf where no key is seen, only there")
            lerr = (np.abs(lse[finite] - ref_lse[finite]) / np.maximum(1, np.abs(ref_lse[finite]))).max()
            self.assertLessEqual(lerr, TOL, f"{what}: lse error {lerr:.3g} > {TOL:g}")
