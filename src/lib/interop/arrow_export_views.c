/*
 * arrow_export_views.c -- strings and bytes as Arrow's string_view /
 * binary_view: values of up to 12 bytes inline, longer ones pointing into
 * the chunks of the array's arena (the node keeps the array), text found in
 * no chunk copied into buffers of the node (arrow_export_internal.h).
 */
#include "interop/arrow_export_internal.h"

#include <stdlib.h>
#include <string.h>

/* An arena chunk as a candidate variadic buffer. */
typedef struct xchunk {
  const char *begin;
  size_t used;
  int32_t index; /* its variadic buffer index, -1 while unused */
} xchunk;

static int chunk_cmp(const void *a, const void *b) {
  const char *x = ((const xchunk *)a)->begin, *y = ((const xchunk *)b)->begin;
  return x < y ? -1 : x > y;
}

/* A 16-byte view: {int32 size; inline[12]} or {int32 size; prefix[4];
 * int32 buffer; int32 offset}. */
typedef struct xview {
  int32_t size;
  char prefix[4];
  int32_t buffer;
  int32_t offset;
} xview;

enum { POOL_LIMIT = INT32_MAX };

/* string_view / binary_view: inline short values, point into the arena's
 * chunks, copy what lies elsewhere into buffers of the node. */
