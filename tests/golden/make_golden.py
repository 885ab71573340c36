# SPDX-License-Identifier: MIT
"""Writes tests/golden/data/<model>.npz and .json: what each tiny model of tiny_models.py computes in its attention
layers, from transformers' own (eager) code, for a prefill longer than the window and a few decode steps on the
model's own cache. `make golden` runs it (tests/golden/golden.mk); it needs torch and transformers.

The arrays are exactly what the fp32 model produced, token-major [1, tokens, heads, head_dim]; per layer L<i>:
  prefill.{q,k,v,out}       the attention function's inputs (after RoPE) and output (before o_proj)
  prefill.{q_pre,k_pre}     q and k before RoPE (RoPE models)
  decode<s>.{...}           the same for decode step s: 1 query; k, v the new row only (the .json's cache_rows
                            says how many of the layer's latest rows the attention read: all, or the window's)
  inv_freq, sinks, alibi_slopes   when the layer has them
The .json records the versions, config values, each layer's kind and parameters, and the conventions checked here
against the model's own masks and biases (window edge, ALiBi sign), so a reader need not rerun the model."""
import argparse
import io
import json
import os
import zipfile

import numpy as np
import torch
import transformers
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

import capture
import tiny_models as tm

HERE = os.path.dirname(os.path.abspath(__file__))


def write_npz(path, arrays):
    """np.savez_compressed's format with fixed member dates and order, so the same vectors give the same bytes and
    regenerating without a change leaves git clean."""
    with zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            z.writestr(zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0)), buf.getvalue(),
                       compress_type=zipfile.ZIP_DEFLATED)
    os.replace(path + ".tmp", path)


def window_rule(window):
    """Which keys a query sees: HF's causal mask, with its sliding overlay (kv_idx > q_idx - window)."""
    return lambda i, j: (j <= i) & (True if window is None else j > i - window)


def check_mask(rec, q_pos, k_pos, window, where):
    """The model's own mask (eager models record it in every phase) must be the rule the .json states."""
    assert rec["visible"] is not None, f"{where}: the attention function got no mask"
    want = window_rule(window)(q_pos[:, None], k_pos[None, :])
    got = rec["visible"][-len(q_pos):, -len(k_pos):]
    assert got.shape == want.shape and (got == want).all(), f"{where}: mask differs from the stated window rule"


def inv_freq_of(model, kind):
    """The layer kind's inverse frequencies and cos/sin factor (YaRN's attention scaling), from the model's module."""
    rotary = getattr(model.model, "rotary_emb", None) if hasattr(model, "model") else None
    if rotary is None:
        return None, None
    per_kind = hasattr(rotary, f"{kind}_inv_freq")
    inv = getattr(rotary, f"{kind}_inv_freq" if per_kind else "inv_freq")
    factor = getattr(rotary, f"{kind}_attention_scaling" if per_kind else "attention_scaling")
    return inv.detach().numpy().astype(np.float32), float(factor)


