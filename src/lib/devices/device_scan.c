/*
 * device_scan.c -- the exclusive int64 prefix sum of device_scan.h: chunk
 * scans, a recursive scan of the chunk sums, chunk offsets added.
 */
#include "devices/backend_internal.h"
#include "ckernel/device_scan.h"

#include <string.h>

static const char OPENCL_PRELUDE[] = CK__DEVICE_PRELUDE_OPENCL;
static const char CUDA_PRELUDE[] = CK__DEVICE_PRELUDE_CUDA;

/* Both kernels take (values base, byte offset, n, chunk, sums base, count of
 * chunks); work item c owns values [c * chunk, min(n, (c + 1) * chunk)). */
static const char SCAN_KERNELS[] =
    "CK_KERNEL void ck_scan_chunks(CK_GLOBAL char *base, ck_u64 off, ck_u64 n, ck_u64 chunk,\n"
    "                              CK_GLOBAL char *sums, ck_u64 m) {\n"
    "  ck_u64 c = CK_GID;\n"
    "  if (c >= m) return;\n"
    "  CK_GLOBAL ck_i64 *v = (CK_GLOBAL ck_i64 *)(base + off);\n"
    "  ck_u64 lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;\n"
    "  ck_i64 s = 0;\n"
    "  for (ck_u64 i = lo; i < hi; i++) { ck_i64 x = v[i]; v[i] = s; s += x; }\n"
    "  ((CK_GLOBAL ck_i64 *)sums)[c] = s;\n"
    "}\n"
    "CK_KERNEL void ck_scan_add(CK_GLOBAL char *base, ck_u64 off, ck_u64 n, ck_u64 chunk,\n"
    "                           CK_GLOBAL char *sums, ck_u64 m) {\n"
    "  ck_u64 c = CK_GID;\n"
    "  if (c >= m) return;\n"
    "  CK_GLOBAL ck_i64 *v = (CK_GLOBAL ck_i64 *)(base + off);\n"
    "  ck_u64 lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;\n"
    "  ck_i64 a = ((CK_GLOBAL ck_i64 *)sums)[c];\n"
    "  for (ck_u64 i = lo; i < hi; i++) v[i] += a;\n"
    "}\n";

#define SCAN_LOCAL 64

static ck_status launch(ck_context *ctx, ck_program *p, const char *name, ck_buffer *buf,
                        uint64_t off, uint64_t n, ck_buffer *sums, uint64_t m) {
  uint64_t chunk = CK_DEVICE_SCAN_CHUNK;
  ck_kernel_arg args[6];
  memset(args, 0, sizeof args);
  args[0].kind = CK_KERNEL_ARG_BUFFER;
  args[0].buffer = buf;
  args[1].kind = CK_KERNEL_ARG_SCALAR;
  args[1].value = &off;
  args[1].size = 8;
  args[2].kind = CK_KERNEL_ARG_SCALAR;
  args[2].value = &n;
  args[2].size = 8;
  args[3].kind = CK_KERNEL_ARG_SCALAR;
  args[3].value = &chunk;
  args[3].size = 8;
  args[4].kind = CK_KERNEL_ARG_BUFFER;
  args[4].buffer = sums;
  args[5].kind = CK_KERNEL_ARG_SCALAR;
  args[5].value = &m;
  args[5].size = 8;
  return ck_context_launch_local(ctx, p, name, 6, args, (size_t)m, SCAN_LOCAL);
}

/* Scan `n` values at `off` of `buf` in place on the device. */
static ck_status scan_level(ck_context *ctx, ck_program *p, ck_buffer *buf, uint64_t off,
                            uint64_t n) {
  if (n == 0) {
    return CK_OK;
  }
  uint64_t m = (n + CK_DEVICE_SCAN_CHUNK - 1) / CK_DEVICE_SCAN_CHUNK;
  ck_buffer *sums = NULL;
  ck_status st = ck_buffer_new(ctx, (size_t)m * 8, &sums);
  if (st != CK_OK) {
    return st;
  }
  st = launch(ctx, p, "ck_scan_chunks", buf, off, n, sums, m);
  if (st == CK_OK && m > 1) {
    st = scan_level(ctx, p, sums, 0, m);
    if (st == CK_OK) {
      st = launch(ctx, p, "ck_scan_add", buf, off, n, sums, m);
    }
  }
  ck_buffer_decref(sums);
  return st;
}

static void scan_host(int64_t *v, size_t n) {
  uint64_t s = 0; /* two's complement wrap, as the device kernels */
  for (size_t i = 0; i < n; i++) {
    uint64_t x = (uint64_t)v[i];
    v[i] = (int64_t)s;
    s += x;
  }
}

ck_status ck_device_scan_exclusive_i64(ck_buffer *buf, size_t offset, size_t n,
                                       int64_t *out_total) {
  if (buf == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL buffer");
  }
  size_t cap = ck_buffer_capacity(buf);
  if (offset % 8 != 0 || offset > cap || n > (cap - offset) / 8) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "%zu int64 values at byte offset %zu do not fit a buffer of %zu bytes "
                    "(or the offset is not 8-byte aligned)", n, offset, cap);
  }
  if (out_total != NULL) {
    *out_total = 0;
  }
  if (n == 0) {
    return CK_OK;
  }
  int64_t last_in = 0;
  ck_status st = ck_buffer_read(buf, offset + (n - 1) * 8, &last_in, 8);
  if (st != CK_OK) {
    return st;
  }
  ck_context *ctx = ck_buffer_context(buf);
  const char *kind = ck_context_kind(ctx);
  if (strcmp(kind, "cpu") == 0) {
    void *host = NULL;
    st = ck_buffer_host_pointer(buf, &host);
    if (st != CK_OK) {
      return st;
    }
    scan_host((int64_t *)((char *)host + offset), n);
  } else {
    const char *prelude = strcmp(kind, "opencl") == 0 ? OPENCL_PRELUDE
                          : strcmp(kind, "cuda") == 0 ? CUDA_PRELUDE
                                                      : NULL;
    if (prelude == NULL) {
      return CK_ERROR(CK_ERR_NOT_SUPPORTED, "no device scan for '%s' contexts", kind);
    }
    char source[sizeof OPENCL_PRELUDE + sizeof CUDA_PRELUDE + sizeof SCAN_KERNELS];
    size_t a = strlen(prelude);
    memcpy(source, prelude, a);
    memcpy(source + a, SCAN_KERNELS, sizeof SCAN_KERNELS);
    ck_program *p = NULL;
    st = ck_context_build_program(ctx, source, NULL, &p);
    if (st != CK_OK) {
      return st;
    }
    st = scan_level(ctx, p, buf, offset, n);
    ck_program_decref(p);
    if (st != CK_OK) {
      return st;
    }
  }
  if (out_total != NULL) {
    int64_t last_out = 0;
    st = ck_buffer_read(buf, offset + (n - 1) * 8, &last_out, 8);
    if (st != CK_OK) {
      return st;
    }
    *out_total = (int64_t)((uint64_t)last_out + (uint64_t)last_in);
  }
  return CK_OK;
}
