# SPDX-License-Identifier: MIT
"""Kernel: what attngen_select chose for a shape; bind() checks a call's tensors once, the returned Call runs it."""
import collections
import ctypes
import math

import numpy as np

from . import _abi, _library, dtypes
from ._tensors import as_array, check_dtype, check_shape, four_d, int32_vector, is_torch, pointer, strides, INT_MAX
from .errors import check, refuse

Q_LAYOUT = "[batch, q_len, heads, head_dim]"
KV_LAYOUT = "[batch, kv_capacity, kv_heads, head_dim]"


def c_int(value, name, low=-INT_MAX - 1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= INT_MAX:
        raise refuse("ATTNGEN_ERR_SIZE", f"attngen: {name} must be an int in [{low}, {INT_MAX}], got {value!r}")
    return int(value)


def feature_bits(features):
    """attngen_shape.features of attention feature names ("window", "softcap", "sinks", "alibi")."""
    bits = 0
    for name in features or ():
        if name not in _abi.ATTN_FEATURES:
            raise refuse("ATTNGEN_ERR_SHAPE", f"attngen: unknown attention feature {name!r} (known: "
                                              f"{', '.join(_abi.ATTN_FEATURES)})")
        bits |= _abi.ATTN_FEATURES[name]
    return bits


def feature_names(bits):
    return tuple(n for n, bit in _abi.ATTN_FEATURES.items() if bits & bit)


def make_shape(heads, kv_heads, head_dim, mask, phase, kv_dtype, features=(), page_size=0):
    kv_heads = heads if kv_heads is None else kv_heads
    return _abi.Shape(c_int(heads, "heads"), c_int(kv_heads, "kv_heads"), c_int(head_dim, "head_dim"),
                      dtypes.check_name("mask", mask, _abi.MASKS), dtypes.check_name("phase", phase, _abi.PHASES),
                      dtypes.check_name("kv_dtype", kv_dtype, _abi.KV_DTYPES), feature_bits(features),
                      c_int(page_size, "page_size", 0))


def alibi_slopes(heads, max_bias=8.0, library=None):
    """ALiBi's slopes of `heads` query heads (attngen_alibi_slopes: BLOOM's rule with max_bias), fp32 [heads]."""
    lib = _library.load(library)
    out = np.empty(c_int(heads, "heads", 1), np.float32)
    check(lib, lib.attngen_alibi_slopes(heads, float(max_bias), out.ctypes.data), "attngen_alibi_slopes")
    return out


def features_given(window=None, sink_tokens=None, softcap=None, sinks=None, alibi_slopes=None):
    """The attention features a call's values turn on (sink_tokens belongs to the window)."""
    given = {"window": window, "softcap": softcap, "sinks": sinks, "alibi": alibi_slopes}
    return tuple(n for n, v in given.items() if v is not None)


def set_features(c_args, heads, window, sink_tokens, softcap, sinks, alibi_slopes):
    """Fills the feature fields of attngen_args / attngen_step_args (None: 0 / NULL, the table's value). Returns the
    arrays they point into (sinks, alibi_slopes: fp32 [heads], copied dense), to keep alive with the call."""
    c_args.window = 0 if window is None else c_int(window, "window")
    c_args.sink_tokens = 0 if sink_tokens is None else c_int(sink_tokens, "sink_tokens")
    c_args.softcap = 0.0 if softcap is None else float(softcap)
    keep = []
    for field, x in (("sinks", sinks), ("alibi_slopes", alibi_slopes)):
        a = None
        if x is not None:
            a = np.ascontiguousarray(as_array(x, field), dtype=np.float32).ravel()
            if a.size != heads:
                raise refuse("ATTNGEN_ERR_SIZE", f"attngen: {field} must have {heads} entries (one per query head), "
                                                 f"got {a.size}")
        setattr(c_args, field, None if a is None else pointer(a))
        keep.append(a)
    return tuple(keep)


# A table's rotary position embedding: style "none", "half" (rotate_half) or "interleaved"; the first rotary_dim dims
# of each head turn, pair p by position * inv_freq[p] (theta: the config's base, inv_freq with any scaling applied);
# cs_scale multiplies every cos and sin (YaRN's attention factor, else 1; 0 without RoPE).
Rope = collections.namedtuple("Rope", "style rotary_dim theta inv_freq cs_scale")


def rope_of(params):
    r = params.rope
    inv_freq = ctypes.cast(r.inv_freq, ctypes.POINTER(ctypes.c_double)) if r.inv_freq else None
    return Rope(_abi.ROPE_STYLES[r.style], r.rotary_dim, r.theta,
                np.array(inv_freq[:r.rotary_dim // 2]) if inv_freq else np.zeros(0), r.cs_scale)


def select(heads, kv_heads=None, head_dim=None, mask="none", phase="prefill", kv_dtype="f32", isa=None, library=None,
           features=(), page_size=0):
    """The generic kernel for a shape, without a model: on the best ISA of this CPU (attngen_select), or on `isa`
    (attngen_select_generic; refused when the CPU lacks it). kv_heads defaults to heads; features: the attention
    features it applies ("window", "softcap", "sinks", "alibi"), whose values each call then gives; page_size: rows
    per page of a PagedKVCache (0: a contiguous cache; the generic kernels read pages in prefill only)."""
    lib = _library.load(library)
    shape = make_shape(heads, kv_heads, head_dim, mask, phase, kv_dtype, features, page_size)
    out = _abi.Kernel()
    if isa is None:
        check(lib, lib.attngen_select(None, ctypes.byref(shape), ctypes.byref(out)), "attngen_select")
    else:
        isa_id = dtypes.check_name("isa", isa, _abi.ISAS)
        check(lib, lib.attngen_select_generic(ctypes.byref(shape), isa_id, ctypes.byref(out)), "attngen_select_generic")
    return Kernel(lib, out)


class Kernel:
    """A kernel bound to a shape. name and isa say what runs; generic is True for the generic fallback. Calling it
    (or bind(...)()) runs attention; append and step use it on a KVCache."""

    def __init__(self, lib, c_kernel, owner=None):
        self._lib, self._c, self._owner = lib, c_kernel, owner  # owner: the Model whose library holds the code
        info = c_kernel.info.contents
        self.name = info.name.decode()
        self.isa = _abi.ISAS[info.isa]
        self.generic = info.heads == 0
        s = c_kernel.shape
        self.heads, self.kv_heads, self.head_dim = s.heads, s.kv_heads, s.head_dim
        self.mask, self.phase, self.kv_dtype = _abi.MASKS[s.mask], _abi.PHASES[s.phase], _abi.KV_DTYPES[s.kv_dtype]
        self.page_size = s.page_size  # rows per page of the PagedKVCache it reads; 0: a contiguous cache
        self.features = feature_names(s.features)  # attention features applied, values from the call or the table
        self.scale = c_kernel.params.scale or 1 / math.sqrt(self.head_dim)
        self.rope = rope_of(c_kernel.params)  # a RoPE kernel rotates Q by its position and expects K rotated

    def __repr__(self):
        return (f"<attngen.Kernel {self.name} heads={self.heads} kv_heads={self.kv_heads} head_dim={self.head_dim} "
                f"mask={self.mask} phase={self.phase} kv_dtype={self.kv_dtype}"
                + (f" page_size={self.page_size}>" if self.page_size else ">"))

    def bind(self, q, k, v=None, *, kv_len=None, kv_lens=None, scale=None, k_scale=None, v_scale=None, out=None,
             return_lse=False, threads=1, q_pos=None, window=None, sink_tokens=None, softcap=None, sinks=None,
             alibi_slopes=None):
        """A Call of attention with these tensors, checked once: Q/O fp32 [batch, q_len, heads, head_dim], K/V
        [batch, kv_capacity, kv_heads, head_dim] of the kernel's storage type (int8: with fp32 scales
        [batch, kv_capacity, kv_heads, head_dim / group]), any strides with a contiguous last dimension; or k a
        PagedKVCache (v and the scales not given; a kernel of its page_size), read through its block table.
        kv_len: rows in use (default kv_capacity; paged: the longest of cache.lengths); kv_lens: [batch] valid keys
        per sequence (padding, cross masks; paged: default cache.lengths); scale: None for the kernel's; threads: 1
        runs on the calling thread, n > 1 on n threads, 0 on every CPU; q_pos: RoPE kernels, [batch, q_len] position
        of each query (default kv_len - q_len + i).
        Attention features' values (attngen_args; each only for a kernel with the feature, None: the table's):
        window (keys a query sees, itself included), sink_tokens (first keys every query sees), softcap,
        sinks (fp32 [heads] sink logits), alibi_slopes (fp32 [heads])."""
        from .paged import PagedKVCache, paged_lengths
        if isinstance(k, PagedKVCache):
            kv_len, kv_lens = paged_lengths(self, k, v, k_scale, v_scale, kv_len, kv_lens)
            kv = k
        elif v is None:
            raise refuse("ATTNGEN_ERR_NULL", "attngen: v is missing: pass k and v, or a PagedKVCache as k")
        else:
            kv = _ContiguousKV(self, k, v, k_scale, v_scale)
        tensors = _AttentionTensors(self, q, kv, kv_len, kv_lens, scale, out, return_lse, q_pos,
                                    (window, sink_tokens, softcap, sinks, alibi_slopes))
        return Call(self, tensors, threads)

    def __call__(self, q, k, v=None, **options):
        """Attention: bind(q, k, v, **options)(). Returns out, or (out, lse) with return_lse (lse [batch, heads, q_len])."""
        return self.bind(q, k, v, **options)()

    def append(self, cache, k_new, v_new, pos=None):
        """attngen_kv_append into a KVCache; its lengths advance by the new rows. See attngen.cache."""
        from .cache import append
        append(self, cache, k_new, v_new, pos)

    def step(self, cache, q, k_new, v_new, **options):
        """attngen_step: append, then causal attention of the new queries against the cache. See attngen.cache."""
        from .cache import step
        return step(self, cache, q, k_new, v_new, **options)

    def cascade(self, cache, q, shared_pages, **options):
        """attngen_cascade_decode over a PagedKVCache whose sequences share their first shared_pages pages: those
        rows read once for every sequence's queries, each one's own rows after them. See attngen.paged."""
        from .paged import cascade
        return cascade(self, cache, q, shared_pages, **options)


def outputs(shape, out, return_lse):
    """The output [batch, rows, heads, head_dim] (new, or the caller's, checked) and lse [batch, heads, rows] if asked."""
    oa = np.empty(shape, np.float32) if out is None else as_array(out, "out", writable=True)
    check_shape(oa, "out", shape, Q_LAYOUT + " (as q)")
    check_dtype(oa, "out", np.float32)
    return oa, np.empty((shape[0], shape[2], shape[1]), np.float32) if return_lse else None


def result(q, out_given, out, lse):
    """What a call returns: the caller's out, or a new array (a torch tensor when q was one), and lse if asked."""
    wrap = lambda a: a  # noqa: E731
    if is_torch(q):
        import torch
        wrap = torch.from_numpy
    o = out_given if out_given is not None else wrap(out)
    return o if lse is None else (o, wrap(lse))


class _ContiguousKV:
    """K/V tensors [batch, kv_capacity, kv_heads, head_dim] of the kernel's storage type (int8: with scales), as
    attngen_args takes them."""

    def __init__(self, kernel, k, v, k_scale, v_scale):
        self.kernel, self.k, self.v, self.k_scale, self.v_scale = kernel, k, v, k_scale, v_scale

    def fill(self, a, batch, head_dim):
        """Sets the K/V fields and kv_capacity of attngen_args a; returns (kv_heads, rows, the arrays they point
        into)."""
        ka, va = as_array(self.k, "k"), as_array(self.v, "v")
        _, capacity, kv_heads, _ = four_d(ka, "k", KV_LAYOUT)
        check_shape(ka, "k", (batch, capacity, kv_heads, head_dim), KV_LAYOUT + " (batch and head_dim of q)")
        check_shape(va, "v", ka.shape, KV_LAYOUT + " (as k)")
        if va.dtype != ka.dtype:
            raise refuse("ATTNGEN_ERR_DTYPE", f"attngen: k is {ka.dtype.name} but v is {va.dtype.name}")
        kv_dtype = cache_type_of(ka, self.k_scale, head_dim, self.kernel.kv_dtype)
        scales = scale_arrays(kv_dtype, self.k_scale, self.v_scale, ka.shape)
        a.kv_capacity = capacity
        a.k_stride, a.v_stride = strides(ka, "k"), strides(va, "v")
        set_kv(a, _abi.ARGS_KV_FIELDS[kv_dtype], (ka, va), scales, ("k_scale", "v_scale"))
        return kv_heads, capacity, (ka, va, scales)


class _AttentionTensors:
    """attngen_args filled from the caller's tensors, and the arrays it points into (kept alive with it). kv: a
    _ContiguousKV or a PagedKVCache, which fills the K/V fields."""

    def __init__(self, kernel, q, kv, kv_len, kv_lens, scale, out, return_lse, q_pos, features):
        qa = as_array(q, "q")
        batch, q_len, heads, head_dim = four_d(qa, "q", Q_LAYOUT)
        check_dtype(qa, "q", np.float32)
        a = self.args = _abi.Args()
        kv_heads, rows, kv_arrays = kv.fill(a, batch, head_dim)
        oa, lse = outputs(qa.shape, out, return_lse)
        lens = None if kv_lens is None else int32_vector(kv_lens, "kv_lens", batch)
        positions = None if q_pos is None else int32_vector(q_pos, "q_pos", batch * q_len)

        a.heads, a.kv_heads, a.head_dim, a.batch, a.q_len = heads, kv_heads, head_dim, batch, q_len
        a.kv_len = rows if kv_len is None else c_int(kv_len, "kv_len")
        a.q, a.q_stride, a.o, a.o_stride = pointer(qa), strides(qa, "q"), pointer(oa), strides(oa, "out")
        a.kv_lens = None if lens is None else pointer(lens)
        a.scale = 0.0 if scale is None else float(scale)
        a.lse = None if lse is None else pointer(lse)
        a.q_pos = None if positions is None else pointer(positions)
        vectors = set_features(a, heads, *features)
        self.keep = (qa, kv_arrays, oa, lse, lens, positions, vectors)
        self.returns = (q, out, oa, lse)


def cache_type_of(ka, k_scale, head_dim, kernel_type=None):
    """The storage type the K/V elements are, from their dtype (the runtime refuses one that is not the kernel's).
    Types of one encoding (the int8 types) share their pointers, so such a cache is taken as the kernel's type when
    the kernel reads that encoding."""
    scale = None if k_scale is None else as_array(k_scale, "k_scale")
    shared = kernel_type is not None and ka.dtype == dtypes.NUMPY_DTYPE[kernel_type] and kernel_type in dtypes.SCALED
    return dtypes.infer(ka, scale, head_dim, kernel_type if shared else None)


def check_cache_type(kernel, cache):
    """Types of one encoding (the int8 types) share their pointers, so the runtime cannot tell them apart: a cache of
    another grouping than the kernel's is refused here."""
    if kernel.kv_dtype != cache.kv_dtype and _abi.KV_TYPES[kernel.kv_dtype][0] == _abi.KV_TYPES[cache.kv_dtype][0]:
        raise refuse("ATTNGEN_ERR_DTYPE", f"attngen: kernel {kernel.name} reads {kernel.kv_dtype}, the cache holds "
                                          f"{cache.kv_dtype}")


def scale_arrays(kv_dtype, k_scale, v_scale, kv_shape, names=("k_scale", "v_scale")):
    """The int8 types' fp32 scales [batch, rows, kv_heads, head_dim / group] as arrays; () for the float types."""
    per_row = dtypes.scales_per_row(kv_dtype, kv_shape[3])
    if not per_row:
        if k_scale is not None or v_scale is not None:
            raise refuse("ATTNGEN_ERR_DTYPE", f"attngen: a {kv_dtype} cache has no scales ({names[0]}/{names[1]} "
                                              "are for int8 caches)")
        return ()
    if k_scale is None or v_scale is None:
        raise refuse("ATTNGEN_ERR_NULL", f"attngen: a {kv_dtype} cache needs {names[0]} and {names[1]}")
    arrays = tuple(as_array(s, n) for s, n in zip((k_scale, v_scale), names))
    for s, n in zip(arrays, names):
        check_dtype(s, n, np.float32)
        check_shape(s, n, kv_shape[:3] + (per_row,), f"[batch, rows, kv_heads, {per_row}] ({kv_dtype})")
    return arrays


def set_kv(c_args, fields, kv, scales, scale_names):
    """Points the K/V (and scale) fields of a storage type at the arrays, with their strides."""
    k_field, v_field, ks_field, vs_field = fields
    setattr(c_args, k_field, pointer(kv[0]))
    setattr(c_args, v_field, pointer(kv[1]))
    for field, array, name in zip((ks_field, vs_field), scales, scale_names):
        setattr(c_args, field, pointer(array))
        setattr(c_args, field + "_stride", strides(array, name))


class Call:
    """A checked attention call: calling it runs the kernel again on the same tensors (read anew each time) and
    returns out, or (out, lse). The arrays stay alive as long as the Call."""

    def __init__(self, kernel, tensors, threads):
        lib = kernel._lib
        self._kernel, self._tensors = kernel, tensors
        threads = c_int(threads, "threads")
        kref, aref = ctypes.byref(kernel._c), ctypes.byref(tensors.args)
        if threads == 1:
            self._run = lambda: lib.attngen_run(kref, aref)
        else:
            self._run = lambda: lib.attngen_run_parallel(kref, aref, threads)
        q, out, oa, lse = tensors.returns
        self._result = result(q, out, oa, lse)

    def __call__(self):
        status = self._run()
        if status:
            check(self._kernel._lib, status, "attngen_run")
        return self._result
