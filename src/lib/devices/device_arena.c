/*
 * device_arena.c -- ck_device_arena_compact (device_arena.h): every row of an
 * append arena copied from its chunk to its Arrow offset, one work item per
 * row, with the bounds checked by the work items.
 */
#include "devices/backend_internal.h"
#include "ckernel/device_arena.h"

#include <string.h>

static const char OPENCL_PRELUDE[] = CK__DEVICE_PRELUDE_OPENCL;
static const char CUDA_PRELUDE[] = CK__DEVICE_PRELUDE_CUDA;

/* Arguments: the arena (base, byte offset, elements), the starts (base,
 * offset), the offsets (base, offset), n, the element size, the values
 * (base, offset, elements), the flag a bad row sets. */
static const char COMPACT_KERNEL[] =
    "#define CK_COPY(T) { CK_GLOBAL T *d = (CK_GLOBAL T *)dst;"
    " CK_GLOBAL const T *s = (CK_GLOBAL const T *)src;"
    " for (ck_i64 j = 0; j < len; j++) d[j] = s[j]; }\n"
    "CK_KERNEL void ck_arena_compact(CK_GLOBAL char *a, ck_u64 aoff, ck_i64 an,\n"
    "    CK_GLOBAL char *sb, ck_u64 soff, CK_GLOBAL char *ob, ck_u64 ooff, ck_u64 n,\n"
    "    ck_u64 es, CK_GLOBAL char *v, ck_u64 voff, ck_i64 vn, CK_GLOBAL int *bad) {\n"
    "  ck_u64 i = CK_GID;\n"
    "  if (i >= n) return;\n"
    "  CK_GLOBAL const ck_i64 *o = (CK_GLOBAL const ck_i64 *)(ob + ooff);\n"
    "  ck_i64 lo = o[i], hi = o[i + 1], len = hi - lo;\n"
    "  if (len == 0) return;\n"
    "  ck_i64 st = ((CK_GLOBAL const ck_i64 *)(sb + soff))[i];\n"
    "  if (len < 0 || lo < 0 || hi > vn || st < 0 || st > an - len) { *bad = 1; return; }\n"
    "  CK_GLOBAL const char *src = a + aoff + st * (ck_i64)es;\n"
    "  CK_GLOBAL char *dst = v + voff + lo * (ck_i64)es;\n"
    "  if (es == 8) CK_COPY(ck_i64)\n"
    "  else if (es == 4) CK_COPY(int)\n"
    "  else if (es == 2) CK_COPY(short)\n"
    "  else CK_COPY(char)\n"
    "}\n";

static void copy_rows_host(const char *a, int64_t an, const int64_t *starts,
                           const int64_t *offs, size_t n, size_t es, char *v, int64_t vn,
                           int *bad) {
  for (size_t i = 0; i < n; i++) {
    int64_t lo = offs[i], hi = offs[i + 1], len = hi - lo;
    if (len == 0) {
      continue;
    }
    int64_t st = starts[i];
    if (len < 0 || lo < 0 || hi > vn || st < 0 || st > an - len) {
      *bad = 1;
      continue;
    }
    memmove(v + (size_t)lo * es, a + (size_t)st * es, (size_t)len * es);
  }
}

static void arg_buffer(ck_kernel_arg *a, ck_buffer *b) {
  a->kind = CK_KERNEL_ARG_BUFFER;
  a->buffer = b;
}

static void arg_scalar(ck_kernel_arg *a, const void *v) {
  a->kind = CK_KERNEL_ARG_SCALAR;
  a->value = v;
  a->size = 8;
}

/* Whether `count` items of `size` bytes at byte `off` fit `b` aligned to `align`. */
static bool fits(ck_buffer *b, size_t off, size_t count, size_t size, size_t align) {
  size_t cap = ck_buffer_capacity(b);
  return off % align == 0 && off <= cap && count <= (cap - off) / size;
}

static ck_status run_device(ck_context *ctx, const char *kind, ck_kernel_arg *args, size_t n) {
  const char *prelude = strcmp(kind, "opencl") == 0 ? OPENCL_PRELUDE
                        : strcmp(kind, "cuda") == 0 ? CUDA_PRELUDE
                                                    : NULL;
  if (prelude == NULL) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED, "no device arena compaction for '%s' contexts",
                    kind);
  }
  char source[sizeof OPENCL_PRELUDE + sizeof CUDA_PRELUDE + sizeof COMPACT_KERNEL];
  size_t a = strlen(prelude);
  memcpy(source, prelude, a);
  memcpy(source + a, COMPACT_KERNEL, sizeof COMPACT_KERNEL);
  ck_program *p = NULL;
  ck_status st = ck_context_build_program(ctx, source, NULL, &p);
  if (st != CK_OK) {
    return st;
  }
  st = ck_context_launch(ctx, p, "ck_arena_compact", 13, args, n);
  ck_program_decref(p);
  return st;
}

