/*
 * cuda_host_shim.h -- TEST ONLY.  Lets the CUDA C that ckernels.jit emits be
 * compiled as ordinary C++ for the host and run there, so that its semantics
 * can be compared with the CPU jit on machines without a GPU
 * (tests/python/jit/test_cuda_codegen.py).  It is not part of the library.
 *
 * What it maps:
 *   - __global__, __device__, __constant__, __host__, __forceinline__, __launch_bounds__(n):
 *     plain C++ (no qualifiers);
 *   - blockIdx, threadIdx, blockDim, gridDim: globals set by ck_shim_grid,
 *     which runs the launch geometry of ck_context_launch (ceil(n / block)
 *     blocks of `block` threads, one after the other) -- the kernel's own
 *     `if (i >= n) return;` guard is exercised by the last, partial block;
 *   - atomicCAS on int: a compare-and-swap (the threads run one at a time);
 *   - atomicAdd on unsigned long long: an add giving the old value;
 *   - __int_as_float / __longlong_as_double / __double_as_longlong: bit
 *     casts; __umul64hi: the high half of a 128-bit product;
 *   - device math (sin/sinf, floor/floorf, isnan, rint/rintf, ...): the C
 *     library's functions of the same names from <math.h> (C++ overloads
 *     isnan/isinf/isfinite on float and double, as CUDA does).
 * What it cannot check: the GPU's own math library (CUDA's sin and friends
 * have documented ulp bounds, tested on a GPU by `make test-gpu`), memory
 * model and timing.
 */
#ifndef CK_CUDA_HOST_SHIM_H
#define CK_CUDA_HOST_SHIM_H

#ifndef __cplusplus
#error "cuda_host_shim.h is C++ (CUDA C is C++)"
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#define __global__
#define __device__
#define __constant__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct ck_shim_uint3 {
  unsigned int x, y, z;
};

static ck_shim_uint3 blockIdx, threadIdx, blockDim, gridDim;

static inline int atomicCAS(int *address, int compare, int val) {
  int old = *address;
  if (old == compare) {
    *address = val;
  }
  return old;
}

static inline unsigned long long atomicAdd(unsigned long long *address,
                                           unsigned long long val) {
  unsigned long long old = *address;
  *address = old + val;
  return old;
}

static inline float __int_as_float(int bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline double __longlong_as_double(long long bits) {
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static inline long long __double_as_longlong(double d) {
  long long bits;
  memcpy(&bits, &d, sizeof bits);
  return bits;
}

__extension__ typedef unsigned __int128 ck_shim_u128;
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((ck_shim_u128)a * b) >> 64);
}

/* Run `launch()` (a call of one __global__ kernel) once per thread of the
 * grid ck_context_launch would use for n items in blocks of `block`. */
template <typename Launch>
static void ck_shim_grid(unsigned long long n, unsigned int block, Launch launch) {
  unsigned long long blocks = (n + block - 1) / block;
  blockDim.x = block;
  blockDim.y = blockDim.z = 1;
  gridDim.x = (unsigned int)blocks;
  gridDim.y = gridDim.z = 1;
  for (unsigned long long b = 0; b < blocks; b++) {
    for (unsigned int t = 0; t < block; t++) {
      blockIdx.x = (unsigned int)b;
      blockIdx.y = blockIdx.z = 0;
      threadIdx.x = t;
      threadIdx.y = threadIdx.z = 0;
      launch();
    }
  }
}

#endif /* CK_CUDA_HOST_SHIM_H */
