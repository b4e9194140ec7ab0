/*
 * context.c -- contexts, the program cache, launches and device ckernels.
 *
 * Program lifetime.  The context's cache owns one reference to each cached
 * program, which does NOT keep the context alive (else context and cache
 * would keep each other alive forever).  Every reference handed to a user
 * (ck_context_build_program, ck_program_incref) carries a context reference
 * too, dropped by ck_program_decref.  So a program is usable exactly while
 * someone holds it, and the context frees its cached programs when its own
 * count reaches zero -- at which point no user reference can exist.
 */
#include "devices/backend_internal.h"
#include "kernels/builder_internal.h"
#include "ckernel/buffer.h"

#include <stdlib.h>
#include <string.h>

static ck_status ck__context_alloc(ck_context **out) {
  ck_context *ctx = CK_CALLOC(1, sizeof *ctx);
  if (ctx == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  atomic_init(&ctx->refcount, 1u);
  if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
    ck__free(ctx);
    return CK_ERROR(CK_ERR_NO_MEMORY, "pthread_mutex_init failed");
  }
  if (pthread_mutex_init(&ctx->pool_lock, NULL) != 0) {
    pthread_mutex_destroy(&ctx->lock);
    ck__free(ctx);
    return CK_ERROR(CK_ERR_NO_MEMORY, "pthread_mutex_init failed");
  }
  *out = ctx;
  return CK_OK;
}

bool ck__pool_take(ck_context *ctx, size_t size, ck__devmem *out) {
  if (size == 0 || size > CK__POOL_MAX_BYTES) {
    return false;
  }
  bool found = false;
  pthread_mutex_lock(&ctx->pool_lock);
  for (size_t i = 0; i < ctx->pool_n; i++) {
    if (ctx->pool[i].size == size) {
      *out = ctx->pool[i];
      ctx->pool[i] = ctx->pool[--ctx->pool_n];
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&ctx->pool_lock);
  return found;
}

bool ck__pool_give(ck_context *ctx, const ck__devmem *mem) {
  if (ctx->vt == &ck__cpu_backend || mem->size == 0 ||
      mem->size > CK__POOL_MAX_BYTES ||
      (ctx->vt->reusable != NULL && !ctx->vt->reusable(ctx, mem))) {
    return false;
  }
  bool kept = false;
  pthread_mutex_lock(&ctx->pool_lock);
  if (ctx->pool_n < sizeof ctx->pool / sizeof ctx->pool[0]) {
    ctx->pool[ctx->pool_n++] = *mem;
    kept = true;
  }
  pthread_mutex_unlock(&ctx->pool_lock);
  return kept;
}

static void ck__context_destroy(ck_context *ctx) {
  ck_program *p = ctx->cache;
  while (p != NULL) {
    ck_program *next = p->next;
    ck__program_kernel *k = p->kernels;
    while (k != NULL) {
      ck__program_kernel *knext = k->next;
      ctx->vt->kernel_release(ctx, k->kernel);
      ck__free(k->name);
      ck__free(k);
      k = knext;
    }
    ctx->vt->release_program(ctx, p->native);
    ck__free(p->source);
    ck__free(p->options);
    ck__free(p);
    p = next;
  }
  for (size_t i = 0; i < ctx->pool_n; i++) {
    ctx->vt->free(ctx, &ctx->pool[i]);
  }
  if (ctx->vt != NULL && ctx->vt->release != NULL) {
    ctx->vt->release(ctx);
  }
  pthread_mutex_destroy(&ctx->pool_lock);
  pthread_mutex_destroy(&ctx->lock);
  ck__free(ctx);
}

static ck_status ck__parse_index(const char *s, const char *end, uint32_t *out) {
  if (s == end || end - s > 9) {
    return CK_ERR_PARSE;
  }
  uint32_t v = 0;
  for (; s < end; s++) {
    if (*s < '0' || *s > '9') {
      return CK_ERR_PARSE;
    }
    v = v * 10u + (uint32_t)(*s - '0');
  }
  *out = v;
  return CK_OK;
}

ck_status ck_context_new_opencl(uint32_t platform_index, uint32_t device_index,
                                ck_context **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_context *ctx = NULL;
  ck_status st = ck__context_alloc(&ctx);
  if (st != CK_OK) {
    return st;
  }
  ctx->vt = &ck__opencl_backend;
  st = ck__opencl_init(ctx, platform_index, device_index);
  if (st != CK_OK) {
    ctx->vt = NULL; /* nothing to release */
    ck__context_destroy(ctx);
    return st;
  }
  *out = ctx;
  return CK_OK;
}

ck_status ck_context_new_opencl_wrap(void *cl_context, void *cl_device,
                                     void *cl_queue, ck_context **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  if (cl_context == NULL || cl_device == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "cl_context and cl_device must not be NULL");
  }
  ck_context *ctx = NULL;
  ck_status st = ck__context_alloc(&ctx);
  if (st != CK_OK) {
    return st;
  }
  ctx->vt = &ck__opencl_backend;
  st = ck__opencl_init_wrap(ctx, cl_context, cl_device, cl_queue);
  if (st != CK_OK) {
    ctx->vt = NULL; /* nothing to release */
    ck__context_destroy(ctx);
    return st;
  }
  *out = ctx;
  return CK_OK;
}

