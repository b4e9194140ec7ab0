/*
 * ops_errors.c -- the messages of the built-in element functions that fail
 * (cold paths, called by the kernels of ops_*.c; see ops/ops_internal.h).
 */
#include "ops/ops_internal.h"

int ck__ops_zero_division(const char *op, int type_id) {
  return ck__error(CK_ERR_ZERO_DIVISION, op, "integer division by zero (%s)",
                   ck__builtin_name(type_id));
}

int ck__ops_negative_power(const char *op, int type_id) {
  return ck__error(CK_ERR_VALUE, op,
                   "Integers to negative integer powers are not allowed (%s)",
                   ck__builtin_name(type_id));
}
