# SPDX-License-Identifier: MIT
"""attngen against the golden vectors of tests/golden/data: what tiny Mistral, Gemma 2, Gemma 3, gpt-oss and BLOOM
models computed in their attention layers, recorded from transformers' own fp32 code (tests/golden/make_golden.py,
tests/README.md#golden-vectors). They pin the conventions attngen must follow to be exact for those models: the
window's edge, soft-cap, sinks, ALiBi's slopes and sign (RoPE: test_golden_rope.py).

Conventions: the float64 statements of golden_reference.py reproduce every layer, and dropping or misplacing any one
convention misses by far more than the tolerance. PlainAttention: attngen's causal GQA attention on the recorded
post-RoPE q, k, v wherever a layer needs none of the missing features (full layers without soft-cap or sinks; sliding
layers on the query rows the window does not reach yet, and decode steps, whose cache presents exactly the window's
rows). Features: every layer and phase through attngen.attention with the layer's window, softcap, sinks and
alibi_slopes (attngen_args' feature values). Tolerances: golden_data.py."""
import inspect
import unittest

import numpy as np

import attngen
from golden_data import INV_FREQ_TOL, MODELS, TOL_PER_LOGIT, Golden, history, phase_inputs, phases, rope_tol
from golden_reference import alibi_slopes64, attention64, inv_freq64, rope64

ATTENTION_ARGS = set(inspect.signature(attngen.attention).parameters)


def missing(*names):
    """The attngen.attention arguments of `names` it does not take."""
    return [n for n in names if n not in ATTENTION_ARGS]


class Data(Golden):
    """The files themselves: complete, float32, and the shapes the .json states."""

    def test_every_model_every_phase(self):
        for name in MODELS:
            meta, arrays = self.golden[name]
            H, KV, D, T = meta["heads"], meta["kv_heads"], meta["head_dim"], meta["prefill_tokens"]
            for layer in meta["layers"]:
                for phase in phases(meta):
                    n = T if phase == "prefill" else 1
                    for x, heads in (("q", H), ("k", KV), ("v", KV), ("out", H)):
                        a = arrays[f"L{layer['index']}.{phase}.{x}"]
                        self.assertEqual((a.dtype, a.shape), (np.float32, (1, n, heads, D)), f"{name} {phase} {x}")
                        self.assertTrue(np.isfinite(a).all())


class PlainAttention(Golden):
    """attngen's causal GQA attention on the recorded post-RoPE q, k, v, with the layer's scaling."""

    def test_prefill_full_layers(self):
        ran = 0
        for name, meta, arrays, layer in self.layers(*MODELS, plain=True):
            if layer["sliding_window"] is None:
                p = f"L{layer['index']}.prefill."
                out = attngen.attention(arrays[p + "q"], arrays[p + "k"], arrays[p + "v"], causal=True,
                                        scale=layer["scaling"])
                self.assertOutput(out, arrays[p + "out"], layer, f"{name} L{layer['index']} prefill")
                ran += 1
        self.assertEqual(ran, 1)     # Gemma 3's global layer

    def test_prefill_rows_the_window_does_not_reach(self):
        """Query i < window sees keys 0..i with or without the window: the first `window` rows are plain causal."""
        ran = 0
        for name, meta, arrays, layer in self.layers(*MODELS, plain=True):
            w = layer["sliding_window"]
            if w is not None:
                p = f"L{layer['index']}.prefill."
                q, k, v = (arrays[p + x][:, :w] for x in "qkv")
                out = attngen.attention(q, k, v, causal=True, scale=layer["scaling"])
                self.assertOutput(out, arrays[p + "out"][:, :w], layer, f"{name} L{layer['index']} prefill[:{w}]")
                ran += 1
        self.assertEqual(ran, 2)     # Mistral, Gemma 3's local layer

    def test_decode_steps(self):
        """A decode query sees the whole cache of a full layer, and of a sliding layer exactly the rows the model's
        cache presents (the last `window`): plain attention over those rows."""
        ran = 0
        for name, meta, arrays, layer in self.layers(*MODELS, plain=True):
            for s in range(meta["decode_steps"]):
                k, v = history(arrays, layer["index"], s + 1)
                rows = layer["cache_rows"][f"decode{s}"]
                p = f"L{layer['index']}.decode{s}."
                out = attngen.attention(arrays[p + "q"], k[:, -rows:], v[:, -rows:], causal=True,
                                        scale=layer["scaling"])
                self.assertOutput(out, arrays[p + "out"], layer, f"{name} L{layer['index']} decode{s}")
                ran += 1
        self.assertEqual(ran, 3 * 3)


