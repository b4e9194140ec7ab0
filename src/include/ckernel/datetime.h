/*
 * ckernel/datetime.h -- time types: instants, calendar dates, times of day
 * and durations (DyND's datetime/date/time, NumPy's datetime64/timedelta64,
 * Arrow's timestamp/date32/date64/time32/time64/duration).
 *
 * Each is a descriptor type (types.h) with no arrmeta and a plain integer
 * count as its data, so arrays of them are zero-copy views of NumPy's and
 * Arrow's buffers:
 *
 *   kind       id                data     spelling (canonical first)
 *   instant    CK_TYPE_DATETIME  int64    datetime[unit='s'],
 *                                         datetime[unit='ns', tz='UTC'];
 *                                         also `datetime` (unit 'us') and
 *                                         NumPy's `datetime64[s]`
 *   duration   CK_TYPE_TIMEDELTA int64    timedelta[unit='s']; also
 *                                         `timedelta` ('us'), `timedelta64[s]`
 *   date       CK_TYPE_DATE      int32    date (days, Arrow date32);
 *                                int64    date[unit='ms'] (Arrow date64)
 *   time       CK_TYPE_TIME      int32    time[unit='s'], time[unit='ms'];
 *                                int64    time[unit='us'] (also `time`),
 *                                         time[unit='ns'] (Arrow time32/64)
 *
 * An instant counts `unit`s since 1970-01-01T00:00:00 UTC in the proleptic
 * Gregorian calendar without leap seconds (NumPy's and Arrow's epoch); a
 * duration counts `unit`s; a date counts days (or milliseconds) since
 * 1970-01-01; a time of day counts `unit`s since midnight.  Units are
 * NumPy's: the calendar units Y (years since 1970) and M (months since
 * 1970-01), W (7 days), D, h, m, s, ms, us, ns.  Dates take D or ms, times
 * of day s, ms, us or ns.
 *
 * NaT ("not a time", NumPy's and pandas' missing value) is the smallest
 * value of the data: INT64_MIN (INT32_MIN for the 32-bit kinds).
 * Conversions keep it, comparisons follow NumPy (NaT is unequal to
 * everything, itself included), arithmetic propagates it, and assigning a
 * time type to an option type `?T` (types.h) turns it into a null.
 *
 * The time zone of an instant (`tz='Europe/Paris'`) is a label: the data is
 * always UTC, as in Arrow and pandas.  The C core checks only its spelling
 * (1..CK_TIME_ZONE_MAX - 1 bytes of [A-Za-z0-9_+-/:]); whether a zone name
 * exists is checked where a zone database is (the Python package, through
 * zoneinfo).  Instants with a zone are formatted as UTC with "+00:00".
 *
 * Conversions (assign_array.h's factory, under the error modes of assign.h)
 * and arithmetic (ck_make_time_op_kernel, below) are NumPy's: see
 * docs/type-grammar.md "Time types".
 */
#ifndef CKERNEL_DATETIME_H
#define CKERNEL_DATETIME_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Units.  Values are ABI (NumPy's NPY_DATETIMEUNIT order, Y = 0). */
typedef enum ck_time_unit {
  CK_UNIT_Y = 0,
  CK_UNIT_M = 1,
  CK_UNIT_W = 2,
  CK_UNIT_D = 4,   /* NumPy's 3 (B, business days) is not a unit here */
  CK_UNIT_H = 5,
  CK_UNIT_MIN = 6,
  CK_UNIT_S = 7,
  CK_UNIT_MS = 8,
  CK_UNIT_US = 9,
  CK_UNIT_NS = 10
} ck_time_unit;

enum { CK_TIME_ZONE_MAX = 64 };

/* NaT of the 64-bit kinds. */
#define CK_NAT INT64_MIN

/* The unit's name as NumPy spells it ("s", "ms", "D", ...), NULL if unknown. */
CK_API const char *ck_time_unit_name(ck_time_unit unit);
/* Parse a unit name (NumPy's spelling), CK_ERR_VALUE if unknown. */
CK_API ck_status ck_time_unit_from_name(const char *name, ck_time_unit *out);

/* Constructors: a new reference in *out.  CK_ERR_VALUE for a unit the kind
 * does not take (date: D or ms; time: s, ms, us or ns) or a badly spelled
 * time zone; `tz` NULL or "" means none (it is copied). */
CK_API ck_status ck_datetime_type_new(ck_time_unit unit, const char *tz, ck_type *out);
CK_API ck_status ck_timedelta_type_new(ck_time_unit unit, ck_type *out);
CK_API ck_status ck_date_type_new(ck_time_unit unit, ck_type *out);
CK_API ck_status ck_time_type_new(ck_time_unit unit, ck_type *out);

