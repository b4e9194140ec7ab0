/*
 * nvrtc.c -- NVRTC loaded at run time (nvrtc_loader_internal.h for the search order)
 * and the compilation of CUDA C to PTX, for the cuda backend and for
 * ck_cuda_compile_ptx (which needs no driver and no device).
 */
#include "devices/nvrtc_loader_internal.h"
#include "core/core_internal.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t ck__nv_lock = PTHREAD_MUTEX_INITIALIZER;
static ck_nvrtc_api ck__nv_table;
static _Atomic(bool) ck__nv_loaded;
static char *ck__nv_search_path; /* ck_cuda_set_nvrtc_search_path; lock */

static const char *const ck__nv_sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                             "libnvrtc.so.11.2", "libnvrtc.so"};
enum { CK__NV_NSONAMES = sizeof ck__nv_sonames / sizeof ck__nv_sonames[0] };

/* Wheel folders below a site-packages: CUDA 13 wheels put every library in
 * nvidia/cu13/lib, CUDA 12 wheels in nvidia/cuda_nvrtc/lib. */
static const char *const ck__nv_wheel_dirs[] = {"nvidia/cu13/lib",
                                                "nvidia/cuda_nvrtc/lib"};

const char *ck__nvrtc_error_name(ck_nvrtc_result code) {
  switch (code) {
#define E(n, v) case v: return #n;
    E(NVRTC_SUCCESS, 0)
    E(NVRTC_ERROR_OUT_OF_MEMORY, 1)
    E(NVRTC_ERROR_PROGRAM_CREATION_FAILURE, 2)
    E(NVRTC_ERROR_INVALID_INPUT, 3)
    E(NVRTC_ERROR_INVALID_PROGRAM, 4)
    E(NVRTC_ERROR_INVALID_OPTION, 5)
    E(NVRTC_ERROR_COMPILATION, 6)
    E(NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, 7)
    E(NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION, 8)
    E(NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, 9)
    E(NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID, 10)
    E(NVRTC_ERROR_INTERNAL_ERROR, 11)
    E(NVRTC_ERROR_TIME_FILE_WRITE_FAILED, 12)
#undef E
  default:
    return "NVRTC_ERROR_UNKNOWN";
  }
}

/* ---- the search -------------------------------------------------------- */

/* What was tried, for the message: "a, b, c". */
typedef struct ck__trail {
  char text[700];
  size_t pos;
} ck__trail;

static void ck__trail_add(ck__trail *t, const char *fmt, const char *a,
                          const char *b) {
  if (t->pos != 0) {
    ck__appendf(t->text, sizeof t->text, &t->pos, "; ");
  }
  ck__appendf(t->text, sizeof t->text, &t->pos, fmt, a, b);
}

/* The path the search opened (as given to dlopen; for a bare soname, the
 * file the dynamic linker chose).  Guarded by ck__nv_lock. */
static char ck__nv_opened[1024];

static void ck__nv_path(void *h, char *buf, size_t n);

/* dlopen `path` if it is an NVRTC; records failures of existing files. */
static void *ck__nv_open(const char *path, bool always, ck__trail *t) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    if (always || strchr(path, '/') != NULL) { /* a file that failed */
      ck__trail_add(t, "%s: %s", path, e != NULL ? e : "dlopen failed");
    }
    return NULL;
  }
  if (dlsym(h, "nvrtcCompileProgram") == NULL) {
    ck__trail_add(t, "%s: %s", path, "not an NVRTC (no nvrtcCompileProgram)");
    dlclose(h);
    return NULL;
  }
  if (strchr(path, '/') != NULL) {
    snprintf(ck__nv_opened, sizeof ck__nv_opened, "%s", path);
  } else {
    ck__nv_path(h, ck__nv_opened, sizeof ck__nv_opened);
  }
  return h;
}

/* The sonames in folder dir[0, len). */
static void *ck__nv_try_dir(const char *dir, size_t len, ck__trail *t) {
  if (len == 0) {
    return NULL;
  }
  char path[1024];
  for (size_t i = 0; i < CK__NV_NSONAMES; i++) {
    if ((size_t)snprintf(path, sizeof path, "%.*s/%s", (int)len, dir,
                         ck__nv_sonames[i]) >= sizeof path) {
      return NULL;
    }
    if (access(path, F_OK) == 0) {
      void *h = ck__nv_open(path, false, t);
      if (h != NULL) {
        return h;
      }
    }
  }
  char shown[300];
  snprintf(shown, sizeof shown, "%.*s", (int)len, dir);
  ck__trail_add(t, "%s%s", shown, "");
  return NULL;
}

