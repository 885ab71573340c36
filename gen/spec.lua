-- The spec: the ONE list of every axis attngen knows. Everything else reads it or is generated from it:
-- config validation (gen/config.lua), kernel enumeration and names (gen/enumerate.lua), the C enums and
-- X-macro lists (generated/runtime/attngen_spec.h), CPU detection's table, the test and bench registries.
-- Adding an axis value starts here; docs/extending.md lists the few other files each kind of change touches.
local spec = {}

-- ISAs, best first (selection tries them in this order). `id` is the C enum value and must never change
-- (generated tables store it); `module` is the vocabulary in gen/isa/<name>.lua, `prelude` the C helpers in
-- templates/isa/<name>.c; `detect` the runtime's CPU check (a function in runtime/attngen.c's CPU section);
-- `arch` the C condition under which the ISA's code is compiled at all (nil = everywhere).
spec.isas = {
  { name = "avx2", id = 1, doc = "AVX2 + FMA on x86-64", detect = "attngen_cpu_has_avx2",
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
-- `arg` names the attngen_args field the feature reads at run time (nil = none).
spec.mask_features = {
  { name = "causal", bit = 1, doc = "query i sees key j iff j <= i + kv_len - q_len (bottom-right aligned)" },
  { name = "kv_lens", bit = 2, arg = "kv_lens", doc = "sequence b sees only its first kv_lens[b] keys" },
}

-- Mask presets: the public names (C enum attngen_mask, config `masks`), each a set of features.
spec.masks = {
  { name = "none", id = 0, features = {} },
  { name = "causal", id = 1, features = { "causal" } },
  { name = "padding", id = 2, features = { "kv_lens" } },
  { name = "causal_padding", id = 3, features = { "causal", "kv_lens" } },
  { name = "cross", id = 4, features = { "kv_lens" }, doc = "padding, for q_len != kv_len (encoder-decoder)" },
}

-- Element types of the K/V cache. `bytes` feeds the plan's cache-size arithmetic.
spec.kv_dtypes = {
  { name = "f32", ctype = "float", bytes = 4 },
}

-- Per-kernel scalar options: a config field, a field of attngen_params (carried by every table and bound
-- kernel, so the generic fallback computes the same result), and a stamp line. `check` returns an error
-- message or nil; `default` is what the kernel uses when the config leaves the option out.
local FLT_MIN, FLT_MAX = 1.1754943508222875e-38, 3.4028234663852886e+38
spec.options = {
  { name = "scale", ctype = "float", default = 0,
    doc = "softmax scale; 0 = 1/sqrt(head_dim)",
    check = function(v)
      if type(v) ~= "number" or v ~= v then return "must be a number" end
      if not (v >= FLT_MIN and v <= FLT_MAX) then
        return string.format("must be a positive normal float (%.9g .. %.9g)", FLT_MIN, FLT_MAX)
      end
    end,
    c_value = function(v) return string.format("%.9gf", v) end },
}

-- Config fields that later versions will add: refused by name as "not supported yet".
spec.reserved = { "kv_dtype", "sliding_window", "softcap", "alibi", "sinks", "rope", "lse" }

-- Shape limits (config validation and attngen.h).
spec.limits = { max_heads = 1024, max_head_dim = 512 }

-- ABI of the generated tables: bump when attngen_table / attngen_kernel_info / attngen_params change layout
-- or meaning. attngen_select refuses a table whose ABI differs from the runtime's.
spec.abi = 2

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
spec.option = index(spec.options)

function spec.names(list)
  local t = {}
  for i, e in ipairs(list) do t[i] = e.name end
  return t
end

-- The feature set of a mask preset: { causal = true, kv_lens = true }. The one place that decides it.
function spec.features_of(mask_name)
  local f = {}
  for _, name in ipairs(spec.mask[mask_name].features) do f[name] = true end
  return f
end

-- A kernel's name carries every specialized parameter: attn_h32_kv8_d128_causal_prefill__avx2.
-- Generic kernels (shape read at run time) are attn_generic_<phase>__<isa>.
function spec.kernel_name(k)
  if not k.D then return string.format("attn_generic_%s__%s", k.phase, k.isa) end
  return string.format("attn_h%d_kv%d_d%d_%s_%s__%s", k.heads, k.kv_heads, k.D, k.mask, k.phase, k.isa)
end

return spec
