/*
 * compat.h — what nvcc provides and clang's CUDA mode lacks (compat.c):
 * the compat header's text and the parse flags it needs.
 */
#ifndef KSTUB_COMPAT_H
#define KSTUB_COMPAT_H

#include "base/options.h"

#include <stddef.h>

/* KS_COMPAT_PATH: session_files.h. */
#define KS_COMPAT_MAX_ARGS 16
const char *ks_compat_header(size_t *len);
/* Extra parse flags for opts (at most max, at most KS_COMPAT_MAX_ARGS, strings
 * static or living as long as the process); returns how many were stored. */
size_t ks_compat_args(const ks_options *opts, const char **args, size_t max);

#endif /* KSTUB_COMPAT_H */
