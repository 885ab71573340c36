# SPDX-License-Identifier: MIT
"""attngen.attention: select a kernel for the tensors' shape and run it, in one call."""
from . import _abi
from ._tensors import as_array, four_d
from .kernel import KV_LAYOUT, Q_LAYOUT, cache_type_of, features_given, select


def attention(q, k, v, *, causal=False, kv_lens=None, scale=None, return_lse=False, threads=1, out=None,
              kv_len=None, k_scale=None, v_scale=None, kv_dtype=None, phase=None, model=None, isa=None, q_pos=None,
              window=None, sink_tokens=None, softcap=None, sinks=None, alibi_slopes=None):
    """softmax(q·kᵀ·scale + mask)·v, like torch.nn.functional.scaled_dot_product_attention but token-major:
    q, out fp32 [batch, q_len, heads, head_dim]; k, v [batch, kv_capacity, kv_heads, head_dim] in fp32, float16,
    bfloat16 bits (uint16) or int8 with fp32 scales k_scale, v_scale [batch, kv_capacity, kv_heads, head_dim / group];
    heads a multiple of kv_heads (GQA, MQA). Any strides, the last dimension contiguous; never copied.

    causal: query i sees keys j <= i + kv_len - q_len (bottom-right aligned, as a KV cache needs); kv_lens: [batch]
    keys per sequence (padding); scale: default 1/sqrt(head_dim) (the model's, with model=); kv_len: rows of k/v in
    use (default all); phase: "prefill" or "decode" (default: decode for q_len <= 8 queries against a longer K/V);
    model: a Model whose kernels to prefer (default: the generic kernel); isa: the generic kernel's ISA (default
    the best here); q_pos: with a RoPE model, [batch, q_len] query positions (default kv_len - q_len + i; K is
    expected rotated, as Kernel.append writes it).
    Attention features (each given turns it on; with model=, the model's own are on too, their values the table's
    unless given): window: query i sees keys j with p - window < j <= p, p = kv_len - q_len + i (window keys, itself
    included: transformers' sliding_window; needs causal), and keys j < sink_tokens; softcap: each scaled score s
    becomes softcap * tanh(s / softcap); sinks: fp32 [heads], a logit per query head joining the softmax denominator
    with no value row (gpt-oss); alibi_slopes: fp32 [heads], score + slope[h] * (j - p) (BLOOM;
    attngen.alibi_slopes computes them). Returns out (a new array, a torch tensor for torch input, or the
    given out), or (out, lse) with return_lse, lse [batch, heads, q_len] the natural log-sum-exp of the scaled
    scores."""
    qa, ka = as_array(q, "q"), as_array(k, "k")
    _, q_len, heads, head_dim = four_d(qa, "q", Q_LAYOUT)
    _, capacity, kv_heads, _ = four_d(ka, "k", KV_LAYOUT)
    mask = ("causal_padding" if causal else "padding") if kv_lens is not None else ("causal" if causal else "none")
    if phase is None:
        rows = capacity if kv_len is None else kv_len
        phase = "decode" if q_len <= _abi.CONSTANTS["ATTNGEN_DECODE_MAX_Q"] and q_len < rows else "prefill"
    values = dict(window=window, sink_tokens=sink_tokens, softcap=softcap, sinks=sinks, alibi_slopes=alibi_slopes)
    features = features_given(**values)
    if model is not None:
        features = tuple(f for f in _abi.ATTN_FEATURES if f in features or f in model.features)
    shape = dict(heads=heads, kv_heads=kv_heads, head_dim=head_dim, mask=mask, phase=phase,
                 kv_dtype=kv_dtype or cache_type_of(ka, k_scale, head_dim), features=features)
    kernel = model.select(**shape) if model is not None else select(**shape, isa=isa)
    return kernel(q, k, v, kv_len=kv_len, kv_lens=kv_lens, scale=scale, k_scale=k_scale, v_scale=v_scale, out=out,
                  return_lse=return_lse, threads=threads, q_pos=q_pos, **values)
