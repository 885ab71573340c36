/* SPDX-License-Identifier: MIT */
/* attngen runtime: paged K/V caches, the checks of a block table and the ring-buffer table of a windowed layer. */
#include "attngen_internal.h"

/* The paging fields of a call against its kernel's shape (before anything is read through them). */
int attngen_check_pages(const attngen_shape *s, const attngen_pages *pg, int kv_capacity, int batch)
{
  if (!s->page_size) {
    if (pg->block_table || pg->max_pages || pg->num_pages || pg->page_size)
      return attngen_fail(ATTNGEN_ERR_SHAPE,
                          "attngen: pages are set but the kernel reads a contiguous cache (select it with "
                          "shape.page_size = %d)", pg->page_size);
    return ATTNGEN_OK;
  }
  if (!pg->block_table)
    return attngen_fail(ATTNGEN_ERR_NULL, "attngen: the kernel reads a paged cache (page_size %d): pages.block_table "
                        "must not be NULL", s->page_size);
  if (pg->page_size != s->page_size)
    return attngen_fail(ATTNGEN_ERR_SHAPE, "attngen: pages.page_size (%d) is not the kernel's page_size (%d)",
                        pg->page_size, s->page_size);
  if (pg->max_pages <= 0 || pg->num_pages <= 0)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: pages.max_pages (%d) and pages.num_pages (%d) must be positive",
                        pg->max_pages, pg->num_pages);
  if ((long long)pg->max_pages * pg->page_size > ATTNGEN_MAX_LEN)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: pages.max_pages (%d) x page_size (%d) is above ATTNGEN_MAX_LEN (%d)",
                        pg->max_pages, pg->page_size, ATTNGEN_MAX_LEN);
  if ((long long)batch * pg->max_pages > (long long)(PTRDIFF_MAX / sizeof(int32_t)))
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: the block table (batch %d x max_pages %d) is too large", batch,
                        pg->max_pages);
  if (kv_capacity != 0)
    return attngen_fail(ATTNGEN_ERR_SIZE, "attngen: kv_capacity (%d) must be 0 with a paged cache (a sequence holds "
                        "pages.max_pages x page_size rows)", kv_capacity);
  return ATTNGEN_OK;
}

/* The block table entries of sequence b's rows [row0, row1): each in [0, num_pages) (ATTNGEN_ERR_PAGE). For an
 * append (append = 1) a negative entry means no page was given there: ATTNGEN_ERR_CAPACITY. */
int attngen_check_block_table(const attngen_pages *pg, int b, int row0, int row1, int append)
{
  int p;
  if (row1 <= row0) return ATTNGEN_OK;
  for (p = row0 / pg->page_size; p <= (row1 - 1) / pg->page_size; ++p) {
    const int32_t page = pg->block_table[(ptrdiff_t)b * pg->max_pages + p];
    if (append && page < 0)
      return attngen_fail(ATTNGEN_ERR_CAPACITY, "attngen: sequence %d has no page for rows %d.. (block_table[%d][%d] = "
                          "%d): nothing was appended", b, p * pg->page_size, b, p, (int)page);
    if (page < 0 || page >= pg->num_pages)
      return attngen_fail(ATTNGEN_ERR_PAGE, "attngen: block_table[%d][%d] = %d is outside [0, num_pages = %d)", b, p,
                          (int)page, pg->num_pages);
  }
  return ATTNGEN_OK;
}

int attngen_ring_block_table(int page_size, int window, int sink_tokens, int max_new, const int32_t *pages,
                             int n_pages, int32_t *table, int entries)
{
  int sink_pages, ring, i;
  if (!pages || !table) return attngen_fail(ATTNGEN_ERR_NULL, "attngen: ring block table: pages and table must not be NULL");
  if (page_size <= 0 || page_size > ATTNGEN_MAX_PAGE_SIZE || (page_size & (page_size - 1)) || window <= 0 ||
      sink_tokens < 0 || max_new <= 0 || n_pages <= 0 || entries <= 0 || window > ATTNGEN_MAX_LEN ||
      sink_tokens > ATTNGEN_MAX_LEN || max_new > ATTNGEN_MAX_LEN)
    return attngen_fail(ATTNGEN_ERR_SIZE,
                        "attngen: ring block table: page_size (%d) must be a power of two up to %d; window (%d), "
                        "max_new (%d), n_pages (%d) and entries (%d) positive; sink_tokens (%d) not negative",
                        page_size, ATTNGEN_MAX_PAGE_SIZE, window, max_new, n_pages, entries, sink_tokens);
  sink_pages = (sink_tokens + page_size - 1) / page_size;
  ring = n_pages - sink_pages;
  if (ring <= 0 || (long long)ring * page_size < (long long)window + max_new - 1)
    return attngen_fail(ATTNGEN_ERR_CAPACITY,
                        "attngen: ring block table: %d pages of %d rows (%d for %d sink tokens) hold %lld ring rows, "
                        "fewer than window (%d) + max_new (%d) - 1", n_pages, page_size, sink_pages, sink_tokens,
                        ring > 0 ? (long long)ring * page_size : 0LL, window, max_new);
  for (i = 0; i < entries; ++i) table[i] = pages[i < sink_pages ? i : sink_pages + (i - sink_pages) % ring];
  return ATTNGEN_OK;
}
