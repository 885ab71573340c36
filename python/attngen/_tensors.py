# SPDX-License-Identifier: MIT
"""NumPy views of the caller's tensors (never copies) and their layout as the C API takes it: a data pointer and
(batch, seq, head) strides in elements, the innermost dimension contiguous."""
import numpy as np

from . import _abi
from .errors import refuse

INT_MAX = 2**31 - 1


def is_torch(x):
    return type(x).__module__.startswith("torch")


def as_array(x, name, writable=False):
    """x as an ndarray sharing its memory: an ndarray, a torch CPU tensor (torch.bfloat16 as its uint16 bits), any
    DLPack producer (numpy.from_dlpack), or any object with __array_interface__ or the buffer protocol."""
    if isinstance(x, np.ndarray):
        a = x
    elif is_torch(x):
        import torch
        t = x.detach()
        if t.device.type != "cpu":
            raise refuse("ATTNGEN_ERR_UNSUPPORTED", f"attngen: {name} is on {t.device}; attngen runs on CPU tensors")
        a = t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()
    elif hasattr(x, "__dlpack__"):
        a = np.from_dlpack(x)
    else:
        a = np.asarray(x)
        if writable and a.base is None:  # a new array: writing it would not reach the caller
            raise refuse("ATTNGEN_ERR_NULL", f"attngen: {name} is not an array whose memory can be written")
    if writable and not a.flags.writeable:
        raise refuse("ATTNGEN_ERR_ALIAS", f"attngen: {name} is read-only")
    return a


def check_dtype(a, name, dtype):
    if a.dtype != dtype:
        raise refuse("ATTNGEN_ERR_DTYPE", f"attngen: {name} must be {np.dtype(dtype).name}, got {a.dtype.name}")


def check_shape(a, name, shape, layout):
    """a.shape must equal shape; layout names its dimensions for the message."""
    if tuple(a.shape) != tuple(shape):
        raise refuse("ATTNGEN_ERR_SHAPE", f"attngen: {name} must be {layout} = {list(shape)}, got {list(a.shape)}")


def four_d(a, name, layout):
    if a.ndim != 4:
        raise refuse("ATTNGEN_ERR_SHAPE", f"attngen: {name} must be 4-D {layout}, got shape {list(a.shape)}")
    if any(n > INT_MAX for n in a.shape):
        raise refuse("ATTNGEN_ERR_SIZE", f"attngen: {name} has a dimension above {INT_MAX}: {list(a.shape)}")
    return a.shape


def strides(a, name):
    """The C strides of a 4-D [batch, rows, heads, last] array, in elements. A dimension of size 1 gets the extent of
    the dimensions inside it (its stride is never applied, and 0 would mean 'dense' to the C API); a broadcast
    (stride 0) dimension of size > 1 is refused, not read as dense."""
    item = a.itemsize
    if not a.flags.aligned:
        raise refuse("ATTNGEN_ERR_STRIDE", f"attngen: {name} is not aligned to its {item}-byte elements")
    if a.shape[3] > 1 and a.strides[3] != item:
        raise refuse("ATTNGEN_ERR_STRIDE", f"attngen: {name}'s last dimension must be contiguous (stride "
                                           f"{a.strides[3]} bytes, element {item}); the other three may be strided")
    out = [0, 0, 0]
    inner = a.shape[3]  # extent, in elements, of the dimensions inside the current one
    for axis in (2, 1, 0):
        n, s = a.shape[axis], a.strides[axis]
        if s % item:
            raise refuse("ATTNGEN_ERR_STRIDE", f"attngen: {name}'s stride {s} bytes on axis {axis} is not a "
                                               f"multiple of its {item}-byte elements")
        if n > 1 and s == 0:
            raise refuse("ATTNGEN_ERR_STRIDE", f"attngen: {name} is broadcast (stride 0) on axis {axis}; attngen "
                                               "reads each row where its strides say: pass a materialized array")
        out[axis] = s // item if n > 1 else max(inner, 1)
        inner += (n - 1) * abs(out[axis])
    return _abi.Strides(*out)


def pointer(a):
    return a.ctypes.data if a.size else None


def int32_vector(x, name, length):
    """A dense int32 copy of a small per-sequence vector (kv_lens, cache lengths, positions): read by C only."""
    a = as_array(x, name)
    if a.size and (a.dtype.kind not in "iu" or a.min() < -INT_MAX - 1 or a.max() > INT_MAX):
        raise refuse("ATTNGEN_ERR_LENGTHS", f"attngen: {name} must hold int32 values, got {a.dtype.name} "
                                            f"{a.ravel()[:8].tolist()}")
    a = np.ascontiguousarray(a, dtype=np.int32).ravel()
    if a.size != length:
        raise refuse("ATTNGEN_ERR_LENGTHS", f"attngen: {name} must have {length} entries, got {a.size}")
    return a
