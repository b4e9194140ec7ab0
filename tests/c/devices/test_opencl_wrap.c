/* Zero-copy OpenCL interop on whatever device the ICD loader offers (PoCL in
 * CI): ck_context_new_opencl_wrap over another party's cl_context, device
 * and queue; ck_buffer_wrap over another party's cl_mem; handing a buffer's
 * cl_mem out (ck_buffer_native_handle + clRetainMemObject) and the
 * lifetimes of both sides.  The "other party" is plain OpenCL through the
 * library's own loader table, as pyopencl would be.
 * Exits 77 (ctest: Skipped) when no OpenCL platform is available, or under
 * valgrind (CK_UNDER_VALGRIND): PoCL's own allocations drown the report. */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"
#include "devices/opencl_loader_internal.h"
#include "ckernel/buffer.h"
#include "ckernel/context.h"

#include <stdlib.h>
#include <string.h>

static const char *SRC =
    "__kernel void scale(__global char *buf, ulong off, float a, ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) ((__global float *)(buf + off))[i] *= a;\n"
    "}\n";

/* A cl_context, device and in-order queue made directly with OpenCL: the
 * foreign side. */
typedef struct foreign {
  const ck_cl_api *cl;
  ck_cl_device_id dev;
  ck_cl_context ctx;
  ck_cl_command_queue q;
} foreign;

static bool foreign_new(foreign *f) {
  memset(f, 0, sizeof *f);
  f->cl = ck__opencl_api();
  if (f->cl == NULL) {
    return false;
  }
  ck_cl_platform_id plat = NULL;
  ck_cl_uint np = 0;
  if (f->cl->clGetPlatformIDs(1, &plat, &np) != CK_CL_SUCCESS || np == 0 ||
      f->cl->clGetDeviceIDs(plat, CK_CL_DEVICE_TYPE_ALL, 1, &f->dev, NULL) !=
          CK_CL_SUCCESS) {
    return false;
  }
  ck_cl_int err = 0;
  f->ctx = f->cl->clCreateContext(NULL, 1, &f->dev, NULL, NULL, &err);
  if (f->ctx == NULL) {
    return false;
  }
  f->q = f->cl->clCreateCommandQueue(f->ctx, f->dev, 0, &err);
  return f->q != NULL;
}

static void foreign_release(foreign *f) {
  if (f->q != NULL) {
    f->cl->clReleaseCommandQueue(f->q);
  }
  if (f->ctx != NULL) {
    f->cl->clReleaseContext(f->ctx);
  }
}

static ck_cl_mem foreign_buffer(foreign *f, const float *init, size_t n) {
  ck_cl_int err = 0;
  ck_cl_mem m = f->cl->clCreateBuffer(f->ctx, CK_CL_MEM_READ_WRITE, n * sizeof(float),
                                      NULL, &err);
  if (m != NULL && init != NULL) {
    f->cl->clEnqueueWriteBuffer(f->q, m, CK_CL_TRUE, 0, n * sizeof(float), init, 0,
                                NULL, NULL);
  }
  return m;
}

static int g_released;
static void count_release(void *arg) {
  *(int *)arg += 1;
}

/* The arguments of `scale`: (buf, *off, *a, *n), pointing at the caller's values. */
static void scale_args(ck_kernel_arg args[4], ck_buffer *buf, const uint64_t *off,
                       const float *a, const uint64_t *n) {
  memset(args, 0, 4 * sizeof *args);
  args[0].kind = CK_KERNEL_ARG_BUFFER;
  args[0].buffer = buf;
  args[1].kind = CK_KERNEL_ARG_SCALAR;
  args[1].value = off;
  args[1].size = sizeof *off;
  args[2].kind = CK_KERNEL_ARG_SCALAR;
  args[2].value = a;
  args[2].size = sizeof *a;
  args[3].kind = CK_KERNEL_ARG_SCALAR;
  args[3].value = n;
  args[3].size = sizeof *n;
}

/* Run `scale` on (buf, off) through ctx. */
static ck_status scale(ck_context *ctx, ck_buffer *buf, uint64_t off, float a,
                       uint64_t n) {
  ck_program *p = NULL;
  ck_status st = ck_context_build_program(ctx, SRC, NULL, &p);
  if (st != CK_OK) {
    return st;
  }
  ck_kernel_arg args[4];
  scale_args(args, buf, &off, &a, &n);
  st = ck_context_launch(ctx, p, "scale", 4, args, (size_t)n);
  ck_program_decref(p);
  return st;
}

