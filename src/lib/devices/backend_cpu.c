/* backend_cpu.c -- the "cpu" backend: buffers are host memory. */
#include "devices/backend_internal.h"

#include <string.h>

static ck_status ck__cpu_alloc(ck_context *ctx, size_t size, ck__devmem *out) {
  (void)ctx;
  char *p = CK_ALIGNED_ALLOC(4096, size);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  out->handle = p;
  out->host = p;
  out->size = size;
  return CK_OK;
}

static void ck__cpu_free(ck_context *ctx, ck__devmem *mem) {
  (void)ctx;
  ck__free(mem->host);
  mem->handle = mem->host = NULL;
  mem->size = 0;
}

static ck_status ck__cpu_h2d(ck_context *ctx, ck__devmem *dst, size_t off,
                         const void *src, size_t n) {
  (void)ctx;
  if (n != 0) {
    memmove(dst->host + off, src, n);
  }
  return CK_OK;
}

static ck_status ck__cpu_d2h(ck_context *ctx, void *dst, ck__devmem *src, size_t off,
                         size_t n) {
  (void)ctx;
  if (n != 0) {
    memmove(dst, src->host + off, n);
  }
  return CK_OK;
}

static ck_status ck__cpu_d2d(ck_context *ctx, ck__devmem *dst, size_t doff,
                         ck__devmem *src, size_t soff, size_t n) {
  (void)ctx;
  if (n != 0) {
    memmove(dst->host + doff, src->host + soff, n);
  }
  return CK_OK;
}

static ck_status ck__cpu_fill(ck_context *ctx, ck__devmem *dst, size_t off,
                          const void *pattern, size_t psize, size_t n) {
  (void)ctx;
  char *p = dst->host + off;
  if (psize == 1) {
    memset(p, *(const unsigned char *)pattern, n);
    return CK_OK;
  }
  for (size_t i = 0; i < n; i += psize) {
    memcpy(p + i, pattern, psize);
  }
  return CK_OK;
}

static ck_status ck__cpu_build(ck_context *ctx, const char *source,
                           const char *options, void **out) {
  (void)ctx, (void)source, (void)options, (void)out;
  return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                  "the cpu context has no device program compiler (use "
                  "host ckernels, or an opencl context)");
}

static void ck__cpu_release_program(ck_context *ctx, void *native) {
  (void)ctx, (void)native;
}

static ck_status ck__cpu_kernel_create(ck_context *ctx, void *program,
                                   const char *name, void **out) {
  (void)ctx, (void)program, (void)out;
  return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                  "the cpu context cannot create device kernel '%s'", name);
}

static void ck__cpu_kernel_release(ck_context *ctx, void *kernel) {
  (void)ctx, (void)kernel;
}

static ck_status ck__cpu_launch(ck_context *ctx, void *kernel, const char *name,
                            size_t nargs, const ck_kernel_arg *args,
                            size_t global) {
  (void)ctx, (void)kernel, (void)nargs, (void)args, (void)global;
  return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                  "the cpu context cannot launch device kernel '%s'", name);
}

static ck_status ck__cpu_finish(ck_context *ctx) {
  (void)ctx;
  return CK_OK;
}

static ck_status ck__cpu_describe(ck_context *ctx, char *buf, size_t bufsize,
                              size_t *pos) {
  (void)ctx;
  ck__appendf(buf, bufsize, pos, "cpu: host memory, fp64: yes");
  return CK_OK;
}

static ck_status ck__cpu_wrap(ck_context *ctx, void *native, size_t size,
                          ck__devmem *out) {
  (void)ctx;
  out->handle = native;
  out->host = native;
  out->size = size;
  return CK_OK;
}

const ck__backend_vtable ck__cpu_backend = {
    .kind = "cpu",
    .alloc = ck__cpu_alloc,
    .free = ck__cpu_free,
    .copy_h2d = ck__cpu_h2d,
    .copy_d2h = ck__cpu_d2h,
    .copy_d2d = ck__cpu_d2d,
    .fill = ck__cpu_fill,
    .build_program = ck__cpu_build,
    .release_program = ck__cpu_release_program,
    .kernel_create = ck__cpu_kernel_create,
    .kernel_release = ck__cpu_kernel_release,
    .launch = ck__cpu_launch,
    .finish = ck__cpu_finish,
    .describe = ck__cpu_describe,
    .wrap = ck__cpu_wrap,
};
