# SPDX-License-Identifier: MIT
"""K/V storage types as NumPy sees them, and their conversions to and from fp32.

  f32   numpy.float32
  f16   numpy.float16 (the attngen_f16 bits are IEEE binary16, numpy's own encoding)
  bf16  numpy.uint16 holding bfloat16 bits (NumPy has no bfloat16; a torch.bfloat16 tensor is taken as its bits)
  int8, int8_g64, int8_g32   numpy.int8 with fp32 scales [..., head_dim / group] (group: head_dim, 64, 32)
  a type of another encoding: the unsigned integers of its stored bits, as bf16's
"""
import numpy as np

from . import _abi
from .errors import refuse

# NumPy's own encodings of the stored elements; any other is held as its bits (_STORED)
_NATIVE = {"f32": np.float32, "f16": np.float16}
_STORED = {"float": np.float32, "uint16_t": np.uint16, "uint8_t": np.uint8, "int8_t": np.int8}
NUMPY_DTYPE = {t: _NATIVE.get(field, _STORED[stored]) for t, (field, stored, _) in _abi.KV_TYPES.items()}
GROUP = {t: group for t, (_, _, group) in _abi.KV_TYPES.items() if isinstance(group, int)}  # "row": the whole row
SCALED = tuple(t for t, (_, _, group) in _abi.KV_TYPES.items() if group)  # per row first, as the spec lists them


def scales_per_row(kv_dtype, head_dim):
    """The last dimension of a storage type's scale arrays (0: the type has none)."""
    if kv_dtype not in SCALED:
        return 0
    return head_dim // GROUP[kv_dtype] if kv_dtype in GROUP else 1


def check_name(kind, name, names):
    if name not in names:
        raise refuse("ATTNGEN_ERR_UNSUPPORTED", f"attngen: unknown {kind} {name!r} (one of {', '.join(names)})")
    return names.index(name)


def infer(k, k_scale, head_dim, kv_dtype=None):
    """The storage type of a cache whose elements are k (an ndarray) and scales k_scale (or None)."""
    if kv_dtype is not None:
        check_name("kv_dtype", kv_dtype, _abi.KV_DTYPES)
        if np.dtype(NUMPY_DTYPE[kv_dtype]) != k.dtype:
            raise refuse("ATTNGEN_ERR_DTYPE", f"attngen: a {kv_dtype} cache has {np.dtype(NUMPY_DTYPE[kv_dtype]).name} "
                                              f"elements, got {k.dtype.name}")
        return kv_dtype
    scaled = [name for name in SCALED if k.dtype == NUMPY_DTYPE[name]]
    if scaled:
        if k_scale is None:
            raise refuse("ATTNGEN_ERR_NULL", f"attngen: an {k.dtype.name} cache needs k_scale and v_scale (fp32)")
        per_row = k_scale.shape[-1] if k_scale.ndim else 0
        for name in scaled:  # per row first: at head_dim 64 one scale is both int8 and g64
            if head_dim % GROUP.get(name, head_dim or 1) == 0 and per_row == scales_per_row(name, head_dim):
                return name
        fits = ", ".join(f"{'1' if name not in GROUP else f'head_dim/{GROUP[name]}'}: {name}" for name in scaled)
        raise refuse("ATTNGEN_ERR_SHAPE", f"attngen: {per_row} scales per row fit no {k.dtype.name} type at head_dim "
                                          f"{head_dim} ({fits})")
    for name in _abi.KV_DTYPES:
        if name not in SCALED and k.dtype == NUMPY_DTYPE[name]:
            return name
    raise refuse("ATTNGEN_ERR_DTYPE", f"attngen: K/V elements of type {k.dtype.name} are no storage type (float32, "
                                      "float16, uint16 bfloat16 bits, int8 with fp32 scales)")


def bf16_to_float32(bits):
    """bfloat16 bits (uint16) -> float32, exactly."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16_from_float32(x):
    """float32 -> bfloat16 bits, rounded to nearest even; NaN stays a quiet NaN (as attngen_bf16_from_float)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


def _runtime_to_float(x, kv_dtype):
    """Elements of an encoding NumPy has no type for, widened by the runtime (attngen_kv_to_float, exact); their
    scales, if the type has them, are applied by the caller."""
    from . import _library
    from .errors import check
    if kv_dtype in SCALED:
        raise refuse("ATTNGEN_ERR_UNSUPPORTED", f"attngen: no NumPy conversion of {kv_dtype} elements")
    bits = np.ascontiguousarray(x, NUMPY_DTYPE[kv_dtype])
    out = np.empty(bits.shape, np.float32)
    if bits.size:
        lib = _library.load()
        check(lib, lib.attngen_kv_to_float(_abi.KV_DTYPES.index(kv_dtype), bits.ctypes.data, None, bits.size,
                                           out.ctypes.data), "attngen_kv_to_float")
    return out


def dequantize(x, scale=None, kv_dtype=None, dtype=np.float32):
    """The values a cache holds, as `dtype`: f16 and bf16 widened, int8 elements times their group's scale (computed
    in `dtype`: float32 is what the kernels read, float64 the exact product)."""
    x = np.asarray(x)
    kv_dtype = kv_dtype or infer(x, scale, x.shape[-1])
    field = _abi.KV_TYPES[kv_dtype][0]
    if field == "bf16":
        x = bf16_to_float32(x)
    elif NUMPY_DTYPE[kv_dtype] not in (np.float32, np.float16, np.int8):
        x = _runtime_to_float(x, kv_dtype)  # an encoding NumPy lacks: the runtime's own conversion
    if kv_dtype not in SCALED:
        return x.astype(dtype)
    per_row = scale.shape[-1]
    grouped = x.reshape(x.shape[:-1] + (per_row, x.shape[-1] // per_row)).astype(dtype)
    return (grouped * np.asarray(scale, dtype)[..., None]).reshape(x.shape)
