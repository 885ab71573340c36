# SPDX-License-Identifier: MIT
"""ctypes mirrors of runtime/attngen.h and generated/runtime/attngen_spec.h: the one place Python lays out C memory.

python/tests/test_abi.py compiles a C program printing sizeof/offsetof of every structure and field listed in
STRUCTS, and every constant in CONSTANTS, and compares them with these: a change of the C API fails that test
instead of mis-laying memory here. Pointer fields are c_void_p (same size and alignment as any object pointer);
C enums are c_int (their size is checked by the same test).
"""
import ctypes

from ._spec import ABI, KV_DTYPES, KV_ENCODINGS, KV_TYPES  # generated from gen/spec.lua (generated/runtime/attngen_spec.py)

c_int, c_float, c_double, c_void_p, c_char_p = ctypes.c_int, ctypes.c_float, ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p
c_ptrdiff = ctypes.c_ssize_t
c_enum = ctypes.c_int

# Enum values are positions in these tuples (gen/spec.lua never renumbers them).
ISAS = ("scalar", "avx2", "neon", "avx512")
PHASES = ("prefill", "decode")
MASKS = ("none", "causal", "padding", "causal_padding", "cross")
ROPE_STYLES = ("none", "half", "interleaved")
# Attention features: their bits in attngen_shape.features / attngen_kernel_info.features (ATTNGEN_ATTN_*).
ATTN_FEATURES = {"window": 1, "softcap": 2, "sinks": 4, "alibi": 8}
STATUS_CODES = {0: "ATTNGEN_OK", -1: "ATTNGEN_ERR_NULL", -2: "ATTNGEN_ERR_SIZE", -3: "ATTNGEN_ERR_CAPACITY",
                -4: "ATTNGEN_ERR_LENGTHS", -5: "ATTNGEN_ERR_SHAPE", -6: "ATTNGEN_ERR_UNSUPPORTED",
                -7: "ATTNGEN_ERR_NOMEM", -8: "ATTNGEN_ERR_STRIDE", -9: "ATTNGEN_ERR_ALIAS", -10: "ATTNGEN_ERR_DTYPE",
                -11: "ATTNGEN_ERR_PAGE"}

# C constants the package relies on, by their C names.
CONSTANTS = {"ATTNGEN_ABI": ABI, "ATTNGEN_MAX_HEAD_DIM": 512, "ATTNGEN_DECODE_MAX_Q": 8, "ATTNGEN_MAX_LEN": 1 << 30,
             "ATTNGEN_MAX_THREADS": 1024, "ATTNGEN_MAX_PAGE_SIZE": 4096}
CONSTANTS.update({"ATTNGEN_ISA_" + n.upper(): i for i, n in enumerate(ISAS)})
CONSTANTS.update({"ATTNGEN_PHASE_" + n.upper(): i for i, n in enumerate(PHASES)})
CONSTANTS.update({"ATTNGEN_MASK_" + n.upper(): i for i, n in enumerate(MASKS)})
CONSTANTS.update({"ATTNGEN_KV_" + n.upper(): i for i, n in enumerate(KV_DTYPES)})
CONSTANTS.update({"ATTNGEN_ROPE_" + n.upper(): i for i, n in enumerate(ROPE_STYLES)})
CONSTANTS.update({"ATTNGEN_ATTN_" + n.upper(): bit for n, bit in ATTN_FEATURES.items()})
CONSTANTS.update({code: status for status, code in STATUS_CODES.items()})


class Shape(ctypes.Structure):
    _c_name = "attngen_shape"
    _fields_ = [("heads", c_int), ("kv_heads", c_int), ("head_dim", c_int),
                ("mask", c_enum), ("phase", c_enum), ("kv_dtype", c_enum), ("features", ctypes.c_uint),
                ("page_size", c_int)]


class Pages(ctypes.Structure):
    _c_name = "attngen_pages"
    _fields_ = [("block_table", c_void_p), ("max_pages", c_int), ("num_pages", c_int), ("page_size", c_int)]


class Strides(ctypes.Structure):
    _c_name = "attngen_strides"
    _fields_ = [("batch", c_ptrdiff), ("seq", c_ptrdiff), ("head", c_ptrdiff)]


class Args(ctypes.Structure):
    _c_name = "attngen_args"
    _fields_ = [("heads", c_int), ("kv_heads", c_int), ("head_dim", c_int),
                ("batch", c_int), ("q_len", c_int), ("kv_len", c_int), ("kv_capacity", c_int),
                ("q", c_void_p), ("k", c_void_p), ("v", c_void_p), ("o", c_void_p),
                ("q_stride", Strides), ("k_stride", Strides), ("v_stride", Strides), ("o_stride", Strides),
                ("kv_lens", c_void_p), ("scale", c_float), ("lse", c_void_p), ("q_pos", c_void_p),
                *[(kv + "_" + e, c_void_p) for e in KV_ENCODINGS for kv in ("k", "v")],
                ("k_scale", c_void_p), ("v_scale", c_void_p),
                ("k_scale_stride", Strides), ("v_scale_stride", Strides),
                ("window", c_int), ("sink_tokens", c_int), ("softcap", c_float), ("alibi_slopes", c_void_p),
                ("sinks", c_void_p), ("pages", Pages)]