/* A context over a foreign cl_context and queue; buffers over foreign cl_mem:
 * a write on either side is read on the other; the foreign objects may be
 * released first. */
static void test_wrap_context_and_buffer(void) {
  foreign f;
  REQUIRE(foreign_new(&f));
  ck_context *ctx = NULL;
  REQUIRE_OK(ck_context_new_opencl_wrap(f.ctx, f.dev, f.q, &ctx));
  CHECK(strcmp(ck_context_kind(ctx), "opencl") == 0);
  char desc[512];
  CHECK_OK(ck_context_describe(ctx, desc, sizeof desc, NULL));
  CHECK(strstr(desc, "wrapped cl_context") != NULL);
  void *hc = NULL, *hd = NULL, *hq = NULL;
  CHECK_OK(ck_context_native_handles(ctx, &hc, &hd, &hq));
  CHECK(hc == (void *)f.ctx && hd == (void *)f.dev && hq == (void *)f.q);
  CHECK_OK(ck_context_native_handles(ctx, NULL, NULL, NULL));

  float init[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ck_cl_mem m = foreign_buffer(&f, init, 8);
  REQUIRE(m != NULL);
  ck_buffer *buf = NULL;
  g_released = 0;
  REQUIRE_OK(ck_buffer_wrap(ctx, m, 8 * sizeof(float), count_release, &g_released,
                            &buf));
  CHECK(ck_buffer_native_handle(buf) == (void *)m);
  CHECK(ck_buffer_capacity(buf) == 8 * sizeof(float));
  /* foreign write -> library read */
  float got[8];
  CHECK_OK(ck_buffer_read(buf, 0, got, sizeof got));
  CHECK(memcmp(got, init, sizeof got) == 0);
  /* library kernel on the foreign memory -> foreign read */
  CHECK_OK(scale(ctx, buf, 2 * sizeof(float), 10.0f, 4));
  float back[8];
  CHECK(f.cl->clEnqueueReadBuffer(f.q, m, CK_CL_TRUE, 0, sizeof back, back, 0, NULL,
                                  NULL) == CK_CL_SUCCESS);
  CHECK(back[0] == 1 && back[1] == 2 && back[2] == 30 && back[5] == 60 &&
        back[6] == 7 && back[7] == 8);
  /* library write -> foreign read */
  float nine = 9.0f;
  CHECK_OK(ck_buffer_write(buf, 7 * sizeof(float), &nine, sizeof nine));
  CHECK(f.cl->clEnqueueReadBuffer(f.q, m, CK_CL_TRUE, 0, sizeof back, back, 0, NULL,
                                  NULL) == CK_CL_SUCCESS);
  CHECK(back[7] == 9.0f);
  /* growth of a wrapped buffer is refused */
  CHECK_ERR(ck_buffer_grow(buf, 1024), CK_ERR_NOT_SUPPORTED, "cannot grow");

  /* the foreign side lets go first: the buffer retained the cl_mem and the
   * context retained the cl_context and queue */
  f.cl->clReleaseMemObject(m);
  foreign_release(&f);
  CHECK_OK(scale(ctx, buf, 0, 2.0f, 8));
  CHECK_OK(ck_buffer_read(buf, 0, got, sizeof got));
  CHECK(got[0] == 2 && got[2] == 60 && got[7] == 18);
  CHECK(g_released == 0);
  ck_buffer_decref(buf);
  CHECK(g_released == 1); /* the release callback ran once */
  ck_context_decref(ctx);
}

/* A queue made by the library when none is given. */
static void test_wrap_without_queue(void) {
  foreign f;
  REQUIRE(foreign_new(&f));
  ck_context *ctx = NULL;
  REQUIRE_OK(ck_context_new_opencl_wrap(f.ctx, f.dev, NULL, &ctx));
  void *hq = NULL;
  CHECK_OK(ck_context_native_handles(ctx, NULL, NULL, &hq));
  CHECK(hq != NULL && hq != (void *)f.q);
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 16, &b));
  float v[4] = {1, 2, 3, 4};
  CHECK_OK(ck_buffer_write(b, 0, v, sizeof v));
  CHECK_OK(scale(ctx, b, 0, 3.0f, 4));
  /* the library's cl_mem read by the foreign side (same cl_context) */
  float back[4];
  CHECK(f.cl->clEnqueueReadBuffer(f.q, (ck_cl_mem)ck_buffer_native_handle(b), CK_CL_TRUE,
                                  0, sizeof back, back, 0, NULL, NULL) == CK_CL_SUCCESS);
  CHECK(back[0] == 3 && back[3] == 12);
  ck_buffer_decref(b);
  foreign_release(&f);
  ck_context_decref(ctx);
}

