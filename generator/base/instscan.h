/*
 * instscan.h — whether a file's text may hold an explicit instantiation
 * (instscan.c), asked before a header's tokens are read.
 */
#ifndef KSTUB_BASE_INSTSCAN_H
#define KSTUB_BASE_INSTSCAN_H

#include <stddef.h>

/* 1 when text[0, n) has a "template" as code that is not followed by '<',
 * nor a disambiguator ("::template", ".template", "->template") nor after
 * "extern"; 0 when it has none. */
int ks_text_may_instantiate(const char *text, size_t n);
/* text[0, n) with its line splices (a backslash, blanks, a newline) removed,
 * as translation phase 2 does ("temp\<newline>late" is the keyword):
 * malloc'd and NUL-terminated, its length in *out_n; NULL when it has none. */
char *ks_unspliced(const char *text, size_t n, size_t *out_n);

#endif
