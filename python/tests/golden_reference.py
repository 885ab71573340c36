# SPDX-License-Identifier: MIT
"""The conventions of the golden vectors' models, stated in float64 NumPy (test_golden.py checks these statements
against what the models computed): attention with a sliding window, logit soft-cap, sink logits and ALiBi, and RoPE
inverse frequencies for transformers' default, linear and YaRN kinds. Written from the models' papers and configs;
they share no code with attngen or transformers."""
import math

import numpy as np


def attention64(q, k, v, scale, q_pos, k_pos, window=None, softcap=None, sinks=None, alibi_slopes=None):
    """q [1, S, H, D], k/v [1, L, KV, D] at positions q_pos [S], k_pos [L]. Query at i sees keys at j <= i, and with
    a window only i - window < j. Scores: s = q.k * scale; soft-cap s = c * tanh(s / c); ALiBi s += m_h * (j - i);
    sinks: one more logit per head in the softmax's denominator, with no value."""
    q, k, v = (np.asarray(x, np.float64)[0] for x in (q, k, v))
    S, H, D = q.shape
    group = H // k.shape[1]
    i, j = np.asarray(q_pos)[:, None], np.asarray(k_pos)[None, :]
    visible = (j <= i) & ((j > i - window) if window is not None else True)
    out = np.zeros((1, S, H, D))
    for h in range(H):
        s = q[:, h] @ k[:, h // group].T * scale
        if softcap is not None:
            s = softcap * np.tanh(s / softcap)
        if alibi_slopes is not None:
            s = s + float(alibi_slopes[h]) * (j - i)
        s = np.where(visible, s, -np.inf)
        m = s.max(axis=1, keepdims=True)
        if sinks is not None:
            m = np.maximum(m, float(sinks[h]))
        p = np.exp(s - m)
        total = p.sum(axis=1, keepdims=True) + (np.exp(float(sinks[h]) - m) if sinks is not None else 0)
        out[0, :, h] = p / total @ v[:, h // group]
    return out


def alibi_slopes64(heads):
    """Press et al.'s slopes: 2^(-8k/n) for k = 1..n, n the largest power of two <= heads; the remaining heads take
    the odd k of the 2n series, 2^(-8k/(2n)) for k = 1, 3, 5, ..."""
    n = 2 ** math.floor(math.log2(heads))
    slopes = [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]
    slopes += [2.0 ** (-8.0 * k / (2 * n)) for k in range(1, 2 * (heads - n), 2)]
    return np.array(slopes)


def inv_freq64(rope):
    """[rotary_dim / 2] inverse frequencies and the cos/sin factor of a layer's RoPE (the .json's "rope": transformers'
    rope_type and its parameters)."""
    dim, theta = rope["rotary_dim"], rope["rope_theta"]
    base = theta ** (-np.arange(0, dim, 2) / dim)
    kind = rope["rope_type"]
    if kind == "default":
        return base, 1.0
    if kind == "linear":
        return base / rope["factor"], 1.0
    if kind == "yarn":
        # YaRN (Peng et al.): frequencies that turn fewer than beta_slow times over the original context are
        # interpolated (divided by factor), those turning more than beta_fast times kept, a linear ramp between, over
        # dimension indices; truncate rounds the ramp's ends outward to whole indices. cos and sin are multiplied by
        # 0.1 ln(factor) + 1.
        factor, original = rope["factor"], rope["original_max_position_embeddings"]

        def dim_of(rotations):
            return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(theta))

        low, high = dim_of(rope["beta_fast"]), dim_of(rope["beta_slow"])
        if rope.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        ramp = np.clip((np.arange(dim // 2) - low) / (high - low if high > low else 0.001), 0, 1)
        return base / factor * ramp + base * (1 - ramp), 0.1 * math.log(factor) + 1
    raise ValueError(f"no float64 statement of RoPE type {kind}")


def rope64(x, positions, inv_freq, factor=1.0):
    """x [1, S, H, D] rotated rotate_half style (pairs (i, i + D/2)) by positions [S], cos and sin times factor."""
    x = np.array(x, np.float64)
    half = inv_freq.size
    angle = np.asarray(positions, np.float64)[:, None, None] * inv_freq
    cos, sin = np.cos(angle) * factor, np.sin(angle) * factor
    x0, x1 = x[..., :half].copy(), x[..., half:2 * half].copy()
    x[..., :half], x[..., half:2 * half] = x0 * cos - x1 * sin, x1 * cos + x0 * sin
    return x