def max_logit(arrays, idx, scaling):
    """The largest |scaled score| of the prefill (bias and cap excluded): the tests' tolerance scales with it."""
    q, k = (arrays[f"L{idx}.prefill.{x}"].astype(np.float64) for x in ("q", "k"))
    k = np.repeat(k, q.shape[2] // k.shape[2], axis=2)
    return float(np.abs(np.einsum("bihd,bjhd->bhij", q, k)).max() * scaling)


def layer_kinds(name, config):
    """Each layer's kind: the config's layer_types; Mistral has none and a window on every layer."""
    if name == "mistral":
        return ["sliding_attention"] * config.num_hidden_layers
    n = config.num_hidden_layers if hasattr(config, "num_hidden_layers") else config.n_layer
    return list(getattr(config, "layer_types", None) or ["full_attention"] * n)


def rope_params(config, kind):
    params = config.rope_parameters
    return dict(params[kind] if kind in params else params)


def record(model):
    """[(phase, {layer: record})]: a PREFILL-token prompt, then DECODE_STEPS tokens one at a time on the model's own
    cache (the prompt's continuation from the same seeded ids: what matters is the cache, not the text)."""
    ids = torch.randint(tm.VOCAB, (1, tm.PREFILL + tm.DECODE_STEPS), generator=torch.Generator().manual_seed(tm.SEED))
    recorder = capture.Recorder()
    with torch.no_grad(), capture.recording(model, recorder):
        cache = model(ids[:, :tm.PREFILL], use_cache=True).past_key_values
        steps = [("prefill", recorder.calls)]
        for s in range(tm.DECODE_STEPS):
            recorder.reset()
            pos = tm.PREFILL + s
            model(ids[:, pos:pos + 1], cache=cache, use_cache=True)
            steps.append((f"decode{s}", recorder.calls))
    return steps


def new_rows(name, idx, phase, rec, start, new, past):
    """k, v of this phase's new tokens, and the rows the attention read. Eager models hand the attention function the
    cache's rows and the new ones: the cache's must be exactly rows recorded before (the last of them, for a sliding
    cache that drops the oldest), and the model's mask the stated window rule over their positions."""
    k, v = rec["k"], rec["v"]
    if "alibi_bias" in rec:             # BLOOM: the projection's new rows; its cache is read inside forward
        return k, v, start + new
    rows, old_k, old_v = k.shape[1], past[0], past[1]
    seen = rows - new
    where = f"{name} L{idx} {phase}"
    assert seen <= old_k.shape[1], f"{where}: the cache presents rows never recorded"
    assert np.array_equal(k[:, :seen], old_k[:, old_k.shape[1] - seen:]), f"{where}: cached k differs"
    assert np.array_equal(v[:, :seen], old_v[:, old_v.shape[1] - seen:]), f"{where}: cached v differs"
    check_mask(rec, np.arange(start, start + new), np.arange(start + new - rows, start + new), rec["sliding_window"],
               where)
    return k[:, seen:], v[:, seen:], rows


def layer_entry(name, model, config, idx, kind, steps, arrays):
    """Stores layer idx's arrays as L<idx>.* and returns its .json entry."""
    layer = {"index": idx, "kind": kind, "cache_rows": {}}
    past = None
    for phase, calls in steps:
        rec = calls[idx]
        start = 0 if phase == "prefill" else tm.PREFILL + int(phase[len("decode"):])
        new = tm.PREFILL if phase == "prefill" else 1
        if past is None:
            past = rec["k"][:, :0], rec["v"][:, :0]
        k, v, layer["cache_rows"][phase] = new_rows(name, idx, phase, rec, start, new, past)
        past = np.concatenate([past[0], k], axis=1), np.concatenate([past[1], v], axis=1)
        keep = {"q": rec["q"], "k": k, "v": v, "out": rec["out"]}
        if "q_pre" in rec:
            keep.update(q_pre=rec["q_pre"], k_pre=rec["k_pre"])
        for key, a in keep.items():
            assert a.dtype == np.float32 and a.shape[1] == new, f"{name} L{idx} {phase}.{key}: {a.shape}"
            arrays[f"L{idx}.{phase}.{key}"] = a
        layer.update(scaling=rec["scaling"], sliding_window=rec.get("sliding_window"), softcap=rec.get("softcap"))
        if "sinks" in rec:
            arrays[f"L{idx}.sinks"] = rec["sinks"]
        if "alibi_bias" in rec:
            heads, kv_len = rec["alibi_bias"].shape
            slopes = _get_alibi_slopes(heads, "cpu").numpy()
            assert np.array_equal(rec["alibi_bias"], slopes[:, None] * np.arange(kv_len, dtype=np.float32)), \
                f"{name} {phase}: the ALiBi bias is not slope * key position"
            arrays[f"L{idx}.alibi_slopes"] = slopes
    assert (layer["sliding_window"] is not None) == (kind == "sliding_attention"), f"{name} L{idx}: {kind}"
    layer["max_abs_logit"] = max_logit(arrays, idx, layer["scaling"])
    inv, factor = inv_freq_of(model, kind)
    if inv is not None:
        arrays[f"L{idx}.inv_freq"] = inv
        layer["rope"] = dict(rope_params(config, kind), style="half", rotary_dim=int(2 * inv.size),
                             attention_scaling=factor)
    return layer


def run(name, out_dir):
    model, config = tm.build(name)
    steps = record(model)
    arrays = {}
    layers = [layer_entry(name, model, config, idx, kind, steps, arrays)
              for idx, kind in enumerate(layer_kinds(name, config))]
    meta = {
        "model": name, "class": type(model).__name__, "transformers": transformers.__version__,
        "torch": torch.__version__, "seed": tm.SEED, "dtype": "float32", "attn_implementation": "eager",
        "heads": int(arrays["L0.prefill.q"].shape[2]), "kv_heads": int(arrays["L0.prefill.k"].shape[2]),
        "head_dim": int(arrays["L0.prefill.q"].shape[3]), "prefill_tokens": tm.PREFILL,
        "decode_steps": tm.DECODE_STEPS, "config": {k: v for k, v in config.to_diff_dict().items()
                                                   if k not in ("transformers_version", "architectures")},
        "layers": layers, "conventions": tm.CONVENTIONS[name],
    }
    os.makedirs(out_dir, exist_ok=True)
    write_npz(os.path.join(out_dir, f"{name}.npz"), arrays)
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True, default=float)
        f.write("\n")
    return os.path.getsize(os.path.join(out_dir, f"{name}.npz")), layers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "data"))
    parser.add_argument("models", nargs="*", default=list(tm.MODELS))
    args = parser.parse_args()
    torch.set_num_threads(1)        # one thread: the same summation order on every run
    for name in args.models:
        size, layers = run(name, args.out)
        logits = ", ".join(f"L{l['index']} {l['kind']} max|logit| {l['max_abs_logit']:.1f}" for l in layers)
        print(f"golden: {args.out}/{name}.npz {size} bytes ({logits})")


if __name__ == "__main__":
    main()
