/*
 * cursor.c — small helpers over libclang cursors that every front-end file
 * uses: a CXString taken as a malloc'd string, a cursor's location, tokens
 * and qualified name, diagnostics placed at a cursor, whether it is a
 * kernel. Below session.c and the walk; calls nothing above it.
 */
#include "front.h"

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

/* The cursor's extent, where a macro expands its ends, from where it is
 * expanded. Only then is the location made again from its file (which
 * looks through all the unit's files: done for every kernel, that grew
 * with the square of the headers). */
void ks_cursor_tokens(const ks_session *s, CXCursor c, CXToken **toks, unsigned *n)
{
    CXSourceRange r = clang_getCursorExtent(c);
    if (in_macro(clang_getRangeStart(r)) || in_macro(clang_getRangeEnd(r))) {
        CXFile f1, f2;
        unsigned l1, c1, l2, c2;
        clang_getExpansionLocation(clang_getRangeStart(r), &f1, &l1, &c1, NULL);
        clang_getExpansionLocation(clang_getRangeEnd(r), &f2, &l2, &c2, NULL);
        if (f1 && f2)
            r = clang_getRange(clang_getLocation(s->tu, f1, l1, c1), clang_getLocation(s->tu, f2, l2, c2));
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
