/*
 * prelude_files.c — the files a prelude (or a layer) was built from, and
 * which of them are system headers (pch.c's helper): clang_getInclusions
 * lists them, as depfile.c lists a parse's.
 *
 * Whether a file is a system header is a property of its inclusion
 * (clang_Location_isInSystemHeader of a location in it). The one location
 * libclang gives for a file alone, clang_getLocationForOffset(tu, file, 0),
 * searches the unit's source entries from the start for the file's first
 * inclusion: 300 headers of the CUDA prelude among some hundred thousand
 * entries made it 0.1 s of a prelude's build, 0.04 s of a layer's. A
 * location inside the file is found more cheaply in two other ways, each
 * in that same first inclusion:
 *
 *  - the include stack of every file a header includes starts at the
 *    #include in that header (the first inclusion's children are listed
 *    before any later inclusion's);
 *  - a top-level declaration spelled in the header (not written by a
 *    macro), the first one seen in source order (the unit's own: pch.c
 *    parses with an index that lists no declaration of a PCH it loads).
 *
 * Only a file with neither (a header of macros alone) is looked up the old
 * way. The result is the same flag for every file (check-pch compares the
 * depfiles of -MMD, which leave system headers out, with and without the
 * cache).
 */
#include "base/util.h"
#include "front/session_files.h"
#include "front/prelude/prelude.h"
#include "front/prelude/prelude_int.h"

#include <stdlib.h>
#include <string.h>

void ks__prelude_add_file(ks_prelude *p, const char *path, int sys)
{
    p->files = ks_xrealloc(p->files, (p->nfiles + 1) * sizeof *p->files);
    p->is_system = ks_xrealloc(p->is_system, p->nfiles + 1);
    p->files[p->nfiles] = ks_xstrdup(path);
    p->is_system[p->nfiles++] = (unsigned char)sys;
}

typedef struct files_ctx {
    ks_prelude *p;
    size_t first;              /* p->files[first..]: this unit's own */
    CXFile *cx;                /* per own file: its CXFile */
    signed char *sys;          /* per own file: 1, 0, or -1 not yet known */
    size_t n;
    int bad;                   /* a path a depfile cannot hold */
} files_ctx;

/* Every own file that is f gets sys where it has none yet. */
static void know(files_ctx *c, CXFile f, int sys)
{
    for (size_t i = c->n; i-- > 0;)
        if (c->sys[i] < 0 && clang_File_isEqual(c->cx[i], f))
            c->sys[i] = (signed char)(sys != 0);
}

/* As depfile.c lists inclusions: the main file (here the prelude's own),
 * clang's buffers and the compat header left out. */
static void collect(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    files_ctx *c = data;
    if (depth > 0) {                           /* the includer: the file stack[0] is in */
        CXFile inc = NULL;
        clang_getSpellingLocation(stack[0], &inc, NULL, NULL, NULL);
        if (inc)
            know(c, inc, clang_Location_isInSystemHeader(stack[0]));
    }
    CXString name = clang_getFileName(file);
    const char *path = clang_getCString(name);
    if (depth > 0 && path && path[0] && path[0] != '<' && strcmp(path, KS_COMPAT_PATH) != 0) {
        if (strchr(path, '\n'))
            c->bad = 1;
        ks__prelude_add_file(c->p, path, 0);
        c->cx = ks_xrealloc(c->cx, (c->n + 1) * sizeof *c->cx);
        c->sys = ks_xrealloc(c->sys, c->n + 1);
        c->cx[c->n] = file;
        c->sys[c->n] = -1;
        for (size_t i = 0; i < c->n; i++)      /* included before: the first inclusion's flag */
            if (clang_File_isEqual(c->cx[i], file)) {
                c->sys[c->n] = c->sys[i];
                break;
            }
        c->n++;
    }
    clang_disposeString(name);
}

static int unknown(const files_ctx *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->sys[i] < 0)
            return 1;
    return 0;
}

/* A top-level declaration spelled where it expands (no macro wrote it):
 * its file's flag, where that file has none yet. */
static enum CXChildVisitResult top_level(CXCursor cur, CXCursor parent, CXClientData data)
{
    (void)parent;
    files_ctx *c = data;
    CXSourceLocation loc = clang_getCursorLocation(cur);
    CXFile ef = NULL, sf = NULL;
    unsigned eo = 0, so = 0;
    clang_getExpansionLocation(loc, &ef, NULL, NULL, &eo);
    clang_getSpellingLocation(loc, &sf, NULL, NULL, &so);
    if (ef && sf && eo == so && clang_File_isEqual(ef, sf))
        know(c, ef, clang_Location_isInSystemHeader(loc));
    return unknown(c) ? CXChildVisit_Continue : CXChildVisit_Break;
}

int ks__prelude_collect_files(ks_prelude *p, CXTranslationUnit tu)
{
    files_ctx c = {p, p->nfiles, NULL, NULL, 0, 0};
    clang_getInclusions(tu, collect, &c);
    /* A file included again after its first inclusion's children were
     * listed took the flag then; one listed before them learns it now. */
    for (size_t i = 0; i < c.n; i++)
        if (c.sys[i] < 0)
            for (size_t j = 0; j < i; j++)
                if (c.sys[j] >= 0 && clang_File_isEqual(c.cx[i], c.cx[j])) {
                    c.sys[i] = c.sys[j];
                    break;
                }
    /* The unit's own top-level declarations (pch.c's index lists no
     * others: a layer's not the base's). */
    if (unknown(&c))
        clang_visitChildren(clang_getTranslationUnitCursor(tu), top_level, &c);
    for (size_t i = 0; i < c.n; i++) {
        if (c.sys[i] < 0)
            c.sys[i] = (signed char)(clang_Location_isInSystemHeader(clang_getLocationForOffset(tu, c.cx[i], 0)) != 0);
        p->is_system[c.first + i] = (unsigned char)c.sys[i];
    }
    free(c.cx);
    free(c.sys);
    return c.bad ? -1 : 0;
}
