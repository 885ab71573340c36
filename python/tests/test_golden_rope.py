# SPDX-License-Identifier: MIT
"""attngen's RoPE against the golden vectors (tests/golden/data): a model generated with each layer's shape and RoPE
parameters (attngen.build) rotates the recorded pre-RoPE q and k (Kernel.append) to the model's post-RoPE values,
and its kernels reproduce the model's outputs from the pre-RoPE q and k: the prefill kernel rotating Q, and the
decode loop on attngen's own cache, with the layer's window, soft-cap and sinks specialized in the kernels.
Tolerances: golden_data.py."""
import os
import shutil
import tempfile
import unittest

import numpy as np

import attngen
from golden_data import INV_FREQ_TOL, MODELS, Golden, phase_inputs, phases, rope_tol


def rope_lua(rope):
    """A config's rope field for the layer's RoPE (the .json's, as transformers names it), or None for a kind the
    generator has no config for (the skip names it)."""
    kind = rope["rope_type"]
    fields = [f'style = "{rope["style"]}"', f'theta = {rope["rope_theta"]!r}', f'rotary_dim = {rope["rotary_dim"]}']
    if kind == "linear":
        fields.append(f'scaling = {{ type = "linear", factor = {rope["factor"]!r} }}')
    elif kind == "yarn":
        fields.append('scaling = { type = "yarn", factor = %r, beta_fast = %r, beta_slow = %r, '
                      'original_max_position_embeddings = %d, truncate = %s }'
                      % (rope["factor"], rope["beta_fast"], rope["beta_slow"],
                         rope["original_max_position_embeddings"], str(rope["truncate"]).lower()))
    elif kind != "default":
        return None
    return "{ " + ", ".join(fields) + " }"


def features_lua(layer, arrays):
    """The config fields of the layer's attention features: its window, soft-cap and sink logits (values at run time)."""
    out = ""
    if layer["sliding_window"] is not None:
        out += f', window = {layer["sliding_window"]}'
    if layer["softcap"]:
        out += f', softcap = {layer["softcap"]!r}'
    if f"L{layer['index']}.sinks" in arrays:
        out += ", sinks = true"
    return out


