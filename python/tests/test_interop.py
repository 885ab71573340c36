# SPDX-License-Identifier: MIT
"""Tensors of other libraries, taken without copying: DLPack producers, __array_interface__, the buffer protocol, and
torch CPU tensors (skipped when torch is not importable), checked against the float64 reference (reference.py) and,
for torch, against torch.nn.functional.scaled_dot_product_attention."""
import importlib.util
import unittest

import numpy as np

import attngen
from reference import Case, sdpa64, uniform

HAVE_TORCH = importlib.util.find_spec("torch") is not None


class DLPackOnly:
    """An object that only speaks DLPack."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class ArrayInterfaceOnly:
    def __init__(self, a):
        self.__array_interface__ = a.__array_interface__
        self.a = a


class Protocols(Case):
    def setUp(self):
        rng = np.random.default_rng(8)
        self.q, self.k, self.v = uniform(rng, 2, 5, 4, 32), uniform(rng, 2, 7, 2, 32), uniform(rng, 2, 7, 2, 32)
        self.ref = sdpa64(self.q, self.k, self.v, causal=True)[0]

    def test_dlpack_array_interface_and_buffer_inputs(self):
        for wrap in (DLPackOnly, ArrayInterfaceOnly):
            out = attngen.attention(wrap(self.q), wrap(self.k), wrap(self.v), causal=True)
            self.assertAttention(out, self.ref, what=wrap.__name__)
        out = np.zeros_like(self.q)
        attngen.attention(memoryview(self.q), memoryview(self.k), memoryview(self.v), causal=True,
                          out=memoryview(out))
        self.assertAttention(out, self.ref, what="buffer protocol, out included")

    def test_an_output_that_would_be_a_copy_is_refused(self):
        with self.assertRaises(attngen.Error):
            attngen.attention(self.q, self.k, self.v, out=self.q.tolist())


@unittest.skipUnless(HAVE_TORCH, "torch is not importable")
class Torch(Case):
    def setUp(self):
        import torch
        self.torch = torch
        g = torch.Generator().manual_seed(0)
        self.q, self.k, self.v = (torch.rand(s, generator=g) * 2 - 1 for s in ((2, 9, 8, 64), (2, 20, 2, 64),
                                                                              (2, 20, 2, 64)))

    def sdpa(self, q, k, v, causal):
        """torch's SDPA on [batch, seq, heads, d] tensors; its causal mask is top-left aligned, so only q_len == kv_len
        is compared causally."""
        t = lambda x: x.transpose(1, 2)
        return t(self.torch.nn.functional.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=causal,
                                                                       enable_gqa=True))

    def test_matches_sdpa_and_float64(self):
        q, k, v = self.q, self.k, self.v
        out = attngen.attention(q, k, v)
        self.assertIsInstance(out, self.torch.Tensor)
        self.assertAttention(out.numpy(), sdpa64(q.numpy(), k.numpy(), v.numpy())[0], what="vs float64")
        self.assertAttention(out.numpy(), self.sdpa(q, k, v, False).double().numpy(), what="vs torch SDPA")
        # torch's fp32 result is itself within ~1e-6 of float64, so TOL bounds both errors together
        square = q, k[:, :9], v[:, :9]
        self.assertAttention(attngen.attention(*square, causal=True).numpy(), self.sdpa(*square, True).double().numpy(),
                             what="causal vs torch SDPA")

    def test_written_in_place_without_copies(self):
        torch = self.torch
        out = torch.empty_like(self.q)
        pointer = out.data_ptr()
        self.assertIs(attngen.attention(self.q, self.k, self.v, out=out), out)
        self.assertEqual(out.data_ptr(), pointer)
        # a permuted view: head-major storage read through its strides
        k_hm, v_hm = (x.transpose(1, 2).contiguous().transpose(1, 2) for x in (self.k, self.v))
        self.assertFalse(k_hm.is_contiguous())
        got = attngen.attention(self.q, k_hm, v_hm, causal=True).numpy()
        self.assertAttention(got, sdpa64(self.q.numpy(), self.k.numpy(), self.v.numpy(), causal=True)[0])

    def test_bfloat16_and_float16_caches_and_grad(self):
        torch = self.torch
        for dtype in (torch.bfloat16, torch.float16):
            k, v = self.k.to(dtype), self.v.to(dtype)
            out = attngen.attention(self.q.requires_grad_(), k, v, causal=True)
            self.assertAttention(out.numpy(), sdpa64(self.q.detach().numpy(), k.float().numpy(), v.float().numpy(),
                                                     causal=True)[0], what=str(dtype))

    def test_a_cache_of_torch_tensors(self):
        torch = self.torch
        cache = attngen.KVCache(torch.zeros(2, 16, 2, 64), torch.zeros(2, 16, 2, 64))
        out = attngen.select(8, 2, 64, mask="causal").step(cache, self.q[:, :3], self.k[:, :3], self.v[:, :3])
        self.assertTrue(torch.equal(cache.k[:, :3], self.k[:, :3]))
        self.assertAttention(out.numpy(), sdpa64(self.q[:, :3].numpy(), self.k[:, :3].numpy(), self.v[:, :3].numpy(),
                                                 causal=True)[0])


if __name__ == "__main__":
    unittest.main()