ck_status ck_context_native_handles(ck_context *ctx, void **context,
                                    void **device, void **queue) {
  if (ctx == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "ctx must not be NULL");
  }
  if (ctx->vt->native == NULL) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "%s contexts have no native handles to give", ctx->vt->kind);
  }
  void *c = NULL, *d = NULL, *q = NULL;
  ctx->vt->native(ctx, &c, &d, &q);
  if (context != NULL) {
    *context = c;
  }
  if (device != NULL) {
    *device = d;
  }
  if (queue != NULL) {
    *queue = q;
  }
  return CK_OK;
}

ck_status ck_context_new_cuda(uint32_t device_ordinal, ck_context **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_context *ctx = NULL;
  ck_status st = ck__context_alloc(&ctx);
  if (st != CK_OK) {
    return st;
  }
  ctx->vt = &ck__cuda_backend;
  st = ck__cuda_init(ctx, device_ordinal);
  if (st != CK_OK) {
    ctx->vt = NULL; /* nothing to release */
    ck__context_destroy(ctx);
    return st;
  }
  *out = ctx;
  return CK_OK;
}

ck_status ck_context_new(const char *kind, ck_context **out) {
  if (kind == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  *out = NULL;
  if (strcmp(kind, "cpu") == 0) {
    ck_context *ctx = NULL;
    ck_status st = ck__context_alloc(&ctx);
    if (st != CK_OK) {
      return st;
    }
    ctx->vt = &ck__cpu_backend;
    ctx->fp64 = true;
    ctx->host_accessible = true;
    *out = ctx;
    return CK_OK;
  }
  if (strcmp(kind, "opencl") == 0) {
    uint32_t p = 0, d = 0;
    const char *env = getenv("CK_OPENCL_DEVICE");
    if (env != NULL && *env != '\0') {
      const char *colon = strchr(env, ':');
      if (colon == NULL || ck__parse_index(env, colon, &p) != CK_OK ||
          ck__parse_index(colon + 1, colon + strlen(colon), &d) != CK_OK) {
        return CK_ERROR(CK_ERR_PARSE,
                        "CK_OPENCL_DEVICE='%s' is not 'platform:device' "
                        "(two decimal indices, e.g. '0:0')", env);
      }
    }
    return ck_context_new_opencl(p, d, out);
  }
  if (strcmp(kind, "cuda") == 0) {
    uint32_t d = 0;
    const char *env = getenv("CK_CUDA_DEVICE");
    if (env != NULL && *env != '\0' &&
        ck__parse_index(env, env + strlen(env), &d) != CK_OK) {
      return CK_ERROR(CK_ERR_PARSE,
                      "CK_CUDA_DEVICE='%s' is not a device ordinal (a decimal "
                      "index, e.g. '0')", env);
    }
    return ck_context_new_cuda(d, out);
  }
  return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                  "unknown context kind '%s' (expected cpu, opencl or cuda)",
                  kind);
}

void ck_context_incref(ck_context *ctx) {
  if (ctx != NULL) {
    atomic_fetch_add_explicit(&ctx->refcount, 1u, memory_order_relaxed);
  }
}