@unittest.skipUnless(shutil.which(os.environ.get("CC", "cc")), "no C compiler")
class Rope(Golden):
    """attngen's RoPE, from a model generated with each layer's RoPE parameters and shape, against the model's."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = tempfile.mkdtemp(prefix="attngen-golden-")
        cls.built = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def model_for(self, name, meta, layer, arrays):
        """attngen.build of a config with the layer's shape, RoPE and attention features (window, softcap, sinks);
        skips naming a RoPE kind with no config."""
        rope = layer["rope"]
        lua = rope_lua(rope)
        if lua is None:
            self.skipTest(f"no attngen config for RoPE type {rope['rope_type']}")
        cname = f"golden-{name}-l{layer['index']}"
        if cname not in self.built:
            path = os.path.join(self.dir, cname + ".lua")
            with open(path, "w") as f:
                f.write(f'return {{ name = "{cname}", heads = {meta["heads"]}, kv_heads = {meta["kv_heads"]}, '
                        f'head_dim = {meta["head_dim"]}, masks = {{ "causal" }}, phases = {{ "prefill", "decode" }}, '
                        f'isas = {{ "avx512", "avx2", "neon", "scalar" }}, scale = {layer["scaling"]!r}, '
                        f'rope = {lua}{features_lua(layer, arrays)} }}\n')
            self.built[cname] = attngen.build(path, os.path.join(self.dir, cname))
        return self.built[cname]

    def rotate(self, model, x, positions):
        """x [1, n, heads, D] rotated by attngen: Kernel.append writes rotated rows into a cache of kv_heads heads,
        so the query heads go in as kv_heads-wide groups, one per cache sequence."""
        kernel = model.select(mask="causal", phase="decode")
        _, n, heads, D = x.shape
        groups = heads // model.kv_heads
        rows = np.ascontiguousarray(x[0].reshape(n, model.kv_heads, groups, D).transpose(2, 0, 1, 3))
        cache = attngen.KVCache.allocate(batch=groups, capacity=n, kv_heads=model.kv_heads, head_dim=D)
        kernel.append(cache, rows, rows, pos=np.broadcast_to(positions, (groups, n)))
        return cache.k.transpose(1, 2, 0, 3).reshape(1, n, heads, D)

    def rope_layers(self, kinds):
        for name, meta, arrays, layer in self.layers(*MODELS):
            if "rope" in layer and layer["rope"]["rope_type"] in kinds:
                yield name, meta, arrays, layer

    def check_rotation(self, kinds):
        ran = 0
        for name, meta, arrays, layer in self.rope_layers(kinds):
            model = self.model_for(name, meta, layer, arrays)
            i = layer["index"]
            for phase in phases(meta):
                positions = phase_inputs(meta, arrays, layer, phase)[3].astype(np.int32)
                for x in ("q", "k"):
                    p = f"L{i}.{phase}.{x}"
                    got = self.rotate(model, arrays[p + "_pre"], positions)
                    self.assertClose(got, arrays[p], rope_tol(positions[-1]), f"{name} L{i} {phase} {x} rotated")
            ran += 1
        return ran

    def check_inv_freq(self, kinds):
        """The table's inverse frequencies against the model's."""
        for name, meta, arrays, layer in self.rope_layers(kinds):
            model = self.model_for(name, meta, layer, arrays)
            want = arrays[f"L{layer['index']}.inv_freq"].astype(np.float64)
            self.assertClose(np.asarray(model.rope.inv_freq) / want, np.ones_like(want),
                             INV_FREQ_TOL[layer["rope"]["rope_type"]], f"{name} L{layer['index']} inv_freq")

    def test_rotation_default_and_linear(self):
        """Mistral, Gemma 2, Gemma 3's local layer (theta 1e4) and global layer (theta 1e6, linear 8)."""
        self.check_inv_freq(("default", "linear"))
        self.assertEqual(self.check_rotation(("default", "linear")), 5)

    def test_rotation_yarn(self):
        """gpt-oss: YaRN (factor 32, beta 32/1, original 4096, theta 150000, truncate false, cos/sin x 1.3466)."""
        self.check_inv_freq(("yarn",))
        self.assertEqual(self.check_rotation(("yarn",)), 2)

    def test_kernels_end_to_end(self):
        """Every RoPE layer through the model's own kernels from the pre-RoPE q, k, its window, soft-cap and sinks
        specialized: the prefill kernel rotating Q on K as append stored it, then the decode loop, Kernel.step on
        attngen's cache holding every key so far (a sliding layer's window picks the model's rows)."""
        ran = 0
        for name, meta, arrays, layer in self.rope_layers(("default", "linear", "yarn")):
            model = self.model_for(name, meta, layer, arrays)
            i, T = layer["index"], meta["prefill_tokens"]
            sinks = arrays.get(f"L{i}.sinks")
            extra = {} if sinks is None else {"sinks": sinks}
            p = f"L{i}.prefill."
            cache = attngen.KVCache.allocate(batch=1, capacity=T + meta["decode_steps"], kv_heads=model.kv_heads,
                                             head_dim=model.head_dim)
            decode = model.select(mask="causal", phase="decode")
            decode.append(cache, arrays[p + "k_pre"], arrays[p + "v"])
            prefill = model.select(mask="causal", phase="prefill")
            self.assertEqual(prefill.features, model.features)
            out = prefill(arrays[p + "q_pre"], cache.k[:, :T], cache.v[:, :T], **extra)
            self.assertOutput(out, arrays[p + "out"], layer, f"{name} L{i} prefill, attngen RoPE {model.features}")
            for s in range(meta["decode_steps"]):
                d = f"L{i}.decode{s}."
                out = decode.step(cache, arrays[d + "q_pre"], arrays[d + "k_pre"], arrays[d + "v"], **extra)
                self.assertOutput(out, arrays[d + "out"], layer, f"{name} L{i} decode{s}, attngen cache and RoPE")
            ran += 1
        self.assertEqual(ran, 7)     # Mistral, Gemma 2's two layers, Gemma 3's two, gpt-oss's two

if __name__ == "__main__":
    unittest.main()
