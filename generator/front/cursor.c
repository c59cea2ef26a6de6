/*
 * cursor.c — small helpers over libclang cursors that every front-end file
 * uses: a CXString taken as a malloc'd string, a cursor's location, tokens
 * and qualified name, diagnostics placed at a cursor, whether it is a
 * kernel. Below session.c and the walk; calls nothing above it.
 */
#include "base/util.h"
#include "front/session.h"
#include "front/cursor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cursor helpers ---------------------------------------------------------------------- */

char *ks_take(CXString s)
{
    const char *c = clang_getCString(s);
    char *r = ks_xstrdup(c ? c : "");
    clang_disposeString(s);
    return r;
}

void ks_cursor_location(CXCursor c, unsigned *line, unsigned *col)
{
    clang_getExpansionLocation(clang_getCursorLocation(c), NULL, line, col, NULL);
}

static void cursor_diag(const ks_session *s, CXCursor c, const char *severity, const char *fmt,
                        va_list ap)
{
    unsigned line, col;
    ks_cursor_location(c, &line, &col);
    ks_verror_at(s->opts->input, line, col, severity, fmt, ap);
}

void ks_cursor_error(const ks_session *s, CXCursor c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cursor_diag(s, c, "error", fmt, ap);
    va_end(ap);
}

void ks_cursor_note(const ks_session *s, CXCursor c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cursor_diag(s, c, "note", fmt, ap);
    va_end(ap);
}

/* Whether loc lies in a macro's expansion: its spelling is not where it is
 * expanded. */
static int in_macro(CXSourceLocation loc)
{
    CXFile ef, sf;
    unsigned eo, so;
    clang_getExpansionLocation(loc, &ef, NULL, NULL, &eo);
    clang_getSpellingLocation(loc, &sf, NULL, NULL, &so);
    return eo != so || !clang_File_isEqual(ef, sf);
}

/* The location where loc is expanded, as a location in its file. Made from
 * a location of the same file the cursor has outside macros (its name's,
 * usually), moved by the difference of their offsets, as clang moves a
 * location within a file (a location is the file's start plus the
 * offset), and checked: where that cannot be, from the file, line and
 * column, which looks through all the unit's files (for every kernel,
 * that grew with the square of the headers: a kernel's extent starts
 * inside the __global__ macro). */
static CXSourceLocation expansion_of(const ks_session *s, CXSourceLocation loc, CXSourceLocation near)
{
    CXFile f, nf, got;
    unsigned line, col, off, noff, goff;
    clang_getExpansionLocation(loc, &f, &line, &col, &off);
    if (!f)
        return loc;
    if (!in_macro(near)) {
        clang_getExpansionLocation(near, &nf, NULL, NULL, &noff);
        if (nf && clang_File_isEqual(f, nf)) {
            CXSourceLocation moved = near;
            moved.int_data = near.int_data - noff + off;
            clang_getExpansionLocation(moved, &got, NULL, NULL, &goff);
            if (got && clang_File_isEqual(got, f) && goff == off && !in_macro(moved))
                return moved;
        }
    }
    return clang_getLocation(s->tu, f, line, col);
}

/* The cursor's extent, where a macro expands its ends, from where it is
 * expanded. */
void ks_cursor_tokens(const ks_session *s, CXCursor c, CXToken **toks, unsigned *n)
{
    CXSourceRange r = clang_getCursorExtent(c);
    CXSourceLocation a = clang_getRangeStart(r), b = clang_getRangeEnd(r), near = clang_getCursorLocation(c);
    int ma = in_macro(a), mb = in_macro(b);
    if (ma || mb) {
        CXFile f1, f2;
        clang_getExpansionLocation(a, &f1, NULL, NULL, NULL);
        clang_getExpansionLocation(b, &f2, NULL, NULL, NULL);
        if (f1 && f2)
            r = clang_getRange(ma ? expansion_of(s, a, near) : a, mb ? expansion_of(s, b, near) : b);
    }
    clang_tokenize(s->tu, r, toks, n);
}

char *ks_qualified_name(CXCursor c)
{
    char *name = ks_take(clang_getCursorSpelling(c));
    for (CXCursor p = clang_getCursorSemanticParent(c);
         !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        if (clang_getCursorKind(p) == CXCursor_LinkageSpec)
            continue;
        char *part = ks_take(clang_getCursorSpelling(p));
        char *joined = ks_xasprintf("%s::%s", *part ? part : "(anonymous)", name);
        free(part);
        free(name);
        name = joined;
    }
    return name;
}

static enum CXChildVisitResult find_global_attr(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_CUDAGlobalAttr) {
        *(int *)data = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

int ks_cursor_is_kernel(CXCursor c)
{
    int found = 0;
    clang_visitChildren(c, find_global_attr, &found);
    return found;
}