ck_status ck_device_arena_compact(ck_buffer *arena, size_t arena_offset, ck_buffer *starts,
                                  size_t starts_offset, ck_buffer *offsets,
                                  size_t offsets_offset, size_t n, size_t elem_size,
                                  ck_buffer *values, size_t values_offset) {
  if (arena == NULL || starts == NULL || offsets == NULL || values == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "ck_device_arena_compact: NULL buffer");
  }
  ck_context *ctx = ck_buffer_context(arena);
  if (ck_buffer_context(starts) != ctx || ck_buffer_context(offsets) != ctx ||
      ck_buffer_context(values) != ctx) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "ck_device_arena_compact: the buffers belong to different contexts");
  }
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "ck_device_arena_compact: element size %zu (1, 2, 4 or 8)", elem_size);
  }
  if (n >= SIZE_MAX / 8 || !fits(starts, starts_offset, n, 8, 8) ||
      !fits(offsets, offsets_offset, n + 1, 8, 8) || arena_offset % elem_size != 0 ||
      arena_offset > ck_buffer_capacity(arena) || values_offset % elem_size != 0 ||
      values_offset > ck_buffer_capacity(values)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "ck_device_arena_compact: %zu rows: the starts, offsets, arena or values "
                    "do not fit their buffers at the given byte offsets (or are misaligned)",
                    n);
  }
  if (n == 0) {
    return CK_OK;
  }
  int64_t an = (int64_t)((ck_buffer_capacity(arena) - arena_offset) / elem_size);
  int64_t vn = (int64_t)((ck_buffer_capacity(values) - values_offset) / elem_size);
  int bad = 0;
  ck_status st = CK_OK;
  const char *kind = ck_context_kind(ctx);
  if (strcmp(kind, "cpu") == 0) {
    void *ha = NULL, *hs = NULL, *ho = NULL, *hv = NULL;
    if ((st = ck_buffer_host_pointer(arena, &ha)) != CK_OK ||
        (st = ck_buffer_host_pointer(starts, &hs)) != CK_OK ||
        (st = ck_buffer_host_pointer(offsets, &ho)) != CK_OK ||
        (st = ck_buffer_host_pointer(values, &hv)) != CK_OK) {
      return st;
    }
    copy_rows_host((const char *)ha + arena_offset,
                   an, (const int64_t *)(void *)((char *)hs + starts_offset),
                   (const int64_t *)(void *)((char *)ho + offsets_offset), n, elem_size,
                   (char *)hv + values_offset, vn, &bad);
  } else {
    ck_buffer *flag = NULL;
    if ((st = ck_buffer_new(ctx, sizeof(int), &flag)) != CK_OK) {
      return st;
    }
    st = ck_buffer_write(flag, 0, &bad, sizeof bad);
    uint64_t aoff = arena_offset, soff = starts_offset, ooff = offsets_offset, nn = n,
             es = elem_size, voff = values_offset;
    ck_kernel_arg args[13];
    memset(args, 0, sizeof args);
    arg_buffer(&args[0], arena);
    arg_scalar(&args[1], &aoff);
    arg_scalar(&args[2], &an);
    arg_buffer(&args[3], starts);
    arg_scalar(&args[4], &soff);
    arg_buffer(&args[5], offsets);
    arg_scalar(&args[6], &ooff);
    arg_scalar(&args[7], &nn);
    arg_scalar(&args[8], &es);
    arg_buffer(&args[9], values);
    arg_scalar(&args[10], &voff);
    arg_scalar(&args[11], &vn);
    arg_buffer(&args[12], flag);
    if (st == CK_OK) {
      st = run_device(ctx, kind, args, n);
    }
    if (st == CK_OK) {
      st = ck_buffer_read(flag, 0, &bad, sizeof bad);
    }
    ck_buffer_decref(flag);
    if (st != CK_OK) {
      return st;
    }
  }
  if (bad) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "ck_device_arena_compact: a row's chunk or destination lies outside the "
                    "arena or the values buffer (or its offsets decrease)");
  }
  return CK_OK;
}