class Conventions(Golden):
    """The float64 statements of golden_reference.py against what the models computed, for every layer and phase:
    they need no attngen, and they are what the Features tests below expect attngen to match."""

    def features(self, arrays, layer):
        i = layer["index"]
        return dict(window=layer["sliding_window"], softcap=layer["softcap"], sinks=arrays.get(f"L{i}.sinks"),
                    alibi_slopes=arrays.get(f"L{i}.alibi_slopes"))

    def test_attention(self):
        for name, meta, arrays, layer in self.layers(*MODELS):
            for phase in phases(meta):
                q, k, v, q_pos, k_pos, want = phase_inputs(meta, arrays, layer, phase)
                got = attention64(q, k, v, layer["scaling"], q_pos, k_pos, **self.features(arrays, layer))
                self.assertOutput(got, want, layer, f"{name} L{layer['index']} {phase}")

    def test_each_convention_changes_the_outputs(self):
        """Without its window, soft-cap, sinks or ALiBi (or with the ALiBi sign or window edge wrong) a layer's
        prefill misses the model's output by over 100 times the tolerance: the vectors pin each convention."""
        wrong = (("window", "no window", lambda f: dict(f, window=None)),
                 ("window", "window one key wider", lambda f: dict(f, window=f["window"] + 1)),
                 ("softcap", "no soft-cap", lambda f: dict(f, softcap=None)),
                 ("sinks", "no sinks", lambda f: dict(f, sinks=None)),
                 ("alibi_slopes", "no ALiBi", lambda f: dict(f, alibi_slopes=None)),
                 ("alibi_slopes", "ALiBi sign flipped", lambda f: dict(f, alibi_slopes=-f["alibi_slopes"])))
        seen = set()
        for name, meta, arrays, layer in self.layers(*MODELS):
            q, k, v, q_pos, k_pos, want = phase_inputs(meta, arrays, layer, "prefill")
            right = self.features(arrays, layer)
            for feature, what, change in wrong:
                if right[feature] is None:
                    continue
                got = attention64(q, k, v, layer["scaling"], q_pos, k_pos, **change(right))
                err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
                tol = TOL_PER_LOGIT * max(1.0, layer["max_abs_logit"])
                self.assertGreater(err, 100 * tol, f"{name} L{layer['index']}: {what} changes too little")
                seen.add(what)
        self.assertEqual(seen, {what for _, what, _ in wrong})

    def test_alibi_slopes(self):
        meta, arrays = self.golden["bloom"]
        self.assertClose(arrays["L0.alibi_slopes"], alibi_slopes64(meta["heads"]), 2 ** -23, "bloom slopes")

    def test_rope(self):
        ran = set()
        for name, meta, arrays, layer in self.layers(*MODELS):
            if "rope" not in layer:
                continue
            i, kind = layer["index"], layer["rope"]["rope_type"]
            inv_freq, factor = inv_freq64(layer["rope"])
            self.assertClose(arrays[f"L{i}.inv_freq"] / inv_freq, np.ones_like(inv_freq), INV_FREQ_TOL[kind],
                             f"{name} L{i} inv_freq")
            self.assertAlmostEqual(factor, layer["rope"]["attention_scaling"], places=12)
            for phase in phases(meta):
                q_pos = phase_inputs(meta, arrays, layer, phase)[3]
                for x in ("q", "k"):
                    p = f"L{i}.{phase}.{x}"
                    self.assertClose(rope64(arrays[p + "_pre"], q_pos, inv_freq, factor), arrays[p],
                                     rope_tol(q_pos[-1]), f"{name} L{i} {phase} {x}")
            ran.add(kind)
        self.assertEqual(ran, {"default", "linear", "yarn"})


class Features(Golden):
    """Each layer's features through attngen.attention's arguments of the same names as attngen_args' fields: the
    whole prefill and every decode step against the model's outputs."""

    def run_layers(self, names, args, select, extra):
        """Every selected layer's prefill and decode steps through attngen.attention(..., **extra(layer, arrays))."""
        self.assertEqual(missing(*args), [], "attngen.attention arguments")
        ran = 0
        for name, meta, arrays, layer in self.layers(*names):
            if not select(layer, arrays):
                continue
            for phase in phases(meta):
                q, k, v, _, _, want = phase_inputs(meta, arrays, layer, phase)
                out = attngen.attention(q, k, v, causal=True, scale=layer["scaling"], **extra(layer, arrays))
                self.assertOutput(out, want, layer, f"{name} L{layer['index']} {phase}")
                ran += 1
        self.assertGreater(ran, 0)

    def test_sliding_window(self):
        """attngen.attention(q, k, v, causal=True, window=W): query i sees keys j with
        i - W < j <= i (W keys, itself included), HF's mask; Mistral and Gemma 3's local layer."""
        self.run_layers(("mistral", "gemma3"), ["window"], lambda l, a: l["sliding_window"] is not None,
                        lambda l, a: {"window": l["sliding_window"]})

    def test_softcap(self):
        """attngen.attention(..., softcap=50.0, window=W or None): s = 50 * tanh(s * scale / 50)
        before the mask; Gemma 2, both layer kinds."""
        self.run_layers(("gemma2",), ["softcap", "window"], lambda l, a: True,
                        lambda l, a: {"softcap": l["softcap"], "window": l["sliding_window"]})

    def test_sinks(self):
        """attngen.attention(..., sinks=s, window=W or None), s fp32 [heads]: one extra logit per
        head in each row's softmax, with no value; gpt-oss, both layer kinds."""
        self.run_layers(("gpt-oss",), ["sinks", "window"], lambda l, a: True,
                        lambda l, a: {"sinks": a[f"L{l['index']}.sinks"], "window": l["sliding_window"]})

    def test_alibi(self):
        """attngen.attention(..., alibi_slopes=m), m fp32 [heads]: score + m_h * (j - i), the same per row
        as BLOOM's m_h * j; BLOOM, 12 heads."""
        self.run_layers(("bloom",), ["alibi_slopes"], lambda l, a: True,
                        lambda l, a: {"alibi_slopes": a[f"L{l['index']}.alibi_slopes"]})


if __name__ == "__main__":
    unittest.main()