/* Every folder of a ':'-separated list. */
static void *ck__nv_try_list(const char *list, ck__trail *t) {
  while (list != NULL && *list != '\0') {
    const char *end = strchr(list, ':');
    size_t len = end != NULL ? (size_t)(end - list) : strlen(list);
    void *h = ck__nv_try_dir(list, len, t);
    if (h != NULL) {
      return h;
    }
    list = end != NULL ? end + 1 : NULL;
  }
  return NULL;
}

/* The wheel folders of the Python environment rooted at `prefix`. */
static void *ck__nv_try_env(const char *prefix, ck__trail *t) {
  for (size_t w = 0; w < sizeof ck__nv_wheel_dirs / sizeof ck__nv_wheel_dirs[0];
       w++) {
    char pattern[1024];
    if ((size_t)snprintf(pattern, sizeof pattern,
                         "%s/lib/python3*/site-packages/%s", prefix,
                         ck__nv_wheel_dirs[w]) >= sizeof pattern) {
      return NULL;
    }
    glob_t g;
    if (glob(pattern, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; i++) {
        void *h = ck__nv_try_dir(g.gl_pathv[i], strlen(g.gl_pathv[i]), t);
        if (h != NULL) {
          globfree(&g);
          return h;
        }
      }
      globfree(&g);
    } else {
      ck__trail_add(t, "%s%s", pattern, " (none)");
    }
  }
  return NULL;
}

/* The search of nvrtc_loader_internal.h; the caller holds ck__nv_lock.  On failure
 * records CK_ERR_BACKEND and returns NULL. */
static void *ck__nv_search(void) {
  ck__trail t = {{0}, 0};
  const char *env = getenv("CK_NVRTC_LIBRARY");
  if (env != NULL && env[0] != '\0') {
    void *h = ck__nv_open(env, true, &t);
    if (h == NULL) {
      CK_ERROR(CK_ERR_BACKEND,
               "NVRTC not found: CK_NVRTC_LIBRARY='%s' does not load as "
               "NVRTC (%s)", env, t.text);
    }
    return h;
  }
  void *h = ck__nv_try_list(ck__nv_search_path, &t);
  const char *envs[2] = {"VIRTUAL_ENV", "CONDA_PREFIX"};
  for (int i = 0; i < 2 && h == NULL; i++) {
    const char *prefix = getenv(envs[i]);
    if (prefix != NULL && prefix[0] != '\0') {
      h = ck__nv_try_env(prefix, &t);
    }
  }
  const char *homes[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"),
                          "/usr/local/cuda"};
  for (int i = 0; i < 3 && h == NULL; i++) {
    if (homes[i] != NULL && homes[i][0] != '\0') {
      char dir[1024];
      snprintf(dir, sizeof dir, "%s/lib64", homes[i]);
      h = ck__nv_try_dir(dir, strlen(dir), &t);
    }
  }
  for (size_t i = 0; i < CK__NV_NSONAMES && h == NULL; i++) {
    h = ck__nv_open(ck__nv_sonames[i], false, &t);
  }
  if (h == NULL) {
    CK_ERROR(CK_ERR_BACKEND,
             "NVRTC not found (looked in: %s; the system library path): "
             "install the CUDA toolkit or the nvidia-cuda-nvrtc wheel, or "
             "set CK_NVRTC_LIBRARY", t.pos != 0 ? t.text : "nothing");
  }
  return h;
}

static void ck__nv_path(void *h, char *buf, size_t n) {
  struct link_map *lm = NULL;
  if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL && lm->l_name != NULL) {
    snprintf(buf, n, "%s", lm->l_name);
  } else {
    snprintf(buf, n, "?");
  }
}

ck_status ck__nvrtc_locate(char *buf, size_t bufsize) {
  pthread_mutex_lock(&ck__nv_lock);
  void *h = ck__nv_search();
  if (h != NULL) {
    if (bufsize != 0) {
      snprintf(buf, bufsize, "%s", ck__nv_opened);
    }
    /* Not dlclose'd: NVRTC allocates when it loads, and unloading it
     * strands those allocations (leak reports); the file found stays
     * mapped, and a later load of it reuses the mapping. */
  }
  pthread_mutex_unlock(&ck__nv_lock);
  return h != NULL ? CK_OK : CK_ERR_BACKEND;
}

