/*
 * tracefmt.h — the trace file's on-disk format (docs/runtime.md, "The trace
 * file"): written by libkstub's trace check (runtime/trace.c) through a
 * shared mapping, read back as JSON lines by ks__trace_render
 * (trace_render.c; `kstub trace FILE`). Shared by libkstub and the
 * generator (common/, linked into both).
 *
 * All numbers are little-endian (the byte order of every host libkstub
 * runs on). The file is a 64-byte header, then records, each a multiple of
 * 8 bytes and 8-byte aligned:
 *
 *   header   0 magic "KSTRACE\0"   8 u32 version (1)   12 u32 header size (64)
 *           16 u64 next: the offset of the first byte not yet reserved; a
 *              writer reserves a record with one atomic fetch-add on it
 *           24..63 zero
 *   record   0 u32 mark: KS_TRACE_MARK once the record is whole (stored
 *              last, release), 0 before
 *            4 u32 size: the record's bytes (stored first, right after
 *              the reservation)
 *            8 u16 type (KS_TRACE_LAUNCH, KS_TRACE_VARIABLE)
 *           10 u16 number of arguments (launch)    12 i32 site's line
 *           16 u32 pid      20 u32 ks_status (numeric)
 *           24 u64 seq (per process)   32 i64 time_ns (CLOCK_REALTIME)
 *           40 u64 stream   48 u32 nums[8]: launch: grid x y z, block x y
 *              z, shared bytes, 0; variable: u64 first, u64 count, u64 bytes
 *           80 strings, each u32 length (KS_TRACE_NULL: null) then its
 *              bytes, and arguments: launch: the strings kernel and
 *              symbol; per argument u8 kind, 3 zero bytes, u32 offset, u32
 *              size and the strings name and type (all of this the
 *              kernel's alone); the strings file, status name and error
 *              (null when KS_OK); each argument's size bytes, in order.
 *              variable: the strings name, symbol, op and file
 *              zero padding to the next multiple of 8
 *
 * The file grows in chunks (its size is a multiple of KS_TRACE_CHUNK, the
 * header in the first); bytes past `next` are zero. A reader takes the records from
 * 64 to min(next, file size); a record with no mark, or whose size word is
 * 0, is torn (its writer died between reserving and finishing it, or is
 * still writing): one with a size is skipped by it, one without is skipped
 * by scanning on in steps of 8 bytes to the next whole record.
 */
#ifndef KS_TRACEFMT_H
#define KS_TRACEFMT_H

#include <stdint.h>
#include <stdio.h>

#define KS_TRACE_MAGIC "KSTRACE"            /* 8 bytes with its NUL */
#define KS_TRACE_VERSION 1u
#define KS_TRACE_HEADER 64u
#define KS_TRACE_MARK 0x3152534bu          /* "KSR1" */
#define KS_TRACE_NULL 0xffffffffu
#define KS_TRACE_FIXED 80u                  /* a record's fixed part */
#define KS_TRACE_CHUNK (1u << 20)           /* the file grows 1 MiB at a time */

enum { KS_TRACE_LAUNCH = 1, KS_TRACE_VARIABLE = 2 };

/* The kinds of argument (ks_param_kind's values). */
enum { KS_TRACE_BYTES = 0, KS_TRACE_POINTER, KS_TRACE_SIGNED, KS_TRACE_UNSIGNED, KS_TRACE_FLOAT };

/* What ks__trace_render found. */
typedef struct ks__trace_counts {
    unsigned long long records, torn;
} ks__trace_counts;

/*
 * Render the trace file open on \p fd as JSON lines on \p out, one per
 * record in file order (docs/runtime.md), a torn one as
 * {"torn":true,"offset":…,"bytes":…}. 0, with *counts; -1 with \p why
 * filled when it is no trace file (or cannot be read).
 */
int ks__trace_render(int fd, FILE *out, ks__trace_counts *counts, char *why, size_t cap);

#endif /* KS_TRACEFMT_H */
