/*
 * rtshared.c — the runtime's SHA-256 (runtime/sha256.c), its safe file and
 * directory opening (runtime/safefile.c) and its cache entries and cache
 * directory rule (runtime/cache_entry.c), compiled into the generator for
 * the prelude cache (pch.c), so both caches follow one set of rules from
 * one copy of the code; and its matching of internal-linkage symbol
 * patterns (runtime/symbol.c), for the embedded image's entry check
 * (image_entries.c).
 *
 * They are included rather than linked: every build of the generator (the
 * normal one, the sanitizer and fuzzer builds in tests/sanitize_gen.mk)
 * compiles the generator's own .c files only, and without the CUDA include directory,
 * which runtime/internal.h needs for <cuda.h>. safefile.c and cache_entry.c
 * use nothing of internal.h but what is declared below (and each other), so
 * its guard is set and these stand in for it; a new dependency on
 * internal.h shows up here as a compile error, never as a silent
 * difference.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "front.h"

#define KS_INTERNAL_H
#define KS__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* As internal.h's: the environment as a set-uid program must read it. */
static inline const char *ks__getenv(const char *name)
{
    return secure_getenv(name);
}

#include "../runtime/safefile.c"
#include "../runtime/sha256.c"
#include "../runtime/cache_entry.c"
#include "../runtime/symbol.c"