void ck_context_decref(ck_context *ctx) {
  if (ctx != NULL &&
      atomic_fetch_sub_explicit(&ctx->refcount, 1u, memory_order_release) == 1u) {
    atomic_thread_fence(memory_order_acquire);
    ck__context_destroy(ctx);
  }
}

uint32_t ck_context_refcount(const ck_context *ctx) {
  return ctx == NULL ? 0u
                     : atomic_load_explicit(&((ck_context *)(uintptr_t)ctx)->refcount,
                                            memory_order_relaxed);
}

const char *ck_context_kind(const ck_context *ctx) {
  return ctx == NULL ? "" : ctx->vt->kind;
}

bool ck_context_supports_fp64(const ck_context *ctx) {
  return ctx != NULL && ctx->fp64;
}

bool ck_context_host_accessible(const ck_context *ctx) {
  return ctx != NULL && ctx->host_accessible;
}

ck_status ck_context_describe(ck_context *ctx, char *buf, size_t bufsize,
                              size_t *out_len) {
  if (ctx == NULL || (buf == NULL && bufsize != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "bad arguments");
  }
  if (bufsize != 0) {
    buf[0] = '\0';
  }
  size_t pos = 0;
  ck_status st = ctx->vt->describe(ctx, buf, bufsize, &pos);
  if (st == CK_OK && out_len != NULL) {
    *out_len = pos;
  }
  return st;
}

ck_status ck_context_finish(ck_context *ctx) {
  if (ctx == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "ctx must not be NULL");
  }
  return ctx->vt->finish(ctx);
}

/* ---- programs ---------------------------------------------------------- */

static char *ck__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = CK_MALLOC(n);
  if (d != NULL) {
    memcpy(d, s, n);
  }
  return d;
}

ck_status ck_context_build_program(ck_context *ctx, const char *source,
                                   const char *options, ck_program **out) {
  if (ctx == NULL || source == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  *out = NULL;
  if (options == NULL) {
    options = "";
  }
  ck_status st = CK_OK;
  pthread_mutex_lock(&ctx->lock);
  ck_program *p = ctx->cache;
  while (p != NULL &&
         (strcmp(p->source, source) != 0 || strcmp(p->options, options) != 0)) {
    p = p->next;
  }
  if (p == NULL) {
    p = CK_CALLOC(1, sizeof *p);
    if (p == NULL) {
      st = CK_ERR_NO_MEMORY;
      goto done;
    }
    p->source = ck__strdup(source);
    p->options = ck__strdup(options);
    if (p->source == NULL || p->options == NULL) {
      st = CK_ERR_NO_MEMORY;
    } else {
      st = ctx->vt->build_program(ctx, source, options, &p->native);
    }
    if (st != CK_OK) {
      ck__free(p->source);
      ck__free(p->options);
      ck__free(p);
      goto done;
    }
    atomic_init(&p->refcount, 1u); /* the cache's reference */
    p->ctx = ctx;
    p->next = ctx->cache;
    ctx->cache = p;
  }
  atomic_fetch_add_explicit(&p->refcount, 1u, memory_order_relaxed);
  ck_context_incref(ctx);
  *out = p;
done:
  pthread_mutex_unlock(&ctx->lock);
  return st;
}

void ck_program_incref(ck_program *program) {
  if (program != NULL) {
    atomic_fetch_add_explicit(&program->refcount, 1u, memory_order_relaxed);
    ck_context_incref(program->ctx);
  }
}

void ck_program_decref(ck_program *program) {
  if (program != NULL) {
    /* Never reaches zero here: the cache holds a reference until the
     * context dies, and the context cannot die before this call's own
     * context reference is dropped below. */
    ck_context *ctx = program->ctx;
    atomic_fetch_sub_explicit(&program->refcount, 1u, memory_order_release);
    ck_context_decref(ctx);
  }
}

ck_context *ck_program_context(const ck_program *program) {
  return program == NULL ? NULL : program->ctx;
}

const char *ck_program_source(const ck_program *program) {
  return program == NULL ? NULL : program->source;
}

const char *ck_program_options(const ck_program *program) {
  return program == NULL ? NULL : program->options;
}

ck_status ck_program_build_log(ck_program *program, char *buf, size_t bufsize,
                               size_t *out_len) {
  if (program == NULL || (buf == NULL && bufsize != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL program or buffer");
  }
  if (bufsize > 0) {
    buf[0] = '\0';
  }
  size_t pos = 0;
  ck_status st = CK_OK;
  ck_context *ctx = program->ctx;
  if (ctx->vt->build_log != NULL) {
    pthread_mutex_lock(&ctx->lock);
    st = ctx->vt->build_log(ctx, program->native, buf, bufsize, &pos);
    pthread_mutex_unlock(&ctx->lock);
  }
  if (out_len != NULL) {
    *out_len = pos;
  }
  return st;
}

static ck_status ck__check_launch(ck_context *ctx, ck_program *program,
                                  const char *kernel_name, size_t nargs,
                                  const ck_kernel_arg *args) {
  if (ctx == NULL || program == NULL || kernel_name == NULL ||
      (nargs != 0 && args == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  if (program->ctx != ctx) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "program belongs to a different context");
  }
  for (size_t i = 0; i < nargs; i++) {
    if (args[i].kind == CK_KERNEL_ARG_BUFFER) {
      if (args[i].buffer == NULL) {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "argument %zu: NULL buffer", i);
      }
      if (ck__buffer_ctx(args[i].buffer) != ctx) {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                        "argument %zu: buffer belongs to a different context", i);
      }
      if (args[i].offset >= ck__buffer_size(args[i].buffer) &&
          args[i].offset != 0) {
        return CK_ERROR(CK_ERR_INDEX,
                        "argument %zu: offset %zu outside the buffer's "
                        "capacity %zu", i, args[i].offset,
                        ck__buffer_size(args[i].buffer));
      }
    } else if (args[i].kind == CK_KERNEL_ARG_SCALAR) {
      if (args[i].value == NULL || args[i].size == 0) {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                        "argument %zu: scalar without value or size", i);
      }
    } else {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "argument %zu: bad kind %u", i,
                      (unsigned)args[i].kind);
    }
  }
  return CK_OK;
}

