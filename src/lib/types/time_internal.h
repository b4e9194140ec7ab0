/*
 * time_internal.h -- helpers shared by the time-type files (type_time.c,
 * time_text.c) and the kernels above them.  Not installed; nothing here is
 * ABI.
 */
#ifndef CKERNEL_TIME_INTERNAL_H
#define CKERNEL_TIME_INTERNAL_H

#include "ckernel/datetime.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

/* 128-bit products for exact unit conversion (GCC and Clang). */
__extension__ typedef __int128 ck__i128;

/* True for a unit value of ck_time_unit (3, NumPy's business day, is not). */
bool ck__time_unit_valid(int unit);

/* True if tz[0..n) is a well-spelled zone name (see ckernel/datetime.h). */
bool ck__tz_valid(const char *tz, size_t n);

/* Linear conversion through NumPy's unit lengths (mean year and month),
 * floored; CK_ERR_OVERFLOW (recorded under "assign") when out of range. */
ck_status ck__time_convert_linear(int64_t v, ck_time_unit from, ck_time_unit to,
                                  int64_t *out, bool *exact);

/* Read / write a time value of `t` as int64 (32-bit kinds widen; their NaT
 * INT32_MIN becomes CK_NAT and back). */
static inline int64_t ck__time_load(const struct ck_type_desc *t, const char *p) {
  if (t->data_size == 4) {
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return v == INT32_MIN ? CK_NAT : v;
  }
  int64_t v;
  __builtin_memcpy(&v, p, 8);
  return v;
}

/* false when v does not fit a 32-bit kind */
static inline bool ck__time_store(const struct ck_type_desc *t, char *p, int64_t v) {
  if (t->data_size == 4) {
    int32_t w;
    if (v == CK_NAT) {
      w = INT32_MIN;
    } else if (v <= INT32_MIN || v > INT32_MAX) {
      return false;
    } else {
      w = (int32_t)v;
    }
    __builtin_memcpy(p, &w, 4);
    return true;
  }
  __builtin_memcpy(p, &v, 8);
  return true;
}

#endif /* CKERNEL_TIME_INTERNAL_H */
