#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/peers/bench_peers.py: attngen side by side with PyTorch, ONNX Runtime and OpenVINO.

Run by `make bench-peers` (bench/peers/peers.mk), which builds the venv and the library first:
    PYTHONPATH=python build/peers-venv/bin/python bench/peers/bench_peers.py --lib build/python/libattngen.so \
        --configs bench/peers/configs/*.lua --out build/peers

One process, one run: every case goes through attngen (its Python package, python/attngen) and each peer, at 1 and 2
threads, so a slow spell of the shared machine hits them all alike.

Peers (families; a family may have several variants, the fastest is its column):
  torch  torch.nn.functional.scaled_dot_product_attention(enable_gqa=True) under
         sdpa_kernel(SDPBackend.FLASH_ATTENTION), or the default dispatch if flash refuses the case.
  ort    ONNX Runtime, each operator that applies: GroupQueryAttention (com.microsoft; causal only: causal
         prefill, and decode with the KV cache shared between past and present through IOBinding, as
         onnxruntime-genai runs it), Attention (opset 23), MultiHeadAttention (com.microsoft; heads == kv_heads).
  ov     OpenVINO ScaledDotProductAttention (opset 13), stateless: GQA either as a 5-D broadcast (q [B,KV,G,S,D],
         k [B,KV,1,S,D]) or as the Unsqueeze/Broadcast/Reshape pattern exporters write.
  ov-kv  decode only: the stateful KV-cache pattern (ReadValue -> Gather(beam_idx) -> Concat -> Assign), which
         OpenVINO's CPU plugin fuses into its own SDPA-with-KV-cache kernel. Every sample starts from a cache of
         kv_len-2 rows set through the state API, runs one untimed step (the first step after setting a state
         reallocates the cache) and times the step that makes the cache kv_len rows long.
  ov-pa  decode only, the "paged" cases: OpenVINO's PagedAttention operator as vLLM's OpenVINO backend and
         OpenVINO GenAI run it (bench/peers/ov_paged.py): the stateful model above, with a fused Q|K|V input named
         inputs_embeds, rewritten by openvino._offline_transformations.paged_attention_transformation; its K/V
         caches are pools of the block size the CPU plugin asks for (32 in 2026.4), and each sequence's block table
         is a random permutation of the pool's pages. The pools are filled by calls that write every page as a
         sequence of its own (attention inside a page only: the fill costs no O(kv_len^2) prefill; OpenVINO
         quantizes its rows itself); the timed step writes row kv_len-1 and attends over kv_len rows, B sequences
         in one call, its inputs bound once.
On fp32 K/V every peer runs fp32 (OpenVINO: INFERENCE_PRECISION_HINT f32 and an f32 KV cache, whose default is u8).

Reduced-precision caches (the cases labelled "kv <types>", Llama-3-8B decode h32/kv8/d128 at kv_len 16384 and
32768): each peer's cache type against attngen on a cache of the same or fewer bytes (KV_PAIRS), attngen's cache
written by attngen_kv_append from the same fp32 rows (fill_cache: KVCache and Kernel.append), so both sides round the same data:
  kv f16      attngen on an f16 cache (attngen_kv_dtype f16) against
                ov-kv with KV_CACHE_PRECISION f16 (fp32 arithmetic, as above), and
                ort GroupQueryAttention in float16 (Q, new row, cache and output float16, the operator's type T;
                the CPU provider runs it), its cache holding attngen's f16 values head-major, shared past/present.
  kv int8|u8  attngen on an int8 cache (one fp32 scale per (token, kv head) row: 1 byte + 4 per 128 elements)
              against ov-kv with KV_CACHE_PRECISION u8, the CPU plugin's default (asymmetric: an fp32 scale and an fp32
              zero point per row, KEY/VALUE_CACHE_GROUP_SIZE 0 = one group per head: 1 byte + 8 per 128 elements).
              OpenVINO quantizes the rows itself (the state API takes fp32 and stores u8).
Paged caches (the cases labelled "paged", Llama-3-8B decode at batch 1 and 8, kv_len chosen at run time so the fp32
K/V is 4x the last-level cache, PAGED_PAIRS): ov-pa on its paged cache against attngen on a paged cache of the same
or fewer bytes, with ov-pa's page size and the same block table (attngen.PagedKVCache, written by attngen_kv_append
through the table; token-major pages and head-major ones as ov-pa's, the faster shown; the label names attngen's
page size, the nearest its tables offer if not OpenVINO's, or "contiguous" when they offer none), and again against
attngen on a contiguous cache (a second row; family "attngen-c" in results.csv):
  f32, f16    the same type on both sides;
  u8pa, int8  OpenVINO's u8 pages (keys quantized per channel over each page: an fp32 scale and zero point per
              (page, kv head, column), 4*128/32 bytes a row at block size 32; values per row as u8 above: 128 + 8 +
              16 bytes a (token, kv head) row, averaged over K and V: 148 against attngen int8's 132).
The check is the reduced-precision one below, on the pages read back through the block table and dequantized.
The table has a row per peer: both times, attngen÷peer (median over rounds of the per-round ratio), each side's
cache type and K+V bytes (scales and zero points included), and each side's error against float64 on the fp32 K/V
(what its cache type costs). torch and stateless OpenVINO take no cache and do not run these cases. Each peer's
timed step also writes the new row into its cache (one row of kv_len); attngen's call is the attention alone.

Layout: attngen gets dense token-major tensors, Q/O [B,S,H,D], K/V [B,L,KV,D], and for decode also K/V head-major
[B,KV,L,D] (through its strides; the attngen column is the faster of the two). Each peer gets the layout its API
wants ([B,H,S,D] for torch and OpenVINO; ONNX's 3-D [B,S,H*D] is token-major already), copied once before any
timing; outputs are converted back outside the timed region for the check.

Timing: two warm-up calls per variant (excluded); then the variants of a family whose faster warm-up call is
over 1.5x the family's fastest are dropped (results.csv lists them); then interleaved rounds, one sample of every
remaining variant per round in a fresh random order. After each sample: PEERS_GAP_MS of sleep, then until the
process's threads are idle (at most PEERS_QUIESCE_MS), so that thread pools that spin after a call (ONNX Runtime
spun 30-35 ms of CPU here, PyTorch 8-9 ms) are idle before the next library starts. A sample is
`inner` back-to-back calls (inner chosen so a sample lasts >= PEERS_MIN_SAMPLE_MS, default 2 ms; 1 for ov-kv), so
the first call of a sample finds every library's threads asleep since the gap; the number of rounds fits
PEERS_SECONDS per case and thread count, between 5 and 60 (quick: 3 and 20). Reported: median and minimum
per-call time. attngen÷fastest = the median over rounds of (fastest peer's sample / attngen's sample), the fastest
peer being the one with the lowest median (> 1: attngen is faster); a slow spell of the shared machine hits a
round's samples alike. results.csv also has the ratio of the medians.
Cache state, the same for every library and named in a decode case's label (kv_state): K/V of up to a quarter of the
last-level cache are timed warm (repeated calls on the same buffers); up to the cache, cold: a sample is one call,
after the runner's prepare and a read of a buffer twice the cache (untimed); beyond the cache, every call streams
from memory (cold by size).

Useful flops = 4 * head_dim * heads * batch * visible (query, key) pairs, counted exactly for the causal mask,
bottom-right aligned (query i sees keys j <= i + kv_len - q_len). Decode bandwidth = the K and V bytes read
once: 2 * kv_len * kv_heads * head_dim * 4 * batch, and for a reduced-precision cache its own bytes (KV_ROW_BYTES).

Check on fp32 K/V: every variant's output against attngen's, max|out - ref| / max|ref| <= 1e-4. A disagreement is
flagged '!' in the table (its time is still shown) and explained under it with both sides' error against a
float64 reference; the exit status is then 1.
Check on a reduced-precision cache: every variant, attngen's included, against a float64 reference computed on
the values that variant holds: its Q as it got it (ort's rounded to float16) and its cache read back and
dequantized (attngen's: element * scale in fp32, as its kernels widen it; OpenVINO's: the state API's fp32 read-back;
ort's: its float16 buffers), max|out - ref| / max|ref| <= 1e-4, or 1e-3 for a float16 output. Why: rounding or
quantizing the cache is each side's choice of storage and is reported, not judged (err columns); the check is on
the arithmetic done with what was stored, which is fp32 for attngen and OpenVINO (measured at kv_len 16384-32768:
attngen 1e-6 to 2e-6, OpenVINO 4e-6 to 9e-6), so fp32's 1e-4 applies. A float16 output is itself rounded once,
by up to 2^-11 = 4.9e-4 of its magnitude (<= max|ref|); 1e-3 covers that with room for ONNX Runtime's float16
intermediates (measured: 2e-4 to 3.3e-4). Comparing outputs across sides instead would mix in the two
quantizations' difference: attngen's int8 (step max|x|/127) and OpenVINO's u8 (step (max-min)/255) differ by
5e-3 to 7e-3 on this uniform data, more than either side's arithmetic by three orders of magnitude; that
difference is in results.csv (rel_diff) but judges neither. A failed check is flagged '!' and named under the
table; the exit status is then 1.

Environment: PEERS_QUICK=1 (small sizes, short budget), PEERS_FILTER=substring (case-insensitive, on the case
label; "paged": only the paged cases), PEERS_SECONDS (timing budget per case and thread count; default 4, quick
0.5), PEERS_THREADS (default "1,2"), PEERS_GAP_MS (default 5), PEERS_QUIESCE_MS (default 200),
PEERS_MIN_SAMPLE_MS (default 2), PEERS_SEED (default 1).
Outputs in --out: results.txt (the printed tables), results.csv (one row per variant: times, kv_cache and
cache_bytes, rel_diff against attngen, err_stored and err_fp32 against float64 on its stored values and on the fp32
K/V for the reduced-precision cases), ratios_<n>t.dat (attngen ÷ each peer per case, for bench/peers/plot.gp).
"""
import argparse
import contextlib
import csv
import datetime
import math
import os
import platform
import sys
import time
import traceback

# numpy only prepares data and checks results here; its OpenBLAS thread pool, left at the default, competes
# with the measured libraries' threads on a 2-core machine (seen: torch's 2-thread decode 50x slower).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import attngen  # noqa: E402  (python/, on PYTHONPATH)

TOL = 1e-4
TOL_F16_OUT = 1e-3  # a variant whose output is float16 (ONNX Runtime's float16 GroupQueryAttention): see the header
DROP = 1.5  # a variant whose warm-up time is over DROP x its family's fastest is not timed
FAMILIES = ["torch", "ort", "ov", "ov-kv", "ov-pa"]
F32_FAMILIES = FAMILIES[:4]  # the families of the fp32 cases (ov-pa runs only the paged cases)

# K/V storage types: attngen's by their attngen_kv_dtype names (attngen.KV_DTYPES); "u8" is OpenVINO's
# CPU cache: asymmetric, one fp32 scale and one fp32 zero point per (token, kv head) row (KEY/VALUE_CACHE_GROUP_SIZE
# 0, its default). Bytes of one (token, kv head) row of head_dim d, for the cache-bytes columns.
KV_ROW_BYTES = {"f32": lambda d: 4 * d, "f16": lambda d: 2 * d, "bf16": lambda d: 2 * d,
                "int8": lambda d: d + 4, "int8_g64": lambda d: d + 4 * (d // 64),
                "int8_g32": lambda d: d + 4 * (d // 32),
                "u8": lambda d: d + 8,
                # OpenVINO's paged u8: K per (page, kv head, column), V per row; the mean of a K and a V row
                "u8pa": lambda d: d + 4 + 4 * d // OV_PA_BLOCK}
# The typed decode cases: the cache each side holds, a peer's never smaller than attngen's (same type, or OpenVINO's
# u8 with two fp32 per row against attngen's int8 with one).
KV_PAIRS = {
    "f16": {"attngen": "f16", "ort": "f16", "ov-kv": "f16"},
    "int8": {"attngen": "int8", "ov-kv": "u8"},
}
# The paged decode cases: OpenVINO's paged cache against attngen's paged and contiguous ones of no more bytes.
OV_PA_BLOCK = 32  # rows per page that OpenVINO's CPU plugin asks for (checked against the compiled model)
PAGED_PAIRS = {
    "f32": {"attngen": "f32", "ov-pa": "f32"},
    "f16": {"attngen": "f16", "ov-pa": "f16"},
    "u8": {"attngen": "int8", "ov-pa": "u8pa"},
}


# ---------------------------------------------------------------------------------------------------- cases

class Case:
    def __init__(self, short, heads, kv_heads, head_dim, causal, decode, q_len, kv_len, batch=1, kv=None,
                 paged=False, page_size=None):
        self.short = short  # x-axis label of the plots
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.causal, self.decode = causal, decode
        self.batch, self.q_len, self.kv_len = batch, q_len, kv_len
        self.group = heads // kv_heads
        # None: every side on fp32 K/V; else a KV_PAIRS (PAGED_PAIRS if paged) key: each side's cache type (decode)
        self.kv, self.paged = kv, paged
        self.page_size = page_size  # paged cases: attngen's pages (None: its tables have no paged kernel here)
        self.types = (PAGED_PAIRS if paged else KV_PAIRS)[kv] if kv else None
        shape = f"h{heads}/kv{kv_heads}/d{head_dim}"
        if decode:
            self.label = f"decode {shape} L={kv_len}" + (f" B={batch}" if batch > 1 else "")
            if paged:
                pages = f"pages of {page_size}" if page_size else "contiguous"
                if page_size and page_size != OV_PA_BLOCK:
                    pages += f" (nearest to {OV_PA_BLOCK} in its tables)"
                self.label += f" paged {self.types['ov-pa']}, attngen {self.types['attngen']} {pages}"
            elif kv:
                self.label += " kv " + "|".join(dict.fromkeys(self.types.values()))
        else:
            self.label = f"prefill {shape} {'causal' if causal else 'none'} S={q_len}"

    def families(self):
        """The peer families that run the case: every one on fp32 K/V, those with a cache of that type else."""
        return [f for f in FAMILIES if f in self.types] if self.kv else F32_FAMILIES

    def cache_type(self, family):
        return self.types.get(family) if self.kv else "f32"

    def pairs(self):
        """Visible (query, key) pairs per sequence and head; causal is bottom-right aligned."""
        if not self.causal:
            return self.q_len * self.kv_len
        off = self.kv_len - self.q_len
        i = np.arange(self.q_len, dtype=np.int64)
        return int(np.clip(i + off + 1, 0, self.kv_len).sum())

    def flops(self):
        return 4.0 * self.head_dim * self.heads * self.batch * self.pairs()

    def kv_bytes(self, kv_type="f32"):
        """Bytes of the K and V rows a decode step reads, in a cache of that storage type (int8/u8: with scales)."""
        return 2.0 * self.batch * self.kv_len * self.kv_heads * KV_ROW_BYTES[kv_type](self.head_dim)


def make_cases(quick, llc, page_size=lambda heads, kv_heads, head_dim, kv_type: None):
    # Full sizes; quick mode shrinks lengths (and keeps every shape) for a smoke run. Each decode case is timed warm
    # or cold alike for every library (kv_state, by the size of its fp32 K/V against the last-level cache llc) and
    # its label says which.
    P = (lambda s: max(64, s // 8)) if quick else (lambda s: s)
    L = (lambda n: max(512, n // 8)) if quick else (lambda n: n)
    c = []
    c.append(Case("S512", 32, 8, 128, False, False, P(512), P(512)))
    c.append(Case("S2048", 32, 8, 128, False, False, P(2048), P(2048)))
    c.append(Case("S512 c", 32, 8, 128, True, False, P(512), P(512)))
    c.append(Case("S2048 c", 32, 8, 128, True, False, P(2048), P(2048)))
    c.append(Case("S2048 d64", 32, 8, 64, False, False, P(2048), P(2048)))          # Llama-3.2-1B shape
    c.append(Case("S1024 c d256", 8, 4, 256, True, False, P(1024), P(1024)))        # Gemma-2-2B
    c.append(Case("S1024 c g7", 14, 2, 64, True, False, P(1024), P(1024)))          # Qwen2.5-0.5B
    c.append(Case("L4k", 32, 8, 128, True, True, 1, L(4096)))
    c.append(Case("L16k", 32, 8, 128, True, True, 1, L(16384)))
    c.append(Case("L4k MHA", 32, 32, 128, True, True, 1, L(4096)))
    c.append(Case("L4k B8", 32, 8, 128, True, True, 1, L(4096), batch=8))
    c.append(Case("L4k g7", 14, 2, 64, True, True, 1, L(4096)))                     # Qwen2.5-0.5B
    # Reduced-precision caches, Llama-3-8B decode (KV_PAIRS: attngen's type against each peer's)
    for n in (16384, 32768):
        for kv in KV_PAIRS:
            short = f"L{n // 1024}k " + "|".join(dict.fromkeys(KV_PAIRS[kv].values()))
            c.append(Case(short, 32, 8, 128, True, True, 1, L(n), kv=kv))
    # Paged caches, Llama-3-8B decode at batch 1 and 8 (PAGED_PAIRS), fp32 K/V 4x the last-level cache
    for batch in (1, 8):
        n = L(beyond_llc(llc, batch, 8, 128))
        for kv in PAGED_PAIRS:
            short = f"pg L{n // 1024}k" + (f" B{batch}" if batch > 1 else "") + " " + PAGED_PAIRS[kv]["ov-pa"]
            ps = page_size(32, 8, 128, PAGED_PAIRS[kv]["attngen"])
            c.append(Case(short, 32, 8, 128, True, True, 1, n, batch=batch, kv=kv, paged=True, page_size=ps))
    for x in c:
        x.state, x.evict_each = kv_state(x, llc)
        if x.decode:
            x.label += " " + x.state
    return c


def beyond_llc(llc, batch, kv_heads, head_dim):
    """The power-of-two kv_len (>= 1024) whose fp32 K and V of `batch` sequences hold 4x the last-level cache."""
    n = 1024
    while 2 * batch * n * kv_heads * head_dim * 4 < 4 * llc:
        n *= 2
    return n


def reference64(case, q, k, v):
    """float64 attention, token-major in and out; only computed to explain a disagreement."""
    B, S, H, D = q.shape
    L, G = k.shape[1], case.group
    out = np.zeros((B, S, H, D))
    i = np.arange(S)[:, None]
    j = np.arange(L)[None, :]
    for b in range(B):
        for kh in range(case.kv_heads):
            kk = k[b, :, kh, :].astype(np.float64)
            vv = v[b, :, kh, :].astype(np.float64)
            for g in range(G):
                h = kh * G + g
                s = q[b, :, h, :].astype(np.float64) @ kk.T / math.sqrt(D)
                if case.causal:
                    s = np.where(j <= i + L - S, s, -np.inf)
                p = np.exp(s - s.max(axis=1, keepdims=True))
                out[b, :, h, :] = (p / p.sum(axis=1, keepdims=True)) @ vv
    return out


# ---------------------------------------------------------------------------------------------------- runners
# A runner is one library variant bound to one case and thread count: call() is what gets timed, prepare()
# runs untimed before each sample, output() returns [B,S,H,D] for the check.

class Runner:
    family = variant = ""
    inner_cap = 1 << 30
    note = ""
    error = None  # set instead of raising when a variant cannot even be built (it is then reported, not run)
    cache_type = "f32"  # the storage type of the K/V it reads
    f16_out = False     # its output is float16 (the check's tolerance is then TOL_F16_OUT)

    def prepare(self):
        pass

    def stored(self):
        """Typed cases: (Q, K, V) as this variant holds them after a call, as fp32 token-major [B,S,H,D] and
        [B,L,KV,D] (its cache read back and dequantized), for the float64 reference of the check."""
        raise NotImplementedError

    def close(self):
        pass


class AttngenRunner(Runner):
    """attngen on the token-major K/V its KV-cache API writes, or (head_major) on a [B,KV,L,D] copy: the layout
    ONNX Runtime's GroupQueryAttention and HF caches hold (decode cases), passed as a [B,L,KV,D] view through its
    strides. The attngen column is the faster of the two, as each other library's column is its fastest variant; the
    table marks a head-major win. With `cache` (typed cases, from fill_cache) K/V are that cache of another storage
    type instead of the fp32 k and v. The call is bound once (attngen.Kernel.bind): call() is the C call alone."""
    family = "attngen"

    def __init__(self, lib, case, q, k, v, threads, head_major=False, cache=None, family="attngen"):
        self.case, self.threads, self.family = case, threads, family
        self.o = np.zeros_like(q)
        # the same cache, head-major: [B,L,KV,*] stored as [B,KV,L,*], for the elements and int8's scales alike
        hm = (lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)) if head_major else \
            (lambda x: x)
        kv, scales = (k, v), (None, None)
        if cache is not None:
            self.cache_type, self.cache = cache["type"], cache
            kv, scales = (cache["k"], cache["v"]), (cache["ks"], cache["vs"])
        self.q, (self.k, self.v) = q, (hm(x) for x in kv)
        self.ks, self.vs = (None if x is None else hm(x) for x in scales)
        kernel = lib.kernel(case, self.cache_type)
        self.run = kernel.bind(q, self.k, self.v, k_scale=self.ks, v_scale=self.vs, out=self.o, threads=threads)
        self.variant = kernel.name + (" (head-major K/V)" if head_major else "")

    def call(self):
        self.run()

    def output(self):
        return self.o

    def stored(self):
        return self.q, self.cache["k32"], self.cache["v32"]


class Attngen:
    """attngen through its Python package (python/attngen): the runtime library, and the models built from `configs`
    (bench-only shapes, catalog models) into models_dir. A case runs the specialized kernel of the first model
    whose table has its shape, else the generic kernel, which the results name."""

    def __init__(self, library, configs, models_dir, log):
        attngen.load_library(library)
        self.models = []
        for config in configs:
            name = os.path.splitext(os.path.basename(config))[0]
            log(f"attngen: building {config}")
            self.models.append(attngen.build(config, os.path.join(models_dir, name)))

    def kernel(self, case, kv_type="f32", page_size=0):
        shape = dict(heads=case.heads, kv_heads=case.kv_heads, head_dim=case.head_dim,
                     mask="causal" if case.causal else "none", phase="decode" if case.decode else "prefill",
                     kv_dtype=kv_type, page_size=page_size)
        model = next((m for m in self.models if m.has(**shape)), None)
        return model.select(**shape) if model else attngen.select(**shape)

    def page_size(self, heads, kv_heads, head_dim, kv_type, want=None):
        """The page size nearest to want (default OV_PA_BLOCK; ties: the smaller) among the tables' paged causal
        decode kernels of that shape and cache type, or None."""
        want = want or OV_PA_BLOCK
        shape = dict(heads=heads, kv_heads=kv_heads, head_dim=head_dim, mask="causal", phase="decode",
                     kv_dtype=kv_type)
        sizes = {p for m in self.models for p in m.page_sizes if m.has(**shape, page_size=p)}
        return min(sizes, key=lambda p: (abs(p - want), p)) if sizes else None


def fill_cache(lib, case, k, v, kv_type):
    """attngen's token-major cache of storage type kv_type, written by attngen_kv_append from the fp32 rows (as a
    model fills it), and its dequantized values (k32, v32: what the kernel reads, element * scale in fp32)."""
    c = case
    cache = attngen.KVCache.allocate(c.batch, c.kv_len, c.kv_heads, c.head_dim, kv_type)
    lib.kernel(case, kv_type).append(cache, k, v)
    k32, v32 = cache.dequantized(np.float32)
    filled = {"type": kv_type, "k": cache.k, "v": cache.v, "ks": cache.k_scale, "vs": cache.v_scale, "k32": k32,
              "v32": v32, "bytes": cache.nbytes}
    assert filled["bytes"] == case.kv_bytes(kv_type), (filled["bytes"], case.kv_bytes(kv_type))
    return filled


def fill_paged(lib, case, k, v, table, head_major=False):
    """attngen's paged cache of the case's page size: pools of exactly the pages `table` names (ceil(kv_len /
    page_size) per sequence, a random permutation: ov-pa gets the same table when its pages have that size), dense
    pages [page_size, kv_heads, head_dim] or (head_major) [kv_heads, page_size, head_dim] as ov-pa's, written by
    attngen_kv_append through the table from the same fp32 rows as fill_cache."""
    c, ps, kv_type = case, case.page_size, case.cache_type("attngen")
    per_row = attngen.dtypes.scales_per_row(kv_type, c.head_dim)

    def pool(width, dtype):  # [pages, page_size, kv_heads, width], head-major pages as their transposed view
        if head_major:
            return np.zeros((table.size, c.kv_heads, ps, width), dtype).transpose(0, 2, 1, 3)
        return np.zeros((table.size, ps, c.kv_heads, width), dtype)
    scales = [pool(per_row, np.float32) if per_row else None for _ in range(2)]
    cache = attngen.PagedKVCache(*(pool(c.head_dim, attngen.dtypes.NUMPY_DTYPE[kv_type]) for _ in range(2)), table,
                                 None, *scales, kv_dtype=kv_type)
    lib.kernel(case, kv_type, ps).append(cache, k, v)
    return cache


class AttngenPagedRunner(Runner):
    """attngen's paged decode kernel on the paged cache of fill_paged, bound once (Kernel.bind with the cache)."""
    family = "attngen"

    def __init__(self, lib, case, q, threads, cache, head_major=False):
        self.q, self.cache, self.cache_type = q, cache, case.cache_type("attngen")
        self.o = np.zeros_like(q)
        kernel = lib.kernel(case, self.cache_type, cache.page_size)
        self.run = kernel.bind(q, cache, out=self.o, threads=threads)
        self.variant = f"{kernel.name} (pages of {cache.page_size}, shuffled" + (
            ", head-major K/V)" if head_major else ")")

    def call(self):
        self.run()

    def output(self):
        return self.o

    def stored(self):
        L = int(self.cache.lengths[0])
        return (self.q, *(x[:, :L] for x in self.cache.dequantized(np.float32)))


class TorchRunner(Runner):
    family = "torch"

    def __init__(self, case, q, k, v, threads, flash):
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
        torch.set_num_threads(threads)
        self.torch, self.F = torch, F
        self.q = torch.from_numpy(q).transpose(1, 2).contiguous()
        self.k = torch.from_numpy(k).transpose(1, 2).contiguous()
        self.v = torch.from_numpy(v).transpose(1, 2).contiguous()
        # Prefill has q_len == kv_len, where torch's top-left causal equals attngen's bottom-right; decode's
        # single query sees every key, so it needs no mask.
        self.causal = case.causal and not case.decode
        self.variant = "flash" if flash else "default"
        # Contexts stay entered for the runner's life so the timed call is the SDPA call alone.
        self.ctx = contextlib.ExitStack()
        self.ctx.enter_context(torch.inference_mode())
        if flash:
            self.ctx.enter_context(sdpa_kernel(SDPBackend.FLASH_ATTENTION))
        self.o = None

    def call(self):
        self.o = self.F.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=self.causal, enable_gqa=True)

    def output(self):
        return self.o.transpose(1, 2).numpy()

    def close(self):
        self.ctx.close()


def torch_runners(case, q, k, v, threads):
    """Flash if torch accepts the case with it, else the default dispatch (named in the variant)."""
    r = TorchRunner(case, q, k, v, threads, flash=True)
    try:
        r.call()
        return [r]
    except RuntimeError as e:
        r.close()
        r = TorchRunner(case, q, k, v, threads, flash=False)
        r.note = f"flash refused ({str(e).splitlines()[0][:80]})"
        return [r]


class OrtRunner(Runner):
    family = "ort"

    def __init__(self, variant, model_bytes, threads, head_dim, inputs, outputs, shared=(), dtype=np.float32):
        """inputs: name -> numpy array; outputs: name -> shape (pre-allocated and bound, so a call allocates
        nothing); shared: (input, output) pairs bound to one buffer (GQA's KV cache); dtype: the outputs' type."""
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.variant, self.head_dim = variant, head_dim
        self.sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
        self.io = self.sess.io_binding()
        self.keep = {}  # the arrays behind the bound OrtValues must outlive the binding
        for name, arr in inputs.items():
            self.keep[name] = ort.OrtValue.ortvalue_from_numpy(arr)
            self.io.bind_ortvalue_input(name, self.keep[name])
        shared = dict(shared)
        for name, shape in outputs.items():
            src = [i for i, o in shared.items() if o == name]
            val = self.keep[src[0]] if src else ort.OrtValue.ortvalue_from_shape_and_type(shape, dtype)
            self.keep["out:" + name] = val
            self.io.bind_ortvalue_output(name, val)

    def call(self):
        self.sess.run_with_iobinding(self.io)

    def output(self):
        o = self.keep["out:o"].numpy().astype(np.float32)
        return o.reshape(o.shape[0], o.shape[1], -1, self.head_dim)

    def stored(self):
        B, S = self.case.batch, self.case.q_len
        q = self.keep["q"].numpy().astype(np.float32).reshape(B, S, -1, self.head_dim)
        k, v = (self.keep[n].numpy().astype(np.float32).transpose(0, 2, 1, 3) for n in ("past_k", "past_v"))
        return q, k, v


def onnx_model(node, inputs, outputs):
    """One-node model. IR version 10: onnxruntime 1.31 refuses the IR that onnx 1.23 writes by default."""
    from onnx import helper
    g = helper.make_graph([node], "attn", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    return m.SerializeToString()


def ort_runners(case, q, k, v, threads):
    from onnx import TensorProto as TP
    from onnx import helper
    c = case
    B, S, L, H, KV, D = c.batch, c.q_len, c.kv_len, c.heads, c.kv_heads, c.head_dim
    f32 = lambda n, shape: helper.make_tensor_value_info(n, TP.FLOAT, shape)
    i32 = lambda n, shape: helper.make_tensor_value_info(n, TP.INT32, shape)
    # ONNX's 3-D layout [B, S, heads*D] is token-major: these are views, not copies.
    q3, k3, v3 = q.reshape(B, S, H * D), k.reshape(B, L, KV * D), v.reshape(B, L, KV * D)
    out = {"o": [B, S, H * D]}
    runners = []

    def add(variant, build):
        try:
            runners.append(build())
        except Exception as e:  # an operator this onnxruntime lacks: say so, keep the others
            r = Runner()
            r.family, r.variant, r.error = "ort", variant, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
            runners.append(r)

    if c.causal and not c.decode:
        def gqa_prefill():
            n = helper.make_node("GroupQueryAttention", ["q", "k", "v", "", "", "seqlens_k", "total"],
                                 ["o", "pk", "pv"], domain="com.microsoft", num_heads=H, kv_num_heads=KV)
            m = onnx_model(n, [f32("q", [B, S, H * D]), f32("k", [B, L, KV * D]), f32("v", [B, L, KV * D]),
                               i32("seqlens_k", [B]), i32("total", [])],
                           [f32("o", [B, S, H * D]), f32("pk", [B, KV, L, D]), f32("pv", [B, KV, L, D])])
            return OrtRunner("GQA", m, threads, D,
                             {"q": q3, "k": k3, "v": v3, "seqlens_k": np.full(B, L - 1, np.int32),
                              "total": np.array(L, np.int32)},
                             {"o": out["o"], "pk": [B, KV, L, D], "pv": [B, KV, L, D]})
        add("GQA", gqa_prefill)
    if c.decode:
        def gqa_decode():
            # The cache holds kv_len rows with capacity kv_len; past and present share it, so a step appends
            # the new row (row kv_len-1, given as k/v) in place and reads the cache once, as in generation.
            kc = np.ascontiguousarray(k.transpose(0, 2, 1, 3))
            vc = np.ascontiguousarray(v.transpose(0, 2, 1, 3))
            n = helper.make_node("GroupQueryAttention", ["q", "k", "v", "past_k", "past_v", "seqlens_k", "total"],
                                 ["o", "pk", "pv"], domain="com.microsoft", num_heads=H, kv_num_heads=KV)
            m = onnx_model(n, [f32("q", [B, 1, H * D]), f32("k", [B, 1, KV * D]), f32("v", [B, 1, KV * D]),
                               f32("past_k", [B, KV, L, D]), f32("past_v", [B, KV, L, D]),
                               i32("seqlens_k", [B]), i32("total", [])],
                           [f32("o", [B, 1, H * D]), f32("pk", [B, KV, L, D]), f32("pv", [B, KV, L, D])])
            return OrtRunner("GQA kv-cache", m, threads, D,
                             {"q": q3, "k": np.ascontiguousarray(k3[:, L - 1:]),
                              "v": np.ascontiguousarray(v3[:, L - 1:]), "past_k": kc, "past_v": vc,
                              "seqlens_k": np.full(B, L - 1, np.int32), "total": np.array(L, np.int32)},
                             {"o": out["o"], "pk": [B, KV, L, D], "pv": [B, KV, L, D]},
                             shared=[("past_k", "pk"), ("past_v", "pv")])
        add("GQA kv-cache", gqa_decode)

    def attention23():
        # ONNX's is_causal is top-left aligned: equal to attngen's for prefill (S == L); decode needs no mask.
        n = helper.make_node("Attention", ["q", "k", "v"], ["o"], q_num_heads=H, kv_num_heads=KV,
                             is_causal=int(c.causal and not c.decode))
        m = onnx_model(n, [f32("q", [B, S, H * D]), f32("k", [B, L, KV * D]), f32("v", [B, L, KV * D])],
                       [f32("o", [B, S, H * D])])
        return OrtRunner("Attention-23", m, threads, D, {"q": q3, "k": k3, "v": v3}, out)
    add("Attention-23", attention23)

    if H == KV:
        def mha():
            n = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["o"], domain="com.microsoft", num_heads=H,
                                 unidirectional=int(c.causal and not c.decode))
            m = onnx_model(n, [f32("q", [B, S, H * D]), f32("k", [B, L, KV * D]), f32("v", [B, L, KV * D])],
                           [f32("o", [B, S, H * D])])
            return OrtRunner("MHA", m, threads, D, {"q": q3, "k": k3, "v": v3}, out)
        add("MHA", mha)
    return runners


def ort_runners_kv(case, q, cache, threads):
    """GroupQueryAttention decode in float16: Q, the new K/V row, the cache and the output are float16 (the
    operator's type T); the cache holds attngen's f16 values (the same rounding of the same rows), head-major
    [B,KV,L,D], shared between past and present as in the fp32 case."""
    from onnx import TensorProto as TP
    from onnx import helper
    c = case
    B, L, H, KV, D = c.batch, c.kv_len, c.heads, c.kv_heads, c.head_dim
    f16 = lambda n, shape: helper.make_tensor_value_info(n, TP.FLOAT16, shape)
    i32 = lambda n, shape: helper.make_tensor_value_info(n, TP.INT32, shape)
    kc, vc = (np.ascontiguousarray(cache[x].transpose(0, 2, 1, 3)) for x in ("k", "v"))
    row = lambda x: np.ascontiguousarray(x[:, L - 1:].reshape(B, 1, KV * D))
    try:
        n = helper.make_node("GroupQueryAttention", ["q", "k", "v", "past_k", "past_v", "seqlens_k", "total"],
                             ["o", "pk", "pv"], domain="com.microsoft", num_heads=H, kv_num_heads=KV)
        m = onnx_model(n, [f16("q", [B, 1, H * D]), f16("k", [B, 1, KV * D]), f16("v", [B, 1, KV * D]),
                           f16("past_k", [B, KV, L, D]), f16("past_v", [B, KV, L, D]),
                           i32("seqlens_k", [B]), i32("total", [])],
                       [f16("o", [B, 1, H * D]), f16("pk", [B, KV, L, D]), f16("pv", [B, KV, L, D])])
        r = OrtRunner("GQA kv-cache fp16", m, threads, D,
                      {"q": q.reshape(B, 1, H * D).astype(np.float16), "k": row(cache["k"]), "v": row(cache["v"]),
                       "past_k": kc, "past_v": vc, "seqlens_k": np.full(B, L - 1, np.int32),
                       "total": np.array(L, np.int32)},
                      {"o": [B, 1, H * D], "pk": [B, KV, L, D], "pv": [B, KV, L, D]},
                      shared=[("past_k", "pk"), ("past_v", "pv")], dtype=np.float16)
    except Exception as e:  # an onnxruntime without float16 GQA on the CPU: say so
        r = Runner()
        r.family, r.variant, r.error = "ort", "GQA kv-cache fp16", f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    r.case, r.cache_type, r.f16_out = case, "f16", True
    return [r]


def ov_config(threads, kv="f32"):
    """fp32 arithmetic (INFERENCE_PRECISION_HINT f32, where the CPU plugin's default is bf16 on CPUs with bf16
    instructions) and a KV cache of storage type kv: f32, f16, or u8 (the CPU plugin's default)."""
    return {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
            "PERFORMANCE_HINT": "LATENCY",
            "KV_CACHE_PRECISION": kv, "KEY_CACHE_PRECISION": kv, "VALUE_CACHE_PRECISION": kv}


def ov_layers(compiled):
    return {op.get_rt_info()["layerType"].astype(str) for op in compiled.get_runtime_model().get_ops()}


def ov_expand(ops, x, c):
    """[B,KV,L,D] -> [B,H,L,D] the way model exporters write GQA (and OpenVINO's fusions expect)."""
    if c.group == 1:
        return x
    u = ops.unsqueeze(x, ops.constant(np.array([2], np.int64)))
    b = ops.broadcast(u, ops.constant(np.array([1, 1, c.group, 1, 1], np.int64)), broadcast_spec="BIDIRECTIONAL")
    return ops.reshape(b, ops.constant(np.array([0, c.heads, -1, c.head_dim], np.int64)), special_zero=True)


class OvRunner(Runner):
    family = "ov"

    def __init__(self, variant, model, threads, feeds, out_fn):
        import openvino as ov
        self.variant = variant
        self.compiled = ov.Core().compile_model(model, "CPU", ov_config(threads))
        self.req = self.compiled.create_infer_request()
        self.feeds = [np.ascontiguousarray(a) for a in feeds]
        for i, a in enumerate(self.feeds):
            self.req.set_input_tensor(i, ov.Tensor(a, shared_memory=True))
        self.out_fn = out_fn

    def call(self):
        self.req.infer()

    def output(self):
        return self.out_fn(self.req.get_output_tensor(0).data)


def ov_runners(case, q, k, v, threads):
    import openvino as ov
    import openvino.opset13 as ops
    c = case
    B, S, L, H, KV, D, G = c.batch, c.q_len, c.kv_len, c.heads, c.kv_heads, c.head_dim, c.group
    causal = c.causal and not c.decode  # as for torch: prefill S == L, decode sees every key
    qh, kh, vh = (np.ascontiguousarray(x.transpose(0, 2, 1, 3)) for x in (q, k, v))
    back = lambda o: o.reshape(B, H, S, D).transpose(0, 2, 1, 3)
    runners = []
    # 4-D, the exporters' GQA pattern (also the only form for MHA)
    pq = ops.parameter([B, H, S, D], np.float32, name="q")
    pk = ops.parameter([B, KV, L, D], np.float32, name="k")
    pv = ops.parameter([B, KV, L, D], np.float32, name="v")
    sd = ops.scaled_dot_product_attention(pq, ov_expand(ops, pk, c), ov_expand(ops, pv, c), causal=causal)
    runners.append(OvRunner("sdpa" if G == 1 else "sdpa bcast", ov.Model([sd], [pq, pk, pv]), threads,
                            [qh, kh, vh], back))
    if G > 1:
        # 5-D: SDPA's own broadcasting over a group axis, no K/V expansion in the graph
        pq = ops.parameter([B, KV, G, S, D], np.float32, name="q")
        pk = ops.parameter([B, KV, 1, L, D], np.float32, name="k")
        pv = ops.parameter([B, KV, 1, L, D], np.float32, name="v")
        sd = ops.scaled_dot_product_attention(pq, pk, pv, causal=causal)
        runners.append(OvRunner("sdpa 5d", ov.Model([sd], [pq, pk, pv]), threads,
                                [qh.reshape(B, KV, G, S, D), kh.reshape(B, KV, 1, L, D),
                                 vh.reshape(B, KV, 1, L, D)], back))
    return runners


class OvKvRunner(Runner):
    family = "ov-kv"
    variant = "sdpa stateful"
    inner_cap = 1  # each timed step grows the cache: one step per sample, from a reset cache

    def __init__(self, case, q, k, v, threads, kv="f32"):
        import openvino as ov
        import openvino.opset13 as ops
        import openvino.opset6 as ops6
        from openvino.op.util import Variable, VariableInfo
        c = case
        B, L, H, KV, D = c.batch, c.kv_len, c.heads, c.kv_heads, c.head_dim
        self.ov = ov
        # The sequence axes are dynamic, as an LLM export has them (with static 1-row inputs the fused kernel
        # returned garbage after a state was set, in openvino 2026.4).
        pq = ops.parameter([B, H, -1, D], np.float32, name="q")
        pk = ops.parameter([B, KV, -1, D], np.float32, name="k")
        pv = ops.parameter([B, KV, -1, D], np.float32, name="v")
        beam = ops.parameter([B], np.int32, name="beam_idx")
        sinks, present, variables = [], [], []
        for name, cur in (("k_cache", pk), ("v_cache", pv)):
            info = VariableInfo()
            info.data_shape = ov.PartialShape([B, KV, -1, D])
            info.data_type = ov.Type.f32
            info.variable_id = name
            var = Variable(info)
            variables.append(var)
            init = ops.broadcast(ops.constant(np.float32(0)), ops.constant(np.array([B, KV, 0, D], np.int64)))
            past = ops.gather(ops6.read_value(init, var), beam, ops.constant(np.int64(0)))
            cat = ops.concat([past, cur], axis=2)
            sinks.append(ops6.assign(cat, var))
            present.append(cat)
        # causal, as exported LLMs have it; the fused kernel aligns it bottom-right, so one query sees every key.
        sd = ops.scaled_dot_product_attention(pq, ov_expand(ops, present[0], c), ov_expand(ops, present[1], c),
                                              causal=True)
        model = ov.Model([ops.result(sd)], sinks, [pq, pk, pv, beam], variables)
        core = ov.Core()
        self.compiled = core.compile_model(model, "CPU", ov_config(threads, kv))
        layers = ov_layers(self.compiled)
        notes = []
        if not ("MemoryInput" in layers and "ScaledDotProductAttention" in layers and "Concatenation" not in layers):
            notes.append("NOT fused: " + ",".join(sorted(layers)))  # else: the SDPA-with-KV-cache kernel, as intended
        self.cache_type = kv
        if kv != "f32":
            self.variant = f"sdpa stateful, {kv} cache"
            got = self.compiled.get_property("KV_CACHE_PRECISION")
            if got != getattr(ov.Type, kv):
                notes.append(f"compiled with a {got.get_type_name()} KV cache, not {kv}")
            default = core.get_property("CPU", "KV_CACHE_PRECISION")
            if kv == "u8" and default != ov.Type.u8:
                notes.append(f"u8 is not this OpenVINO's default KV cache type ({default.get_type_name()})")
        self.note = "; ".join(notes)
        self.req = self.compiled.create_infer_request()
        kh, vh = (np.ascontiguousarray(x.transpose(0, 2, 1, 3)) for x in (k, v))
        self.init = {"k_cache": np.ascontiguousarray(kh[:, :, :L - 2]), "v_cache": np.ascontiguousarray(vh[:, :, :L - 2])}
        qh = np.ascontiguousarray(q.transpose(0, 2, 1, 3))
        self.q = q
        beam_v = np.arange(B, dtype=np.int32)
        row = lambda x, i: ov.Tensor(np.ascontiguousarray(x[:, :, i:i + 1]))
        self.warm = [ov.Tensor(qh), row(kh, L - 2), row(vh, L - 2), ov.Tensor(beam_v)]
        self.step = [ov.Tensor(qh), row(kh, L - 1), row(vh, L - 1), ov.Tensor(beam_v)]
        self.shape = (B, H, D)

    def _set(self, tensors):
        for i, t in enumerate(tensors):
            self.req.set_input_tensor(i, t)

    def prepare(self):
        self.req.reset_state()
        for st in self.req.query_state():
            st.state = self.ov.Tensor(self.init[st.name])
        self._set(self.warm)
        self.req.infer()
        self._set(self.step)

    def call(self):
        self.req.infer()

    def output(self):
        B, H, D = self.shape
        return self.req.get_output_tensor(0).data.reshape(B, 1, H, D)

    def stored(self):
        # the state API reads the cache back as fp32, dequantized (u8: (x - zero point) * scale per row)
        st = {s.name: s.state.data for s in self.req.query_state()}
        k, v = (np.array(st[n], np.float32).transpose(0, 2, 1, 3) for n in ("k_cache", "v_cache"))
        return self.q, k, v


class OvPagedRunner(Runner):
    """OpenVINO's PagedAttention decode step on its paged cache (ov_paged.PagedDecode), compiled as ov_config says
    with the cache type kv ("u8pa": u8, OpenVINO's own layout of u8 pages). Each step rewrites row kv_len-1 with
    the same values."""
    family = "ov-pa"

    def __init__(self, case, q, k, v, threads, kv, rng, table=None):
        from ov_paged import PagedDecode
        ov_type = {"u8pa": "u8"}.get(kv, kv)
        self.pa = PagedDecode(q, k, v, ov_config(threads, ov_type), rng, table)
        self.cache_type, self.q = kv, q
        self.variant = f"paged attention, {kv} pages of {self.pa.block}"
        got = self.pa.cache_type.get_type_name()
        notes = [f"compiled with a {got} cache, not {ov_type}"] if got != ov_type else []
        if self.pa.block != OV_PA_BLOCK:
            notes.append(f"pages of {self.pa.block} rows, not {OV_PA_BLOCK}: the MiB column is off")
        if table is not None and self.pa.table is not table:
            notes.append(f"its own block table: pages of {self.pa.block} rows, attngen's of {case.page_size}")
        self.note = "; ".join(notes)

    def call(self):
        self.pa.step()

    def output(self):
        return self.pa.output()

    def stored(self):
        return (self.q, *self.pa.stored())


def peer_runners(family, case, q, k, v, threads, cache=None, rng=None, table=None):
    if case.kv:  # typed decode: the peers with a cache of that type (KV_PAIRS, PAGED_PAIRS)
        if family == "ov-pa":
            return [OvPagedRunner(case, q, k, v, threads, case.cache_type("ov-pa"), rng, table)]
        if family == "ort":
            return ort_runners_kv(case, q, cache, threads)
        if family == "ov-kv":
            return [OvKvRunner(case, q, k, v, threads, kv=case.cache_type("ov-kv"))]
        raise ValueError(family)
    if family == "torch":
        return torch_runners(case, q, k, v, threads)
    if family == "ort":
        return ort_runners(case, q, k, v, threads)
    if family == "ov":
        return ov_runners(case, q, k, v, threads)
    if family == "ov-kv":
        return [OvKvRunner(case, q, k, v, threads)] if case.decode else []
    raise ValueError(family)


# ---------------------------------------------------------------------------------------------------- timing

def llc_bytes():
    """Bytes of the last-level cache (sysfs), 32 MiB if unknown: the scale of the warm/cold policy."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    best = 0
    try:
        for d in os.listdir(base):
            if d.startswith("index"):
                with open(f"{base}/{d}/size") as f:
                    t = f.read().strip()
                best = max(best, int(t.rstrip("KM")) * {"K": 1 << 10, "M": 1 << 20}.get(t[-1:], 1))
    except (OSError, ValueError):
        pass
    return best or 32 << 20


def kv_state(case, llc):
    """(label, evict before every sample) of a case, the same for every library, as bench/bench.c times it: decode
    K/V (fp32 bytes) up to a quarter of the last-level cache stays resident between the samples of the round, and
    is timed warm (repeated calls on the same buffers); up to the cache it would stay in part, so the caches are
    evicted before every sample of one call (cold); beyond it every call streams it from memory (cold by size)."""
    if not case.decode:
        return "-", False
    b = case.kv_bytes()
    if b <= llc / 4:
        return "warm", False
    return "cold", b <= llc


class Evictor:
    """Reads a buffer twice the last-level cache (untimed), so the next call finds none of its K/V cached."""

    def __init__(self, llc):
        self.buf = np.ones(2 * llc // 4, dtype=np.float32)

    def __call__(self):
        return float(self.buf.sum())


def quiesce(cfg):
    """Sleeps PEERS_GAP_MS, then until this process's threads are idle (less than a tenth of a core over 2 ms),
    at most PEERS_QUIESCE_MS. Thread pools spin after a call for very different times (measured here: ONNX
    Runtime 30-35 ms of CPU, PyTorch 8-9 ms, OpenVINO and attngen under 1 ms): a fixed gap shorter than the
    longest spin let one library's spinning threads take the second core from whichever library came next.
    Returns the seconds waited."""
    t0 = time.perf_counter()
    time.sleep(cfg.gap)
    deadline = t0 + cfg.quiesce_max
    c = time.process_time()
    while time.perf_counter() < deadline:
        time.sleep(0.002)
        c2 = time.process_time()
        if c2 - c < 0.0002:
            break
        c = c2
    return time.perf_counter() - t0


def timed(r, inner, evict=None):
    """Seconds per call of `inner` calls after the runner's prepare (and, timed cold, an eviction: inner is 1)."""
    r.prepare()
    if evict:
        evict()
    t0 = time.perf_counter()
    for _ in range(inner):
        r.call()
    return (time.perf_counter() - t0) / inner


class Result:
    def __init__(self, runner):
        self.r = runner
        self.family, self.variant = runner.family, runner.variant
        self.error = runner.error
        self.note = runner.note
        self.relerr = None
        self.samples = []
        self.quiet_waits = []  # seconds quiesce() waited after each sample (the library's threads spinning down)
        self.quiet = 0.0
        self.inner = 0
        self.est = None
        self.dropped = False
        self.out = None
        # typed cases: max|out - float64| / max|float64| on the values it stores (the check) and on the fp32 K/V
        self.err_stored = self.err_fp32 = None
        self.cache_type = runner.cache_type
        self.tol = TOL_F16_OUT if runner.f16_out else TOL

    @property
    def disagrees(self):
        """The check failed: fp32 cases, the output against attngen's; typed cases, against float64 on its own
        stored values."""
        if self.err_stored is not None:
            return self.err_stored > self.tol
        return self.relerr is not None and self.relerr > TOL

    @property
    def median(self):
        return float(np.median(self.samples)) if self.samples else None

    @property
    def minimum(self):
        return float(np.min(self.samples)) if self.samples else None


def relerr(out, ref):
    return float(np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-30))


def run_case(lib, case, threads, data, cfg, rng, log):
    q, k, v = data["q"], data["k"], data["v"]
    cache = data.get("cache")  # typed cases: attngen's cache (fill_cache)
    paged = data.get("paged")  # paged cases: attngen's paged caches (fill_paged), the "attngen" family there
    results = []
    # attngen's variants, the first one every other's reference: (family, variant, runner); on a paged case the
    # contiguous cache's runs are family "attngen-c", a row of their own
    contiguous = "attngen-c" if paged else "attngen"
    makers = [("attngen", "paged", lambda hm=hm: AttngenPagedRunner(lib, case, q, threads, paged[hm], hm))
              for hm in (False, True)] if paged else []
    makers.append((contiguous, "-", lambda: AttngenRunner(lib, case, q, k, v, threads, cache=cache, family=contiguous)))
    if case.decode:
        makers.append((contiguous, "head-major", lambda: AttngenRunner(lib, case, q, k, v, threads, head_major=True,
                                                                     cache=cache, family=contiguous)))
    for fam, variant, make in makers:
        try:
            results.append(Result(make()))
        except Exception as e:
            r = Result(Runner())
            r.family, r.variant, r.error = fam, variant, str(e)
            results.append(r)
            if len(results) == 1:
                return results
    for fam in case.families():
        try:
            for r in peer_runners(fam, case, q, k, v, threads, cache, rng, paged[0].block_table if paged else None):
                results.append(Result(r))
        except Exception as e:
            r = Result(Runner())
            r.family, r.variant = fam, "-"
            r.error = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
            results.append(r)
    live = [r for r in results if not r.error]
    evict = cfg.evictor() if case.evict_each else None

    # First call: output check, against attngen's (fp32 cases) or against float64 on the values the variant stores
    # (typed cases; the difference from attngen's output is reported too). Then two warm-up calls, both timed: the
    # faster one estimates the call's time for dropping slow variants and for choosing inner and the number of rounds.
    ref = None
    for res in live:
        try:
            res.r.prepare()
            res.r.call()
            out = res.r.output()
            if res.family == "attngen" and ref is None:  # the token-major run: the reference of every other
                ref = res.out = out.copy()
                res.relerr = 0.0
            else:
                res.relerr = relerr(out, ref)
                if res.relerr > TOL or case.kv:
                    res.out = np.array(out)  # kept to tell against float64 which side is off
            if case.kv:
                res.err_stored = relerr(out, reference64(case, *res.r.stored()))
                if "ref64" not in data:
                    data["ref64"] = reference64(case, q, k, v)
                res.err_fp32 = relerr(out, data["ref64"])
            res.est = min(timed(res.r, 1, evict), timed(res.r, 1, evict))  # min: one slow spell must not drop it
            res.quiet = quiesce(cfg)
        except Exception as e:
            res.error = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
            if res is results[0]:  # attngen's token-major run, every other's reference
                log(traceback.format_exc())
                return results
    live = [r for r in live if not r.error]

    # Within a family, variants far slower than the family's best are not worth the machine's time.
    for fam in case.families():
        vs = [r for r in live if r.family == fam]
        if len(vs) > 1:
            best = min(r.est for r in vs)
            for r in vs:
                r.dropped = r.est > DROP * best
    timed_ = [r for r in live if not r.dropped]
    for r in timed_:
        r.inner = 1 if evict else max(1, min(r.r.inner_cap, math.ceil(cfg.min_sample / max(r.est, 1e-7))))
    per_round = sum(r.inner * r.est + r.quiet for r in timed_)
    rounds = int(min(cfg.max_rounds, max(cfg.min_rounds, cfg.seconds / per_round)))
    for _ in range(rounds):
        for i in rng.permutation(len(timed_)):
            r = timed_[i]
            try:
                r.samples.append(timed(r.r, r.inner, evict))
            except Exception as e:
                r.error = f"{type(e).__name__}: {e}"
            r.quiet_waits.append(quiesce(cfg))
        timed_ = [r for r in timed_ if not r.error]
    for r in results:
        try:
            r.r.close()
        except Exception:
            pass
        r.r = None
    return results


# ---------------------------------------------------------------------------------------------------- report

def fmt_ms(x):
    return "-" if x is None else (f"{x * 1e3:.3f}" if x < 0.01 else f"{x * 1e3:.2f}" if x < 1 else f"{x * 1e3:.1f}")


def paired(num, den):
    """Median over rounds of num's per-call time / den's (one sample of each per round, in random order)."""
    n = min(len(num.samples), len(den.samples))
    if n == 0:
        return None
    return float(np.median(np.array(num.samples[:n]) / np.array(den.samples[:n])))


def best_of(results, fam):
    """The family's timed variant with the lowest median, or None."""
    vs = [r for r in results if r.family == fam and r.samples and not r.error]
    return min(vs, key=lambda r: r.median) if vs else None


def machine_info():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    llc = "?"
    try:
        base = "/sys/devices/system/cpu/cpu0/cache"
        idx = sorted(int(d[5:]) for d in os.listdir(base) if d.startswith("index"))
        with open(f"{base}/index{idx[-1]}/size") as f:
            llc = f.read().strip()
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, last-level cache {llc}"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def versions():
    out = [f"numpy {np.__version__}"]
    for mod, name in (("torch", "torch"), ("onnxruntime", "onnxruntime"), ("openvino", "openvino")):
        try:
            out.append(f"{name} {__import__(mod).__version__}")
        except Exception as e:  # a missing peer is reported, not fatal
            out.append(f"{name} missing ({type(e).__name__})")
    return ", ".join(out)


class Config:
    def __init__(self):
        self.quick = os.environ.get("PEERS_QUICK", "") not in ("", "0")
        self.filter = os.environ.get("PEERS_FILTER", "").lower()
        self.seconds = float(os.environ.get("PEERS_SECONDS", "0.5" if self.quick else "4"))
        self.threads = [int(t) for t in os.environ.get("PEERS_THREADS", "1,2").split(",") if t.strip()]
        self.gap = float(os.environ.get("PEERS_GAP_MS", "5")) / 1e3
        self.quiesce_max = float(os.environ.get("PEERS_QUIESCE_MS", "200")) / 1e3
        self.seed = int(os.environ.get("PEERS_SEED", "1"))
        self.min_rounds, self.max_rounds = (3, 20) if self.quick else (5, 60)
        self.min_sample = float(os.environ.get("PEERS_MIN_SAMPLE_MS", "2")) / 1e3
        self.llc = llc_bytes()
        self._evictor = None

    def evictor(self):
        """The one Evictor of the run, made on first use."""
        if self._evictor is None:
            self._evictor = Evictor(self.llc)
        return self._evictor


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="the runtime's shared library (make build/python/libattngen.so)")
    ap.add_argument("--configs", nargs="*", default=[], help="configs whose tables attngen uses, built into OUT/models")
    ap.add_argument("--out", required=True, help="output directory")
    a = ap.parse_args()
    cfg = Config()
    os.makedirs(a.out, exist_ok=True)
    lib = Attngen(a.lib, a.configs, os.path.join(a.out, "models"), lambda msg: print(msg, file=sys.stderr, flush=True))
    rng = np.random.default_rng(cfg.seed)
    cases = [c for c in make_cases(cfg.quick, cfg.llc, lib.page_size) if cfg.filter in c.label.lower()]
    if not cases:
        print(f"bench-peers: no case label contains '{cfg.filter}'", file=sys.stderr)
        return 2

    txt = open(os.path.join(a.out, "results.txt"), "w")

    def out(line=""):
        print(line, flush=True)
        txt.write(line + "\n")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    out(f"bench-peers {'quick' if cfg.quick else 'full'} run, {datetime.datetime.now().isoformat(timespec='seconds')}")
    out(f"machine: {machine_info()}")
    out(f"peers: {versions()}")
    out(f"load average at start: {loadavg()} (other users of the machine show up here)")
    out(f"timing: interleaved rounds (random order), {cfg.seconds:g} s per case and thread count, "
        f"{cfg.min_rounds}..{cfg.max_rounds} rounds, medians in ms (minima in results.csv); "
        f"check: max|out - attngen| / max|attngen| <= {TOL:g} on fp32 K/V; on a reduced-precision cache, "
        f"max|out - float64| / max|float64| <= {TOL:g} ({TOL_F16_OUT:g} for a float16 output) with float64 on the "
        f"values the side stores")
    out(f"cache: decode K/V (fp32 bytes) up to 1/4 of the last-level cache ({cfg.llc / 2**20:.0f} MiB) timed warm, "
        f"repeated on the same buffers; above, cold: up to the cache every sample is one call after a read of twice "
        f"the cache (untimed), beyond it every call streams from memory; the same for every library, named in the "
        f"case label")
    out(f"samples: >= {cfg.min_sample * 1e3:g} ms of back-to-back calls each; after each, {cfg.gap * 1e3:g} ms of sleep "
        f"and then until the process is idle (at most {cfg.quiesce_max * 1e3:g} ms; the wait per variant is in "
        f"results.csv)")
    head = (f"{'case':<36} {'thr':>3} {'attngen':>9} {'torch':>9} {'ort':>9} {'ov':>9} {'ov-kv':>9} "
            f"{'attngen÷fastest':>15}  {'fastest':<20} {'attngen rate':>14}")
    lw = max([44] + [len(c.label) for c in cases if c.kv])  # the typed cases' label column
    head_kv = (f"{'case':<{lw}} {'thr':>3}  {'peer':<6}{'cache':<6}{'MiB':>7} {'ms':>9}  {'cache':<8}{'MiB':>7} "
               f"{'ms':>9} {'GB/s':>6} {'attngen÷peer':>12}  {'err peer':>9} {'attngen':>8}")
    head_kv0 = f"{'':<{lw + 6}}{' peer ':-^29}  {' attngen ':-^39}"
    shown = set()

    def header(kind):
        if kind in shown:
            return
        shown.add(kind)
        out()
        if kind in ("kv", "paged"):
            out("Reduced-precision K/V caches (decode): each peer against attngen on a cache of the same or fewer "
                "bytes" if kind == "kv" else "Paged K/V caches (decode): OpenVINO's PagedAttention on its pages "
                "(block table a random permutation) against attngen on pages of the label's size and the same block "
                "table (cache <type>/p<rows>), then on a contiguous cache of the same or fewer bytes")
            out(head_kv0)
            out(head_kv)
            out("-" * len(head_kv))
        else:
            out(head)
            out("-" * len(head))

    csv_rows = []
    notes = []
    ratio_rows = {t: [] for t in cfg.threads}
    status = 0
    for case in cases:
        data = dict(zip(("q", "k", "v"), (rng.uniform(-1, 1, shape).astype(np.float32) for shape in (
            (case.batch, case.q_len, case.heads, case.head_dim),
            (case.batch, case.kv_len, case.kv_heads, case.head_dim),
            (case.batch, case.kv_len, case.kv_heads, case.head_dim)))))
        header("paged" if case.paged else "kv" if case.kv else "f32")
        if case.kv:
            try:
                data["cache"] = fill_cache(lib, case, data["k"], data["v"], case.cache_type("attngen"))
                if case.paged and case.page_size:
                    per_seq = -(-case.kv_len // case.page_size)
                    table = rng.permutation(case.batch * per_seq).astype(np.int32).reshape(case.batch, per_seq)
                    data["paged"] = [fill_paged(lib, case, data["k"], data["v"], table, hm) for hm in (False, True)]
            except Exception as e:
                out(f"{case.label:<{lw}} attngen failed: cache fill: {e}")
                status = 1
                continue
        for threads in cfg.threads:
            t0 = time.time()
            results = run_case(lib, case, threads, data, cfg, rng, log)
            load_now = loadavg().split()[0]
            att = best_of(results, "attngen")
            att_res = next((r for r in results if r.family == "attngen" and r.out is not None), None)
            att_cell = fmt_ms(att.median if att else None) + ("h" if att and att.variant.endswith("head-major K/V)")
                                                              else "")
            if not att:
                status = 1
            ratios = {}
            if case.kv:
                att_type = case.cache_type("attngen")
                mib = lambda t: f"{case.kv_bytes(t) / 2**20:.1f}"
                # attngen's rows: its paged cache (paged cases), then its contiguous one
                sides = [(att, att_cell, att_type + (f"/p{case.page_size}" if "paged" in data else ""))]
                if "paged" in data:
                    contig = best_of(results, "attngen-c")
                    sides.append((contig, fmt_ms(contig.median if contig else None) + (
                        "h" if contig and contig.variant.endswith("head-major K/V)") else ""), att_type))
                for fam in case.families():
                    rs = [r for r in results if r.family == fam]
                    b = best_of(results, fam)
                    ptype = case.cache_type(fam)
                    for side, side_cell, side_type in sides:
                        ratio = paired(b, side) if b and side else None
                        if side is att and ratio is not None:
                            ratios[fam] = ratio
                        if ratio is not None:
                            cells = (f"{fmt_ms(b.median) + ('!' if b.disagrees else ''):>9}", f"{ratio:.2f}x",
                                     f"{b.err_fp32:.1e}" if b.err_fp32 is not None else "-")
                        else:
                            cells = ("fail" if rs and side else "-", "-", "-")
                        err_att = f"{side.err_fp32:.1e}" if side and side.err_fp32 is not None else "-"
                        gbs = f"{case.kv_bytes(att_type) / side.median / 1e9:.1f}" if side else "-"
                        mark = "!" if side and side.disagrees else ""
                        out(f"{case.label:<{lw}} {threads:>3}  {fam:<6}{ptype:<6}{mib(ptype):>7} {cells[0]:>9}  "
                            f"{side_type:<8}{mib(att_type):>7} {side_cell + mark:>9} "
                            f"{gbs:>6} {cells[1]:>12}  {cells[2]:>9} {err_att:>8}")
            else:
                cells = []
                for fam in F32_FAMILIES:
                    rs = [r for r in results if r.family == fam]
                    b = best_of(results, fam)
                    if b:
                        cells.append(fmt_ms(b.median) + ("!" if b.disagrees else ""))
                        ratios[fam] = paired(b, att) if att else None
                    elif rs:
                        cells.append("fail")
                    else:
                        cells.append("-")
                peers = [best_of(results, f) for f in F32_FAMILIES]
                peers = [p for p in peers if p]
                if att and peers:
                    fastest = min(peers, key=lambda p: p.median)
                    speed = f"{paired(fastest, att):.2f}x"
                    who = f"{fastest.family} ({fastest.variant})"
                else:
                    fastest, speed, who = None, "-", "-"
                if att:
                    rate = (f"{case.kv_bytes() / att.median / 1e9:.1f} GB/s" if case.decode
                            else f"{case.flops() / att.median / 1e9:.1f} GFLOP/s")
                else:
                    rate = "attngen failed"
                out(f"{case.label:<36} {threads:>3} {att_cell:>9} "
                    + " ".join(f"{c:>9}" for c in cells) + f" {speed:>15}  {who:<20} {rate:>14}")
            ratio_rows[threads].append((case.short, [ratios.get(f) for f in FAMILIES]))

            for r in results:
                tag = f"{case.label}, {threads}T, {r.family} {r.variant}"
                if r.error:
                    notes.append(f"{tag}: FAILED: {r.error}")
                    if r.family.startswith("attngen"):
                        status = 1
                elif r.disagrees and r.err_stored is not None:
                    status = 1
                    notes.append(f"{tag}: FAILS the check: against float64 on its stored values {r.err_stored:.2e} > "
                                 f"{r.tol:g} (against attngen's output {r.relerr:.2e}, against float64 on the fp32 K/V "
                                 f"{r.err_fp32:.2e})")
                elif r.disagrees:
                    status = 1
                    if "ref64" not in data:
                        data["ref64"] = reference64(case, data["q"], data["k"], data["v"])
                    ref64 = data["ref64"]
                    scale = float(np.abs(ref64).max())
                    e_peer = float(np.abs(r.out - ref64).max()) / scale
                    e_att = float(np.abs(att_res.out - ref64).max()) / scale if att_res else float("nan")
                    notes.append(f"{tag}: DISAGREES with attngen: rel. diff {r.relerr:.2e} > {TOL:g}; "
                                 f"against float64: {r.family} {e_peer:.2e}, attngen {e_att:.2e}")
                if r.note:
                    notes.append(f"{tag}: {r.note}")
                med, mn = r.median, r.minimum
                csv_rows.append({
                    "case": case.label, "threads": threads, "family": r.family, "variant": r.variant,
                    "kv_state": case.state,
                    "median_ms": f"{med * 1e3:.4f}" if med else "", "min_ms": f"{mn * 1e3:.4f}" if mn else "",
                    "samples": len(r.samples), "inner": r.inner, "load": load_now,
                    "quiesce_ms": f"{np.median(r.quiet_waits) * 1e3:.1f}" if r.quiet_waits else "",
                    "gflops": f"{case.flops() / med / 1e9:.2f}" if med else "",
                    "gbps": f"{case.kv_bytes(r.cache_type) / med / 1e9:.2f}" if med and case.decode else "",
                    "kv_cache": r.cache_type, "cache_bytes": int(case.kv_bytes(r.cache_type)),
                    "rel_diff": f"{r.relerr:.3e}" if r.relerr is not None else "",
                    "err_stored": f"{r.err_stored:.3e}" if r.err_stored is not None else "",
                    "err_fp32": f"{r.err_fp32:.3e}" if r.err_fp32 is not None else "",
                    "agrees": "" if r.relerr is None else ("NO" if r.disagrees else "yes"),
                    "best_of_family": "yes" if r.samples and r is best_of(results, r.family) else "",
                    "attngen_over_this": f"{paired(r, att):.4f}" if med and att and r.family != "attngen" else "",
                    "attngen_over_this_medians": f"{med / att.median:.4f}" if med and att and r.family != "attngen"
                    else "",
                    "note": "; ".join(x for x in (r.error, f"not timed: warm-up {fmt_ms(r.est)} ms" if r.dropped else "",
                                                  r.note) if x),
                    "batch": case.batch, "q_len": case.q_len, "kv_len": case.kv_len, "heads": case.heads,
                    "kv_heads": case.kv_heads, "head_dim": case.head_dim,
                    "mask": "causal" if case.causal else "none", "phase": "decode" if case.decode else "prefill"})
            log(f"bench-peers: {case.label} {threads}T done in {time.time() - t0:.0f} s")

    out()
    out(f"load average at end: {loadavg()}")
    out("attngen÷fastest = median over rounds of fastest peer's sample / attngen's (> 1: attngen is faster). '!' = output")
    out(f"disagrees with attngen's (> {TOL:g}), 'fail' = the peer could not run the case, '-' = not applicable.")
    out("ort = best of the ONNX Runtime operators that apply; ov = OpenVINO stateless SDPA; ov-kv = OpenVINO's")
    out("stateful KV-cache SDPA (decode). attngen rate: GFLOP/s (useful flops) for prefill, K+V GB/s for decode.")
    out("attngen = the faster of its token-major run and (decode) its run on a head-major [B,KV,L,D] copy of K/V, the")
    out("layout ONNX Runtime's GQA cache holds; 'h' after its time: the head-major run was the faster. Every array is")
    out("numpy's, which numpy places on transparent huge pages where the OS allows (the bench's other libraries too).")
    out("Variants of a peer that lost by > 1.5x in warm-up are listed in results.csv, not timed.")
    if any(c.kv for c in cases):
        out("Reduced-precision caches: attngen÷peer as above, one row per peer. cache, MiB: the storage type and the")
        out("K+V bytes a step reads: f16 2 bytes an element; attngen's int8 1 byte and one fp32 scale per (token, kv")
        out("head) row; OpenVINO's u8 (its CPU default) 1 byte and an fp32 scale and zero point per row. ort computes")
        out("on float16 Q, cache and output; ov-kv and attngen in fp32. GB/s: attngen's cache bytes / its time. err:")
        out("max|out - float64| / max|float64|, float64 on the fp32 K/V before rounding (what each cache type costs).")
        out(f"'!': the check failed: against float64 on the side's own stored values, > {TOL:g} ({TOL_F16_OUT:g} for")
        out("a float16 output).")
    if any(c.paged for c in cases):
        out(f"Paged caches: ov-pa = OpenVINO's PagedAttention on pages of {OV_PA_BLOCK} rows (its CPU plugin's size),")
        out("B sequences in one call; attngen's first row on its paged cache (<type>/p<rows>: the same page size and")
        out("block table; pages token-major, or head-major as ov-pa's, 'h'), its second on a contiguous cache. u8pa:")
        out("OpenVINO's u8 pages, K quantized per (page, kv head, column), V per row (fp32 scale and zero point).")
    kernels = sorted({(r["case"], r["variant"]) for r in csv_rows if r["family"] == "attngen"},
                     key=lambda x: [c.label for c in cases].index(x[0]))
    out()
    out("attngen kernels:")
    width = max((len(label) for label, _ in kernels), default=0)
    for label, name in kernels:
        out(f"  {label:<{width}} {name}")
    if notes:
        out()
        out("notes:")
        for n in notes:
            out("  " + n)
    txt.close()

    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(csv_rows[0].keys()))
        w.writeheader()
        w.writerows(csv_rows)
    for t, rows in ratio_rows.items():
        with open(os.path.join(a.out, f"ratios_{t}t.dat"), "w") as f:
            f.write(f"# attngen ÷ each peer (median over rounds of peer / attngen time; > 1: attngen faster), {t} thread(s)\n")
            f.write("case " + " ".join(FAMILIES) + "\n")
            for short, rs in rows:
                f.write(f"\"{short}\" " + " ".join("NaN" if x is None else f"{x:.4f}" for x in rs) + "\n")
    print(f"bench-peers: table  {os.path.join(a.out, 'results.txt')}")
    print(f"bench-peers: CSV    {os.path.join(a.out, 'results.csv')}")
    return status


if __name__ == "__main__":
    sys.exit(main())