ck_status ck_context_launch(ck_context *ctx, ck_program *program,
                            const char *kernel_name, size_t nargs,
                            const ck_kernel_arg *args, size_t global_size) {
  return ck_context_launch_local(ctx, program, kernel_name, nargs, args,
                                 global_size, 0);
}

/* The kernel object of `kernel_name` in `program`, made on first use
 * (ctx->lock held). */
static ck_status ck__program_kernel_of(ck_context *ctx, ck_program *program,
                                       const char *kernel_name,
                                       ck__program_kernel **out) {
  ck__program_kernel *k = program->kernels;
  while (k != NULL && strcmp(k->name, kernel_name) != 0) {
    k = k->next;
  }
  if (k == NULL) {
    k = CK_CALLOC(1, sizeof *k);
    char *name = k != NULL ? ck__strdup(kernel_name) : NULL;
    if (name == NULL) {
      ck__free(k);
      return CK_ERR_NO_MEMORY;
    }
    ck_status st =
        ctx->vt->kernel_create(ctx, program->native, kernel_name, &k->kernel);
    if (st != CK_OK) {
      ck__free(name);
      ck__free(k);
      return st;
    }
    k->name = name;
    k->next = program->kernels;
    program->kernels = k;
  }
  *out = k;
  return CK_OK;
}

static ck_status ck__launch_locked(ck_context *ctx, ck__program_kernel *k,
                                   const char *kernel_name, size_t nargs,
                                   const ck_kernel_arg *args, size_t global_size,
                                   size_t local_size) {
  if (local_size != 0 && ctx->vt->launch_local != NULL) {
    return ctx->vt->launch_local(ctx, k->kernel, kernel_name, nargs, args,
                                 global_size, local_size);
  }
  return ctx->vt->launch(ctx, k->kernel, kernel_name, nargs, args, global_size);
}

ck_status ck_context_launch_local(ck_context *ctx, ck_program *program,
                                  const char *kernel_name, size_t nargs,
                                  const ck_kernel_arg *args, size_t global_size,
                                  size_t local_size) {
  ck_status st = ck__check_launch(ctx, program, kernel_name, nargs, args);
  if (st != CK_OK) {
    return st;
  }
  pthread_mutex_lock(&ctx->lock);
  ck__program_kernel *k = NULL;
  st = ck__program_kernel_of(ctx, program, kernel_name, &k);
  if (st == CK_OK) {
    st = ck__launch_locked(ctx, k, kernel_name, nargs, args, global_size,
                           local_size);
  }
  pthread_mutex_unlock(&ctx->lock);
  return st;
}

