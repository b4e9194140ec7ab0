/*
 * ckernel/device_scan.h -- an exclusive prefix sum of int64 values in a
 * context's buffer, computed on its device.
 *
 * The middle pass of building variable-length results on a device without
 * a device malloc: a sizing pass writes each element's length, this scan
 * turns the lengths into Arrow offsets (out[i] = in[0] + ... + in[i-1]) and
 * gives the total (the size of the data buffer to allocate), and a writing
 * pass fills the data at those offsets.
 *
 * Algorithm (the same kernels for OpenCL and CUDA, one source with the
 * dialect's spellings defined in front): the values are cut into chunks of
 * CK_DEVICE_SCAN_CHUNK; one work item scans each chunk in place and writes
 * the chunk's sum to a temporary buffer; the sums are scanned the same way
 * (recursively: 1M values take two levels), then one work item per chunk
 * adds its chunk's offset.  Work is O(n), depth O(chunk * log_chunk(n)).  A
 * "cpu" context scans in host memory.  The program is built through the
 * context's program cache (once per context).
 *
 * Overflow: sums are computed in two's complement; a total beyond INT64_MAX
 * is not detected here (lengths of real data cannot reach it).
 */
#ifndef CKERNEL_DEVICE_SCAN_H
#define CKERNEL_DEVICE_SCAN_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/context.h"
#include "ckernel/buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Values one work item scans sequentially. */
#define CK_DEVICE_SCAN_CHUNK 256

/*
 * Replace the `n` int64 values at byte `offset` of `buf` (8-byte aligned,
 * inside the buffer) by their exclusive prefix sums; *out_total (may be
 * NULL) receives the sum of all of them (0 for n == 0).  Errors:
 * CK_ERR_INVALID_ARGUMENT (NULL buffer, a misaligned offset, a range beyond
 * the capacity), CK_ERR_NOT_SUPPORTED (a context kind without programs),
 * the backend's build and launch errors.
 */
CK_API ck_status ck_device_scan_exclusive_i64(ck_buffer *buf, size_t offset, size_t n,
                                              int64_t *out_total);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_DEVICE_SCAN_H */
