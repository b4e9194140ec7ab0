/*
 * utf8_arena.c -- the arena that string methods of jitted code write their
 * results into (ckernel/utf8.h, "the current string arena").
 *
 * Each thread has a current arena: the one an entry point or the caller
 * set with ck_str_set_arena (a destination array's arena: results then
 * need no copy), else the thread's own scratch arena, made on first use
 * and freed by ck_str_scratch_free (or kept until the thread ends).  Host
 * only: device programs pass their arena explicitly.
 *
 * Entry points bound the scratch arena per element without a call: they
 * take the address of the thread's element counter once per call
 * (ck_str_scratch_epoch) and bump it after each element; the first
 * ck_str_arena of an element at least CK__SCRATCH_EVERY elements later then
 * frees the scratch arena when it holds more than CK__SCRATCH_KEEP bytes (no
 * view of it is alive between elements).
 *
 * A caller running elements one by one through single entry points (the
 * null-aware wrapper, jit_option.c) holds the arena for its loop
 * (ck__str_scratch_hold): each element's ck_str_scratch_free then only
 * ends the element, and the release frees the arena once.
 *
 * An entry point storing string results also sets its destination arena as
 * the thread's result arena (ck_str_result_region, once per call, with the
 * bytes its elements will need as a hint: the input's total bytes).  The
 * result arena is written through a *region*: one allocation of about the
 * hint's size, the arena's latest, of which the call hands out the front
 * (ck_str_region.cur) and gives the unused end back when it closes it
 * (ck_pod_resize of that latest allocation) -- so the arena is sized once
 * per call instead of one ck_pod_allocate per element, and the entry points
 * copy a returned view into it inline (a bump of cur; ck_str_region_store
 * only when the region is full).  The first case mapping (or replace) of
 * each element writes its text straight into the region (the result
 * candidate, ck__result_candidate) and records it (made_b, made_e); the
 * store keeps it in place when it is the returned value; otherwise it is
 * left unused there (one per element at most) and the returned view is
 * copied.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

#include <stddef.h>

_Static_assert(offsetof(ck_str_region, cur) == 0 && offsetof(ck_str_region, lim) == 8 &&
                   offsetof(ck_str_region, made_b) == 16 &&
                   offsetof(ck_str_region, made_e) == 24 &&
                   offsetof(ck_str_region, arena) == 32 && sizeof(ck_str_region) == 40,
               "ck_str_region: the offsets the generated code uses");

/* The thread's record (strings_internal.h). */
_Thread_local ck__tls ck__t;
static _Thread_local ck_memblock *ck__scratch_arena;
static _Thread_local uint64_t ck__epoch;      /* bumped by entry points per element */
static _Thread_local uint64_t ck__epoch_seen; /* ck__epoch at the last size check   */

/* Above this many bytes of chunks, the scratch arena is freed between
 * elements (the next use starts a new one); its size is looked at once
 * every CK__SCRATCH_EVERY elements (a look walks its chunks), so it holds
 * at most that many elements' temporaries beyond CK__SCRATCH_KEEP. */
enum { CK__SCRATCH_KEEP = 1 << 20, CK__SCRATCH_EVERY = 16 };

static void ck__scratch_trim(void) {
  ck_memblock *mb = ck__scratch_arena;
  ck_pod_stats stats;
  if (mb != NULL && ck_pod_memblock_stats(mb, &stats) == CK_OK &&
      stats.capacity > CK__SCRATCH_KEEP) {
    ck__scratch_arena = NULL;
    ck_memblock_decref(mb);
  }
}

CK_API ck_status ck_str_arena(ck_memblock **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  if (ck__t.current != NULL) {
    *out = ck__t.current;
    return CK_OK;
  }
  if (ck__epoch - ck__epoch_seen >= CK__SCRATCH_EVERY) {
    /* a later element: the earlier ones' views are dead */
    ck__epoch_seen = ck__epoch;
    ck__scratch_trim();
  }
  if (ck__scratch_arena == NULL) {
    ck_status st = ck_pod_memblock_new(0, &ck__scratch_arena);
    if (st != CK_OK) {
      ck__scratch_arena = NULL;
      *out = NULL;
      return st;
    }
  }
  *out = ck__scratch_arena;
  return CK_OK;
}

CK_API ck_memblock *ck_str_set_arena(ck_memblock *arena) {
  ck_memblock *prev = ck__t.current;
  ck__t.current = arena;
  return prev;
}

static _Thread_local int ck__hold; /* ck__str_scratch_hold depth */

void ck__str_scratch_hold(void) { ck__hold++; }

void ck__str_scratch_release(void) {
  if (ck__hold > 0 && --ck__hold == 0) {
    ck_str_scratch_free();
  }
}

