/* A hand-made Arrow producer for the interop tests: arrays over static
 * buffers whose children are moved in, schemas over static strings. */
#ifndef CK_TEST_ARROW_HAND_H
#define CK_TEST_ARROW_HAND_H

#include "ck_test.h"

/* ---- a hand-made producer ------------------------------------------------------ */

static int released_arrays;

typedef struct hand {
  const void *buffers[8];
  struct ArrowArray *children[4];
  struct ArrowArray child_structs[4];
} hand;

static inline void hand_release(struct ArrowArray *a) {
  hand *h = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) {
    if (h->children[i]->release != NULL) {
      h->children[i]->release(h->children[i]);
    }
  }
  free(h);
  a->release = NULL;
  released_arrays++;
}

/* An array over static buffers; children are moved in. */
static inline struct ArrowArray mk(int64_t length, int64_t null_count, int64_t nbuf,
                            const void *const *buffers, int64_t nch,
                            struct ArrowArray *children) {
  hand *h = calloc(1, sizeof *h);
  struct ArrowArray a = {0};
  for (int64_t i = 0; i < nbuf; i++) h->buffers[i] = buffers[i];
  for (int64_t i = 0; i < nch; i++) {
    h->child_structs[i] = children[i];
    h->children[i] = &h->child_structs[i];
  }
  a.length = length;
  a.null_count = null_count;
  a.n_buffers = nbuf;
  a.buffers = h->buffers;
  a.n_children = nch;
  a.children = nch ? h->children : NULL;
  a.release = hand_release;
  a.private_data = h;
  return a;
}

static inline void schema_release_static(struct ArrowSchema *s) { s->release = NULL; }

/* A schema over static strings (children given). */
static inline struct ArrowSchema sc(const char *format, const char *name, int64_t nch,
                             struct ArrowSchema **children) {
  struct ArrowSchema s = {0};
  s.format = format;
  s.name = name;
  s.n_children = nch;
  s.children = children;
  s.release = schema_release_static;
  return s;
}

static inline ck_array_preamble *import_ok(struct ArrowSchema *s, struct ArrowArray *a) {
  ck_array_preamble *out = NULL;
  ck_status st = ck_arrow_import(s, a, NULL, &out);
  if (st != CK_OK) {
    fprintf(stderr, "import failed: %s\n", ck_last_error());
  }
  return out;
}

static inline const ck_string *str_at(const ck_array_preamble *a, intptr_t i) {
  return (const ck_string *)(a->data + i * 16);
}

static inline bool str_eq(const ck_string *s, const char *text) {
  size_t n = s->begin == NULL ? 0 : (size_t)(s->end - s->begin);
  return n == strlen(text) && (n == 0 || memcmp(s->begin, text, n) == 0);
}

/* ---- export -------------------------------------------------------------------------- */

#endif /* CK_TEST_ARROW_HAND_H */
