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
 * the thread's result arena (ck_str_set_result_arena): the first case
 * mapping of each element is written there (ck__result_candidate), and the
 * store keeps it in place when it is the returned value
 * (ck_str_store_view); otherwise it is left unused there (one per element
 * at most) and the returned view is copied.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

/* The current arena and the result arena, in one thread-local record (one
 * thread-local address lookup per call). */
static _Thread_local struct {
  ck_memblock *current; /* ck_str_set_arena's                  */
  ck_memblock *result;  /* the entry point's destination arena */
  ck_string made;       /* the text ck_str_case wrote there    */
  bool taken;           /* this element's candidate given out  */
} ck__t;
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

CK_API void ck_str_set_result_arena(ck_memblock *arena) {
  ck__t.result = arena;
  ck__t.taken = false;
  ck__t.made.begin = ck__t.made.end = NULL;
}

ck_status ck__result_candidate(ck_memblock **out, ck_string **made) {
  if (ck__t.result != NULL && !ck__t.taken && ck__t.current == NULL) {
    ck__t.taken = true;
    *made = &ck__t.made;
    *out = ck__t.result;
    return CK_OK;
  }
  *made = NULL;
  return ck_str_arena(out);
}

CK_API ck_status ck_str_store_view(ck_memblock *arena, const char *b, const char *e,
                                   ck_string *dst) {
  bool made = arena != NULL && arena == ck__t.result && b != NULL && b == ck__t.made.begin &&
              e == ck__t.made.end;
  ck__t.taken = false;
  ck__t.made.begin = ck__t.made.end = NULL;
  if (dst == NULL || (b == NULL && e != NULL) || e < b) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output or a bad view");
  }
  ck_string v = {(char *)b, (char *)e};
  if (!made) {
    ck_status st = ck_pod_allocate(arena, (size_t)(e - b), 1, &v.begin, &v.end);
    if (st != CK_OK) {
      return st;
    }
    if (e != b) {
      memcpy(v.begin, b, (size_t)(e - b));
    }
  }
  memcpy(dst, &v, sizeof v); /* dst may be unaligned (strided arrays) */
  return CK_OK;
}
