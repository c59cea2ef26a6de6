/*
 * cursor.h — cursor helpers (cursor.c): the front end's ground floor.
 */
#ifndef KSTUB_CURSOR_H
#define KSTUB_CURSOR_H

#include "front/session.h"

#include <clang-c/Index.h>

char *ks_take(CXString s);
void ks_cursor_location(CXCursor c, unsigned *line, unsigned *col);
void ks_cursor_error(const ks_session *s, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ks_cursor_note(const ks_session *s, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The cursor's tokens, its extent mapped to file positions (a kernel's
 * extent starts inside the __global__ macro). Free with clang_disposeTokens. */
void ks_cursor_tokens(const ks_session *s, CXCursor c, CXToken **toks, unsigned *n);
/* "ns::inner::name" from the cursor's semantic parents. */
char *ks_qualified_name(CXCursor c);
int ks_cursor_is_kernel(CXCursor c);

#endif /* KSTUB_CURSOR_H */