/* A cl_mem handed out and retained outlives its buffer: the host memory
 * behind CL_MEM_USE_HOST_PTR (CPU devices) is freed by the cl_mem's
 * destructor callback, not by the buffer (ASan checks the reads). */
static void test_handed_out_cl_mem_outlives_buffer(void) {
  ck_context *ctx = NULL;
  REQUIRE_OK(ck_context_new("opencl", &ctx));
  const ck_cl_api *cl = ck__opencl_api();
  void *q = NULL;
  REQUIRE_OK(ck_context_native_handles(ctx, NULL, NULL, &q));
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 4096, &b));
  int32_t v[1024];
  for (int i = 0; i < 1024; i++) {
    v[i] = i * 7;
  }
  CHECK_OK(ck_buffer_write(b, 0, v, sizeof v));
  ck_cl_mem m = (ck_cl_mem)ck_buffer_native_handle(b);
  REQUIRE(cl->clRetainMemObject(m) == CK_CL_SUCCESS);
  ck_buffer_decref(b); /* the library lets go first */
  /* churn the allocator a little so freed memory would be reused */
  for (int i = 0; i < 8; i++) {
    ck_buffer *t = NULL;
    CHECK_OK(ck_buffer_new(ctx, 4096, &t));
    CHECK_OK(ck_buffer_fill(t, 0, "\xff\xff\xff\xff", 4, 4096));
    ck_buffer_decref(t);
  }
  int32_t back[1024];
  memset(back, 0, sizeof back);
  CHECK(cl->clEnqueueReadBuffer((ck_cl_command_queue)q, m, CK_CL_TRUE, 0, sizeof back,
                                back, 0, NULL, NULL) == CK_CL_SUCCESS);
  CHECK(memcmp(back, v, sizeof v) == 0);
  cl->clReleaseMemObject(m); /* frees the host memory now */
  ck_context_decref(ctx);
}

