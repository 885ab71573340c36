# SPDX-License-Identifier: MIT
"""The tiny random-weight models behind the golden vectors: each real model's attention conventions (window, soft-cap,
sinks, ALiBi, RoPE kind and theta, scaling) at a small shape, built from a config object, never downloaded.

Shapes: the real model's GQA group (heads / kv_heads), 2 layers at most, head_dim 16, hidden size 64 (BLOOM: 12
heads of 8, hidden 96, as its head_dim is hidden / heads). The catalog's full shapes (e.g. 32 heads x 128) would make
each file megabytes; the conventions pinned here do not depend on the width, except ALiBi's slopes, which depend on
the head count (BLOOM keeps 12, not a power of two). Windows shrink to 16 so that a 40-token prefill crosses the edge
twice. Sliding layers' real windows: Mistral 4096, Gemma 2 4096, Gemma 3 512 or 1024, gpt-oss 128."""
import torch
import transformers as tf

SEED = 20260101
WINDOW = 16            # every sliding layer's window
PREFILL = 40           # prompt tokens: > 2 windows
DECODE_STEPS = 3       # tokens generated after the prompt, one at a time, with the model's own cache
VOCAB = 128
HIDDEN = 64
HEAD_DIM = 16
# Attention projections' standard deviation per model, with unit-RMS hidden states (every model normalises before
# attention): chosen so that the largest scaled logit is about 20 (printed by make_golden.py). The softmax is then
# neither uniform nor one-hot, and soft-cap (50 * tanh(s / 50) moves a logit of 20 by 1), sinks and the window each
# change the outputs far beyond fp32 rounding.
PROJ_STD = {"mistral": 0.28, "gemma2": 0.4, "gemma3": 0.35, "gpt-oss": 0.2, "bloom": 0.25}
QK_NORM_WEIGHT = 2.0    # Gemma 3's q/k RMSNorm multiplies by (1 + weight): about 3x, else logits stay near 1
SINK_MEAN, SINK_STD = 8.0, 3.0   # gpt-oss sink logits near the rows' largest scores, so each takes a visible share

COMMON = dict(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, head_dim=HEAD_DIM,
              max_position_embeddings=4096, tie_word_embeddings=True)


def mistral():
    """Mistral 7B (configs/mistral-7b.lua: 32/8 heads): sliding window on every layer, RoPE theta 1e4."""
    return tf.MistralForCausalLM, tf.MistralConfig(
        **COMMON, num_hidden_layers=1, num_attention_heads=8, num_key_value_heads=2, sliding_window=WINDOW,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0})


def gemma2():
    """Gemma 2 (configs/gemma-2-2b.lua: 8/4 heads): sliding window on even layers, logit soft-cap 50 on all, scores
    scaled by query_pre_attn_scalar^-0.5 (set to 64, not head_dim, as in Gemma 2 27B, so the two cannot be confused)."""
    return tf.Gemma2ForCausalLM, tf.Gemma2Config(
        **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, sliding_window=WINDOW,
        layer_types=["sliding_attention", "full_attention"], attn_logit_softcapping=50.0,
        final_logit_softcapping=30.0, query_pre_attn_scalar=64,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0})


def gemma3():
    """Gemma 3 (4B and up: 8/4 heads): local layers (window, RoPE theta 1e4) and global layers (RoPE theta 1e6 with
    linear scaling 8), q/k RMS-normed before RoPE, scores scaled by query_pre_attn_scalar^-0.5 (64 here)."""
    return tf.Gemma3ForCausalLM, tf.Gemma3TextConfig(
        **COMMON, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, sliding_window=WINDOW,
        layer_types=["sliding_attention", "full_attention"], query_pre_attn_scalar=64,
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}})


def gpt_oss():
    """gpt-oss (20B/120B: 64/8 heads, group 8): a learned sink logit per head, sliding window on even layers, YaRN
    (factor 32, beta_fast 32, beta_slow 1, original 4096 positions, theta 150000, no truncation), biased projections."""
    return tf.GptOssForCausalLM, tf.GptOssConfig(
        **COMMON, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=1, sliding_window=WINDOW,
        layer_types=["sliding_attention", "full_attention"], num_local_experts=4, num_experts_per_tok=2,
        rope_parameters={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                         "original_max_position_embeddings": 4096, "rope_theta": 150000.0})


