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

#endif