const ck_nvrtc_api *ck__nvrtc_api(void) {
  if (atomic_load_explicit(&ck__nv_loaded, memory_order_acquire)) {
    return &ck__nv_table;
  }
  const ck_nvrtc_api *result = NULL;
  pthread_mutex_lock(&ck__nv_lock);
  if (atomic_load_explicit(&ck__nv_loaded, memory_order_relaxed)) {
    result = &ck__nv_table;
    goto done;
  }
  void *lib = ck__nv_search();
  if (lib == NULL) {
    goto done;
  }
  ck_nvrtc_api t;
  memset(&t, 0, sizeof t);
  snprintf(t.path, sizeof t.path, "%s", ck__nv_opened);
#define CK_NV_LOAD(ret, sym, params)                                           \
  {                                                                            \
    void *p = dlsym(lib, #sym);                                                \
    if (p == NULL) {                                                           \
      CK_ERROR(CK_ERR_BACKEND, "the NVRTC library %s lacks %s", t.path, #sym); \
      dlclose(lib);                                                            \
      goto done;                                                               \
    }                                                                          \
    memcpy(&t.sym, &p, sizeof p);                                              \
  }
#define CK_NV_LOAD_OPTIONAL(ret, sym, params)                                  \
  {                                                                            \
    void *p = dlsym(lib, #sym);                                                \
    memcpy(&t.sym, &p, sizeof p);                                              \
  }
  CK_NVRTC_FUNCTIONS(CK_NV_LOAD)
  CK_NVRTC_OPTIONAL_FUNCTIONS(CK_NV_LOAD_OPTIONAL)
#undef CK_NV_LOAD
#undef CK_NV_LOAD_OPTIONAL
  if (t.nvrtcVersion(&t.major, &t.minor) != CK_NVRTC_SUCCESS) {
    t.major = t.minor = 0;
  }
  int n = 0;
  if (t.nvrtcGetNumSupportedArchs != NULL && t.nvrtcGetSupportedArchs != NULL &&
      t.nvrtcGetNumSupportedArchs(&n) == CK_NVRTC_SUCCESS && n > 0 &&
      n <= (int)(sizeof t.archs / sizeof t.archs[0]) &&
      t.nvrtcGetSupportedArchs(t.archs) == CK_NVRTC_SUCCESS) {
    t.narchs = n;
  }
  ck__nv_table = t; /* NVRTC stays loaded for the process */
  atomic_store_explicit(&ck__nv_loaded, true, memory_order_release);
  result = &ck__nv_table;
done:
  pthread_mutex_unlock(&ck__nv_lock);
  return result;
}

/* ---- compiling ----------------------------------------------------------- */

/* Split `options` at white space (double quotes group and are removed) into
 * a CK_MALLOC'd block holding the argv array (with `extra` free slots at the
 * end) and the strings. */
static ck_status ck__split_options(const char *options, size_t extra,
                                   char ***out_argv, size_t *out_argc) {
  size_t len = strlen(options);
  size_t max_tokens = len / 2 + 1 + extra;
  size_t bytes;
  if (!ck__mul_size(max_tokens, sizeof(char *), &bytes) ||
      !ck__add_size(bytes, len + 1, &bytes)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "options too long");
  }
  char **argv = CK_MALLOC(bytes);
  if (argv == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  char *out = (char *)(argv + max_tokens);
  size_t argc = 0;
  const char *p = options;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      p++;
    }
    if (*p == '\0') {
      break;
    }
    argv[argc++] = out;
    bool quoted = false;
    while (*p != '\0' &&
           (quoted || !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))) {
      if (*p == '"') {
        quoted = !quoted;
      } else {
        *out++ = *p;
      }
      p++;
    }
    *out++ = '\0';
    if (quoted) {
      ck__free(argv);
      return CK_ERROR(CK_ERR_PARSE, "unbalanced '\"' in options '%s'", options);
    }
  }
  *out_argv = argv;
  *out_argc = argc;
  return CK_OK;
}

