/* SPDX-License-Identifier: MIT */
/* attngen runtime: the names of the enums, shape and table checks, kernel selection. */
#include "attngen_internal.h"

extern const attngen_table attngen_table_generic; /* generated/runtime/attngen_generic.c */

/* Indexed by the enum values (gen/spec.lua assigns them; the X lists below come from it). */
#define NAME_AT(E, name, ...) [ATTNGEN_ISA_##E] = #name,
static const char *const isa_names[ATTNGEN_ISA_COUNT_] = { ATTNGEN_ISA_LIST(NAME_AT) };
#undef NAME_AT
#define NAME_AT(E, name, ...) [ATTNGEN_MASK_##E] = #name,
static const char *const mask_names[ATTNGEN_MASK_COUNT_] = { ATTNGEN_MASK_LIST(NAME_AT) };
#undef NAME_AT
#define NAME_AT(E, name, ...) [ATTNGEN_PHASE_##E] = #name,
static const char *const phase_names[ATTNGEN_PHASE_COUNT_] = { ATTNGEN_PHASE_LIST(NAME_AT) };
#undef NAME_AT

/* Each storage type: its name and scale group (0: none, -1: one per row); its bytes per element and scales per row
 * are attngen_spec.h's attngen_kv_dtype_bytes and attngen_kv_scales_per_row. */
static const struct {
  const char *name;
  int group;
} kv_types[ATTNGEN_KV_COUNT_] = {
#define KV_TYPE_AT(E, name, api, bytes, group) [ATTNGEN_KV_##E] = { #name, group },
  ATTNGEN_KV_DTYPE_LIST(KV_TYPE_AT)
#undef KV_TYPE_AT
};

const char *attngen_kv_dtype_name(attngen_kv_dtype t)
{
  return (unsigned)t < ATTNGEN_KV_COUNT_ ? kv_types[t].name : "?";
}

/* Elements per scale of type t for head_dim d (0: no scales). */
int attngen_kv_group(attngen_kv_dtype t, int d) { return kv_types[t].group < 0 ? d : kv_types[t].group; }

int attngen_check_kv_dtype(const char *fn, attngen_kv_dtype t, int scales_given)
{
  if ((unsigned)t >= ATTNGEN_KV_COUNT_)
    return attngen_fail(ATTNGEN_ERR_DTYPE, "attngen: %s: kv_dtype %d is not a storage type", fn, (int)t);
  if (scales_given && !kv_types[t].group)
    return attngen_fail(ATTNGEN_ERR_DTYPE, "attngen: %s: type %s has no scales, but scales are given", fn,
                        kv_types[t].name);
  return ATTNGEN_OK;
}


const char *attngen_isa_name(attngen_isa isa)
{
  return (unsigned)isa < ATTNGEN_ISA_COUNT_ ? isa_names[isa] : "?";
}
const char *attngen_mask_name(attngen_mask m)
{
  return (unsigned)m < ATTNGEN_MASK_COUNT_ ? mask_names[m] : "?";
}
const char *attngen_phase_name(attngen_phase p)
{
  return (unsigned)p < ATTNGEN_PHASE_COUNT_ ? phase_names[p] : "?";
}

/* Best first. */
#define PREF(E, ...) ATTNGEN_ISA_##E,
static const attngen_isa isa_preference[ATTNGEN_ISA_COUNT_] = { ATTNGEN_ISA_LIST(PREF) };
#undef PREF

int attngen_check_shape(const attngen_shape *s)
{
  if (!s) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: shape is NULL");
  if (s->heads <= 0 || s->kv_heads <= 0 || s->head_dim <= 0)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: heads (%d), kv_heads (%d) and head_dim (%d) must be positive",
                        s->heads, s->kv_heads, s->head_dim);
  if (s->heads % s->kv_heads != 0)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: heads (%d) is not a multiple of kv_heads (%d)", s->heads,
                        s->kv_heads);
  if (s->head_dim > ATTNGEN_MAX_HEAD_DIM)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: head_dim %d is above the maximum %d", s->head_dim,
                        ATTNGEN_MAX_HEAD_DIM);
#ifdef ATTNGEN_MAX_HEADS
  if (s->heads > ATTNGEN_MAX_HEADS) /* the kernels count query rows x group in int */
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: heads %d is above the maximum %d", s->heads,
                        ATTNGEN_MAX_HEADS);