static void test_wrap_errors(void) {
  foreign f, g;
  REQUIRE(foreign_new(&f));
  REQUIRE(foreign_new(&g));
  ck_context *ctx = NULL;
  CHECK_ERR(ck_context_new_opencl_wrap(f.ctx, f.dev, f.q, NULL), CK_ERR_INVALID_ARGUMENT,
            "out must not be NULL");
  CHECK_ERR(ck_context_new_opencl_wrap(NULL, f.dev, f.q, &ctx), CK_ERR_INVALID_ARGUMENT,
            "must not be NULL");
  CHECK(ctx == NULL);
  CHECK_ERR(ck_context_new_opencl_wrap(f.ctx, NULL, f.q, &ctx), CK_ERR_INVALID_ARGUMENT,
            "must not be NULL");
  /* a queue of another cl_context */
  CHECK_ERR(ck_context_new_opencl_wrap(f.ctx, f.dev, g.q, &ctx), CK_ERR_INVALID_ARGUMENT,
            "belongs to another context");
  CHECK(ctx == NULL);

  REQUIRE_OK(ck_context_new_opencl_wrap(f.ctx, f.dev, f.q, &ctx));
  ck_cl_mem other = foreign_buffer(&g, NULL, 16);
  ck_cl_mem mine = foreign_buffer(&f, NULL, 16);
  REQUIRE(other != NULL && mine != NULL);
  ck_buffer *b = NULL;
  g_released = 0;
  /* a cl_mem of another cl_context */
  CHECK_ERR(ck_buffer_wrap(ctx, other, 64, count_release, &g_released, &b),
            CK_ERR_INVALID_ARGUMENT, "belongs to another cl_context");
  CHECK(b == NULL);
  /* more bytes than the cl_mem has */
  CHECK_ERR(ck_buffer_wrap(ctx, mine, 65, count_release, &g_released, &b), CK_ERR_INDEX,
            "exceeds the cl_mem's size 64");
  CHECK(g_released == 0); /* failed wraps do not release */
  /* a sub-buffer */
  ck_cl_buffer_region region = {0, 32};
  ck_cl_int err = 0;
  ck_cl_mem sub = f.cl->clCreateSubBuffer(mine, CK_CL_MEM_READ_WRITE,
                                          CK_CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  REQUIRE(sub != NULL);
  CHECK_ERR(ck_buffer_wrap(ctx, sub, 32, NULL, NULL, &b), CK_ERR_NOT_SUPPORTED,
            "sub-buffer");
  /* a prefix of the memory is fine */
  REQUIRE_OK(ck_buffer_wrap(ctx, mine, 16, NULL, NULL, &b));
  CHECK(ck_buffer_capacity(b) == 16);
  ck_buffer_decref(b);
  f.cl->clReleaseMemObject(sub);
  f.cl->clReleaseMemObject(mine);
  f.cl->clReleaseMemObject(other);
  ck_context_decref(ctx);

  /* a "cpu" context has no native handles */
  ck_context *cpu = NULL;
  REQUIRE_OK(ck_context_new("cpu", &cpu));
  CHECK_ERR(ck_context_native_handles(cpu, NULL, NULL, NULL), CK_ERR_NOT_SUPPORTED,
            "cpu contexts have no native handles");
  ck_context_decref(cpu);
  CHECK_ERR(ck_context_native_handles(NULL, NULL, NULL, NULL), CK_ERR_INVALID_ARGUMENT,
            "ctx must not be NULL");
  foreign_release(&f);
  foreign_release(&g);
}

/* Two library contexts over one cl_context share buffers both ways. */
static void test_two_contexts_one_cl_context(void) {
  ck_context *a = NULL;
  REQUIRE_OK(ck_context_new("opencl", &a));
  void *hc = NULL, *hd = NULL;
  REQUIRE_OK(ck_context_native_handles(a, &hc, &hd, NULL));
  ck_context *b = NULL;
  REQUIRE_OK(ck_context_new_opencl_wrap(hc, hd, NULL, &b));
  ck_buffer *ba = NULL, *bb = NULL;
  REQUIRE_OK(ck_buffer_new(a, 32, &ba));
  float v[8] = {1, 1, 1, 1, 2, 2, 2, 2};
  CHECK_OK(ck_buffer_write(ba, 0, v, sizeof v));
  REQUIRE_OK(ck_buffer_wrap(b, ck_buffer_native_handle(ba), 32, NULL, NULL, &bb));
  ck_buffer_decref(ba);
  ck_context_decref(a); /* b keeps the cl_context; bb keeps the cl_mem */
  CHECK_OK(scale(b, bb, 0, 5.0f, 8));
  float got[8];
  CHECK_OK(ck_buffer_read(bb, 0, got, sizeof got));
  CHECK(got[0] == 5 && got[7] == 10);
  ck_buffer_decref(bb);
  ck_context_decref(b);
}

/* Launches reuse the kernel object (one per program and name). */
static void test_repeated_launches(void) {
  ck_context *ctx = NULL;
  REQUIRE_OK(ck_context_new("opencl", &ctx));
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 16, &b));
  float v[4] = {1, 1, 1, 1};
  CHECK_OK(ck_buffer_write(b, 0, v, sizeof v));
  for (int i = 0; i < 20; i++) {
    CHECK_OK(scale(ctx, b, 0, 2.0f, 4));
  }
  float got[4];
  CHECK_OK(ck_buffer_read(b, 0, got, sizeof got));
  CHECK(got[0] == 1048576.0f && got[3] == 1048576.0f);
  ck_buffer_decref(b);
  ck_context_decref(ctx);
}

/* Launches with a work-group size: the global size is rounded up to whole
 * groups (the kernel guards its index), a size above the device's maximum
 * is clamped, 0 is the implementation's choice. */
static void test_launch_local(void) {
  ck_context *ctx = NULL;
  REQUIRE_OK(ck_context_new("opencl", &ctx));
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 64 * sizeof(float), &b));
  float v[64];
  for (int i = 0; i < 64; i++) {
    v[i] = 1.0f;
  }
  size_t locals[4] = {4, 64, (size_t)1 << 40, 0};
  for (int t = 0; t < 4; t++) {
    CHECK_OK(ck_buffer_write(b, 0, v, sizeof v));
    uint64_t off = 0, n = 37;
    float a = 3.0f;
    ck_kernel_arg args[4];
    scale_args(args, b, &off, &a, &n);
    CHECK_OK(ck_context_launch_local(ctx, p, "scale", 4, args, 37, locals[t]));
    float got[64];
    CHECK_OK(ck_buffer_read(b, 0, got, sizeof got));
    CHECK(got[0] == 3.0f && got[36] == 3.0f && got[37] == 1.0f && got[63] == 1.0f);
  }
  ck_buffer_decref(b);
  ck_program_decref(p);
  ck_context_decref(ctx);
}

/* ck_context_launch_read: the bytes read are those the kernel wrote (one
 * wait for both), a range of 0 items still reads, a read outside the
 * buffer or of another context's buffer is refused before launching. */
