/*
 * rtshared.c — the runtime's SHA-256 (runtime/sha256.c) and its safe file
 * and directory opening (runtime/safefile.c), compiled into the generator
 * for the prelude cache (pch.c), so both caches follow one set of rules
 * from one copy of the code.
 *
 * They are included rather than linked: every build of the generator (the
 * normal one, the sanitizer and fuzzer builds in tests/sanitize_gen.mk)
 * compiles the generator's own .c files only, and without the CUDA include directory,
 * which runtime/internal.h needs for <cuda.h>. safefile.c uses nothing of
 * internal.h but what is declared below, so its guard is set and these
 * stand in for it; a new dependency of safefile.c on internal.h shows up
 * here as a compile error, never as a silent difference.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "front.h"

#define KS_INTERNAL_H
#define KS__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

#include "../runtime/safefile.c"
#include "../runtime/sha256.c"
