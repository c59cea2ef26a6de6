/*
 * filetop.c — a file's first byte, looked up once per translation unit
 * (session_files.h). On a CUTLASS file kstub made 3,233 such lookups, 2.2-2.7 s
 * of CPU (docs/performance.md, issue 38), half of them the depfile's of
 * files the walk had looked up already: clang_getLocationForOffset looks
 * through all of the unit's files for each. The table holds each answer
 * (a CXSourceLocation, valid while the unit lives), keyed by the CXFile
 * libclang gave, for one unit at a time and one parse of it: session.c
 * forgets the table when the unit is disposed of and before each reparse
 * (the same handle, a new source manager). Most answers need no lookup:
 * a location in a file gives its first byte by arithmetic (top_from), and
 * one pass over the unit's inclusions gives a location in every file that
 * includes another. Declared in session_files.h, the depfile's seam.
 */
#include "front/session_files.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    CXFile file;                 /* NULL: an empty slot */
    CXSourceLocation loc;
} slot;

static CXTranslationUnit unit;
static int primed;               /* the unit's inclusions read (prime_one) */
static slot *slots;              /* open addressing by the CXFile's address */
static size_t nslots, nused;

size_t ks_file_top_forget(void)
{
    size_t had = nused;
    free(slots);
    slots = NULL;
    nslots = nused = 0;
    unit = NULL;
    primed = 0;
    return had;
}

static size_t slot_of(const slot *t, size_t cap, CXFile f)
{
    size_t j = ks_hash_bytes(&f, sizeof f) & (cap - 1);
    while (t[j].file && t[j].file != f)
        j = (j + 1) & (cap - 1);
    return j;
}

static int in_table(CXFile f, CXSourceLocation *loc)
{
    if (!nslots || slots[slot_of(slots, nslots, f)].file != f)
        return 0;
    if (loc)
        *loc = slots[slot_of(slots, nslots, f)].loc;
    return 1;
}

static void remember(CXFile f, CXSourceLocation loc)
{
    if ((nused + 1) * 2 > nslots) {
        size_t cap = nslots ? 2 * nslots : 256;
        slot *big = ks_xmalloc(cap * sizeof *big);
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
}

/* The first byte of the inclusion of f that at (a location in f) lies in,
 * found without a look through the unit's files: a file location is its
 * inclusion's start plus its offset in the file (SourceLocation's raw
 * encoding, which CXSourceLocation carries in int_data; a macro's has the
 * top bit set). What the arithmetic gives is taken only once libclang
 * confirms it: offset 0 of f. 1 and *first, or 0. */
static int top_from(CXFile f, CXSourceLocation at, CXSourceLocation *first)
{
    CXFile af, tf;
    unsigned off = 0, toff = 1;
    if (at.int_data & 0x80000000u)
        return 0;
    clang_getFileLocation(at, &af, NULL, NULL, &off);
    if (!af || off > at.int_data || !clang_File_isEqual(af, f))
        return 0;
    CXSourceLocation t = at;
    t.int_data -= off;
    clang_getFileLocation(t, &tf, NULL, NULL, &toff);
    if (!tf || toff != 0 || !clang_File_isEqual(tf, f))
        return 0;
    *first = t;
    return 1;
}

/* Each including file's first byte, from the location of an #include line
 * of it (the inclusion stack's first entry lies in the includer). A file
 * of a precompiled prelude is not listed. */
static void prime_one(CXFile included, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    (void)included;
    (void)data;
    if (depth == 0)
        return;
    CXFile f;
    CXSourceLocation t;
    clang_getFileLocation(stack[0], &f, NULL, NULL, NULL);
    if (f && !in_table(f, NULL) && top_from(f, stack[0], &t))
        remember(f, t);
}

/* f's answer when the table has it (the unit's inclusions read first). */
static int known(CXTranslationUnit tu, CXFile f, CXSourceLocation *loc)
{
    if (tu != unit) {
        ks_file_top_forget();
        unit = tu;
    }
    if (!primed) {
        primed = 1;
        clang_getInclusions(tu, prime_one, NULL);
    }
    return in_table(f, loc);
}

CXSourceLocation ks_file_top(CXTranslationUnit tu, CXFile f)
{
    CXSourceLocation loc;
    if (!f)
        return clang_getLocationForOffset(tu, f, 0);
    if (known(tu, f, &loc))
        return loc;
    loc = clang_getLocationForOffset(tu, f, 0);
    remember(f, loc);
    return loc;
}

CXSourceLocation ks_file_top_near(CXTranslationUnit tu, CXFile f, CXSourceLocation at)
{
    CXSourceLocation loc;
    if (f && known(tu, f, &loc))
        return loc;
    if (f && top_from(f, at, &loc)) {
        remember(f, loc);
        return loc;
    }
    return ks_file_top(tu, f);
}

CXSourceLocation ks_file_loc(CXTranslationUnit tu, CXFile f, unsigned offset)
{
    if (!f)
        return clang_getLocationForOffset(tu, f, offset);
    CXSourceLocation t = ks_file_top(tu, f), at = t;
    CXFile af;
    unsigned aoff = 0;
    if (!(t.int_data & 0x80000000u) && offset < 0x80000000u - t.int_data) {
        at.int_data += offset;
        clang_getFileLocation(at, &af, NULL, NULL, &aoff);
        if (af && aoff == offset && clang_File_isEqual(af, f))
            return at;
    }
    return clang_getLocationForOffset(tu, f, offset);
}