static bool ck__names_arch(const char *opt) {
  return strncmp(opt, "-arch", 5) == 0 ||
         strncmp(opt, "--gpu-architecture", 18) == 0 ||
         strncmp(opt, "-gpu-architecture", 17) == 0;
}

static bool ck__names_fmad(const char *opt) {
  return strncmp(opt, "-fmad", 5) == 0 || strncmp(opt, "--fmad", 6) == 0;
}

/* NVRTC's log, CK_MALLOC'd ("" when empty), trailing white space removed. */
static char *ck__nv_log(const ck_nvrtc_api *nv, ck_nvrtc_program prog) {
  size_t n = 0;
  if (nv->nvrtcGetProgramLogSize(prog, &n) != CK_NVRTC_SUCCESS) {
    n = 0;
  }
  char *log = CK_MALLOC(n + 1);
  if (log == NULL) {
    return NULL;
  }
  log[0] = '\0';
  if (n > 0 && nv->nvrtcGetProgramLog(prog, log) != CK_NVRTC_SUCCESS) {
    log[0] = '\0';
  }
  log[n] = '\0';
  size_t l = strlen(log);
  while (l > 0 && (log[l - 1] == '\n' || log[l - 1] == ' ' || log[l - 1] == '\r')) {
    log[--l] = '\0';
  }
  return log;
}

#define NV_FAIL(nv, call, r)                                                   \
  CK_ERROR(CK_ERR_BACKEND, "%s failed: %s (%d)", (call),                       \
           ck__nvrtc_error_name(r), (int)(r))

ck_status ck__nvrtc_compile(const ck_nvrtc_api *nv, const char *source,
                            const char *options, int arch, const char *suffix,
                            char **out_ptx, size_t *out_size, char **out_log) {
  *out_ptx = NULL;
  *out_size = 0;
  if (out_log != NULL) {
    *out_log = NULL;
  }
  char **argv = NULL;
  size_t argc = 0;
  ck_status st = ck__split_options(options != NULL ? options : "", 2, &argv, &argc);
  if (st != CK_OK) {
    return st;
  }
  char archopt[64];
  char fmadopt[] = "--fmad=false";
  bool has_arch = false;
  bool has_fmad = false;
  for (size_t i = 0; i < argc; i++) {
    has_arch = has_arch || ck__names_arch(argv[i]);
    has_fmad = has_fmad || ck__names_fmad(argv[i]);
  }
  if (!has_fmad) {   /* no contraction unless asked: results equal the host's */
    argv[argc++] = fmadopt;
  }
  if (!has_arch && arch > 0) {
    snprintf(archopt, sizeof archopt, "--gpu-architecture=compute_%d%s", arch,
             suffix != NULL ? suffix : "");
    argv[argc++] = archopt;
  }
  ck_nvrtc_program prog = NULL;
  ck_nvrtc_result r =
      nv->nvrtcCreateProgram(&prog, source, "ckernel.cu", 0, NULL, NULL);
  if (r != CK_NVRTC_SUCCESS) {
    ck__free(argv);
    return NV_FAIL(nv, "nvrtcCreateProgram", r);
  }
  r = nv->nvrtcCompileProgram(prog, (int)argc, (const char *const *)argv);
  ck__free(argv);
  char *log = ck__nv_log(nv, prog);
  if (log == NULL) {
    nv->nvrtcDestroyProgram(&prog);
    return CK_ERR_NO_MEMORY;
  }
  if (r != CK_NVRTC_SUCCESS) {
    st = CK_ERROR(CK_ERR_BACKEND, "nvrtcCompileProgram failed: %s (%d): %s",
                  ck__nvrtc_error_name(r), (int)r,
                  log[0] != '\0' ? log : "(no build log)");
    goto done;
  }
  size_t n = 0;
  r = nv->nvrtcGetPTXSize(prog, &n);
  if (r != CK_NVRTC_SUCCESS || n == 0) {
    st = r != CK_NVRTC_SUCCESS ? NV_FAIL(nv, "nvrtcGetPTXSize", r)
                               : CK_ERROR(CK_ERR_BACKEND, "NVRTC produced no PTX");
    goto done;
  }
  char *ptx = CK_MALLOC(n + 1);
  if (ptx == NULL) {
    st = CK_ERR_NO_MEMORY;
    goto done;
  }
  r = nv->nvrtcGetPTX(prog, ptx);
  if (r != CK_NVRTC_SUCCESS) {
    ck__free(ptx);
    st = NV_FAIL(nv, "nvrtcGetPTX", r);
    goto done;
  }
  ptx[n] = '\0';
  *out_ptx = ptx;
  *out_size = strlen(ptx);
done:
  nv->nvrtcDestroyProgram(&prog);
  if (out_log != NULL) {
    *out_log = log;
  } else {
    ck__free(log);
  }
  return st;
}

