-- SPDX-License-Identifier: MIT
-- The spec: the ONE list of every axis attngen knows. Everything else reads it or is generated from it:
-- config validation (gen/config.lua), kernel enumeration and names (gen/enumerate.lua), the C enums and
-- X-macro lists (generated/runtime/attngen_spec.h), CPU detection's table, the test and bench registries.
-- Adding an axis value starts here; docs/extending.md lists the few other files each kind of change touches.
local spec = {}

-- ISAs, best first (selection tries them in this order). `id` is the C enum value and must never change
-- (generated tables store it); `module` is the vocabulary in gen/isa/<name>.lua, `prelude` the C helpers in
-- templates/isa/<name>.c, `shared` C helpers several ISAs use (templates/isa/<shared>.c, emitted once per file,
-- before the first section that names it); `detect` the runtime's CPU check (a function in runtime/attngen_cpu.c);
-- `arch` the C condition under which the ISA's code is compiled at all (nil = everywhere).
spec.isas = {
  { name = "avx512", id = 3, doc = "AVX-512F on x86-64", detect = "attngen_cpu_has_avx512", shared = "x86",
    arch = "defined(__x86_64__) || defined(_M_X64)" },
  { name = "avx2", id = 1, doc = "AVX2 + FMA on x86-64", detect = "attngen_cpu_has_avx2", shared = "x86",
    arch = "defined(__x86_64__) || defined(_M_X64)" },
  { name = "neon", id = 2, doc = "AdvSIMD on aarch64", detect = "attngen_cpu_has_neon", arch = "defined(__aarch64__)" },
  { name = "scalar", id = 0, doc = "portable C99", detect = "attngen_cpu_always", arch = nil },
}

-- Phases. `max_q` bounds q_len for kernels of that phase (nil = any).
spec.phases = {
  { name = "prefill", id = 0, doc = "any q_len: a whole prompt, or a chunk against a longer cache" },
  { name = "decode", id = 1, max_q = 8, doc = "1 <= q_len <= 8 against a KV cache, K/V streamed once per kv head" },
}

-- Mask features: independent conditions on which keys a query sees. A kernel is built for a set of them.
spec.mask_features = {
  { name = "causal", bit = 1, doc = "query i sees key j iff j <= i + kv_len - q_len (bottom-right aligned)" },
  { name = "kv_lens", bit = 2, doc = "sequence b sees only its first kv_lens[b] keys" },
}

-- Mask presets: the public names (C enum attngen_mask, config `masks`), each a set of features.
spec.masks = {
  { name = "none", id = 0, features = {} },
  { name = "causal", id = 1, features = { "causal" } },
  { name = "padding", id = 2, features = { "kv_lens" } },
  { name = "causal_padding", id = 3, features = { "causal", "kv_lens" } },
  { name = "cross", id = 4, features = { "kv_lens" }, doc = "padding, for q_len != kv_len (encoder-decoder)" },
}