/* True for the four time kinds. */
CK_API bool ck_type_is_time(ck_type t);
/* The unit of a time type, or -1 for any other type. */
CK_API int ck_time_type_unit(ck_type t);
/* The time zone of an instant (borrowed, NUL-terminated), NULL if it has
 * none or `t` is not an instant. */
CK_API const char *ck_datetime_type_tz(ck_type t);

/* ---- scalar helpers (exact, overflow-checked) ------------------------- */

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m 1..12,
 * d 1..31, any y within +-2^31), and back. */
CK_API int64_t ck_days_from_civil(int64_t y, int m, int d);
CK_API void ck_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

/* Convert a count of `from` units to `to` units, as NumPy's astype: to a
 * finer unit exactly (CK_ERR_OVERFLOW when it does not fit int64 or would
 * become NaT); to a coarser unit rounding toward minus infinity (instants
 * and durations alike, as NumPy); *out_exact says
 * whether nothing was dropped.  Between calendar units (Y, M) and the
 * others instants go through the calendar; durations use NumPy's mean year
 * (365.2425 days) and month (a twelfth of it).  NaT stays NaT. */
CK_API ck_status ck_time_convert(int64_t value, ck_time_unit from, ck_time_unit to,
                                 bool is_instant, int64_t *out, bool *out_exact);

/* Format one value of time type `t` (data at `data`) as ISO 8601 text into
 * buf (snprintf rules); *out_len gets the full length.  Instants as NumPy's
 * datetime_as_string (the precision of the unit: "2024-01-01",
 * "2024-01-01T10:30:00.123"), "+00:00" appended when there is a zone;
 * dates "2024-01-01"; times "10:30:00.123"; durations as ISO 8601
 * durations in pandas' Timedelta.isoformat form ("P1DT2H3M4.5S", "-P0DT0H0M1S",
 * "P3M" for calendar units); NaT as "NaT". */
CK_API ck_status ck_time_format(ck_type t, const void *data, char *buf, size_t bufsize,
                                size_t *out_len);

/* Parse ISO 8601 text (the forms above; instants also with ' ' for 'T',
 * "Z" or a "+hh:mm" offset, which is subtracted) into a value of `t` at
 * `data`.  Digits finer than the unit are an error (CK_ERR_VALUE) under
 * the FRACTIONAL and INEXACT modes and dropped (toward minus infinity)
 * under NOCHECK and OVERFLOW; out of range is CK_ERR_OVERFLOW. */
CK_API ck_status ck_time_parse(ck_type t, const char *text, size_t len, int errmode,
                               void *data);

/* ---- operations -------------------------------------------------------- */

/*
 * Build the kernel of operation `op_name` over time types at `offset` of
 * `ckb` and give its result type (a new reference) in *out_ret.  NumPy's
 * rules, units combined to the finer of the two:
 *   subtract(datetime, datetime) -> timedelta; add(datetime, timedelta),
 *   add(timedelta, datetime), subtract(datetime, timedelta) -> datetime;
 *   add/subtract(timedelta, timedelta) -> timedelta; add(datetime|timedelta,
 *   integer), add(integer, datetime|timedelta), subtract(datetime|timedelta,
 *   integer), subtract(integer, timedelta) -> the time operand's type (the
 *   integer counts its units); multiply(timedelta,
 *   int64|float64) and multiply(int64|float64, timedelta) -> timedelta;
 *   floor_divide/true_divide(timedelta, int64|float64) -> timedelta;
 *   true_divide(timedelta, timedelta) -> float64; floor_divide(timedelta,
 *   timedelta) -> int64; negative/absolute(timedelta) -> timedelta;
 *   equal, not_equal, less, less_equal, greater, greater_equal of two
 *   instants, two durations, two dates or two times -> bool;
 *   minimum, maximum -> the common type (NaT wins, as NumPy's).
 * Dates combine with dates, times of day with times of day (comparisons;
 * date - date is timedelta[unit='D']).  Instants with different zones are
 * CK_ERR_TYPE, as are other combinations (naming both types); integer
 * overflow is CK_ERR_OVERFLOW naming the operation; NaT propagates.
 */
CK_API ck_status ck_make_time_op_kernel(const char *op_name, ck_kernel_builder *ckb,
                                        size_t offset, ck_kernel_request req,
                                        size_t nargs, const ck_type *arg_types,
                                        ck_type *out_ret, size_t *out_end);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_DATETIME_H */
