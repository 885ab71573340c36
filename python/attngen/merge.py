# SPDX-License-Identifier: MIT
"""attngen.merge_states: attention computed over disjoint parts of the keys, merged into attention over all of them
(attngen_merge_states)."""
import ctypes

import numpy as np

from . import _abi, _library
from ._tensors import as_array, check_dtype, check_shape, four_d, is_torch, pointer, strides
from .errors import check, refuse
from .kernel import Q_LAYOUT

LSE_LAYOUT = "[batch, heads, q_len]"


def _lse_strides(a, name):
    """An lse [batch, heads, q_len] array's strides as the C API takes them: (batch, query row, head)."""
    return strides(a.transpose(0, 2, 1)[..., None], name)


def merge_states(outs, lses, out=None, lse_out=None):
    """Merges n >= 1 partial attention results of the same queries, each over its own part of the keys (e.g. a prompt
    prefix shared by a batch, and each sequence's own tokens), into attention over all the keys: lse =
    log(sum_i exp(lses[i])), out = sum_i exp(lses[i] - lse) * outs[i], in fp32 with the largest lse subtracted first.
    outs: fp32 [batch, q_len, heads, head_dim] each (any strides, the last dimension contiguous); lses: fp32
    [batch, heads, q_len] each, as attention(..., return_lse=True) returns them. A part whose lse is -inf (it saw no
    key) counts for nothing; a row no part saw gives zeros and -inf. out and lse_out may be outs[i] and lses[i]
    themselves (accumulate in place); any other overlap is refused. Returns (out, lse): the given arrays, else new
    ones (torch tensors for torch input)."""
    outs, lses = list(outs), list(lses)
    if not outs or len(outs) != len(lses):
        raise refuse("ATTNGEN_ERR_SIZE", f"attngen: merge_states takes n >= 1 outputs and as many lse, got "
                                         f"{len(outs)} and {len(lses)}")
    oa = [as_array(o, f"outs[{i}]") for i, o in enumerate(outs)]
    shape = four_d(oa[0], "outs[0]", Q_LAYOUT)
    batch, q_len, heads, _ = shape
    if 0 in shape:
        raise refuse("ATTNGEN_ERR_SIZE", f"attngen: outs[0] has an empty dimension: {list(shape)}")
    la = [as_array(x, f"lses[{i}]") for i, x in enumerate(lses)]
    for i, (o, x) in enumerate(zip(oa, la)):
        check_dtype(o, f"outs[{i}]", np.float32)
        check_shape(o, f"outs[{i}]", shape, Q_LAYOUT + " (as outs[0])")
        check_dtype(x, f"lses[{i}]", np.float32)
        check_shape(x, f"lses[{i}]", (batch, heads, q_len), LSE_LAYOUT)
    o = np.empty(shape, np.float32) if out is None else as_array(out, "out", writable=True)
    check_dtype(o, "out", np.float32)
    check_shape(o, "out", shape, Q_LAYOUT + " (as outs[0])")
    lse = np.empty((batch, heads, q_len), np.float32) if lse_out is None else as_array(lse_out, "lse_out", True)
    check_dtype(lse, "lse_out", np.float32)
    check_shape(lse, "lse_out", (batch, heads, q_len), LSE_LAYOUT)

    n = len(oa)
    o_ptrs = (ctypes.c_void_p * n)(*(pointer(a) for a in oa))
    l_ptrs = (ctypes.c_void_p * n)(*(pointer(a) for a in la))
    o_st = (_abi.Strides * n)(*(strides(a, f"outs[{i}]") for i, a in enumerate(oa)))
    l_st = (_abi.Strides * n)(*(_lse_strides(a, f"lses[{i}]") for i, a in enumerate(la)))
    args = _abi.MergeArgs(batch=batch, q_len=q_len, heads=heads, head_dim=shape[3], n=n,
                          o_in=ctypes.cast(o_ptrs, ctypes.c_void_p), lse_in=ctypes.cast(l_ptrs, ctypes.c_void_p),
                          o_in_stride=ctypes.cast(o_st, ctypes.c_void_p),
                          lse_in_stride=ctypes.cast(l_st, ctypes.c_void_p), o=pointer(o), lse=pointer(lse),
                          o_stride=strides(o, "out"), lse_stride=_lse_strides(lse, "lse_out"))
    lib = _library.load()
    check(lib, lib.attngen_merge_states(ctypes.byref(args)), "attngen_merge_states")
    wrap = lambda a: a  # noqa: E731
    if is_torch(outs[0]):
        import torch
        wrap = torch.from_numpy
    return (out if out is not None else wrap(o)), (lse_out if lse_out is not None else wrap(lse))
