# SPDX-License-Identifier: MIT
"""attngen from Python: generated attention kernels on NumPy arrays and torch CPU tensors, through ctypes.

    import attngen
    out = attngen.attention(q, k, v, causal=True)        # q [batch, q_len, heads, head_dim], k/v [.., kv_heads, ..]
    model = attngen.build("configs/llama-3-8b.lua", "build/models/llama-3-8b")
    kernel = model.select(mask="causal", phase="decode", kv_dtype="f16")
    kernel.name, kernel.isa
    out, lse = attngen.merge_states([out1, out2], [lse1, lse2])   # attention over keys cut in two parts
    cache = attngen.PagedKVCache.allocate(batch=2, num_pages=64, page_size=16, kv_heads=8, head_dim=128, max_pages=32)

The runtime is libattngen.so, found (attngen.load_library) from an explicit path, $ATTNGEN_LIBRARY, the source tree's
build/python/ (`make build/python/libattngen.so`) or the system. Failures raise attngen.Error. python/README.md has
the details."""
from . import dtypes
from ._abi import ISAS, KV_DTYPES, MASKS, PHASES
from ._library import load as load_library
from .attention import attention
from .cache import KVCache
from .dtypes import bf16_from_float32, bf16_to_float32, dequantize
from .errors import BuildError, Error, LibraryNotFound
from .kernel import Call, Kernel, alibi_slopes, select
from .merge import merge_states
from .model import Model, build, compile_model, generate, load
from .paged import PagedKVCache

__all__ = ["attention", "merge_states", "alibi_slopes", "select", "build", "generate", "compile_model", "load",
           "load_library", "Model", "Kernel", "Call", "KVCache", "PagedKVCache", "Error", "LibraryNotFound",
           "BuildError", "dequantize", "bf16_from_float32", "bf16_to_float32", "dtypes", "ISAS", "MASKS", "PHASES",
           "KV_DTYPES", "cpu_isas"]


def cpu_isas():
    """The ISAs this CPU can run, best first."""
    lib = load_library()
    bits = lib.attngen_cpu_isas()
    return [name for name in ("avx512", "avx2", "neon", "scalar") if bits >> ISAS.index(name) & 1]
