# SPDX-License-Identifier: MIT
"""PagedKVCache: K and V in pools of pages, a block table per sequence (vLLM's PagedAttention layout), and the calls
over it: attention (a kernel called with the cache as k), append and step (attngen.cache, through the pages of
attngen_append_args) and the decode of sequences that share their first pages (attngen_cascade_decode).

Sequence b's row x is row x % page_size of page block_table[b, x // page_size]; a negative entry has no page yet.
The pools and the block table are the caller's arrays, read and written in place; the kernels must be paged for the
cache's page_size (Model.select(page_size=...); the generic kernels read pages in prefill only)."""
import ctypes

import numpy as np

from . import _abi, dtypes
from ._tensors import as_array, check_dtype, check_shape, four_d, int32_vector, pointer, strides
from .errors import check, refuse
from .kernel import _AttentionTensors, c_int, check_cache_type, result, scale_arrays, set_kv

POOL_LAYOUT = "[num_pages, page_size, kv_heads, head_dim]"
TABLE_LAYOUT = "[batch, max_pages]"
KV_LENS_MASKS = ("padding", "causal_padding", "cross")  # the masks that read kv_lens
SCALE_NAMES = ("k_scale", "v_scale")


class PagedKVCache:
    """K and V pools [num_pages, page_size, kv_heads, head_dim] of one storage type (any strides with a contiguous
    last dimension: a head-major pool [num_pages, kv_heads, page_size, head_dim] passes as its transposed view),
    int8's scale pools [num_pages, page_size, kv_heads, head_dim / group], the block table int32 [batch, max_pages]
    (C-contiguous) and the rows in use per sequence (lengths, advanced by append and step)."""

    def __init__(self, k_pool, v_pool, block_table, lengths=None, k_scale=None, v_scale=None, kv_dtype=None):
        self.k, self.v, self.k_scale, self.v_scale = k_pool, v_pool, k_scale, v_scale
        ka, va = as_array(k_pool, "k pool", writable=True), as_array(v_pool, "v pool", writable=True)
        self.num_pages, self.page_size, self.kv_heads, self.head_dim = four_d(ka, "k pool", POOL_LAYOUT)
        check_shape(va, "v pool", ka.shape, POOL_LAYOUT + " (as the k pool)")
        check_dtype(va, "v pool", ka.dtype)
        ps = self.page_size
        if ps & (ps - 1) or not 0 < ps <= _abi.CONSTANTS["ATTNGEN_MAX_PAGE_SIZE"]:
            raise refuse("ATTNGEN_ERR_SIZE", f"attngen: page_size (the pools' second dimension) must be a power of two "
                                             f"up to {_abi.CONSTANTS['ATTNGEN_MAX_PAGE_SIZE']}, got {ps}")
        scale = None if k_scale is None else as_array(k_scale, "k_scale")
        self.kv_dtype = dtypes.infer(ka, scale, self.head_dim, kv_dtype)
        self._scales = tuple(as_array(s, n, writable=True) for s, n in
                             zip(scale_arrays(self.kv_dtype, k_scale, v_scale, ka.shape), SCALE_NAMES))
        self._kv = (ka, va)
        self.batch = None
        self.block_table = block_table
        self.lengths = np.zeros(self.batch, np.int32) if lengths is None else \
            int32_vector(lengths, "lengths", self.batch).copy()

    @classmethod
    def allocate(cls, batch, num_pages, page_size, kv_heads, head_dim, max_pages, kv_dtype="f32"):
        """Pools of zeros, dense [num_pages, page_size, kv_heads, head_dim], and a block table of -1 (no pages: fill
        cache.block_table[b, i] with the page of sequence b's rows i * page_size ..)."""
        dtypes.check_name("kv_dtype", kv_dtype, _abi.KV_DTYPES)
        shape = (num_pages, page_size, kv_heads, head_dim)
        per_row = dtypes.scales_per_row(kv_dtype, head_dim)
        scales = [np.zeros(shape[:3] + (per_row,), np.float32) if per_row else None for _ in range(2)]
        table = np.full((batch, max_pages), -1, np.int32)
        return cls(*(np.zeros(shape, dtypes.NUMPY_DTYPE[kv_dtype]) for _ in range(2)), table, None, *scales,
                   kv_dtype=kv_dtype)

    @property
    def block_table(self):
        return self._table_given

    @block_table.setter
    def block_table(self, table):
        t = as_array(table, "block_table")
        if t.ndim != 2 or 0 in t.shape:
            raise refuse("ATTNGEN_ERR_SHAPE", f"attngen: block_table must be 2-D {TABLE_LAYOUT} with no empty "
                                              f"dimension, got shape {list(t.shape)}")
        check_dtype(t, "block_table", np.int32)
        if not t.flags.c_contiguous:
            raise refuse("ATTNGEN_ERR_STRIDE", "attngen: block_table must be C-contiguous (the runtime reads sequence "
                                               "b's entries at b * max_pages)")
        if self.batch is not None and t.shape[0] != self.batch:
            raise refuse("ATTNGEN_ERR_SHAPE", f"attngen: block_table has {t.shape[0]} rows, the cache {self.batch} "
                                              "sequences")
        self._table_given, self._table = table, t
        self.batch, self.max_pages = t.shape

    @property
    def capacity(self):
        """Rows a sequence can hold: max_pages x page_size."""
        return self.max_pages * self.page_size

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self._kv + self._scales)

    def dequantized(self, dtype=np.float64):
        """(K, V) [batch, capacity, kv_heads, head_dim] as `dtype`, each sequence's rows read through the block
        table (rows without a page in the pools: zeros), as a contiguous cache would hold them."""
        scales = self._scales or (None, None)
        t = self._table
        has_page = (t >= 0) & (t < self.num_pages)
        shape = (self.batch, self.capacity, self.kv_heads, self.head_dim)
        pools = (dtypes.dequantize(x, s, self.kv_dtype, dtype) for x, s in zip(self._kv, scales))
        return tuple(np.where(has_page[..., None, None, None], p[np.where(has_page, t, 0)], 0).reshape(shape)
                     for p in pools)

    def _pages(self, table=None):
        t = self._table if table is None else table
        return _abi.Pages(pointer(t), t.shape[1], self.num_pages, self.page_size)

    def _fill(self, c_args):
        """The cache fields of attngen_append_args."""
        c_args.kv_capacity = 0
        c_args.cache_len = pointer(self.lengths)
        c_args.k_cache_stride, c_args.v_cache_stride = strides(self._kv[0], "k pool"), strides(self._kv[1], "v pool")
        set_kv(c_args, _abi.CACHE_KV_FIELDS[self.kv_dtype], self._kv, self._scales, SCALE_NAMES)
        c_args.pages = self._pages()

    def fill(self, a, batch, head_dim):
        """The K/V fields of attngen_args a (kv_capacity 0, the pages); returns (kv_heads, longest length, the
        arrays they point into)."""
        if (batch, head_dim) != (self.batch, self.head_dim):
            raise refuse("ATTNGEN_ERR_SHAPE", f"attngen: q has batch {batch} and head_dim {head_dim}, the paged cache "
                                              f"{self.batch} sequences of head_dim {self.head_dim}")
        a.kv_capacity = 0
        a.k_stride, a.v_stride = strides(self._kv[0], "k pool"), strides(self._kv[1], "v pool")
        set_kv(a, _abi.ARGS_KV_FIELDS[self.kv_dtype], self._kv, self._scales, SCALE_NAMES)
        a.pages = self._pages()
        return self.kv_heads, int(self.lengths.max()), (self._kv, self._scales, self._table)