ck_status ck_context_launch_read(ck_context *ctx, ck_program *program,
                                 const char *kernel_name, size_t nargs,
                                 const ck_kernel_arg *args, size_t global_size,
                                 size_t local_size, ck_buffer *buffer,
                                 size_t offset, void *host_dst, size_t n) {
  ck_status st = ck__check_launch(ctx, program, kernel_name, nargs, args);
  if (st != CK_OK) {
    return st;
  }
  if (buffer == NULL || (host_dst == NULL && n != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "the buffer to read and the destination must not be NULL");
  }
  if (ck__buffer_ctx(buffer) != ctx) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "the buffer to read belongs to a different context");
  }
  size_t cap = ck__buffer_size(buffer);
  if (offset > cap || n > cap - offset) {
    return CK_ERROR(CK_ERR_INDEX,
                    "read of %zu bytes at offset %zu outside the buffer's "
                    "capacity %zu", n, offset, cap);
  }
  pthread_mutex_lock(&ctx->lock);
  ck__program_kernel *k = NULL;
  st = ck__program_kernel_of(ctx, program, kernel_name, &k);
  if (st == CK_OK && ctx->vt->launch_read != NULL) {
    st = ctx->vt->launch_read(ctx, k->kernel, kernel_name, nargs, args,
                              global_size, local_size, ck__buffer_devmem(buffer),
                              offset, host_dst, n);
  } else if (st == CK_OK) {
    st = ck__launch_locked(ctx, k, kernel_name, nargs, args, global_size,
                           local_size);
    if (st == CK_OK && n != 0) {
      st = ctx->vt->copy_d2h(ctx, host_dst, ck__buffer_devmem(buffer), offset, n);
    }
  }
  pthread_mutex_unlock(&ctx->lock);
  return st;
}

/* ---- device ckernels --------------------------------------------------- */

typedef struct ck__device_kernel {
  ck_prefix base;
  ck_context *ctx;
  ck_program *program;
  void *kernel;
  size_t nsrc;
  size_t count;
  intptr_t dst_stride;
  intptr_t src_strides[CK_DEVICE_KERNEL_MAX_SRC];
  char name[64];
} ck__device_kernel;

static void ck__device_kernel_destruct(ck_prefix *self) {
  ck__device_kernel *k = (ck__device_kernel *)(void *)self;
  if (k->kernel != NULL) {
    k->ctx->vt->kernel_release(k->ctx, k->kernel);
    k->kernel = NULL;
  }
  ck_program_decref(k->program); /* drops its context reference */
  k->program = NULL;
  ck_context_decref(k->ctx);
  k->ctx = NULL;
}

static int ck__device_kernel_single(char *dst, const char *const *src,
                                    ck_prefix *self) {
  ck__device_kernel *k = (ck__device_kernel *)(void *)self;
  enum { MAXARGS = 3 * (1 + CK_DEVICE_KERNEL_MAX_SRC) + 1 };
  ck_kernel_arg args[MAXARGS];
  uint64_t offs[1 + CK_DEVICE_KERNEL_MAX_SRC];
  int64_t strides[1 + CK_DEVICE_KERNEL_MAX_SRC];
  uint64_t count = k->count;
  size_t na = 0;
  memset(args, 0, sizeof args);
  for (size_t j = 0; j <= k->nsrc; j++) {
    const ck_device_ptr *p =
        (const ck_device_ptr *)(const void *)(j == 0 ? dst : src[j - 1]);
    if (p == NULL || p->buffer == NULL) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "operand %zu is not a ck_device_ptr with a buffer", j);
    }
    if (ck__buffer_ctx(p->buffer) != k->ctx) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "operand %zu: buffer belongs to a different context", j);
    }
    if (p->offset > ck__buffer_size(p->buffer)) {
      return CK_ERROR(CK_ERR_INDEX,
                      "operand %zu: offset %zu outside the buffer's capacity %zu",
                      j, p->offset, ck__buffer_size(p->buffer));
    }
    offs[j] = p->offset;
    strides[j] = j == 0 ? k->dst_stride : k->src_strides[j - 1];
    args[na].kind = CK_KERNEL_ARG_BUFFER;
    args[na++].buffer = p->buffer;
    args[na].kind = CK_KERNEL_ARG_SCALAR;
    args[na].value = &offs[j];
    args[na++].size = sizeof offs[j];
    args[na].kind = CK_KERNEL_ARG_SCALAR;
    args[na].value = &strides[j];
    args[na++].size = sizeof strides[j];
  }
  args[na].kind = CK_KERNEL_ARG_SCALAR;
  args[na].value = &count;
  args[na++].size = sizeof count;
  pthread_mutex_lock(&k->ctx->lock);
  ck_status st =
      k->ctx->vt->launch(k->ctx, k->kernel, k->name, na, args, k->count);
  pthread_mutex_unlock(&k->ctx->lock);
  return st;
}