class Work(ctypes.Structure):
    _c_name = "attngen_work"
    _fields_ = [("q_tile", c_int), ("kv_heads_per_item", c_int), ("row_stride", c_int), ("keys_per_tile", c_int),
                ("scratch_floats", ctypes.c_size_t), ("split_max", c_int), ("split_min_keys", c_int),
                ("split_align", c_int), ("split_below_batch", c_int), ("pack_kv_min_q", c_int),
                ("head_split_min_bytes", c_int), ("head_split_min_flop", c_int)]


class Rope(ctypes.Structure):
    _c_name = "attngen_rope"
    _fields_ = [("style", c_enum), ("rotary_dim", c_int), ("inv_freq", c_void_p), ("theta", c_double),
                ("scaling", c_enum), ("factor", c_double), ("low_freq_factor", c_double),
                ("high_freq_factor", c_double), ("original_max_position_embeddings", c_double),
                ("beta_fast", c_double), ("beta_slow", c_double), ("truncate", c_double),
                ("attention_factor", c_double), ("mscale", c_double), ("mscale_all_dim", c_double),
                ("cs_scale", c_double)]


class FeatureValues(ctypes.Structure):
    _c_name = "attngen_feature_values"
    _fields_ = [("window", c_int), ("sink_tokens", c_int), ("softcap", c_float), ("alibi_max_bias", c_float),
                ("alibi_slopes", c_void_p)]


class Params(ctypes.Structure):
    _c_name = "attngen_params"
    _fields_ = [("scale", c_float), ("rope", Rope), ("features", FeatureValues)]


class KernelInfo(ctypes.Structure):
    _c_name = "attngen_kernel_info"
    _fields_ = [("name", c_char_p), ("heads", c_int), ("kv_heads", c_int), ("head_dim", c_int),
                ("mask", c_enum), ("phase", c_enum), ("isa", c_enum), ("kv_dtype", c_enum), ("features", ctypes.c_uint),
                ("work", Work), ("work_fn", c_void_p), ("fn", c_void_p), ("page_size", c_int)]


class Kernel(ctypes.Structure):
    _c_name = "attngen_kernel"
    _fields_ = [("info", ctypes.POINTER(KernelInfo)), ("shape", Shape), ("work", Work), ("params", Params)]


class Table(ctypes.Structure):
    _c_name = "attngen_table"
    _fields_ = [("abi", c_int), ("model", c_char_p), ("generator_version", c_char_p),
                ("heads", c_int), ("kv_heads", c_int), ("head_dim", c_int), ("params", Params),
                ("kernels", ctypes.POINTER(KernelInfo)), ("count", c_int)]


class AppendArgs(ctypes.Structure):
    _c_name = "attngen_append_args"
    _fields_ = [("batch", c_int), ("n_new", c_int), ("kv_capacity", c_int),
                ("cache_len", c_void_p), ("pos", c_void_p), ("k_new", c_void_p), ("v_new", c_void_p),
                ("k_new_stride", Strides), ("v_new_stride", Strides),
                ("k_cache", c_void_p), ("v_cache", c_void_p), ("k_cache_stride", Strides), ("v_cache_stride", Strides),
                *[(kv + "_cache_" + e, c_void_p) for e in KV_ENCODINGS for kv in ("k", "v")],
                ("k_cache_scale", c_void_p), ("v_cache_scale", c_void_p),
                ("k_cache_scale_stride", Strides), ("v_cache_scale_stride", Strides), ("pages", Pages)]


class StepArgs(ctypes.Structure):
    _c_name = "attngen_step_args"
    _fields_ = [("kv", AppendArgs), ("q", c_void_p), ("o", c_void_p), ("q_stride", Strides), ("o_stride", Strides),
                ("scale", c_float), ("lse", c_void_p), ("window", c_int), ("sink_tokens", c_int),
                ("softcap", c_float), ("alibi_slopes", c_void_p), ("sinks", c_void_p)]


class MergeArgs(ctypes.Structure):
    _c_name = "attngen_merge_args"
    _fields_ = [("batch", c_int), ("q_len", c_int), ("heads", c_int), ("head_dim", c_int), ("n", c_int),
                ("o_in", c_void_p), ("lse_in", c_void_p), ("o_in_stride", c_void_p), ("lse_in_stride", c_void_p),
                ("o", c_void_p), ("lse", c_void_p), ("o_stride", Strides), ("lse_stride", Strides)]


class CascadeArgs(ctypes.Structure):
    _c_name = "attngen_cascade_args"
    _fields_ = [("prefix", Args), ("suffix", Args)]


STRUCTS = (Shape, Pages, Strides, Args, Work, Rope, FeatureValues, Params, KernelInfo, Kernel, Table, AppendArgs, StepArgs,
           MergeArgs, CascadeArgs)

# The K/V pointer fields of each storage type, in Args (attention) and AppendArgs (append / step): (k, v, k scale,
# v scale); a type without scale groups has no scales.
def _kv_fields(prefix):
    def fields(field, group):
        names = prefix if field == "f32" else tuple(p + "_" + field for p in prefix)
        return names + ((prefix[0] + "_scale", prefix[1] + "_scale") if group else (None, None))
    return {t: fields(field, group) for t, (field, _, group) in KV_TYPES.items()}


ARGS_KV_FIELDS = _kv_fields(("k", "v"))
CACHE_KV_FIELDS = _kv_fields(("k_cache", "v_cache"))