CK_API void ck_str_scratch_free(void) {
  ck_str_set_result_arena(NULL);
  if (ck__hold > 0) { /* an element ended: its views are dead */
    ck__epoch++;
    return;
  }
  ck_memblock *mb = ck__scratch_arena;
  ck__scratch_arena = NULL;
  if (mb != NULL) {
    ck_memblock_decref(mb);
  }
}

CK_API void ck_str_scratch_reset(void) { ck__scratch_trim(); }

CK_API uint64_t *ck_str_scratch_epoch(void) { return &ck__epoch; }

/* Regions are at least this large (a single-element call has no hint). */
enum { CK__REGION_MIN = 256 };

/* Give the unused end of the open region back to its arena (the region is
 * the arena's latest allocation unless something else allocated from the
 * arena since -- then the rest stays unused: bytes, never memory errors). */
static void ck__region_close(ck__tls *t) {
  if (t->rb != NULL && t->r.arena != NULL) {
    char *b = t->rb, *e = t->r.lim;
    (void)ck_pod_resize(t->r.arena, (size_t)(t->r.cur - b), &b, &e);
  }
  t->rb = NULL;
  t->r.cur = t->r.lim = NULL;
}

/* Close the open region and open one with room for `need` bytes: the hint's
 * size the first time in a call, a quarter of it (or `need`) afterwards. */
ck_status ck__region_open(ck__tls *t, size_t need, const char *func) {
  ck_memblock *arena = t->r.arena;
  if (arena == NULL) {
    return ck__error(CK_ERR_INVALID_STATE, func, "no result arena is set");
  }
  ck__region_close(t);
  size_t size = need > t->hint ? need : t->hint;
  if (size < CK__REGION_MIN) {
    size = CK__REGION_MIN;
  }
  char *b, *e;
  ck_status st = ck_pod_allocate(arena, size, 1, &b, &e);
  if (st != CK_OK) {
    return st;
  }
  t->hint = t->hint / 4;
  t->rb = t->r.cur = b;
  t->r.lim = e;
  return CK_OK;
}

CK_API ck_str_region *ck_str_result_region(ck_memblock *arena, int64_t hint) {
  ck__tls *t = &ck__t;
  /* whatever an earlier call left is dropped unseen (its arena may be gone) */
  t->r.arena = arena;
  t->r.cur = t->r.lim = NULL;
  t->r.made_b = t->r.made_e = NULL;
  t->rb = NULL;
  t->result = arena;
  t->hint = hint > 0 ? (size_t)hint : 0;
  return &t->r;
}

CK_API void ck_str_set_result_arena(ck_memblock *arena) {
  if (arena != NULL) {
    (void)ck_str_result_region(arena, 0);
    return;
  }
  ck__tls *t = &ck__t;
  ck__region_close(t);
  t->result = NULL;
  t->r.made_b = t->r.made_e = NULL;
}

/* ---- results written into an arena (every builder of the module) ------- */

CK_API ck_status ck_str_result_arena(ck_memblock **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  ck__out o;
  ck_status st = ck__out_candidate(&o);
  *out = st == CK_OK ? o.arena : NULL;
  return st;
}

ck_status ck__result_alloc(ck__out *o, uint64_t cap, const char *func, char **out_b,
                           char **out_e) {
  if (o->arena == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL arena");
  }
  if (cap > (uint64_t)PTRDIFF_MAX) {
    return ck__error(CK_ERR_OVERFLOW, func, "the result would exceed %lld bytes",
                     (long long)PTRDIFF_MAX);
  }
  ck__tls *t = o->t;
  if (t == NULL) {
    return ck_pod_allocate(o->arena, (size_t)cap, 1, out_b, out_e);
  }
  if (t->r.cur == NULL || (uint64_t)(t->r.lim - t->r.cur) < cap) {
    ck_status st = ck__region_open(t, (size_t)cap, func);
    if (st != CK_OK) {
      return st;
    }
  }
  *out_b = t->r.cur; /* the rest of the region: room beyond cap */
  *out_e = t->r.lim;
  return CK_OK;
}

ck_status ck__result_grow(ck__out *o, int64_t used, uint64_t cap, const char *func,
                          char **inout_b, char **inout_e) {
  if (cap > (uint64_t)PTRDIFF_MAX) {
    return ck__error(CK_ERR_OVERFLOW, func, "the result would exceed %lld bytes",
                     (long long)PTRDIFF_MAX);
  }
  ck__tls *t = o->t;
  if (t == NULL) {
    return ck_pod_resize(o->arena, (size_t)cap, inout_b, inout_e);
  }
  if ((uint64_t)(t->r.lim - *inout_b) >= cap) {
    *inout_e = t->r.lim;
    return CK_OK;
  }
  /* the text so far stays in the region being closed (a zero-init arena
   * clears what a region gives back) and is copied to the new one */
  const char *old = *inout_b;
  t->r.cur = *inout_b + used;
  ck_status st = ck__region_open(t, (size_t)cap, func);
  if (st != CK_OK) {
    return st;
  }
  memcpy(t->r.cur, old, (size_t)used);
  *inout_b = t->r.cur;
  *inout_e = t->r.lim;
  return CK_OK;
}

