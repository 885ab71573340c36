# SPDX-License-Identifier: MIT
"""Checks the catalog's attention values against transformers: for each model, its config class (the class defaults,
or the checkpoint's config.json values the catalog cites where the defaults are another checkpoint's) and the
model's own modules decide the heads, kv heads, head_dim, each layer's kind (window or not), the window, soft-cap,
sinks, scale (the attention module's own `scaling`), RoPE inverse frequencies and cos/sin factor (the rotary module's
buffers), and ALiBi slopes; tests/golden/catalog_values.lua gives what attngen generates. Needs torch and
transformers, nothing downloaded: `make check-catalog` (tests/golden/golden.mk). Exit status 1 on any difference."""
import importlib
import inspect
import json
import math
import os
import subprocess
import sys

import torch
import transformers as tf
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# model -> (config class, the checkpoint config.json values that differ from the class defaults, attention class,
# rotary class). Each class's docstring names the checkpoint its defaults follow; where they are not this one's
# (or are incomplete), the catalog config's cited config.json gives the rest.
MODELS = {
    "mistral-7b": (tf.MistralConfig, {}, "MistralAttention", "MistralRotaryEmbedding"),
    # the class defaults are gemma-2-2b's (hidden 2304, 26 layers), though its docstring names gemma2-7b
    "gemma-2-2b": (tf.Gemma2Config, {}, "Gemma2Attention", "Gemma2RotaryEmbedding"),
    # google/gemma-3-1b-pt's config.json (the defaults are a 4B-like shape); RoPE thetas and layer pattern are the
    # class defaults
    "gemma-3-1b": (tf.Gemma3TextConfig, dict(hidden_size=1152, num_attention_heads=4, num_key_value_heads=1,
                                             head_dim=256, num_hidden_layers=26, sliding_window=512,
                                             query_pre_attn_scalar=256, max_position_embeddings=32768),
                   "Gemma3Attention", "Gemma3RotaryEmbedding"),
    # openai/gpt-oss-20b's config.json: 24 layers, 32 experts (the defaults' 36 and 128 are gpt-oss-120b's)
    "gpt-oss-20b": (tf.GptOssConfig, dict(num_hidden_layers=24, num_local_experts=32), "GptOssAttention",
                    "GptOssRotaryEmbedding"),
    # microsoft/Phi-3-mini-4k-instruct's config.json has "sliding_window": 2047 (the class default is None)
    "phi-3-mini": (tf.Phi3Config, dict(sliding_window=2047), "Phi3Attention", "Phi3RotaryEmbedding"),
    # bigscience/bloom-560m's config.json (the defaults are a toy shape)
    "bloom-560m": (tf.BloomConfig, dict(hidden_size=1024, n_head=16, n_layer=24), "BloomAttention", None),
}


def expected(name):
    cls, overrides, attn_name, rotary_name = MODELS[name]
    config = cls(**overrides)
    modeling = importlib.import_module(type(config).__module__.replace("configuration_", "modeling_"))
    heads = getattr(config, "num_attention_heads", None) or config.n_head
    kv_heads = getattr(config, "num_key_value_heads", heads)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    layers = getattr(config, "num_hidden_layers", None) or config.n_layer
    window = getattr(config, "sliding_window", None)
    types = list(getattr(config, "layer_types", None) or
                 ["sliding_attention" if window else "full_attention"] * layers)
    with torch.device("meta"):
        attn = getattr(modeling, attn_name)(config, layer_idx=types.index("full_attention") if "full_attention" in types else 0)
    scale = getattr(attn, "scaling", None) or getattr(attn, "inv_norm_factor", None)
    rope = {}
    if rotary_name:
        rotary = getattr(modeling, rotary_name)(config)
        source = inspect.getsource(modeling)
        half = "def rotate_half" in source or "torch.chunk(x, 2, dim=-1)" in source
        for t in set(types):
            per_type = hasattr(rotary, f"{t}_inv_freq")
            inv = getattr(rotary, f"{t}_inv_freq" if per_type else "inv_freq").double().tolist()
            factor = float(getattr(rotary, f"{t}_attention_scaling" if per_type else "attention_scaling"))
            rope[t] = dict(style="half" if half else "?", rotary_dim=2 * len(inv), inv_freq=inv, cs_scale=factor)
    kinds = {}
    for t in set(types):
        k = dict(scale=float(scale), window=window if t == "sliding_attention" else None,
                 softcap=getattr(config, "attn_logit_softcapping", None),
                 sinks=True if hasattr(attn, "sinks") else None, rope=rope.get(t))
        if name.startswith("bloom"):
            k["alibi_slopes"] = _get_alibi_slopes(heads, "cpu").double().tolist()
        kinds[t] = k
    return dict(heads=heads, kv_heads=kv_heads, head_dim=head_dim, types=types, kinds=kinds)


