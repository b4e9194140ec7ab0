/* bench_case_rows.c -- the case mappings and predicates of ckernel/utf8.h
 * per row, on rows like benchmarks/bench_str_methods.py's (names, emails,
 * word lists; "mixed": half the rows drawn from the non-ASCII words), so the
 * C loop can be profiled and timed without the jit (perf record ./bench_case_rows).
 *
 *   bench_case_rows [rows] [reps]      (default 200000 rows, best of 7)
 *
 * Prints CPU ns per row for ASCII and mixed rows and their ratio (issue 28 §3:
 * mixed / ASCII <= 1.5x).  The rows come from a fixed LCG, not Python's
 * random: the same words and shapes, not the same rows. */
#include "bench.h"
#include "ckernel/ckernel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 11;
static unsigned rnd(unsigned n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rng_state >> 33) % n);
}

typedef struct rows {
  char *text;
  int64_t *offsets;
  int64_t n;
} rows;

static const char *first_a[] = {"alice", "Bob", "carol", "DAVE", "eve", "frank", "grace", "heidi"};
static const char *last_a[] = {"smith", "Jones", "miller", "Brown", "davis", "wilson"};
static const char *words_a[] = {"the",  "quick", "Brown", "fox", "jumps",
                                "over", "lazy",  "dog",   "42",  "data"};
static const char *first_m[] = {"José", "Zoë", "Łukasz", "Ωmega", "東京"};
static const char *last_m[] = {"Müller", "Straße", "Ελλάδα", "naïve"};
static const char *words_m[] = {"café", "Über", "größe", "ΣΟΦΙΑ", "日本語", "😀",
                                "the",  "quick", "Brown", "fox"};

#define COUNT(a) ((unsigned)(sizeof(a) / sizeof(a[0])))

/* first/last/word of the ASCII pool, or (mixed, even rows) of the mixed pool
 * (bench_str_methods: odd rows draw from both pools). */
static const char *pick(const char **a, unsigned na, const char **m, unsigned nm, bool mixed,
                        int64_t i) {
  if (!mixed) {
    return a[rnd(na)];
  }
  if (i % 2 == 0) {
    return m[rnd(nm)];
  }
  unsigned k = rnd(na + nm);
  return k < na ? a[k] : m[k - na];
}

static rows make_rows(int64_t n, bool mixed) {
  rows r;
  r.n = n;
  r.text = malloc((size_t)n * 96);
  r.offsets = malloc((size_t)(n + 1) * sizeof(int64_t));
  char *w = r.text;
  rng_state = 11;
  for (int64_t i = 0; i < n; i++) {
    r.offsets[i] = w - r.text;
    int k = (int)(i % 3);
    if (k == 0) {
      w += sprintf(w, "  %s %s ", pick(first_a, COUNT(first_a), first_m, COUNT(first_m), mixed, i),
                   pick(last_a, COUNT(last_a), last_m, COUNT(last_m), mixed, i));
    } else if (k == 1) {
      w += sprintf(w, "%s.%s@Example%d.COM",
                   pick(first_a, COUNT(first_a), first_m, COUNT(first_m), mixed, i),
                   pick(last_a, COUNT(last_a), last_m, COUNT(last_m), mixed, i), (int)(i % 7));
    } else {
      int nw = 2 + (int)rnd(7);
      for (int j = 0; j < nw; j++) {
        w += sprintf(w, j ? " %s" : "%s",
                     mixed && i % 2 == 0 ? words_m[rnd(COUNT(words_m))]
                                         : pick(words_a, COUNT(words_a), words_m,
                                                COUNT(words_m), mixed, i));
      }
    }
  }
  r.offsets[n] = w - r.text;
  return r;
}

typedef bool (*pred_fn)(const char *, int64_t);

static volatile int64_t sink;