#endif
  if ((unsigned)s->mask >= ATTNGEN_MASK_COUNT_)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: unknown mask %d", (int)s->mask);
  if ((unsigned)s->phase >= ATTNGEN_PHASE_COUNT_)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: unknown phase %d", (int)s->phase);
  if ((unsigned)s->kv_dtype >= ATTNGEN_KV_COUNT_)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: unknown kv_dtype %d (valid: 0..%d; 0 = f32)", (int)s->kv_dtype,
                        ATTNGEN_KV_COUNT_ - 1);
  if (s->features & ~(unsigned)ATTNGEN_ATTN_ALL_)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: unknown attention feature bits 0x%x (valid: 0x%x)", s->features,
                        (unsigned)ATTNGEN_ATTN_ALL_);
  if ((s->features & ATTNGEN_ATTN_WINDOW) && !(attngen_mask_features(s->mask) & ATTNGEN_FEATURE_CAUSAL))
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: a sliding window needs a causal mask, not %s",
                        attngen_mask_name(s->mask));
  if (s->page_size < 0 || s->page_size > ATTNGEN_MAX_PAGE_SIZE || (s->page_size & (s->page_size - 1)))
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: page_size %d is not 0 (contiguous) or a power of two up to %d",
                        s->page_size, ATTNGEN_MAX_PAGE_SIZE);
  if (kv_types[s->kv_dtype].group > 0 && s->head_dim % kv_types[s->kv_dtype].group != 0)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: kv_dtype %s needs head_dim (%d) to be a multiple of %d",
                        kv_types[s->kv_dtype].name, s->head_dim, kv_types[s->kv_dtype].group);
  return ATTNGEN_OK;
}

/* A table from another generator ABI has another layout or meaning: refuse it rather than misread it. */
static int check_table(const attngen_table *t)
{
  if (t && t->abi != ATTNGEN_ABI)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED,
                        "attngen: table '%s' comes from a generator with table ABI %d; this runtime (attngen %s) reads "
                        "ABI %d: regenerate it with attngen %s", t->abi > 0 && t->abi < 1000 ? t->model : "?", t->abi,
                        ATTNGEN_VERSION_STRING, ATTNGEN_ABI, ATTNGEN_VERSION_STRING);
  return ATTNGEN_OK;
}

/* Binds a kernel to a shape: its work cut (the plan's constants, or computed for the shape by a generic kernel)
 * and the table's parameters. The table's parameters belong to its model's shape, so they travel with any
 * kernel selected for that shape, the generic fallback included: the fallback never changes the result. */
static void bind(const attngen_table *t, const attngen_kernel_info *k, const attngen_shape *s, attngen_kernel *out)
{
  memset(out, 0, sizeof *out);
  out->info = k;
  out->shape = *s;
  if (k->work_fn) k->work_fn(s, &out->work);
  else out->work = k->work;
  if (t && t->heads == s->heads && t->kv_heads == s->kv_heads && t->head_dim == s->head_dim) out->params = t->params;
}

static int matches(const attngen_kernel_info *k, const attngen_shape *s, attngen_isa isa)
{
  return k->isa == isa && k->heads == s->heads && k->kv_heads == s->kv_heads && k->head_dim == s->head_dim &&
         k->mask == s->mask && k->phase == s->phase && k->kv_dtype == s->kv_dtype && k->features == s->features &&
         k->page_size == s->page_size && attngen_kernel_runs_here(k);
}

static const attngen_kernel_info *find_generic(const attngen_shape *s, attngen_isa isa)
{
  int i;
  for (i = 0; i < attngen_table_generic.count; ++i) {
    const attngen_kernel_info *k = &attngen_table_generic.kernels[i];
    /* a paged cache: prefill only, whose K/V repack gathers the pages (a decode kernel reads them itself) */
    if (s->page_size && s->phase != ATTNGEN_PHASE_PREFILL) return NULL;
    if (k->isa == isa && k->phase == s->phase && k->kv_dtype == s->kv_dtype && attngen_kernel_runs_here(k)) return k;
  }
  return NULL;
}

/* Whether some generic kernel of this build reads a cache of type t: `attngen --runtime --kv-dtype` (and --vendor, for
 * its model's types) writes them for some types only. */
static int generic_reads(attngen_kv_dtype t)
{
  int i;
  for (i = 0; i < attngen_table_generic.count; ++i)
    if (attngen_table_generic.kernels[i].kv_dtype == t) return 1;
  return 0;
}

/* The failure of a shape whose storage type no generic kernel reads, naming the types they do read. */
static int fail_generic_type(const attngen_shape *s)
{
  char have[128] = "";
  size_t n = 0;
  int t;
  for (t = 0; t < ATTNGEN_KV_COUNT_; ++t)
    if (generic_reads((attngen_kv_dtype)t) && n + 16 < sizeof have)
      n += (size_t)snprintf(have + n, sizeof have - n, "%s%s", n ? ", " : "", attngen_kv_dtype_name((attngen_kv_dtype)t));
  return attngen_fail(ATTNGEN_ERR_UNSUPPORTED,
                      "attngen: no generic kernel reads kv_dtype %s: this build's generic kernels read %s (write them "
                      "for it with attngen --runtime --kv-dtype, or list the shape in a config)",
                      attngen_kv_dtype_name(s->kv_dtype), have);
}