-- Storage types of the K/V cache: an axis like the ISA (config `kv_dtype`, the kernel's name and key, attngen_shape,
-- attngen_kernel_info). Q, O and all arithmetic stay fp32: a kernel converts each stored element as it loads it
-- (the ISA vocabulary's kv_load word for the type), the runtime's prefill K/V repack converts once per call, and the
-- cache append rounds or quantizes each new row. `id` is the C enum value (never changes; 0 = f32, so a
-- zero-initialized attngen_shape means an fp32 cache); `ctype` the element as kernels read it; `api` the pointer
-- type of its attngen_args / attngen_append_args fields (`field`: k_<field>, v_<field>; f32 keeps k and v);
-- `bytes` per element (the plan's cache-size arithmetic); `group`: int8 types carry one fp32 scale per `group`
-- elements along head_dim ("row": one per (token, kv head) row), in k_scale / v_scale; `scale_max`: the stored
-- magnitude a group's max|x| maps to (its scale is max|x| / scale_max). Types of one `field` share an encoding
-- (spec.kv_encodings): its fields, its element type and its portable conversions, attngen_<field>_bits_to_float
-- and attngen_float_to_<field>_bits (runtime/attngen_convert.h), through which the runtime, the scalar kernels and
-- the vector tails read and write it. `doc`: the enum's comment (an encoding's first type's also its element type's).
spec.kv_dtypes = {
  { name = "f32", id = 0, ctype = "float", api = "float", bytes = 4, doc = "IEEE binary32 (the default)" },
  { name = "f16", id = 1, ctype = "uint16_t", api = "attngen_f16", field = "f16", bytes = 2,
    doc = "IEEE binary16, rounded to nearest even when written" },
  { name = "bf16", id = 2, ctype = "uint16_t", api = "attngen_bf16", field = "bf16", bytes = 2,
    doc = "bfloat16 (the top half of a binary32), rounded to nearest even when written" },
  { name = "int8", id = 3, ctype = "int8_t", api = "int8_t", field = "i8", bytes = 1, group = "row", scale_max = 127,
    doc = "int8 with one fp32 scale per (token, kv head) row: max|x| / 127, rounded to nearest even" },
  { name = "int8_g64", id = 4, ctype = "int8_t", api = "int8_t", field = "i8", bytes = 1, group = 64, scale_max = 127,
    doc = "int8 with one fp32 scale per 64 elements of a row (head_dim a multiple of 64)" },
  { name = "int8_g32", id = 5, ctype = "int8_t", api = "int8_t", field = "i8", bytes = 1, group = 32, scale_max = 127,
    doc = "int8 with one fp32 scale per 32 elements of a row (head_dim a multiple of 32)" },
}

-- Per-kernel scalar options: a config field, a field of attngen_params (carried by every table and bound
-- kernel, so the generic fallback computes the same result), and a stamp line. `check` returns an error
-- message or nil; `default` is what the kernel uses when the config leaves the option out. `per_kind = true`: a
-- kind of layer (config `kinds`) may set its own value (spec.kind_fields).
local FLT_MIN, FLT_MAX = 1.1754943508222875e-38, 3.4028234663852886e+38
spec.options = {
  { name = "scale", ctype = "float", default = 0,
    doc = "softmax scale; 0 = 1/sqrt(head_dim)",
    check = function(v)
      if type(v) ~= "number" or not (v >= FLT_MIN and v <= FLT_MAX) then
        return string.format("must be a positive normal float (%.9g .. %.9g)", FLT_MIN, FLT_MAX)
      end
    end,
    used_by = "runtime", -- resolved once by the runtime (args, else table, else 1/sqrt(head_dim)), not by templates
    per_kind = true,
    c_value = function(v) return spec.c_float(v) end },
}

-- Attention features: what a kernel computes beyond the mask presets, each a config field. Their PRESENCE is
-- specialized (a bit of attngen_shape.features / attngen_kernel_info.features, a suffix of the kernel's name, in
-- this order: attn_h32_kv8_d128_causal_window_softcap_prefill__avx512); their VALUES travel at run time (the
-- table's attngen_params.features, overridable per call in attngen_args), so layers that differ only in value share
-- kernels, and a config without features gets exactly the kernels it had before. `bit` is the C value (never
-- changes; 0 = no features, so a zero-initialized attngen_shape has none); `fields` are the config fields, the
-- first one turning the feature on, each with its rule (`check(v)` returns an error or nil). Every field is per_kind:
-- a kind of layer (config `kinds`) may set its own value, or `false` for the first field (the feature off in that
-- kind), so a kind with a window gets windowed kernels and a kind without gets plain ones.
local function int_at_least(lo)
  return function(v)
    if type(v) ~= "number" or v ~= math.floor(v) or v < lo or v > 2^30 then
      return string.format("must be an integer in %d..%d", lo, 2^30)
    end
  end
end
local function positive_float(v)
  if type(v) ~= "number" or not (v >= FLT_MIN and v <= FLT_MAX) then return "must be a positive finite number" end
end
spec.attn_features = {
  { name = "window", bit = 1, needs_causal = true,
    doc = "sliding window: query at position i sees keys i - window < j <= i (window keys, itself included, as HF " ..
          "transformers' sliding_window: Mistral, Gemma-2, gpt-oss), and keys j < sink_tokens",
    fields = {
      { per_kind = true, name = "window", check = int_at_least(1), doc = "sliding window: the keys a query sees, itself included (needs causal masks)" },
      { per_kind = true, name = "sink_tokens", check = int_at_least(0),
        doc = "StreamingLLM attention sinks: the first sink_tokens keys stay visible to every query (0: none)" },
    } },
  { name = "softcap", bit = 2,
    doc = "logit soft-cap: each scaled score s becomes softcap * tanh(s / softcap) before the mask (Gemma-2: 50)",
    fields = { { per_kind = true, name = "softcap", check = positive_float,
      doc = "logit soft-cap: scores become softcap * tanh(s / softcap)" } } },
  { name = "sinks", bit = 4,
    doc = "sink logits (gpt-oss): a learned logit per query head joins the softmax denominator, with no value row",
    fields = { { per_kind = true, name = "sinks", doc = "true: a learned logit per query head, attngen_args.sinks[heads], joins the softmax",
      check = function(v)
        if v ~= true then return "must be true (the logits come at run time, attngen_args.sinks)" end
      end } } },
  { name = "alibi", bit = 8,
    doc = "ALiBi: score + slope_h * (j - i), key minus query position; slopes by the BLOOM rule from max_bias",
    fields = { { per_kind = true, name = "alibi", doc = "ALiBi, true (max_bias 8) or { max_bias = b } (flag: max_bias=b)",
      check = function(v)
        if v == true then return nil end
        if type(v) ~= "table" then return "must be true or { max_bias = b }" end
        for k in pairs(v) do if k ~= "max_bias" then return "has unknown field " .. tostring(k) .. " (known: max_bias)" end end
        local err = v.max_bias ~= nil and positive_float(v.max_bias)
        if err then return "max_bias " .. err end
      end } } },
}
-- Config fields of other names that mean a feature's field: refused with a pointer to the name attngen uses.
spec.attn_field_aliases = { sliding_window = "window", logit_softcapping = "softcap", attn_logit_softcapping = "softcap" }

-- Rotary position embedding: the config field `rope` (a table, validated by gen/config.lua from this entry),
-- carried by every table as attngen_params.rope (an attngen_rope, generated from this entry into
-- attngen_spec.h) so that specialized kernels and the generic fallback rotate alike. The inverse frequencies,
-- scaling applied, are computed ONCE by gen/rope_frequencies.lua, in float64, and emitted as data (%.17g); the
-- runtime turns them into cos/sin per token (float64 angle) and kernels rotate Q while packing it, the cache append
-- rotates K.
spec.rope = {
  per_kind = true, -- each kind of layer (config `kinds`) may have its own
  -- how the rotary dims pair up; `id` is the C enum value (attngen_rope_style, 0 = no RoPE)
  styles = {
    { name = "half", id = 1,
      doc = "pairs (i, i + rotary_dim/2): rotate_half of HF Llama/Qwen/Mistral/GPT-NeoX" },
    { name = "interleaved", id = 2, doc = "pairs (2i, 2i + 1): GPT-J, Meta's original Llama code" },
  },
  -- every scaling parameter (a field of rope.scaling, and a double of attngen_rope); `int` = whole number,
  -- `bool` = true or false (stored as 1 or 0), `min` = the smallest value allowed (default: any number > 0)
  params = {
    { name = "factor", doc = "frequency divisor (linear), or the low-frequency divisor (llama3, yarn)" },
    { name = "low_freq_factor", doc = "llama3: wavelengths above original / low_freq_factor are divided by factor" },
    { name = "high_freq_factor", doc = "llama3: wavelengths below original / high_freq_factor are kept" },
    { name = "original_max_position_embeddings", int = true, doc = "llama3, yarn: the pre-training context length" },
    { name = "beta_fast", doc = "yarn: pairs turning more than beta_fast times over the original context are kept" },
    { name = "beta_slow", doc = "yarn: pairs turning fewer than beta_slow times are divided by factor" },
    { name = "truncate", bool = true, doc = "yarn: the ramp's ends rounded outwards to whole dims (1) or not (0)" },
    { name = "attention_factor", doc = "yarn: the factor of cos and sin as given (0: derived from factor)" },
    { name = "mscale", doc = "yarn: with mscale_all_dim, the attention factor's numerator coefficient" },
    { name = "mscale_all_dim", doc = "yarn: with mscale, the attention factor's denominator coefficient" },
  },
  -- scaling types of the inverse frequencies (HF `rope_scaling`); `id` is attngen_rope_scaling (0 = none).
  -- `params` are its required fields, `optional` its optional ones with their defaults (false: no default, the
  -- field stays absent), `check` a cross-field rule (field, reason); its formula is in gen/rope_frequencies.lua.
  scalings = {
    { name = "linear", id = 1, params = { "factor" },
      doc = "position interpolation: every inverse frequency divided by factor" },
    { name = "llama3", id = 2,
      params = { "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings" },
      doc = "Llama 3.1/3.2: low frequencies divided by factor, high ones kept, a smooth ramp between",
      check = function(s)
        if not (s.high_freq_factor > s.low_freq_factor) then
          return "high_freq_factor", string.format("must be greater than low_freq_factor (%.9g)", s.low_freq_factor)
        end
      end },
    { name = "yarn", id = 3, params = { "factor", "original_max_position_embeddings" },
      optional = { { "beta_fast", 32 }, { "beta_slow", 1 }, { "truncate", true }, { "attention_factor", false },
                   { "mscale", false }, { "mscale_all_dim", false } },
      doc = "YaRN (gpt-oss, Qwen, DeepSeek): a ramp between kept and divided frequencies; cos and sin scaled",
      check = function(s)
        if not (s.factor >= 1) then return "factor", "must be >= 1 (the context extension)" end
        if not (s.beta_fast >= s.beta_slow) then
          return "beta_fast", string.format("must be >= beta_slow (%.9g)", s.beta_slow)
        end
        -- transformers uses mscale and mscale_all_dim only together; one alone would be silently ignored
        if (s.mscale == nil) ~= (s.mscale_all_dim == nil) then
          return s.mscale and "mscale" or "mscale_all_dim", "needs both mscale and mscale_all_dim (transformers " ..
            "ignores one without the other)"
        end
      end },
  },
  -- scaling types that real configs use and attngen does not implement yet: refused by name
  unsupported = { "dynamic", "longrope", "su", "ntk", "mrope" },
}

-- Config fields that later versions will add: refused by name as "not supported yet".
spec.reserved = { "lse" }

-- Shape limits (config validation and attngen.h).
spec.limits = { max_heads = 1024, max_head_dim = 512, max_page_size = 4096 }

-- Tunable plan knobs: the config field `tuned` (written by `attngen CONFIG --tune`, tools/tune/tune.lua) sets, per ISA
-- and phase, the register blocking and tiles that gen/plan.lua otherwise takes from the ISA vocabulary's defaults
-- (gen/isa/<name>.lua). Each knob is an integer in lo..hi (and a multiple of `multiple` when given). Only the
-- config's specialized kernels use them; the generic kernels keep the vocabulary's plan. A tuned blocking must fit
-- the ISA's registers (gen/register_budget.lua).
spec.tunables = {
  prefill = {
    { name = "rv", lo = 1, hi = 8, doc = "Q·Kᵀ register block: vectors of query rows (rv x vector width rows)" },
    { name = "kb", lo = 1, hi = 16, doc = "Q·Kᵀ register block: keys" },
    { name = "pr", lo = 1, hi = 16, doc = "P·V register block: rows" },
    { name = "pvv", lo = 1, hi = 16, doc = "P·V register block: vectors of head_dim columns" },
    { name = "rows", lo = 8, hi = 1024, doc = "about this many (query x group) rows per work item" },
    { name = "keys", lo = 8, hi = 512, multiple = 8, doc = "keys per KV tile (instead of the V-tile-in-L1 rule)" },
  },
  decode = {
    { name = "rb", lo = 1, hi = 8, doc = "Q·Kᵀ dot-product block: query rows" },
    { name = "kb", lo = 1, hi = 16, doc = "Q·Kᵀ dot-product block: keys" },
    { name = "pr", lo = 1, hi = 16, doc = "P·V register block: rows" },
    { name = "pvv", lo = 1, hi = 16, doc = "P·V register block: vectors of head_dim columns" },
    { name = "keys", lo = 8, hi = 512, multiple = 8, doc = "keys per KV tile" },
  },
}

-- ABI of the generated tables: bump when attngen_table / attngen_kernel_info / attngen_params change layout
-- or meaning. attngen_select refuses a table whose ABI differs from the runtime's.
-- 3: attngen_params.rope; attngen_item gains causal_offset and rope_cs.
-- 4: attngen_work gains pack_kv_min_q (prefill K/V repacked head-major once per call).
-- 5: attngen_shape and attngen_kernel_info gain kv_dtype (the cache's storage type).
-- 6: attngen_work gains head_split_min_bytes and head_split_min_flop (the plan's thresholds of a decode step's
--    cut by kv heads among threads).
-- 7: attngen_rope gains YaRN's parameters and cs_scale (the factor of every cos and sin).
-- 8: attngen_shape and attngen_kernel_info gain features; attngen_params gains their values.
-- 9: attngen_shape and attngen_kernel_info gain page_size (paged K/V caches read through a block table).
spec.abi = 9

-- A float as a C literal that always compiles: 1 -> "1.0f", 0.5 -> "0.5f", 1e-05 -> "1e-05f".
function spec.c_float(v)
  local t = string.format("%.9g", v)
  if not t:find("[%.eEn]") then t = t .. ".0" end
  return t .. "f"
end

-- The spec checks its own entries, so a half-written one is a one-line error, never a traceback later.
function spec.self_check()
  local problems = {}
  local function need(cond, fmt, ...) if not cond then problems[#problems + 1] = string.format(fmt, ...) end end
  for _, list in ipairs({ "isas", "phases", "mask_features", "masks", "kv_dtypes", "options", "attn_features" }) do
    local seen = {}
    for i, e in ipairs(spec[list]) do
      need(type(e.name) == "string" and e.name:match("^[a-z][a-z0-9_]*$"), "%s[%d] needs a lowercase name", list, i)
      need(not seen[e.name], "%s: '%s' is listed twice", list, tostring(e.name))
      seen[e.name or i] = true
    end
  end
  for _, e in ipairs(spec.isas) do
    need(type(e.id) == "number" and type(e.detect) == "string", "isa '%s' needs an id and a detect function", e.name)
  end
  for _, m in ipairs(spec.masks) do
    for _, f in ipairs(m.features or {}) do
      need(spec.mask_feature[f] ~= nil, "mask '%s' names unknown feature '%s'", m.name, f)
    end
  end
  for _, o in ipairs(spec.options) do
    need(type(o.check) == "function" and type(o.c_value) == "function" and o.ctype and o.default,
      "option '%s' needs ctype, default, check and c_value", o.name)
  end
  for _, t in ipairs(spec.kv_dtypes) do
    need((t.field == nil) == (t.name == "f32"), "kv_dtype '%s' needs a field (f32 alone has none)", t.name)
    need((t.group ~= nil) == (t.scale_max ~= nil), "kv_dtype '%s': group and scale_max go together", t.name)
    local first = spec.kv_encoding[t.field or "f32"].first
    for _, k in ipairs({ "ctype", "api", "bytes", "scale_max" }) do
      need(first[k] == t[k], "kv_dtype '%s' shares field '%s' with '%s' but not its %s", t.name, t.field, first.name, k)
    end
  end
  if #problems > 0 then return "spec: " .. problems[1] end
end

-- ---------------------------------------------------------------- lookups

local function index(list)
  local by = {}
  for _, e in ipairs(list) do by[e.name] = e end
  return by
end
spec.isa = index(spec.isas)
spec.phase = index(spec.phases)
spec.mask = index(spec.masks)
spec.mask_feature = index(spec.mask_features)
spec.kv_dtype = index(spec.kv_dtypes)
-- The encodings, f32's first, then each field in the order its first type is listed: { name (the field; "f32"),
-- id (the C enum value, by that order), the first type's entry as `first`, and its ctype, api, bytes, scale_max }.
spec.kv_encodings = {}
do
  local seen = {}
  for _, t in ipairs(spec.kv_dtypes) do
    local f = t.field or "f32"
    if not seen[f] then
      seen[f] = true
      spec.kv_encodings[#spec.kv_encodings + 1] = { name = f, id = #spec.kv_encodings, first = t, ctype = t.ctype,
        api = t.api, bytes = t.bytes, scale_max = t.scale_max }
    end
  end
end
spec.kv_encoding = index(spec.kv_encodings)
spec.attn_feature = index(spec.attn_features)
spec.option = index(spec.options)
spec.rope_style = index(spec.rope.styles)
spec.rope_scaling = index(spec.rope.scalings)
spec.rope_param = index(spec.rope.params)
spec.tunable = {}
for phase, knobs in pairs(spec.tunables) do spec.tunable[phase] = index(knobs) end

function spec.names(list)
  local t = {}
  for i, e in ipairs(list) do t[i] = e.name end
  return t
end

local kind_entries = {}
-- The config fields a kind of layer (config `kinds`) may set for itself: `rope` and every entry of a spec list
-- marked per_kind = true (options, the attention features' fields), in a fixed order: rope, then the lists by name,
-- each in its order (a feature's fields after it).
-- spec.kind_entry(name) is the entry of such a field (its `check` validates a kind's value).
function spec.kind_fields()
  local out, lists = {}, {}
  if spec.rope.per_kind then out[1] = "rope" end
  for key, v in pairs(spec) do
    if type(v) == "table" and type(v[1]) == "table" then lists[#lists + 1] = key end
  end
  table.sort(lists)
  local function walk(list)
    for _, e in ipairs(list) do
      if e.per_kind and e.name then out[#out + 1], kind_entries[e.name] = e.name, e end
      if type(e.fields) == "table" then walk(e.fields) end -- an attention feature's config fields
    end
  end
  for _, key in ipairs(lists) do walk(spec[key]) end
  return out
end
function spec.kind_entry(name)
  spec.kind_fields()
  return kind_entries[name]
end

-- The feature set of a mask preset: { causal = true, kv_lens = true }. The one place that decides it.
function spec.features_of(mask_name)
  local f = {}
  for _, name in ipairs(spec.mask[mask_name].features) do f[name] = true end
  return f
end

-- A kernel's name carries every specialized parameter: attn_h32_kv8_d128_causal_prefill__avx2.
-- Generic kernels (shape read at run time) are attn_generic_<phase>__<isa>.
-- An fp32 cache is the default and adds nothing; another storage type adds its name after the phase:
-- attn_h32_kv8_d128_causal_decode_f16__avx512, attn_generic_decode_int8__avx2.
-- Attention features add their names after the mask, in spec order: attn_h32_kv8_d128_causal_window_softcap_prefill__avx512.
-- A kernel that reads a paged cache (config `page_size`) adds paged<page_size> last: attn_..._decode_f16_paged16__avx512.
-- A kernel of one kind of layer whose code differs from the same-named kernel of an earlier kind (gen/share.lua) adds
-- the kind's name (k.variant) after that: attn_h4_kv1_d64_causal_decode_nope__avx2.
function spec.kernel_name(k)
  local t = (k.kv_dtype and k.kv_dtype ~= "f32") and ("_" .. k.kv_dtype) or ""
  if k.variant then t = t .. "_" .. k.variant end
  if k.page_size then t = t .. "_paged" .. k.page_size end
  if not k.D then return string.format("attn_generic_%s%s__%s", k.phase, t, k.isa) end
  local f = ""
  for _, a in ipairs(spec.attn_features) do
    if k.attn and k.attn[a.name] then f = f .. "_" .. a.name end
  end
  return string.format("attn_h%d_kv%d_d%d_%s%s_%s%s__%s", k.heads, k.kv_heads, k.D, k.mask, f, k.phase, t, k.isa)
end

-- The C bits of a set of attention features ({ window = {...}, softcap = {...} }): "0" or "ATTNGEN_ATTN_WINDOW | ...".
function spec.attn_bits(attn)
  local t = {}
  for _, a in ipairs(spec.attn_features) do
    if attn and attn[a.name] then t[#t + 1] = "ATTNGEN_ATTN_" .. a.name:upper() end
  end
  return #t == 0 and "0" or table.concat(t, " | ")
end

-- The scale group of a storage type for head_dim D (nil: the type has no scales).
function spec.kv_group(dtype, D)
  local t = spec.kv_dtype[dtype]
  if t.group == "row" then return D end
  return t.group
end

return spec