def bloom():
    """BLOOM: ALiBi, no RoPE, multi-head (12 heads: not a power of two, so the slopes' second, interleaved series is
    used). head_dim = hidden / heads = 8; BLOOM has no separate head_dim."""
    return tf.BloomForCausalLM, tf.BloomConfig(vocab_size=VOCAB, hidden_size=96, n_layer=1, n_head=12,
                                               tie_word_embeddings=True)


MODELS = {"mistral": mistral, "gemma2": gemma2, "gemma3": gemma3, "gpt-oss": gpt_oss, "bloom": bloom}

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "query_key_value")


def build(name):
    """The model in eval mode, fp32, eager attention, with seeded weights: the attention projections at PROJ_STD,
    gpt-oss's sinks and Gemma 3's q/k norms as above, every other matrix and bias at 0.02, other norms as constructed
    (identity)."""
    cls, config = MODELS[name]()
    torch.manual_seed(SEED)
    model = cls._from_config(config, attn_implementation="eager", dtype=torch.float32).eval()
    assert model.config._attn_implementation == "eager"
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            if pname.endswith(("q_norm.weight", "k_norm.weight")):
                p.copy_(QK_NORM_WEIGHT + 0.5 * noise)
            elif "norm" in pname:
                continue
            elif pname.endswith("sinks"):
                p.copy_(SINK_MEAN + SINK_STD * noise)
            elif any(f".{proj}." in pname for proj in PROJECTIONS):
                p.copy_(PROJ_STD[name] * noise)
            else:
                p.copy_(0.02 * noise)
    return model, config


# What each model's attention does, in words; make_golden.py checks the window edge and ALiBi bias against the
# model's own mask and bias tensors, the rest is read from transformers' code and pinned by the vectors.
WINDOW_NOTE = (f"sliding layers: query at position i sees keys j with i - {WINDOW} < j <= i (the last {WINDOW} "
               "positions, itself included); a decode step's cache presents exactly those rows")
CONVENTIONS = {
    "mistral": [WINDOW_NOTE + "; every layer is sliding", "scores scaled by head_dim^-0.5",
                "RoPE rotate_half (style half), theta 10000"],
    "gemma2": [WINDOW_NOTE + "; layer 0 sliding, layer 1 full",
               "scores scaled by query_pre_attn_scalar^-0.5 (64 here, head_dim 16)",
               "soft-cap after scaling, before the mask: s = 50 * tanh(s / 50), on every layer",
               "RoPE rotate_half, theta 10000"],
    "gemma3": [WINDOW_NOTE + "; layer 0 sliding (local), layer 1 full (global)",
               "q and k RMS-normalised per head before RoPE (q_pre/k_pre are after the norm)",
               "scores scaled by query_pre_attn_scalar^-0.5 (64 here), no soft-cap",
               "RoPE rotate_half: local theta 10000; global theta 1e6 with linear scaling 8 (positions / 8)"],
    "gpt-oss": [WINDOW_NOTE + "; layer 0 sliding, layer 1 full",
                "sinks: one learned logit per query head joins each row's softmax as an extra column with no value "
                "(it takes probability mass, contributes nothing), on every layer",
                "scores scaled by head_dim^-0.5",
                "RoPE rotate_half with YaRN: factor 32, beta_fast 32, beta_slow 1, original 4096, theta 150000, "
                "truncate false; cos and sin multiplied by attention_scaling 0.1 ln(32) + 1"],
    "bloom": ["no RoPE; ALiBi added to the scaled scores: bias = slope_h * j for key position j, the same per row "
              "as -slope_h * (i - j) (softmax ignores a per-row constant): farther keys get lower scores",
              "slopes (Press et al.): 12 heads = 8 + 4: 2^(-8 k / 8) for k = 1..8, then 2^(-8 k / 16) for k = 1, 3, "
              "5, 7 (odd powers of the 16-head series)",
              "scores scaled by head_dim^-0.5 (head_dim 8), causal mask, multi-head"],
}
