# SPDX-License-Identifier: MIT
"""attngen.build: generate a config's tables, compile them, load them, and select and run their kernels against the
float64 reference (reference.py: tolerance and why). The model has RoPE: its kernels rotate Q by each query's
position and read K as stored, so the reference rotates Q in float64 (rope64) and K where the append rotated it."""
import os
import shutil
import tempfile
import unittest

import numpy as np

import attngen
from golden_reference import attention64
from reference import Case, rope64, sdpa64, uniform

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "py-gqa-h4-kv2-d32.lua")


@unittest.skipUnless(shutil.which(os.environ.get("CC", "cc")), "no C compiler")
class Build(Case):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="attngen-model-")
        cls.model = attngen.build(CONFIG, cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_table(self):
        m = self.model
        self.assertEqual((m.name, m.heads, m.kv_heads, m.head_dim), ("py-gqa-h4-kv2-d32", 4, 2, 32))
        self.assertEqual({(k.phase, k.kv_dtype) for k in m.kernels},
                         {(p, t) for p in ("prefill", "decode") for t in ("f32", "f16")})
        # every ISA this target compiles (NEON only on aarch64, AVX only on x86-64), scalar everywhere
        self.assertIn("scalar", {k.isa for k in m.kernels})
        self.assertTrue({k.isa for k in m.kernels} <= {"avx512", "avx2", "neon", "scalar"})
        self.assertEqual((m.rope.style, m.rope.rotary_dim, m.rope.theta), ("half", 32, 10000))
        self.assertTrue(np.allclose(m.rope.inv_freq, 10000 ** (-np.arange(16) / 16), rtol=1e-15, atol=0))
        self.assertTrue(m.has(mask="causal", phase="decode", kv_dtype="f16"))
        self.assertFalse(m.has(mask="none"))

    def test_selects_its_kernels_on_the_best_isa(self):
        kernel = self.model.select(mask="causal", phase="prefill")
        self.assertFalse(kernel.generic)
        self.assertEqual(kernel.isa, attngen.cpu_isas()[0])
        self.assertEqual(kernel.name, f"attn_h4_kv2_d32_causal_prefill__{kernel.isa}")
        fallback = self.model.select(mask="none")
        self.assertTrue(fallback.generic)
        with self.assertRaises(attngen.Error) as caught:
            self.model.select(mask="none", isa="scalar")
        self.assertEqual(caught.exception.code, "ATTNGEN_ERR_UNSUPPORTED")

    def test_every_specialized_kernel_here(self):
        rng = np.random.default_rng(4)
        for isa in attngen.cpu_isas():
            for phase, q_len in (("prefill", 19), ("decode", 3)):
                q, k, v = uniform(rng, 2, q_len, 4, 32), uniform(rng, 2, 40, 2, 32), uniform(rng, 2, 40, 2, 32)
                q64 = self.rotated(q, 40)
                ref, ref_lse = sdpa64(q64, k, v, causal=True)
                kernel = self.model.select(mask="causal", phase=phase, isa=isa)
                self.assertEqual((kernel.isa, kernel.generic), (isa, False))
                out, lse = kernel(q, k, v, return_lse=True)
                self.assertAttention(out, ref, lse, ref_lse, kernel.name)
                f16 = [x.astype(np.float16) for x in (k, v)]
                out = self.model.select(mask="causal", phase=phase, kv_dtype="f16", isa=isa)(q, *f16)
                self.assertAttention(out, sdpa64(q64, *(x.astype(np.float64) for x in f16), causal=True)[0],
                                     f"{isa} {phase} f16")

    def rotated(self, q, kv_len, positions=None):
        """q rotated in float64 by its positions, by default those of bottom-right aligned queries."""
        if positions is None:
            positions = np.broadcast_to(np.arange(kv_len - q.shape[1], kv_len), q.shape[:2])
        return rope64(q, positions, self.model.rope)

    def test_attention_with_the_model_and_query_positions(self):
        rng = np.random.default_rng(6)
        q, k, v = uniform(rng, 2, 6, 4, 32), uniform(rng, 2, 6, 2, 32), uniform(rng, 2, 6, 2, 32)
        out = attngen.attention(q, k, v, causal=True, model=self.model)
        self.assertAttention(out, sdpa64(self.rotated(q, 6), k, v, causal=True)[0], what="default positions")
        positions = rng.integers(-1000, 100000, (2, 6))
        out = attngen.attention(q, k, v, causal=True, model=self.model, q_pos=positions)
        self.assertAttention(out, sdpa64(self.rotated(q, 6, positions), k, v, causal=True)[0], what="q_pos")

    def test_step_rotates_k_as_it_appends(self):
        rng = np.random.default_rng(10)
        q, k, v = uniform(rng, 2, 7, 4, 32), uniform(rng, 2, 7, 2, 32), uniform(rng, 2, 7, 2, 32)
        for kv_dtype in ("f32", "f16"):
            cache = attngen.KVCache.allocate(2, 16, 2, 32, kv_dtype)
            prefill = self.model.select(mask="causal", phase="prefill", kv_dtype=kv_dtype)
            decode = self.model.select(mask="causal", phase="decode", kv_dtype=kv_dtype)
            self.assertFalse(prefill.generic or decode.generic)
            prefill.step(cache, q[:, :6], k[:, :6], v[:, :6])
            out = decode.step(cache, q[:, 6:], k[:, 6:], v[:, 6:])
            k64, v64 = cache.dequantized()
            self.assertAttention(out, sdpa64(self.rotated(q[:, 6:], 7), k64, v64, causal=True, kv_len=7)[0],
                                 what=f"{kv_dtype} decode step after a prefill step")
            if kv_dtype == "f32":
                # fp32 rotation from a float64 angle: each element within ~5 fp32 roundoffs of float64 for |x| <= 1
                # (tests/cases.c), so 1e-6 holds it with room; a wrong position or pair is off by 1e-2 and up
                want = rope64(k, np.broadcast_to(np.arange(7), (2, 7)), self.model.rope)
                self.assertLessEqual(np.abs(k64[:, :7] - want).max(), 1e-6)
                self.assertTrue(np.array_equal(v64[:, :7], v), "V is not rotated")

    def test_an_unchanged_config_is_not_recompiled(self):
        so = self.model.path
        before = os.path.getmtime(so)
        again = attngen.build(CONFIG, self.dir)
        self.assertEqual(os.path.getmtime(so), before)
        self.assertEqual(len(again.kernels), len(self.model.kernels))

    def test_a_bad_config_raises_with_the_generator_message(self):
        bad = os.path.join(self.dir, "bad.lua")
        with open(bad, "w") as f:
            f.write('return { name = "bad", heads = 6, kv_heads = 4, head_dim = 32 }\n')
        with self.assertRaises(attngen.BuildError) as caught:
            attngen.build(bad, os.path.join(self.dir, "bad"))
        self.assertIn("kv_heads", str(caught.exception))


@unittest.skipUnless(shutil.which(os.environ.get("CC", "cc")), "no C compiler")
class KindsCase(Case):
    """A config with kinds of layers (CONFIG, in python/tests/configs), built into a temporary directory."""

    CONFIG = None

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="attngen-kinds-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def prefill(self, kind):
        """The kind's table and its specialized causal prefill kernel on the scalar ISA."""
        m = attngen.build(os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", self.CONFIG), self.dir,
                          kind=kind)
        kernel = m.select(mask="causal", phase="prefill", isa="scalar")
        self.assertFalse(kernel.generic)
        return m, kernel

    @staticmethod
    def inputs(seed, batch, n):
        """Random q [batch, n, 4, 32], k, v [batch, n, 1, 32]."""
        rng = np.random.default_rng(seed)
        return uniform(rng, batch, n, 4, 32), uniform(rng, batch, n, 1, 32), uniform(rng, batch, n, 1, 32)


class Kinds(KindsCase):
    """A config with kinds of layers: one compiled file, a table per kind with its own RoPE, the same kernels."""

    CONFIG = "py-kinds-h4-kv1-d32.lua"

    def test_each_kind_rotates_by_its_own_rope(self):
        q, k, v = self.inputs(12, 2, 9)
        names = []
        for kind, style, theta in (("local", "half", 10000), ("global", "interleaved", 1000000)):
            m, kernel = self.prefill(kind)
            self.assertEqual((m.name, m.rope.style, m.rope.theta), ("py-kinds-h4-kv1-d32/" + kind, style, theta))
            names.append(kernel.name)
            want = sdpa64(rope64(q, np.broadcast_to(np.arange(9), (2, 9)), m.rope), k, v, causal=True)[0]
            self.assertAttention(kernel(q, k, v), want, what=kind)
        self.assertEqual(names[0], names[1], "the kinds' kernels are not shared")
        with self.assertRaises(attngen.BuildError):  # a config with kinds has no table without a kind
            attngen.build(os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", self.CONFIG), self.dir)


class KindFeatures(KindsCase):
    """Attention features per kind of layers: each table's kernels carry its kind's features and its values."""

    CONFIG = "py-kinds-features-h4-kv1-d32.lua"

    def test_each_kind_attends_with_its_own_window(self):
        q, k, v = self.inputs(13, 1, 12)
        pos, names = np.arange(12), {}
        ref = lambda window: attention64(q, k, v, 32 ** -0.5, pos, pos, window=window, softcap=3.0)  # noqa: E731
        for kind, window in (("local", 5), ("wide", 9), ("global", None)):
            m, kernel = self.prefill(kind)
            features = ("softcap",) if window is None else ("window", "softcap")
            values = (m.feature_values["window"], m.feature_values["softcap"])
            self.assertEqual((m.features, kernel.features, values), (features, features, (window or 0, 3.0)), kind)
            names[kind] = kernel.name
            self.assertAttention(kernel(q, k, v), ref(window), what=kind)
            if window is not None:  # a call's own window overrides the table's
                self.assertAttention(kernel(q, k, v, window=2), ref(2), what=kind + " window=2")
        self.assertEqual(names["local"], names["wide"], "kinds that differ only in values share kernels")
        self.assertNotEqual(names["local"], names["global"])


class GeneratorLookup(unittest.TestCase):
    """Outside the source tree the installed `attngen` command generates; with neither, the error says so."""

    def setUp(self):
        from attngen import model
        self.model, self.saved = model, (model.SOURCE_GENERATOR, os.environ["PATH"])
        self.dir = tempfile.mkdtemp(prefix="attngen-generator-")
        model.SOURCE_GENERATOR = os.path.join(self.dir, "no-source-tree", "attngen.lua")

    def tearDown(self):
        self.model.SOURCE_GENERATOR, os.environ["PATH"] = self.saved
        shutil.rmtree(self.dir)

    def test_installed_command_then_none(self):
        source = self.saved[0]
        command = os.path.join(self.dir, "attngen")
        with open(command, "w") as f:
            f.write(f'#!/bin/sh\nexec {os.environ.get("LUA", "lua5.4")} {source} "$@"\n')
        os.chmod(command, 0o755)
        os.environ["PATH"] = self.dir + os.pathsep + self.saved[1]
        self.assertEqual(self.model.generator_command(), [command])
        c_file = attngen.generate(CONFIG, os.path.join(self.dir, "out"))
        self.assertTrue(c_file.endswith("attngen_py_gqa_h4_kv2_d32.c") and os.path.exists(c_file))
        os.environ["PATH"] = os.path.join(self.dir, "empty")
        with self.assertRaises(attngen.BuildError) as caught:
            attngen.generate(CONFIG, os.path.join(self.dir, "out"))
        self.assertIn("no generator", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