ck_status ck__result_trim(ck__out *o, char *b, char *e, int64_t used, ck_string *out) {
  if ((int64_t)(e - b) != used) {
    ck_status st = ck_pod_resize(o->arena, (size_t)used, &b, &e);
    if (st != CK_OK) {
      return st;
    }
  }
  out->begin = b;
  out->end = e;
  return CK_OK;
}

/* Copy [b, e) to the front of the region (a new one when it is full). */
static ck_status ck__region_copy(ck__tls *t, const char *b, const char *e, ck_string *v,
                                 const char *func) {
  size_t n = (size_t)(e - b);
  if (t->r.cur == NULL || (size_t)(t->r.lim - t->r.cur) < n) {
    if (t->rb != NULL && b >= t->r.cur && e <= t->r.lim) {
      /* [b, e) lies in the region's free end (a made text taken back):
       * the closing region keeps it while it is copied */
      t->r.cur = (char *)e;
    }
    ck_status st = ck__region_open(t, n, func);
    if (st != CK_OK) {
      return st;
    }
  }
  v->begin = t->r.cur;
  v->end = t->r.cur + n;
  if (n != 0) {
    memmove(v->begin, b, n); /* [b, e) may lie in a taken back made text */
  }
  t->r.cur = v->end;
  return CK_OK;
}

/* The element is over and its made text [made_b, made_e) is not what it
 * returns: when it is the region's last text, take its bytes back (nothing
 * else points there: only the returned view leaves an element). */
static void ck__region_drop_made(ck__tls *t) {
  if (t->r.made_b != NULL && t->r.made_e == t->r.cur) {
    t->r.cur = t->r.made_b;
  }
  t->r.made_b = t->r.made_e = NULL;
}

CK_API ck_status ck_str_region_store(ck_str_region *region, const char *b, const char *e,
                                     ck_string *dst) {
  ck__tls *t = &ck__t;
  if (region != &t->r) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "not the calling thread's result region");
  }
  ck__region_drop_made(t);
  if (dst == NULL || (b == NULL && e != NULL) || e < b) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output or a bad view");
  }
  ck_string v;
  ck_status st = ck__region_copy(t, b, e, &v, __func__);
  if (st == CK_OK) {
    memcpy(dst, &v, sizeof v); /* dst may be unaligned (strided arrays) */
  }
  return st;
}

CK_API ck_str_region *ck_str_made_region(void) {
  ck__tls *t = &ck__t;
  return t->result != NULL && t->r.made_b == NULL && t->current == NULL ? &t->r : NULL;
}

CK_API ck_status ck_str_region_reserve(ck_str_region *region, int64_t n) {
  ck__tls *t = &ck__t;
  if (region != &t->r) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "not the calling thread's result region");
  }
  /* the generated code passes the summed length (unsigned): above
   * PTRDIFF_MAX it reads as negative */
  if (n < 0 || (uint64_t)n >= (uint64_t)PTRDIFF_MAX) {
    return CK_ERROR(CK_ERR_OVERFLOW, "the string result is too long (%llu bytes)",
                    (unsigned long long)n);
  }
  if (t->r.cur != NULL && (uint64_t)(t->r.lim - t->r.cur) > (uint64_t)n) {
    return CK_OK;
  }
  /* the closing region keeps everything before cur (the element's made
   * text among it: the caller may still read it) */
  return ck__region_open(t, (size_t)n + 1, __func__);
}

CK_API ck_status ck_str_store_view(ck_memblock *arena, const char *b, const char *e,
                                   ck_string *dst) {
  ck__tls *t = &ck__t;
  bool region = arena != NULL && arena == t->result;
  bool made = region && b != NULL && b == t->r.made_b && e == t->r.made_e;
  if (made || !region) {
    t->r.made_b = t->r.made_e = NULL;
  } else {
    ck__region_drop_made(t);
  }
  if (dst == NULL || (b == NULL && e != NULL) || e < b) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output or a bad view");
  }
  ck_string v = {(char *)b, (char *)e};
  ck_status st = CK_OK;
  if (made) {
    /* in place */
  } else if (region) {
    st = ck__region_copy(t, b, e, &v, __func__);
  } else {
    st = ck_pod_allocate(arena, (size_t)(e - b), 1, &v.begin, &v.end);
    if (st == CK_OK && e != b) {
      memcpy(v.begin, b, (size_t)(e - b));
    }
  }
  if (st == CK_OK) {
    memcpy(dst, &v, sizeof v); /* dst may be unaligned (strided arrays) */
  }
  return st;
}
