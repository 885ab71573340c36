# SPDX-License-Identifier: MIT
"""Records what each attention layer of a transformers model computes, from the model's own code: the inputs of its
attention function (q, k, v after projection and RoPE, as the kernel sees them, with the cache's rows), the
parameters it is called with (scaling, window, soft-cap, sinks), its output (before o_proj), and q, k before RoPE.

Every tensor is returned token-major, [batch, tokens, heads, head_dim], float32, attngen's layout."""
import contextlib
import importlib

import numpy as np


def token_major(x):
    """[batch, heads, tokens, head_dim] -> [batch, tokens, heads, head_dim] float32 NumPy."""
    return x.detach().transpose(1, 2).contiguous().numpy().astype(np.float32, copy=False)


def split_heads(x, head_dim):
    """[batch, tokens, heads * head_dim] (or already split) -> [batch, tokens, heads, head_dim] float32 NumPy."""
    x = x.detach()
    return x.reshape(x.shape[0], x.shape[1], -1, head_dim).numpy().astype(np.float32, copy=True)


class Recorder:
    """One forward call's records: calls[layer] = dict of arrays and values. reset() before each forward."""

    def __init__(self):
        self.calls = {}

    def reset(self):
        self.calls = {}

    def at(self, layer):
        return self.calls.setdefault(layer, {})


@contextlib.contextmanager
def eager_attention(model, recorder):
    """Wraps the modeling module's eager_attention_forward (what attn_implementation="eager" calls) and hooks the
    projections that feed RoPE: q_norm/k_norm when the model has them (Gemma 3 normalises before RoPE), else
    q_proj/k_proj."""
    module = importlib.import_module(type(model).__module__)
    original = module.eager_attention_forward

    def wrapped(attn, query, key, value, attention_mask, *args, **kwargs):
        out, weights = original(attn, query, key, value, attention_mask, *args, **kwargs)
        rec = recorder.at(attn.layer_idx)
        rec.update(q=token_major(query), k=token_major(key), v=token_major(value),
                   out=out.detach().numpy().astype(np.float32, copy=True),
                   visible=None if attention_mask is None else (attention_mask[0, 0] == 0).numpy().copy(),
                   scaling=float(kwargs.get("scaling", args[1] if len(args) > 1 else attn.scaling)),
                   sliding_window=kwargs.get("sliding_window"), softcap=kwargs.get("softcap"))
        if "s_aux" in kwargs:
            rec["sinks"] = kwargs["s_aux"].detach().numpy().astype(np.float32, copy=True)
        return out, weights

    handles = []
    for layer in model.model.layers:
        attn = layer.self_attn
        normed = hasattr(attn, "q_norm")      # the norms see [batch, heads, tokens, head_dim]
        for name, pre in (("q_norm", "q_pre"), ("k_norm", "k_pre")) if normed else \
                         (("q_proj", "q_pre"), ("k_proj", "k_pre")):
            def hook(_mod, _inp, output, idx=attn.layer_idx, key=pre, head_dim=attn.head_dim, normed=normed):
                recorder.at(idx)[key] = token_major(output) if normed else split_heads(output, head_dim)
            handles.append(getattr(attn, name).register_forward_hook(hook))
    module.eager_attention_forward = wrapped
    try:
        yield
    finally:
        module.eager_attention_forward = original
        for h in handles:
            h.remove()


@contextlib.contextmanager
def bloom_attention(model, recorder):
    """BLOOM computes attention inline (no attention function): q, k, v from the fused projection's output (new rows
    only: the cache is read inside forward), the output from the input of `dense` (its o_proj), the ALiBi tensor
    from the attention's arguments."""
    handles = []
    for layer in model.transformer.h:
        attn = layer.self_attention
        idx, heads, head_dim = attn.layer_idx, attn.num_heads, attn.head_dim

        def qkv_hook(_mod, _inp, output, idx=idx, heads=heads, head_dim=head_dim):
            fused = output.detach().reshape(output.shape[0], output.shape[1], heads, 3, head_dim)
            recorder.at(idx).update({name: fused[..., i, :].numpy().astype(np.float32, copy=True)
                                     for i, name in enumerate(("q", "k", "v"))})

        def dense_hook(_mod, inp, idx=idx, head_dim=head_dim):
            recorder.at(idx)["out"] = split_heads(inp[0], head_dim)

        def alibi_hook(mod, args, kwargs, idx=idx, heads=heads):
            alibi = kwargs["alibi"] if "alibi" in kwargs else args[2]
            recorder.at(idx)["alibi_bias"] = alibi.detach().reshape(-1, heads, alibi.shape[-1])[0].numpy().copy()
            recorder.at(idx)["scaling"] = float(mod.inv_norm_factor)

        handles += [attn.query_key_value.register_forward_hook(qkv_hook),
                    attn.dense.register_forward_pre_hook(dense_hook),
                    attn.register_forward_pre_hook(alibi_hook, with_kwargs=True)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def recording(model, recorder):
    return bloom_attention(model, recorder) if hasattr(model, "transformer") else eager_attention(model, recorder)
