# SPDX-License-Identifier: MIT
"""bench/peers/ov_paged.py: one decode step of OpenVINO's PagedAttention operator on a paged K/V cache, set up as
vLLM's OpenVINO backend and OpenVINO GenAI set it up: a stateful SDPA model with a KV cache, rewritten by
openvino._offline_transformations.paged_attention_transformation, compiled for the CPU, its caches pools of pages
that the caller owns, and a block table per sequence. Used by bench_peers.py (the "paged" cases)."""
import numpy as np


def paged_model(heads, kv_heads, head_dim):
    """One attention layer whose input is named inputs_embeds (the transformation looks for it) and holds the new
    tokens' Q|K|V rows fused, [tokens, (heads + 2 kv_heads) * head_dim]; its output is [tokens, 1, heads * head_dim].
    Before the rewrite it is the exporters' pattern: K/V states (ReadValue -> Gather(beam_idx) -> Concat -> Assign),
    GQA as Unsqueeze/Broadcast/Reshape, and an SDPA with a mask and a scale input (the matcher wants both)."""
    import openvino as ov
    import openvino.opset13 as ops
    import openvino.opset6 as ops6
    from openvino._offline_transformations import paged_attention_transformation
    from openvino.op.util import Variable, VariableInfo
    H, KV, D = heads, kv_heads, head_dim
    i64 = lambda *x: ops.constant(np.array(x, np.int64))

    def named(p, name):
        p.output(0).get_tensor().set_names({name})
        return p

    emb = named(ops.parameter([-1, -1, (H + 2 * KV) * D], np.float32, name="inputs_embeds"), "inputs_embeds")
    beam = named(ops.parameter([-1], np.int32, name="beam_idx"), "beam_idx")
    qkv = ops.variadic_split(emb, ops.constant(np.int64(2)), i64(H * D, KV * D, KV * D))
    by_head = lambda x, n: ops.transpose(ops.reshape(x, i64(0, 0, n, D), special_zero=True), i64(0, 2, 1, 3))
    q, k_new, v_new = by_head(qkv.output(0), H), by_head(qkv.output(1), KV), by_head(qkv.output(2), KV)
    batch = ops.gather(ops.shape_of(emb), i64(0), ops.constant(np.int64(0)))
    sinks, present, variables = [], [], []
    for name, new in (("k_cache", k_new), ("v_cache", v_new)):
        info = VariableInfo()
        info.data_shape = ov.PartialShape([-1, KV, -1, D])
        info.data_type = ov.Type.f32
        info.variable_id = name
        var = Variable(info)
        variables.append(var)
        init = ops.broadcast(ops.constant(np.float32(0)), ops.concat([batch, i64(KV, 0, D)], 0))
        cat = ops.concat([ops.gather(ops6.read_value(init, var), beam, ops.constant(np.int64(0))), new], axis=2)
        sinks.append(ops6.assign(cat, var))
        present.append(cat)
    group = lambda x: ops.reshape(ops.broadcast(ops.unsqueeze(x, i64(2)), i64(1, 1, H // KV, 1, 1),
                                                broadcast_spec="BIDIRECTIONAL"), i64(0, H, -1, D), special_zero=True)
    sd = ops.scaled_dot_product_attention(q, group(present[0]), group(present[1]),
                                          ops.constant(np.zeros([1, 1, 1, 1], np.float32)),
                                          ops.constant(np.float32(1 / np.sqrt(D))), causal=False)
    out = ops.reshape(ops.transpose(sd, i64(0, 2, 1, 3)), i64(0, 0, H * D), special_zero=True)
    model = ov.Model([ops.result(out)], sinks, [emb, beam], variables)
    paged_attention_transformation(model)
    return model


class PagedDecode:
    """The compiled model and its K and V pools (ceil(kv_len / block) pages per sequence, the block table a random
    permutation of the pools' pages: `table` [B, pages per sequence] when given for pages of this block size, e.g.
    the one attngen's paged cache uses), filled with rows 0..kv_len-2 of k and v; step() writes row kv_len-1 of
    every sequence and attends over kv_len rows (the same row each time). q [B,1,H,D], k/v [B,L,KV,D] fp32; config:
    compile_model's properties."""

    def __init__(self, q, k, v, config, rng, table=None):
        import openvino as ov
        self.ov = ov
        B, L, KV, D = k.shape
        H = q.shape[2]
        self.shape = (B, L, H, KV, D)
        self.compiled = ov.Core().compile_model(paged_model(H, KV, D), "CPU", config)
        self.req = self.compiled.create_infer_request()
        port = {p.get_any_name(): p for p in self.compiled.inputs}
        self.cache_type = port["key_cache.0"].get_element_type()
        kshape, vshape = ([d.get_length() for d in port[n].get_partial_shape()[1:]]
                          for n in ("key_cache.0", "value_cache.0"))
        self.block = vshape[1]  # [pages, kv_heads, block, head_dim (+ 8 bytes of scale and zero point: u8)]
        per_seq = -(-L // self.block)
        dtype = {ov.Type.u8: np.uint8, ov.Type.f16: np.float16, ov.Type.f32: np.float32}[self.cache_type]
        self.pools = [np.zeros([B * per_seq] + s, dtype) for s in (kshape, vshape)]
        for name, pool in zip(("key_cache.0", "value_cache.0"), self.pools):
            self.req.set_tensor(name, ov.Tensor(pool, shared_memory=True))
        if table is not None and np.shape(table) == (B, per_seq):
            self.table = table
        else:
            self.table = rng.permutation(B * per_seq).astype(np.int32).reshape(B, per_seq)
        self.q = q
        self._fill(k, v)
        new = np.concatenate([q.reshape(B, -1), k[:, L - 1].reshape(B, -1), v[:, L - 1].reshape(B, -1)], axis=1)
        # the step's inputs are bound once: a step is the inference alone, as every other library's timed call
        for name, tensor in self._feeds(new, [L - 1] * B, [1] * B, self.table, L).items():
            self.req.set_tensor(name, tensor)

    def _feeds(self, rows, past, new, tables, context):
        """Inputs of one call: `rows` [tokens, Q|K|V], sequence i with past[i] rows cached and new[i] new rows,
        its pages tables[i]."""
        begins = lambda sizes: np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
        feeds = {"inputs_embeds": rows, "past_lens": np.array(past, np.int32), "subsequence_begins": begins(new),
                 "block_indices": np.concatenate([np.asarray(t, np.int32).ravel() for t in tables]),
                 "block_indices_begins": begins([np.size(t) for t in tables]),
                 "max_context_len": np.array(context, np.int32),
                 "position_ids": np.concatenate([np.arange(p, p + n) for p, n in zip(past, new)]).astype(np.int64)}
        return {n: self.ov.Tensor(np.require(a, requirements="C")) for n, a in feeds.items()}


    def _fill(self, k, v, pages_per_call=64):
        """Rows 0..L-2 of every sequence, each page written as a sequence of its own (the operator stores K/V
        before it attends; attention within one page keeps the fill linear in L), so OpenVINO quantizes its rows
        itself, page by page as a prefill would."""
        B, L, H, KV, D = self.shape
        pages = [(b, j) for b in range(B) for j in range(-(-(L - 1) // self.block))]
        for c in range(0, len(pages), pages_per_call):
            chunk = pages[c:c + pages_per_call]
            spans = [(b, j * self.block, min((j + 1) * self.block, L - 1)) for b, j in chunk]
            rows = np.zeros((sum(e - s for _, s, e in spans), (H + 2 * KV) * D), np.float32)
            at = 0
            for b, s, e in spans:
                rows[at:at + e - s, H * D:(H + KV) * D] = k[b, s:e].reshape(e - s, -1)
                rows[at:at + e - s, (H + KV) * D:] = v[b, s:e].reshape(e - s, -1)
                at += e - s
            feeds = self._feeds(rows, [0] * len(spans), [e - s for _, s, e in spans],
                                [[self.table[b, j]] for b, j in chunk], self.block)
            for name, tensor in feeds.items():
                self.req.set_tensor(name, tensor)
            self.req.infer()

    def step(self):
        self.req.infer()

    def output(self):
        B, L, H, KV, D = self.shape
        return self.req.get_output_tensor(0).data.reshape(B, 1, H, D)

    def stored(self):
        """K and V [B,L,KV,D] as the pools hold them, read through the block table, dequantized as the CPU plugin
        lays out u8 pages: K pages [kv_heads, 8 + block, D] (a row of fp32 scales and one of zero points per column
        first, 8 bytes of u8 rows each), V rows [scale, zero point, D bytes]; x = (u - zero point) * scale."""
        B, L, H, KV, D = self.shape
        kp, vp = self.pools
        if kp.dtype == np.uint8:
            kpar = np.ascontiguousarray(kp[:, :, :8]).view(np.float32).reshape(len(kp), KV, 2, 1, D)
            kp = (kp[:, :, 8:].astype(np.float32) - kpar[:, :, 1]) * kpar[:, :, 0]
            vpar = np.ascontiguousarray(vp[..., :8]).view(np.float32)
            vp = (vp[..., 8:].astype(np.float32) - vpar[..., 1:2]) * vpar[..., 0:1]
        # pool [pages, KV, block, D] -> [B, pages per sequence * block, KV, D], first L rows
        seq = lambda p: p[self.table].transpose(0, 1, 3, 2, 4).reshape(B, -1, KV, D)[:, :L].astype(np.float32)
        return seq(kp), seq(vp)

    @property
    def nbytes(self):
        return sum(p.nbytes for p in self.pools)
