# SPDX-License-Identifier: MIT
"""KVCache and the calls that write it: attngen_kv_append and the fused decode / chunked-prefill attngen_step.

The C API never changes the lengths; a KVCache keeps them (cache.lengths, int32 [batch]) and advances them by n_new
after each successful call, as a model's loop would."""
import ctypes

import numpy as np

from . import _abi, dtypes
from ._tensors import as_array, check_dtype, check_shape, four_d, int32_vector, pointer, strides
from .errors import check
from .kernel import KV_LAYOUT, Q_LAYOUT, c_int, check_cache_type, outputs, result, scale_arrays, set_features, set_kv

NEW_LAYOUT = "[batch, n_new, kv_heads, head_dim]"


class KVCache:
    """K and V caches [batch, capacity, kv_heads, head_dim] of one storage type (the caller's arrays or tensors,
    written in place), int8's scales [batch, capacity, kv_heads, head_dim / group], and the rows in use per
    sequence (lengths)."""

    def __init__(self, k, v, lengths=None, k_scale=None, v_scale=None, kv_dtype=None):
        self.k, self.v, self.k_scale, self.v_scale = k, v, k_scale, v_scale
        ka, va = as_array(k, "k cache", writable=True), as_array(v, "v cache", writable=True)
        self.batch, self.capacity, self.kv_heads, self.head_dim = four_d(ka, "k cache", KV_LAYOUT)
        check_shape(va, "v cache", ka.shape, KV_LAYOUT + " (as the k cache)")
        check_dtype(va, "v cache", ka.dtype)
        scale = None if k_scale is None else as_array(k_scale, "k_scale")
        self.kv_dtype = dtypes.infer(ka, scale, self.head_dim, kv_dtype)
        self._scales = tuple(as_array(s, n, writable=True) for s, n in
                             zip(scale_arrays(self.kv_dtype, k_scale, v_scale, ka.shape), ("k_scale", "v_scale")))
        self._kv = (ka, va)
        self.lengths = np.zeros(self.batch, np.int32) if lengths is None else \
            int32_vector(lengths, "lengths", self.batch).copy()

    @classmethod
    def allocate(cls, batch, capacity, kv_heads, head_dim, kv_dtype="f32"):
        """An empty cache of zeros, dense token-major, in NumPy arrays."""
        dtypes.check_name("kv_dtype", kv_dtype, _abi.KV_DTYPES)
        shape = (batch, capacity, kv_heads, head_dim)
        per_row = dtypes.scales_per_row(kv_dtype, head_dim)
        scales = [np.zeros(shape[:3] + (per_row,), np.float32) if per_row else None for _ in range(2)]
        return cls(*(np.zeros(shape, dtypes.NUMPY_DTYPE[kv_dtype]) for _ in range(2)), None, *scales,
                   kv_dtype=kv_dtype)

    def dequantized(self, dtype=np.float64):
        """(K, V) as `dtype`, every row (see attngen.dtypes.dequantize)."""
        scales = self._scales or (None, None)
        return tuple(dtypes.dequantize(x, s, self.kv_dtype, dtype) for x, s in zip(self._kv, scales))

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self._kv + self._scales)

    def _fill(self, c_args):
        """The cache fields of attngen_append_args."""
        c_args.kv_capacity = self.capacity
        c_args.cache_len = pointer(self.lengths)
        c_args.k_cache_stride, c_args.v_cache_stride = strides(self._kv[0], "k cache"), strides(self._kv[1], "v cache")
        set_kv(c_args, _abi.CACHE_KV_FIELDS[self.kv_dtype], self._kv, self._scales, ("k_scale", "v_scale"))


def _append_args(kernel, cache, k_new, v_new, pos):
    """attngen_append_args for new rows (a KVCache or a PagedKVCache), and the arrays it points into."""
    check_cache_type(kernel, cache)
    ka, va = as_array(k_new, "k_new"), as_array(v_new, "v_new")
    _, n_new, _, _ = four_d(ka, "k_new", NEW_LAYOUT)
    shape = (cache.batch, n_new, cache.kv_heads, cache.head_dim)
    for a, name in ((ka, "k_new"), (va, "v_new")):
        check_shape(a, name, shape, NEW_LAYOUT + " (batch, kv_heads, head_dim of the cache)")
        check_dtype(a, name, np.float32)
    positions = None if pos is None else int32_vector(pos, "pos", cache.batch * n_new)
    c = _abi.AppendArgs(batch=cache.batch, n_new=n_new)
    c.k_new, c.v_new = pointer(ka), pointer(va)
    c.k_new_stride, c.v_new_stride = strides(ka, "k_new"), strides(va, "v_new")
    c.pos = None if positions is None else pointer(positions)
    cache._fill(c)
    return c, (ka, va, positions)


def append(kernel, cache, k_new, v_new, pos=None):
    """Writes the new tokens' K (rotated by their positions with a RoPE kernel) and V, fp32 [batch, n_new, kv_heads,
    head_dim], into the cache at each sequence's length; pos: optional [batch, n_new] positions (default length + i)."""
    c, keep = _append_args(kernel, cache, k_new, v_new, pos)
    check(kernel._lib, kernel._lib.attngen_kv_append(ctypes.byref(kernel._c), ctypes.byref(c)), "attngen_kv_append")
    cache.lengths += c.n_new
    del keep


def step(kernel, cache, q, k_new, v_new, *, pos=None, scale=None, out=None, return_lse=False, threads=1, window=None,
         sink_tokens=None, softcap=None, sinks=None, alibi_slopes=None):
    """One decode or chunked-prefill step: append k_new/v_new, then attention of the n_new queries q (fp32
    [batch, n_new, heads, head_dim]) of each sequence against its cache, query i seeing keys j <= length + i.
    window, sink_tokens, softcap, sinks, alibi_slopes: the attention features' values, as in Kernel.bind.
    Returns out [batch, n_new, heads, head_dim], or (out, lse) with lse [batch, heads, n_new]."""
    c = _abi.StepArgs()
    c.kv, keep = _append_args(kernel, cache, k_new, v_new, pos)
    qa = as_array(q, "q")
    shape = (cache.batch, c.kv.n_new, kernel.heads, cache.head_dim)
    check_shape(qa, "q", shape, Q_LAYOUT + " (n_new of k_new)")
    check_dtype(qa, "q", np.float32)
    oa, lse = outputs(shape, out, return_lse)
    c.q, c.q_stride, c.o, c.o_stride = pointer(qa), strides(qa, "q"), pointer(oa), strides(oa, "out")
    c.scale = 0.0 if scale is None else float(scale)
    c.lse = None if lse is None else pointer(lse)
    vectors = set_features(c, kernel.heads, window, sink_tokens, softcap, sinks, alibi_slopes)
    lib, threads = kernel._lib, c_int(threads, "threads")
    if threads == 1:
        status = lib.attngen_step(ctypes.byref(kernel._c), ctypes.byref(c))
    else:
        status = lib.attngen_step_parallel(ctypes.byref(kernel._c), ctypes.byref(c), threads)
    check(lib, status, "attngen_step")
    cache.lengths += c.kv.n_new
    del keep, vectors
    return result(q, out, oa, lse)
