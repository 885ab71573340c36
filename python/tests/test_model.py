# SPDX-License-Identifier: MIT
"""attngen.build: generate a config's tables, compile them, load them, and select and run their kernels against the
float64 reference (reference.py: tolerance and why)."""
import os
import shutil
import tempfile
import unittest

import numpy as np

import attngen
from reference import Case, sdpa64, uniform

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
                ref, ref_lse = sdpa64(q, k, v, causal=True)
                kernel = self.model.select(mask="causal", phase=phase, isa=isa)
                self.assertEqual((kernel.isa, kernel.generic), (isa, False))
                out, lse = kernel(q, k, v, return_lse=True)
                self.assertAttention(out, ref, lse, ref_lse, kernel.name)
                f16 = [x.astype(np.float16) for x in (k, v)]
                out = self.model.select(mask="causal", phase=phase, kv_dtype="f16", isa=isa)(q, *f16)
                self.assertAttention(out, sdpa64(q, *(x.astype(np.float64) for x in f16), causal=True)[0],
                                     f"{isa} {phase} f16")

    def test_attention_and_step_with_the_model(self):
        rng = np.random.default_rng(6)
        q, k, v = uniform(rng, 1, 6, 4, 32), uniform(rng, 1, 6, 2, 32), uniform(rng, 1, 6, 2, 32)
        self.assertAttention(attngen.attention(q, k, v, causal=True, model=self.model), sdpa64(q, k, v, causal=True)[0])
        cache = attngen.KVCache.allocate(1, 8, 2, 32, "f16")
        decode = self.model.select(mask="causal", phase="decode", kv_dtype="f16")
        out = decode.step(cache, q[:, :1], k[:, :1], v[:, :1])
        k64, v64 = cache.dequantized()
        self.assertAttention(out, sdpa64(q[:, :1], k64, v64, kv_len=1)[0], what=decode.name)

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
