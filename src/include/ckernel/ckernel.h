/*
 * ckernel/ckernel.h -- umbrella header: the whole public C API.
 */
#ifndef CKERNEL_CKERNEL_H
#define CKERNEL_CKERNEL_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/debug.h"
#include "ckernel/layout.h"
#include "ckernel/memblock.h"
#include "ckernel/pod_allocator.h"
#include "ckernel/parallel.h"
#include "ckernel/types.h"
#include "ckernel/text.h"
#include "ckernel/utf8.h"
#include "ckernel/varlen_element.h"
#include "ckernel/array.h"
#include "ckernel/validity.h"
#include "ckernel/dictionary.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/assign.h"
#include "ckernel/lift.h"
#include "ckernel/apply.h"
#include "ckernel/core_dims.h"
#include "ckernel/broadcast.h"
#include "ckernel/assign_array.h"
#include "ckernel/reduce.h"
#include "ckernel/registry.h"
#include "ckernel/jit.h"
#include "ckernel/ops.h"
#include "ckernel/context.h"
#include "ckernel/buffer.h"
#include "ckernel/device_scan.h"
#include "ckernel/device_arena.h"
#include "ckernel/cuda.h"
#include "ckernel/arrow.h"
#include "ckernel/arrow_wrap.h"
#include "ckernel/arrow_device_stream.h"
#include "ckernel/datetime.h"

#endif /* CKERNEL_CKERNEL_H */
