/*
 * assign_errors.c -- the messages of failing assignments: values that do not
 * fit under the error mode (called, cold, by the generated kernels of
 * assign_to_*.c) and pairs of types with no conversion.
 */
#include "kernels/assign_internal.h"
#include "kernels/lift_internal.h"
#include "core/numtext_internal.h"
#include "types/type_internal.h"

#include <inttypes.h>
#include <stdio.h>

static int ck__assign_report(int what, int dst, int src, const char *value) {
  static const char *const what_text[] = {
      "", "overflow", "fractional part lost", "inexact value",
      "imaginary part lost"};
  ck_status st = what == CK__AE_OVERFLOW ? CK_ERR_OVERFLOW : CK_ERR_VALUE;
  return ck__error(st, "assign", "%s while assigning %s value %s to %s",
                   what_text[what], ck__builtin_name(src), value,
                   ck__builtin_name(dst));
}

int ck__assign_fail_i(int what, int dst, int src, int64_t v) {
  char text[32];
  snprintf(text, sizeof text, "%" PRId64, v);
  return ck__assign_report(what, dst, src, text);
}

int ck__assign_fail_u(int what, int dst, int src, uint64_t v) {
  char text[32];
  if (src == CK_TYPE_BOOL) {
    snprintf(text, sizeof text, "%s", v ? "true" : "false");
  } else {
    snprintf(text, sizeof text, "%" PRIu64, v);
  }
  return ck__assign_report(what, dst, src, text);
}

int ck__assign_fail_f(int what, int dst, int src, double v) {
  char text[40];
  ck__format_float_repr(text, sizeof text, src, v, true);
  return ck__assign_report(what, dst, src, text);
}

int ck__assign_fail_c(int what, int dst, int src, double re, double im) {
  char r[40], i[40], text[96];
  ck__format_float_repr(r, sizeof r, src, re, false);
  ck__format_float_repr(i, sizeof i, src, im, false);
  snprintf(text, sizeof text, "(%s%s%sj)", r, i[0] == '-' ? "" : "+", i);
  return ck__assign_report(what, dst, src, text);
}


ck_status ck__assign_type_error(const char *func, ck_type dst, ck_type src) {
  char d[160], s[160];
  size_t pd = 0, ps = 0;
  ck__type_append(dst, d, sizeof d, &pd);
  ck__type_append(src, s, sizeof s, &ps);
  return ck__error(CK_ERR_TYPE, func, "cannot assign from '%s' to '%s'", s, d);
}

