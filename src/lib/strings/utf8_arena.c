/*
 * utf8_arena.c -- the arena that string methods of jitted code write their
 * results into (ckernel/utf8.h, "the current string arena").
 *
 * Each thread has a current arena: the one an entry point or the caller
 * set with ck_str_set_arena (a destination array's arena: results then
 * need no copy), else the thread's own scratch arena, made on first use
 * and freed by ck_str_scratch_free (or kept until the thread ends).  Host
 * only: device programs pass their arena explicitly.
 */
#include "strings/strings_internal.h"

#include "core/core_internal.h"

static _Thread_local ck_memblock *ck__current_arena;
static _Thread_local ck_memblock *ck__scratch_arena;

CK_API ck_status ck_str_arena(ck_memblock **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL output");
  }
  if (ck__current_arena != NULL) {
    *out = ck__current_arena;
    return CK_OK;
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
  ck_memblock *prev = ck__current_arena;
  ck__current_arena = arena;
  return prev;
}

CK_API void ck_str_scratch_free(void) {
  ck_memblock *mb = ck__scratch_arena;
  ck__scratch_arena = NULL;
  if (mb != NULL) {
    ck_memblock_decref(mb);
  }
}

/* Above this many bytes of chunks, ck_str_scratch_reset frees the scratch
 * arena (the next use starts a new one). */
enum { CK__SCRATCH_KEEP = 1 << 20 };

CK_API void ck_str_scratch_reset(void) {
  ck_memblock *mb = ck__scratch_arena;
  ck_pod_stats stats;
  if (mb != NULL && ck_pod_memblock_stats(mb, &stats) == CK_OK &&
      stats.capacity > CK__SCRATCH_KEEP) {
    ck__scratch_arena = NULL;
    ck_memblock_decref(mb);
  }
}