/* ---- public (ckernel/cuda.h) ------------------------------------------- */

ck_status ck_cuda_set_nvrtc_search_path(const char *dirs) {
  char *copy = NULL;
  if (dirs != NULL && dirs[0] != '\0') {
    size_t n = strlen(dirs) + 1;
    copy = CK_MALLOC(n);
    if (copy == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    memcpy(copy, dirs, n);
  }
  pthread_mutex_lock(&ck__nv_lock);
  char *old = ck__nv_search_path;
  ck__nv_search_path = copy;
  pthread_mutex_unlock(&ck__nv_lock);
  ck__free(old);
  return CK_OK;
}

ck_status ck_cuda_nvrtc_version(int32_t *major, int32_t *minor, char *path,
                                size_t pathsize, size_t *path_len) {
  if (path == NULL && pathsize != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "path is NULL but pathsize is %zu",
                    pathsize);
  }
  const ck_nvrtc_api *nv = ck__nvrtc_api();
  if (nv == NULL) {
    return CK_ERR_BACKEND;
  }
  if (major != NULL) {
    *major = nv->major;
  }
  if (minor != NULL) {
    *minor = nv->minor;
  }
  if (pathsize != 0) {
    snprintf(path, pathsize, "%s", nv->path);
  }
  if (path_len != NULL) {
    *path_len = strlen(nv->path);
  }
  return CK_OK;
}

/* "sm_80", "compute_90a", "100f", "80" -> 80 / 90 "a" / 100 "f". */
static ck_status ck__parse_arch(const char *arch, int *out, char suffix[2]) {
  const char *p = arch;
  if (strncmp(p, "sm_", 3) == 0) {
    p += 3;
  } else if (strncmp(p, "compute_", 8) == 0) {
    p += 8;
  }
  int v = 0, digits = 0;
  while (*p >= '0' && *p <= '9' && digits < 4) {
    v = v * 10 + (*p++ - '0');
    digits++;
  }
  suffix[0] = suffix[1] = '\0';
  if (*p == 'a' || *p == 'f') {
    suffix[0] = *p++;
  }
  if (digits < 2 || *p != '\0' || v < 10) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "architecture '%s' is not sm_XY, compute_XY or XY (e.g. "
                    "sm_80, compute_90a, 100)", arch);
  }
  *out = v;
  return CK_OK;
}

ck_status ck_cuda_compile_ptx(const char *source, const char *options,
                              const char *arch, char **out_ptx,
                              size_t *out_ptx_size, char **out_log) {
  if (out_ptx != NULL) {
    *out_ptx = NULL;
  }
  if (out_log != NULL) {
    *out_log = NULL;
  }
  if (source == NULL || out_ptx == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "source and out_ptx must not be NULL");
  }
  int a = 0;
  char suffix[2] = {0, 0};
  if (arch != NULL && arch[0] != '\0') {
    ck_status st = ck__parse_arch(arch, &a, suffix);
    if (st != CK_OK) {
      return st;
    }
  }
  const ck_nvrtc_api *nv = ck__nvrtc_api();
  if (nv == NULL) {
    return CK_ERR_BACKEND;
  }
  if (a != 0 && nv->narchs != 0) {
    bool known = false;
    for (int i = 0; i < nv->narchs; i++) {
      known = known || nv->archs[i] == a;
    }
    if (!known) {
      return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                      "NVRTC %d.%d (%s) does not compile for compute_%d "
                      "(its architectures: compute_%d ... compute_%d)",
                      nv->major, nv->minor, nv->path, a, nv->archs[0],
                      nv->archs[nv->narchs - 1]);
    }
  }
  size_t size = 0;
  ck_status st = ck__nvrtc_compile(nv, source, options, a, suffix, out_ptx,
                                   &size, out_log);
  if (out_ptx_size != NULL) {
    *out_ptx_size = size;
  }
  return st;
}

void ck_cuda_free(void *p) { ck__free(p); }