def paged_lengths(kernel, cache, v, k_scale, v_scale, kv_len, kv_lens):
    """kv_len and kv_lens of attention over a PagedKVCache: by default the longest length, and the lengths for the
    masks that read kv_lens; a mask that reads none needs sequences of one length."""
    if v is not None or k_scale is not None or v_scale is not None:
        raise refuse("ATTNGEN_ERR_SHAPE", "attngen: with a PagedKVCache as k, V and the scales are the cache's: pass "
                                          "no v, k_scale or v_scale")
    check_cache_type(kernel, cache)
    if kv_lens is None and kernel.mask in KV_LENS_MASKS:
        kv_lens = cache.lengths
    if kv_len is None and kv_lens is None and (cache.lengths != cache.lengths[0]).any():
        raise refuse("ATTNGEN_ERR_LENGTHS", f"attngen: the sequences hold {cache.lengths.tolist()} rows and the "
                                            f"{kernel.mask} mask reads no kv_lens: use a kernel whose mask does "
                                            "(padding, causal_padding), or step")
    return (int(cache.lengths.max()) if kv_len is None else kv_len), kv_lens


def cascade(kernel, cache, q, shared_pages, *, scale=None, out=None, return_lse=False, threads=1, q_pos=None,
            softcap=None):
    """Decode of a batch whose sequences share their first shared_pages pages (block_table[:, :shared_pages] equal in
    every row, e.g. a prompt's full pages), by attngen_cascade_decode: those rows are read once for every sequence's
    queries, each sequence's own rows after them on their own, and the two merged through the log-sum-exp. q fp32
    [batch, q_len, heads, head_dim]: the queries of each sequence's last q_len rows (appended already, as after
    append), causal at each sequence's length; q_pos: RoPE positions in the whole sequence (default length - q_len
    + i). The kernel's mask reads kv_lens (causal_padding) for sequences of different lengths. Kernels with a window,
    ALiBi or sink logits are refused. Returns out [batch, q_len, heads, head_dim], or (out, lse)."""
    shared = c_int(shared_pages, "shared_pages", 1)
    t = cache._table
    if shared > cache.max_pages:
        raise refuse("ATTNGEN_ERR_SIZE", f"attngen: cascade: shared_pages {shared} is above max_pages "
                                         f"{cache.max_pages}")
    differ = np.flatnonzero((t[:, :shared] != t[0, :shared]).any(axis=1))
    if differ.size:
        b = int(differ[0])
        raise refuse("ATTNGEN_ERR_PAGE", f"attngen: cascade: sequence {b}'s first {shared} pages "
                                         f"{t[b, :shared].tolist()} are not sequence 0's {t[0, :shared].tolist()}")
    check_cache_type(kernel, cache)
    prefix_rows = shared * cache.page_size
    own = (cache.lengths - prefix_rows).astype(np.int32)
    if (own < 0).any():
        raise refuse("ATTNGEN_ERR_LENGTHS", f"attngen: cascade: the sequences hold {cache.lengths.tolist()} rows, "
                                            f"fewer than the {prefix_rows} rows of {shared} shared pages")
    reads_lens = kernel.mask in KV_LENS_MASKS
    if not reads_lens and (own != own[0]).any():
        raise refuse("ATTNGEN_ERR_LENGTHS", f"attngen: cascade: the sequences hold {cache.lengths.tolist()} rows and "
                                            f"the {kernel.mask} mask reads no kv_lens: use a causal_padding kernel")
    # each sequence's own pages, dense: the runtime reads the block table's rows max_pages entries apart
    own_table = np.ascontiguousarray(t[:, shared:]) if shared < cache.max_pages else \
        np.full((cache.batch, 1), -1, np.int32)
    suffix = _AttentionTensors(kernel, q, _Pages(cache, own_table), int(own.max()), own if reads_lens else None, scale,
                               out, return_lse, q_pos, (None, None, softcap, None, None))
    c = _abi.CascadeArgs()
    c.suffix = suffix.args
    keep = cache.fill(c.prefix, c.suffix.batch, c.suffix.head_dim)
    c.prefix.kv_len, c.prefix.pages.max_pages = prefix_rows, shared  # sequence 0's first entries: the shared pages
    lib = kernel._lib
    check(lib, lib.attngen_cascade_decode(ctypes.byref(kernel._c), ctypes.byref(c), c_int(threads, "threads")),
          "attngen_cascade_decode")
    del keep
    return result(*suffix.returns)


class _Pages:
    """A PagedKVCache read through another block table of the same pool (the cascade's own pages of each
    sequence), as attngen_args takes it."""

    def __init__(self, cache, table):
        self.cache, self.table = cache, table

    def fill(self, a, batch, head_dim):
        kv_heads, rows, arrays = self.cache.fill(a, batch, head_dim)
        a.pages = self.cache._pages(self.table)
        return kv_heads, rows, (arrays, self.table)
