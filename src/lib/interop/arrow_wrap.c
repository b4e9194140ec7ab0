/*
 * arrow_wrap.c -- Arrow arrays over buffers someone else owns (arrow_wrap.h).
 *
 * Every node of the made tree holds one reference to a shared owner record
 * {count, release, handle}; the last node released calls release(handle).
 * A node's private data is one allocation: the record pointer, its buffer
 * pointer array, its child struct and the child pointer.
 */
#include "core/core_internal.h"
#include "ckernel/arrow_wrap.h"

#include <string.h>

typedef struct wowner {
  int64_t count;
  void (*release)(void *);
  void *handle;
} wowner;

typedef struct wnode {
  wowner *owner;
  const void *buffers[3];
  struct ArrowArray child;
  struct ArrowArray *child_ptr;
} wnode;

static void owner_drop(wowner *o) {
  if (--o->count == 0) {
    if (o->release != NULL) {
      o->release(o->handle);
    }
    ck__free(o);
  }
}

static void wnode_release(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) {
    return;
  }
  wnode *p = a->private_data;
  if (p->child.release != NULL) { /* not moved out by the consumer */
    p->child.release(&p->child);
  }
  wowner *o = p->owner;
  ck__free(p);
  a->release = NULL;
  owner_drop(o);
}

static ck_status check_chain(const ck_arrow_node *n) {
  int depth = 0;
  for (; n != NULL; n = n->child) {
    if (++depth > CK_ARROW_WRAP_MAX_DEPTH) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "a chain of more than %d nodes",
                      CK_ARROW_WRAP_MAX_DEPTH);
    }
    if (n->length < 0) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "node %d has a negative length %lld", depth,
                      (long long)n->length);
    }
    if (n->n_buffers < 1 || n->n_buffers > 3) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "node %d has %lld buffers (1 to 3)", depth,
                      (long long)n->n_buffers);
    }
    if (n->buffers[0] == NULL ? n->null_count != 0
                              : n->null_count < -1 || n->null_count > n->length) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "node %d: null count %lld with %s validity buffer of %lld elements",
                      depth, (long long)n->null_count, n->buffers[0] == NULL ? "no" : "a",
                      (long long)n->length);
    }
    for (int64_t i = 1; i < n->n_buffers; i++) {
      /* offsets exist even for zero elements (length + 1 of them) */
      bool needed = n->length > 0 || (n->child != NULL && i == 1);
      if (needed && n->buffers[i] == NULL) {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "node %d: buffer %lld is NULL", depth,
                        (long long)i);
      }
    }
  }
  return CK_OK;
}

/* Fill `a` from `n` and its children; each node made takes one reference on
 * `o`.  On failure `a` is left released and no reference is taken. */
static ck_status wrap_node(const ck_arrow_node *n, wowner *o, struct ArrowArray *a) {
  memset(a, 0, sizeof *a);
  wnode *p = CK_CALLOC(1, sizeof *p);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  if (n->child != NULL) {
    ck_status st = wrap_node(n->child, o, &p->child);
    if (st != CK_OK) {
      ck__free(p);
      return st;
    }
    p->child_ptr = &p->child;
  }
  memcpy(p->buffers, n->buffers, sizeof p->buffers);
  p->owner = o;
  o->count++;
  a->length = n->length;
  a->null_count = n->null_count;
  a->offset = 0;
  a->n_buffers = n->n_buffers;
  a->n_children = n->child != NULL ? 1 : 0;
  a->buffers = p->buffers;
  a->children = n->child != NULL ? &p->child_ptr : NULL;
  a->dictionary = NULL;
  a->release = wnode_release;
  a->private_data = p;
  return CK_OK;
}

ck_status ck_arrow_wrap(const ck_arrow_node *root, int32_t device_type, int64_t device_id,
                        void (*release)(void *handle), void *handle,
                        struct ArrowDeviceArray *out) {
  if (root == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL %s", root == NULL ? "root" : "out");
  }
  ck_status st = check_chain(root);
  if (st != CK_OK) {
    return st;
  }
  wowner *o = CK_CALLOC(1, sizeof *o);
  if (o == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  o->count = 1; /* held while building: a failure half-way frees only what it made */
  struct ArrowDeviceArray tmp;
  memset(&tmp, 0, sizeof tmp);
  st = wrap_node(root, o, &tmp.array);
  if (st != CK_OK) {
    ck__free(o); /* no node holds it: release is not called */
    return st;
  }
  o->release = release;
  o->handle = handle;
  o->count--; /* the nodes hold it now */
  tmp.device_type = device_type;
  tmp.device_id = device_id;
  tmp.sync_event = NULL;
  *out = tmp;
  return CK_OK;
}