ck_status ck__xexport_views(ck__xctx *c, const char *arrmeta, const ck__xruns *runs,
                            struct ArrowArray *a) {
  char what[300];
  int64_t n = runs->total;
  ck_memblock *arena = ((const ck_string_arrmeta *)arrmeta)->blockref;
  bool is_arena = arena != NULL && (arena->kind == CK_MEMBLOCK_POD ||
                                    arena->kind == CK_MEMBLOCK_ZEROINIT);
  size_t nchunks = 0;
  xchunk *chunks = NULL;
  ck_pod_chunk_info *info = NULL;
  char **pool = NULL;        /* copies of text found in no chunk */
  size_t *pool_used = NULL, npool = 0, pool_cap = 0, pool_bufcap = 0;
  ck_status st = CK_OK;
  bool locked = false;

  if (is_arena) {
    st = ck_pod_memblock_writer_lock(arena);
    if (st != CK_OK) {
      return st;
    }
    locked = true;
    st = ck_pod_memblock_chunks(arena, NULL, 0, &nchunks);
    if (st == CK_OK && nchunks > 0) {
      info = CK_CALLOC(nchunks, sizeof *info);
      chunks = CK_CALLOC(nchunks, sizeof *chunks);
      if (info == NULL || chunks == NULL) {
        st = CK_ERR_NO_MEMORY;
      } else {
        st = ck_pod_memblock_chunks(arena, info, nchunks, &nchunks);
      }
    }
    if (st == CK_OK) {
      for (size_t i = 0; i < nchunks; i++) {
        chunks[i] = (xchunk){info[i].begin, info[i].used, -1};
      }
      if (nchunks > 1) { /* chunks is NULL when there are none */
        qsort(chunks, nchunks, sizeof *chunks, chunk_cmp);
      }
    }
    ck__free(info);
  }
  if (st == CK_OK) {
    st = ck__xnode_init(a, n, 3, 0); /* buffer count set below */
  }
  xview *views = NULL;
  if (st == CK_OK) {
    views = ck__xnode_alloc(a, (size_t)n * sizeof(xview), true);
    if (views == NULL) {
      st = CK_ERR_NO_MEMORY;
    }
  }
  int32_t nused = 0;
  int64_t k = 0;
  for (size_t r = 0; st == CK_OK && r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    for (int64_t i = 0; st == CK_OK && i < run->count; i++, k++) {
      const ck_string *s = (const ck_string *)(run->base + i * run->stride);
      size_t len = ck__xstr_len(s);
      xview *v = &views[k];
      if (len > (size_t)INT32_MAX) {
        st = ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s: element %lld holds %zu bytes, more than a view can "
                       "address; request large_utf8/large_binary",
                       ck__xwhat(c, what, sizeof what), (long long)k, len);
        break;
      }
      v->size = (int32_t)len;
      if (len <= 12) {
        if (len > 0) {
          memcpy(v->prefix, s->begin, len);
        }
        continue;
      }
      memcpy(v->prefix, s->begin, 4);
      /* the last chunk starting at or below the text */
      size_t lo = 0, hi = nchunks;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (chunks[mid].begin <= s->begin) lo = mid + 1; else hi = mid;
      }
      if (lo > 0) {
        xchunk *ch = &chunks[lo - 1];
        size_t off = (size_t)(s->begin - ch->begin);
        if (off <= (size_t)INT32_MAX && off + len <= ch->used) {
          if (ch->index < 0) {
            ch->index = nused++;
          }
          v->buffer = ch->index;
          v->offset = (int32_t)off;
          continue;
        }
      }
      /* not in a chunk: copy into the pool (buffer indices after the chunks,
       * fixed up below) */
      if (npool == 0 || pool_used[npool - 1] + len > pool_bufcap) {
        if (npool == pool_cap) {
          size_t cap = pool_cap ? 2 * pool_cap : 4;
          char **np = ck__realloc(pool, cap * sizeof *np, "ck_arrow_export");
          size_t *nu = np == NULL ? NULL
                                  : ck__realloc(pool_used, cap * sizeof *nu, "ck_arrow_export");
          if (np != NULL) pool = np;
          if (nu != NULL) pool_used = nu;
          if (np == NULL || nu == NULL) {
            st = CK_ERR_NO_MEMORY;
            break;
          }
          pool_cap = cap;
        }
        /* the rest of the text, capped at what one view offset reaches */
        size_t want = 0;
        for (size_t r2 = r; r2 < runs->n && want < (size_t)POOL_LIMIT; r2++) {
          want += (size_t)runs->v[r2].count * 16;
        }
        want = want < len ? len : want;
        want = want > (size_t)POOL_LIMIT ? (size_t)POOL_LIMIT : want;
        pool[npool] = CK_MALLOC(want);
        if (pool[npool] == NULL) {
          st = CK_ERR_NO_MEMORY;
          break;
        }
        pool_used[npool] = 0;
        pool_bufcap = want;
        npool++;
      }
      size_t pi = npool - 1;
      if (pool_used[pi] + len > pool_bufcap) {
        /* grow the newest pool buffer (offsets stay valid: they are relative) */
        size_t cap = pool_bufcap * 2;
        cap = cap < pool_used[pi] + len ? pool_used[pi] + len : cap;
        cap = cap > (size_t)POOL_LIMIT ? (size_t)POOL_LIMIT : cap;
        char *np = ck__realloc(pool[pi], cap, "ck_arrow_export");
        if (np == NULL) {
          st = CK_ERR_NO_MEMORY;
          break;
        }
        pool[pi] = np;
        pool_bufcap = cap;
      }
      memcpy(pool[pi] + pool_used[pi], s->begin, len);
      v->buffer = -1 - (int32_t)pi; /* fixed up below */
      v->offset = (int32_t)pool_used[pi];
      pool_used[pi] += len;
    }
  }
  if (locked) {
    (void)ck_pod_memblock_writer_unlock(arena);
  }
  /* the buffers: validity, views, the used chunks, the pool, their sizes */
  const void **buffers = NULL;
  int64_t *sizes = NULL;
  int64_t nvar = (int64_t)nused + (int64_t)npool;
  if (st == CK_OK) {
    buffers = CK_CALLOC((size_t)(3 + nvar), sizeof *buffers);
    sizes = buffers == NULL ? NULL : ck__xnode_alloc(a, (size_t)(nvar > 0 ? nvar : 1) * 8, true);
    if (sizes == NULL) {
      ck__free(buffers);
      st = CK_ERR_NO_MEMORY;
    }
  }
  if (st == CK_OK) {
    ck__xnode *p = a->private_data;
    ck__free(p->buffers);
    p->buffers = buffers;
    a->buffers = buffers;
    a->n_buffers = 3 + nvar;
    buffers[1] = views;
    for (size_t i = 0; i < nchunks; i++) {
      if (chunks[i].index >= 0) {
        buffers[2 + chunks[i].index] = chunks[i].begin;
        sizes[chunks[i].index] = (int64_t)chunks[i].used;
      }
    }
    if (nused > 0) {
      ck__xnode_keep(a, c->src);
    }
    for (size_t i = 0; i < npool; i++) {
      buffers[2 + nused + (int64_t)i] = pool[i];
      sizes[nused + (int64_t)i] = (int64_t)pool_used[i];
    }
    buffers[2 + nvar] = sizes;
    if (npool > 0) {
      for (int64_t j = 0; j < n; j++) {
        if (views[j].size > 12 && views[j].buffer < 0) {
          views[j].buffer = nused + (-1 - views[j].buffer);
        }
      }
    }
    /* the pool buffers belong to the node now */
    for (size_t i = 0; i < npool; i++) {
      char *mem = pool[i];
      pool[i] = NULL;
      if (st == CK_OK) {
        st = ck__xnode_own(a, mem); /* frees mem on failure */
      } else {
        ck__free(mem);
      }
    }
    npool = 0;
  }
  for (size_t i = 0; i < npool; i++) {
    ck__free(pool[i]);
  }
  ck__free(pool);
  ck__free(pool_used);
  ck__free(chunks);
  if (st != CK_OK) {
    ck__arrow_array_release(a);
  }
  return st;
}