/* The thread's CPU time: the machine these run on is shared and loaded. */
static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ck_str_case as jitted code calls it: into the call's result region (one
 * allocation for all rows), each row's text kept in place (the element
 * ended as the entry point's inline store ends it). */
static double time_case(ck_str_case_op op, const rows *r, int reps) {
  double best = 1e300;
  for (int rep = 0; rep < reps; rep++) {
    ck_memblock *arena;
    if (ck_pod_memblock_new(0, &arena) != CK_OK) {
      abort();
    }
    ck_str_region *region = ck_str_result_region(arena, r->offsets[r->n] * 2 + 64);
    int64_t total = 0;
    double t0 = cpu_ns();
    for (int64_t i = 0; i < r->n; i++) {
      ck_string out;
      if (ck_str_case(op, r->text + r->offsets[i], r->offsets[i + 1] - r->offsets[i], &out) !=
          CK_OK) {
        abort();
      }
      region->made_b = region->made_e = NULL;
      total += out.end - out.begin;
    }
    double dt = (cpu_ns() - t0) / (double)r->n;
    sink = total;
    ck_str_set_result_arena(NULL);
    ck_memblock_decref(arena);
    if (dt < best) {
      best = dt;
    }
  }
  return best;
}

static double time_pred(pred_fn f, const rows *r, int reps) {
  double best = 1e300;
  for (int rep = 0; rep < reps; rep++) {
    int64_t total = 0;
    double t0 = cpu_ns();
    for (int64_t i = 0; i < r->n; i++) {
      total += f(r->text + r->offsets[i], r->offsets[i + 1] - r->offsets[i]);
    }
    double dt = (cpu_ns() - t0) / (double)r->n;
    sink = total;
    if (dt < best) {
      best = dt;
    }
  }
  return best;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 200000;
  int reps = argc > 2 ? atoi(argv[2]) : 7;
  const char *only = argc > 3 ? argv[3] : NULL;
  rows a = make_rows(n, false), m = make_rows(n, true);
  printf("%lld rows: %.1f / %.1f bytes per row (ASCII / mixed), best of %d, ns per row\n",
         (long long)n, (double)a.offsets[n] / (double)n, (double)m.offsets[n] / (double)n,
         reps);
  static const struct {
    const char *name;
    ck_str_case_op f;
  } cases[] = {{"lower", CK_STR_LOWER},           {"upper", CK_STR_UPPER},
               {"casefold", CK_STR_CASEFOLD},     {"title", CK_STR_TITLE},
               {"capitalize", CK_STR_CAPITALIZE}, {"swapcase", CK_STR_SWAPCASE}};
  static const struct {
    const char *name;
    pred_fn f;
  } preds[] = {{"isdigit", ck_str_isdigit}, {"isalpha", ck_str_isalpha},
               {"isalnum", ck_str_isalnum}, {"isspace", ck_str_isspace},
               {"islower", ck_str_islower}, {"isupper", ck_str_isupper},
               {"istitle", ck_str_istitle}, {"isidentifier", ck_str_isidentifier}};
  for (unsigned k = 0; k < COUNT(cases); k++) {
    if (only && strstr(only, cases[k].name) == NULL) {
      continue;
    }
    double ta = time_case(cases[k].f, &a, reps), tm = time_case(cases[k].f, &m, reps);
    printf("%-14s ascii %7.1f  mixed %7.1f  mixed/ascii %5.2fx\n", cases[k].name, ta, tm,
           tm / ta);
  }
  for (unsigned k = 0; k < COUNT(preds); k++) {
    if (only && strstr(only, preds[k].name) == NULL) {
      continue;
    }
    double ta = time_pred(preds[k].f, &a, reps), tm = time_pred(preds[k].f, &m, reps);
    printf("%-14s ascii %7.1f  mixed %7.1f  mixed/ascii %5.2fx\n", preds[k].name, ta, tm,
           tm / ta);
  }
  free(a.text);
  free(a.offsets);
  free(m.text);
  free(m.offsets);
  return 0;
}
