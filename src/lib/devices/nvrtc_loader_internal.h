/*
 * nvrtc_loader_internal.h -- the part of NVRTC (the CUDA runtime compiler) the
 * library uses, declared here and loaded at run time with dlopen: libnvrtc
 * is never linked.  Not installed; nothing here is ABI.
 * tests/c/devices/test_cuda_loader.c checks the declarations against
 * <nvrtc.h> when the toolkit is installed.
 *
 * Where the library is looked for, in order (nvrtc.c):
 *   1. CK_NVRTC_LIBRARY (a path or a soname; if set, nothing else is tried);
 *   2. the directories given to ck_cuda_set_nvrtc_search_path (the Python
 *      package passes the nvidia-cuda-nvrtc wheel's folders here);
 *   3. the wheel folders of the active Python environment, $VIRTUAL_ENV and
 *      $CONDA_PREFIX: lib/python3.* /site-packages/nvidia/{cu13,cuda_nvrtc}/lib;
 *   4. the CUDA toolkit: $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64;
 *   5. the system library path (dlopen of the bare sonames).
 * In each folder the sonames libnvrtc.so.13, .so.12, .so.11.2, .so are tried.
 */
#ifndef CKERNEL_NVRTC_LOADER_INTERNAL_H
#define CKERNEL_NVRTC_LOADER_INTERNAL_H

#include "ckernel/error.h"

#include <stddef.h>

typedef int ck_nvrtc_result;                    /* nvrtcResult */
typedef struct ck__nvrtc_prog *ck_nvrtc_program; /* nvrtcProgram */

#define CK_NVRTC_SUCCESS 0
#define CK_NVRTC_ERROR_INVALID_OPTION 5
#define CK_NVRTC_ERROR_COMPILATION 6

#define CK_NVRTC_FUNCTIONS(X)                                                  \
  X(const char *, nvrtcGetErrorString, (ck_nvrtc_result))                      \
  X(ck_nvrtc_result, nvrtcVersion, (int *, int *))                             \
  X(ck_nvrtc_result, nvrtcCreateProgram,                                       \
    (ck_nvrtc_program *, const char *, const char *, int,                      \
     const char *const *, const char *const *))                                \
  X(ck_nvrtc_result, nvrtcDestroyProgram, (ck_nvrtc_program *))                \
  X(ck_nvrtc_result, nvrtcCompileProgram,                                      \
    (ck_nvrtc_program, int, const char *const *))                              \
  X(ck_nvrtc_result, nvrtcGetPTXSize, (ck_nvrtc_program, size_t *))            \
  X(ck_nvrtc_result, nvrtcGetPTX, (ck_nvrtc_program, char *))                  \
  X(ck_nvrtc_result, nvrtcGetProgramLogSize, (ck_nvrtc_program, size_t *))     \
  X(ck_nvrtc_result, nvrtcGetProgramLog, (ck_nvrtc_program, char *))

/* NVRTC 11.2 and later. */
#define CK_NVRTC_OPTIONAL_FUNCTIONS(X)                                         \
  X(ck_nvrtc_result, nvrtcGetNumSupportedArchs, (int *))                       \
  X(ck_nvrtc_result, nvrtcGetSupportedArchs, (int *))

#define CK_NVRTC_DECLARE_FIELD(ret, name, params) ret(*name) params;
typedef struct ck_nvrtc_api {
  CK_NVRTC_FUNCTIONS(CK_NVRTC_DECLARE_FIELD)
  CK_NVRTC_OPTIONAL_FUNCTIONS(CK_NVRTC_DECLARE_FIELD)
  int major, minor;  /* nvrtcVersion */
  int archs[64];     /* supported virtual architectures (75, 80, ...) */
  int narchs;        /* 0 when NVRTC cannot list them */
  char path[1024];   /* the file loaded (as opened) */
} ck_nvrtc_api;
#undef CK_NVRTC_DECLARE_FIELD

/* The process-wide NVRTC table (loaded once on success, never unloaded; a
 * failure is retried on the next call), or NULL with CK_ERR_BACKEND
 * recorded: "NVRTC not found: tried ...". */
const ck_nvrtc_api *ck__nvrtc_api(void);

/* Run the search above without loading the table: the path (as opened) of
 * the first library that loads and exports nvrtcCompileProgram, into buf
 * (snprintf rules); that library stays mapped (NVRTC must not be unloaded).
 * CK_ERR_BACKEND with the list of places tried if none does. */
ck_status ck__nvrtc_locate(char *buf, size_t bufsize);

/* "NVRTC_ERROR_COMPILATION" for 6 ...; "NVRTC_ERROR_UNKNOWN" otherwise. */
const char *ck__nvrtc_error_name(ck_nvrtc_result code);

/*
 * Compile `source` (CUDA C++) to PTX for the virtual architecture `arch`
 * (an integer 10 * major + minor, e.g. 80; 0: NVRTC's default) plus
 * `suffix` ("", "a" or "f": arch-specific / family variants), with the
 * whitespace-separated `options` (double quotes group; NULL = none).  When
 * `options` already name an architecture (-arch, --gpu-architecture) `arch`
 * is not added.  On success *out_ptx (NUL-terminated, CK_MALLOC'd) and
 * *out_size (its strlen).  *out_log (optional, CK_MALLOC'd, "" when NVRTC
 * printed nothing) receives the whole build log on success and on
 * compilation failure.  Failures: CK_ERR_BACKEND "nvrtcCompileProgram
 * failed: NVRTC_ERROR_COMPILATION (6): <log head>".
 */
ck_status ck__nvrtc_compile(const ck_nvrtc_api *nv, const char *source,
                            const char *options, int arch, const char *suffix,
                            char **out_ptx, size_t *out_size, char **out_log);

#endif /* CKERNEL_NVRTC_LOADER_INTERNAL_H */
