# SPDX-License-Identifier: MIT
"""The golden vectors of tests/golden/data (tests/README.md#golden-vectors) for test_golden*.py: loading, the rows
each phase's attention read, and the tolerances.

Tolerances, relative to max(1, max|want|) as in reference.py:
- Attention outputs: TOL_PER_LOGIT * max(1, L), L the layer's largest |scaled logit| (in the .json: 15 to 31 here).
  The model and attngen form the same fp32 logits in different summation orders, so a logit may differ by a few
  ulps of L (2^-24 L each); the softmax turns a logit difference d into a relative weight difference d, and the
  output, a weighted mean of v rows, moves by as much relative to its size. TOL_PER_LOGIT = 1e-6 allows 16 such ulps
  (seen: under 3.5e-8 L), while a wrong convention moves outputs by 1e-3 and more (soft-cap moves a logit of 5 by
  0.017; a window edge one key off drops or adds a key of non-negligible weight).
- RoPE: the model forms each angle in fp32, position * inv_freq with inv_freq itself fp32, so its angle may differ
  from the exact one by 2 ulps of the angle, at most 2^-22 * position radians (inv_freq <= 1); the rotated values move
  by that times their size, plus an ulp or two of the sin/cos products: rope_tol(p) = (p + 2) * 2^-22 for positions
  up to p (1e-5 at the last position here; seen: 5.5e-7).
- Inverse frequencies: 2^-22 relative: the model's fp32 pow and division (up to 1.5 ulps) and the table's fp32
  rounding (half an ulp); YaRN blends two such values, 2^-21.
The float64 statements of the conventions (golden_reference.py) are held to the same tolerances: the model's fp32
rounding is the only difference there."""
import json
import os
import unittest

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden", "data")
MODELS = ("mistral", "gemma2", "gemma3", "gpt-oss", "bloom")
TOL_PER_LOGIT = 1e-6
INV_FREQ_TOL = {"default": 2 ** -22, "linear": 2 ** -22, "yarn": 2 ** -21}


def rope_tol(last_position):
    """RoPE's tolerance for positions up to last_position (above)."""
    return (last_position + 2) * 2 ** -22


def load(name):
    with open(os.path.join(DATA, f"{name}.json")) as f:
        meta = json.load(f)
    with np.load(os.path.join(DATA, f"{name}.npz")) as z:
        arrays = {key: z[key] for key in z.files}
    return meta, arrays


def history(arrays, layer, upto):
    """The layer's k and v rows of the prefill and of decode steps 0 .. upto - 1, in position order."""
    parts = ["prefill"] + [f"decode{s}" for s in range(upto)]
    return tuple(np.concatenate([arrays[f"L{layer}.{p}.{x}"] for p in parts], axis=1) for x in ("k", "v"))


def phases(meta):
    return ["prefill"] + [f"decode{s}" for s in range(meta["decode_steps"])]


def phase_inputs(meta, arrays, layer, phase):
    """q, k, v (the rows the model's attention read: a decode step's from the cache's), their positions, and out."""
    i, T = layer["index"], meta["prefill_tokens"]
    p = f"L{i}.{phase}."
    if phase == "prefill":
        k, v, start = arrays[p + "k"], arrays[p + "v"], 0
    else:
        step = int(phase[len("decode"):])
        k, v = history(arrays, i, step + 1)
        rows = layer["cache_rows"][phase]
        k, v, start = k[:, -rows:], v[:, -rows:], T + step
    q = arrays[p + "q"]
    q_pos = np.arange(start, start + q.shape[1])
    return q, k, v, q_pos, np.arange(q_pos[-1] + 1 - k.shape[1], q_pos[-1] + 1), arrays[p + "out"]


class Golden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.golden = {name: load(name) for name in MODELS}

    def assertClose(self, got, want, tol, what):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        self.assertEqual(got.shape, want.shape, what)
        err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
        self.assertLessEqual(err, tol, f"{what}: max relative error {err:.3g} > {tol:.3g}")

    def assertOutput(self, got, want, layer, what):
        self.assertClose(got, want, TOL_PER_LOGIT * max(1.0, layer["max_abs_logit"]), what)

    def layers(self, *names, plain=False):
        """(model name, meta, arrays, layer) of the given models; plain: only layers with neither soft-cap nor sinks
        nor ALiBi (the window is handled by the callers)."""
        for name in names:
            meta, arrays = self.golden[name]
            for layer in meta["layers"]:
                i = layer["index"]
                if plain and (layer.get("softcap") or f"L{i}.sinks" in arrays or f"L{i}.alibi_slopes" in arrays):
                    continue
                yield name, meta, arrays, layer