static void test_launch_read(void) {
  ck_context *ctx = NULL, *other = NULL;
  REQUIRE_OK(ck_context_new("opencl", &ctx));
  REQUIRE_OK(ck_context_new("opencl", &other));
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  ck_buffer *b = NULL, *ob = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 8 * sizeof(float), &b));
  REQUIRE_OK(ck_buffer_new(other, 16, &ob));
  float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK_OK(ck_buffer_write(b, 0, v, sizeof v));
  uint64_t off = 0, n = 8;
  float a = 2.0f;
  ck_kernel_arg args[4];
  scale_args(args, b, &off, &a, &n);
  float got[2] = {0, 0};
  CHECK_OK(ck_context_launch_read(ctx, p, "scale", 4, args, 8, 4, b, 6 * sizeof(float),
                                  got, sizeof got));
  CHECK(got[0] == 14.0f && got[1] == 16.0f);
  CHECK_OK(ck_context_launch_read(ctx, p, "scale", 4, args, 0, 4, b, 0, got, sizeof got));
  CHECK(got[0] == 2.0f && got[1] == 4.0f); /* nothing launched, still read */
  CHECK_ERR(ck_context_launch_read(ctx, p, "scale", 4, args, 8, 4, b, 7 * sizeof(float),
                                   got, sizeof got), CK_ERR_INDEX, "outside the buffer");
  CHECK_ERR(ck_context_launch_read(ctx, p, "scale", 4, args, 8, 4, ob, 0, got, 4),
            CK_ERR_INVALID_ARGUMENT, "different context");
  CHECK_ERR(ck_context_launch_read(ctx, p, "scale", 4, args, 8, 4, NULL, 0, got, 4),
            CK_ERR_INVALID_ARGUMENT, "must not be NULL");
  float all[8];
  CHECK_OK(ck_buffer_read(b, 0, all, sizeof all)); /* refused calls launched nothing */
  CHECK(all[0] == 2.0f && all[7] == 16.0f);
  ck_buffer_decref(ob);
  ck_buffer_decref(b);
  ck_program_decref(p);
  ck_context_decref(other);
  ck_context_decref(ctx);
}

/* The memory of a dead buffer of at most 1 MiB goes to the next buffer of
 * its size in the same context (not to another size); the context frees
 * what it kept when it dies (the sanitizers and valgrind check). */
static void test_buffer_pool(void) {
  ck_context *ctx = NULL;
  REQUIRE_OK(ck_context_new("opencl", &ctx));
  ck_buffer *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 4096, &a));
  void *ha = ck_buffer_native_handle(a);
  float v[4] = {1, 2, 3, 4};
  CHECK_OK(ck_buffer_write(a, 0, v, sizeof v));
  ck_buffer_decref(a);
  REQUIRE_OK(ck_buffer_new(ctx, 2048, &c)); /* another size: fresh memory */
  CHECK(ck_buffer_native_handle(c) != ha);
  REQUIRE_OK(ck_buffer_new(ctx, 4096, &b)); /* the same size: a's memory */
  CHECK(ck_buffer_native_handle(b) == ha);
  size_t off = 1;
  CHECK_OK(ck_buffer_allocate(b, 4096, 8, &off)); /* a new buffer's bookkeeping */
  CHECK(off == 0 && ck_buffer_used(b) == 4096);
  REQUIRE_OK(ck_buffer_new(ctx, 4096, &d)); /* the pool is empty again */
  CHECK(ck_buffer_native_handle(d) != ha);
  ck_buffer_decref(b);
  ck_buffer_decref(c);
  ck_buffer_decref(d);
  ck_context_decref(ctx); /* frees the three kept allocations */
}

#define main ck_test_main_
CK_TEST_MAIN(CK_TEST(test_wrap_context_and_buffer), CK_TEST(test_wrap_without_queue),
             CK_TEST(test_handed_out_cl_mem_outlives_buffer), CK_TEST(test_wrap_errors),
             CK_TEST(test_two_contexts_one_cl_context), CK_TEST(test_repeated_launches),
             CK_TEST(test_launch_local), CK_TEST(test_launch_read),
             CK_TEST(test_buffer_pool))
#undef main

int main(int argc, char **argv) {
  if (getenv("CK_UNDER_VALGRIND") != NULL) {
    printf("SKIP: not run under valgrind (PoCL/LLVM internals are noisy)\n");
    return 77;
  }
  ck_context *ctx = NULL;
  if (ck_context_new("opencl", &ctx) != CK_OK) {
    printf("SKIP: no OpenCL device: %s\n", ck_last_error());
    return 77;
  }
  ck_context_decref(ctx);
  return ck_test_main_(argc, argv);
}