static size_t ck__device_kernel_fields(const ck_prefix *self, const ck_kernel_info *info,
                                       ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__device_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  ck__field(&f, "name", -1, CK_KERNEL_FIELD_TEXT, (intptr_t)offsetof(K, name), 0, NULL,
            k->name);
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_POINTER, K, k, ctx);
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_POINTER, K, k, program);
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_POINTER, K, k, kernel);
  CK__FIELD_INT(&f, K, k, count);
  CK__FIELD_INT(&f, K, k, nsrc);
  CK__FIELD_INT(&f, K, k, dst_stride);
  for (size_t j = 0; j < k->nsrc && j < CK_DEVICE_KERNEL_MAX_SRC; j++) {
    ck__field(&f, "src_strides", (int32_t)j, CK_KERNEL_FIELD_INT,
              (intptr_t)(offsetof(K, src_strides) + j * sizeof(intptr_t)),
              (int64_t)k->src_strides[j], NULL, NULL);
  }
  return f.n;
}

static const ck_kernel_info ck__device_kernel_info = {
    "device_kernel", ck__device_kernel_single, NULL, sizeof(ck__device_kernel), NULL};

ck_status ck_make_device_kernel(ck_kernel_builder *ckb, size_t offset,
                                ck_kernel_request req, ck_context *ctx,
                                ck_program *program, const char *kernel_name,
                                size_t nsrc, size_t count, intptr_t dst_stride,
                                const intptr_t *src_strides, size_t *out_end) {
  if (ckb == NULL || ctx == NULL || program == NULL || kernel_name == NULL ||
      (nsrc != 0 && src_strides == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  if (req != CK_KERNEL_REQUEST_SINGLE) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "device kernels support CK_KERNEL_REQUEST_SINGLE only "
                    "(one call launches the whole range)");
  }
  if (nsrc > CK_DEVICE_KERNEL_MAX_SRC) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "nsrc %zu exceeds %d", nsrc,
                    CK_DEVICE_KERNEL_MAX_SRC);
  }
  if (program->ctx != ctx) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "program belongs to a different context");
  }
  if (strlen(kernel_name) >= sizeof(((ck__device_kernel *)0)->name)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "kernel name '%.40s...' too long",
                    kernel_name);
  }
  size_t end = offset + sizeof(ck__device_kernel);
  if (end < offset) {
    return CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu too large", offset);
  }
  ck_status st = ck__check_kernel_slot(__func__, ckb, offset);
  if (st != CK_OK) {
    return st;
  }
  st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  if (st != CK_OK) {
    return st;
  }
  ck__kernel_info_register_decoded(&ck__device_kernel_info, 1, ck__device_kernel_fields);
  ck__device_kernel *k = (ck__device_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__device_kernel_destruct;
  ck_context_incref(ctx);
  k->ctx = ctx;
  ck_program_incref(program);
  k->program = program;
  k->nsrc = nsrc;
  k->count = count;
  k->dst_stride = dst_stride;
  for (size_t j = 0; j < nsrc; j++) {
    k->src_strides[j] = src_strides[j];
  }
  strcpy(k->name, kernel_name);
  pthread_mutex_lock(&ctx->lock);
  st = ctx->vt->kernel_create(ctx, program->native, kernel_name, &k->kernel);
  pthread_mutex_unlock(&ctx->lock);
  if (st != CK_OK) {
    return st; /* the builder's destructor releases what was taken */
  }
  (void)ck_prefix_set_function(&k->base, req, ck__device_kernel_single, NULL);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}
