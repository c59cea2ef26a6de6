/*
 * filetop.c — a file's first byte, looked up once per translation unit
 * (session_files.h). On a CUTLASS file kstub made 3,233 such lookups, 2.2-2.7 s
 * of CPU (docs/performance.md, issue 38), half of them the depfile's of
 * files the walk had looked up already. The table holds the libclang
 * answer as it is (a CXSourceLocation, valid while the unit lives), keyed
 * by the CXFile libclang gave, for one unit at a time and one parse of it:
 * session.c forgets the table when the unit is disposed of and before each
 * reparse (the same handle, a new source manager). Declared in
 * session_files.h, the depfile's seam.
 */
#include "front/session_files.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct top {
    CXFile file;                 /* NULL: an empty slot */
    CXSourceLocation loc;
} top;

static CXTranslationUnit unit;
static top *slots;               /* open addressing by the CXFile's address */
static size_t nslots, nused;

size_t ks_file_top_forget(void)
{
    size_t had = nused;
    free(slots);
    slots = NULL;
    nslots = nused = 0;
    unit = NULL;
    return had;
}

static size_t slot_of(const top *t, size_t cap, CXFile f)
{
    size_t j = ks_hash_bytes(&f, sizeof f) & (cap - 1);
    while (t[j].file && t[j].file != f)
        j = (j + 1) & (cap - 1);
    return j;
}

CXSourceLocation ks_file_top(CXTranslationUnit tu, CXFile f)
{
    if (!f)
        return clang_getLocationForOffset(tu, f, 0);
    if (tu != unit) {
        ks_file_top_forget();
        unit = tu;
    }
    if (nslots && slots[slot_of(slots, nslots, f)].file == f)
        return slots[slot_of(slots, nslots, f)].loc;
    CXSourceLocation loc = clang_getLocationForOffset(tu, f, 0);
    if ((nused + 1) * 2 > nslots) {
        size_t cap = nslots ? 2 * nslots : 256;
        top *big = ks_xmalloc(cap * sizeof *big);
        memset(big, 0, cap * sizeof *big);
        for (size_t i = 0; i < nslots; i++)
            if (slots[i].file)
                big[slot_of(big, cap, slots[i].file)] = slots[i];
        free(slots);
        slots = big;
        nslots = cap;
    }
    size_t j = slot_of(slots, nslots, f);
    slots[j].file = f;
    slots[j].loc = loc;
    nused++;
    return loc;
}