static const attngen_kernel_info *find_specialized(const attngen_table *t, const attngen_shape *s, attngen_isa isa)
{
  int i;
  if (!t) return NULL;
  for (i = 0; i < t->count; ++i)
    if (matches(&t->kernels[i], s, isa)) return &t->kernels[i];
  return NULL;
}

int attngen_select_specialized(const attngen_table *table, const attngen_shape *shape, attngen_isa isa,
                               attngen_kernel *out)
{
  int st = attngen_check_shape(shape);
  const attngen_kernel_info *k;
  if (st) return st;
  if (!out) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: out is NULL");
  if ((st = check_table(table))) return st;
  if ((unsigned)isa >= ATTNGEN_ISA_COUNT_)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: unknown ISA %d (valid: 0..%d)", (int)isa,
                        ATTNGEN_ISA_COUNT_ - 1);
  if (!(attngen_cpu_isas() & (1u << isa)))
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: this CPU cannot run %s", attngen_isa_name(isa));
  k = find_specialized(table, shape, isa);
  if (!k)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED,
                        "attngen: table '%s' has no %s kernel for h%d kv%d d%d %s %s kv %s page_size %d",
                        table ? table->model : "(none)", attngen_isa_name(isa), shape->heads, shape->kv_heads,
                        shape->head_dim, attngen_mask_name(shape->mask), attngen_phase_name(shape->phase),
                        attngen_kv_dtype_name(shape->kv_dtype), shape->page_size);
  bind(table, k, shape, out);
  return ATTNGEN_OK;
}

int attngen_select_generic(const attngen_shape *shape, attngen_isa isa, attngen_kernel *out)
{
  int st = attngen_check_shape(shape);
  const attngen_kernel_info *k;
  if (st) return st;
  if (!out) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: out is NULL");
  if ((unsigned)isa >= ATTNGEN_ISA_COUNT_)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: unknown ISA %d (valid: 0..%d)", (int)isa,
                        ATTNGEN_ISA_COUNT_ - 1);
  if (!(attngen_cpu_isas() & (1u << isa)))
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: this CPU cannot run %s", attngen_isa_name(isa));
  k = find_generic(shape, isa);
  if (!k && shape->page_size)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: no generic %s kernel reads a paged cache (page_size %d): "
                        "the generic kernels serve paged prefill only", attngen_phase_name(shape->phase),
                        shape->page_size);
  if (!k && !generic_reads(shape->kv_dtype)) return fail_generic_type(shape);
  if (!k)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: no generic %s kernel in this build", attngen_isa_name(isa));
  bind(NULL, k, shape, out);
  return ATTNGEN_OK;
}

int attngen_select(const attngen_table *table, const attngen_shape *shape, attngen_kernel *out)
{
  const unsigned allowed = attngen_allowed_isas();
  int st = attngen_check_shape(shape), i;
  if (st) return st;
  if (!out) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: out is NULL");
  if ((st = check_table(table))) return st;
  for (i = 0; i < ATTNGEN_ISA_COUNT_; ++i) {
    const attngen_isa isa = isa_preference[i];
    const attngen_kernel_info *k;
    if (!(allowed & (1u << isa))) continue;
    k = find_specialized(table, shape, isa);
    if (k) {
      bind(table, k, shape, out);
      attngen_log_verbose("h%d kv%d d%d %s %s -> %s (specialized, table '%s')", shape->heads, shape->kv_heads,
                          shape->head_dim, attngen_mask_name(shape->mask), attngen_phase_name(shape->phase), k->name,
                          table->model);
      return ATTNGEN_OK;
    }
    attngen_log_verbose("h%d kv%d d%d %s %s: no specialized %s kernel in table '%s'", shape->heads, shape->kv_heads,
                        shape->head_dim, attngen_mask_name(shape->mask), attngen_phase_name(shape->phase),
                        attngen_isa_name(isa), table ? table->model : "(none)");
  }
  for (i = 0; i < ATTNGEN_ISA_COUNT_; ++i) {
    const attngen_isa isa = isa_preference[i];
    const attngen_kernel_info *k;
    if (!(allowed & (1u << isa))) continue;
    k = find_generic(shape, isa);
    if (k) {
      bind(table, k, shape, out);
      attngen_log_verbose("h%d kv%d d%d %s %s -> %s (generic fallback)", shape->heads, shape->kv_heads, shape->head_dim,
                          attngen_mask_name(shape->mask), attngen_phase_name(shape->phase), k->name);
      return ATTNGEN_OK;
    }
  }
  if (shape->page_size)
    return attngen_fail(ATTNGEN_ERR_UNSUPPORTED,
                        "attngen: no %s kernel for page_size %d in table '%s' (list it in the config's page_size)",
                        attngen_phase_name(shape->phase), shape->page_size, table ? table->model : "(none)");
  if (!generic_reads(shape->kv_dtype)) return fail_generic_type(shape);
  return attngen_fail(ATTNGEN_ERR_UNSUPPORTED, "attngen: no kernel can run this shape on this CPU");
}