def close(a, b, rtol):
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(close(x, y, rtol) for x, y in zip(a, b))
    if a is None or b is None or isinstance(a, (str, bool)):
        return a == b
    return math.isclose(a, b, rel_tol=rtol, abs_tol=0)


def check(name, got, want, report):
    ok = True

    def same(field, g, w, rtol=0.0):
        nonlocal ok
        good = close(g, w, rtol)
        ok &= good
        shown = lambda v: f"{len(v)} values" if isinstance(v, list) and len(v) > 4 else v
        report.append(f"  {'ok  ' if good else 'DIFF'} {field}: attngen {shown(g)}, transformers {shown(w)}")

    for f in ("heads", "kv_heads", "head_dim"):
        same(f, got[f], want[f])
    # each layer's table: a kind with a window for sliding layers, without for full ones
    kinds = got["kinds"]
    layers = got.get("layers") or [""] * len(want["types"])
    same("layers", len(layers), len(want["types"]))
    for i, (kind, t) in enumerate(zip(layers, want["types"])):
        g, w = kinds[kind], want["kinds"][t]
        where = f"layer {i} ({kind or 'the table'} / {t})"
        if i > 0 and (kind, t) in [(layers[j], want["types"][j]) for j in range(i)]:
            continue  # the same pair as an earlier layer: checked there
        same(f"{where} scale", g["scale"], w["scale"], 1e-7)  # attngen keeps the scale as a float
        same(f"{where} window", g.get("window"), w["window"])
        same(f"{where} sink tokens", g.get("sink_tokens") or None, None)
        same(f"{where} soft-cap", g.get("softcap"), w["softcap"])
        same(f"{where} sink logits", g.get("sinks"), w["sinks"])
        # BLOOM raises an fp32 base to the power 1..n: 3e-7 off at the 16th power; a wrong rule is off by 2x or more
        same(f"{where} ALiBi slopes", g.get("alibi_slopes"), w.get("alibi_slopes"), 1e-6)
        gr, wr = g.get("rope"), w["rope"]
        same(f"{where} RoPE", gr is not None, wr is not None)
        if gr and wr:
            same(f"{where} RoPE style", gr["style"], wr["style"])
            same(f"{where} RoPE rotary_dim", gr["rotary_dim"], wr["rotary_dim"])
            # transformers computes the frequencies in fp32, attngen in float64
            same(f"{where} RoPE inverse frequencies", gr["inv_freq"], wr["inv_freq"], 2e-6)
            same(f"{where} RoPE cos/sin factor", gr["cs_scale"], wr["cs_scale"], 1e-12)
    return ok


def main():
    names = sys.argv[1:] or list(MODELS)
    lua = os.environ.get("LUA", "lua5.4")
    out = subprocess.run([lua, "tests/golden/catalog_values.lua"] + [f"configs/{n}.lua" for n in names], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    failed = []
    print(f"check-catalog: transformers {tf.__version__}, torch {torch.__version__}")
    for name, line in zip(names, out.splitlines()):
        report = []
        if not check(name, json.loads(line), expected(name), report):
            failed.append(name)
        print(f"{name}: {'ok' if name not in failed else 'DIFFERS'}")
        print("\n".join(report))
    if failed:
        print("check-catalog: differs from transformers: " + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
