/*
 * compat.c — what nvcc gives a .cu file and clang's CUDA mode does not, so
 * that bodies parse as nvcc parses them: a header kstub includes before the
 * input (never written to disk: libclang reads it from memory under
 * KS_COMPAT_PATH, and the depfile leaves it out), and extra parse flags.
 *
 * Nothing here may change a type's layout or a kernel's signature: it only
 * declares what nvcc's headers declare and clang's lack.
 */
#include "front.h"

static const char compat_header[] =
    "/* kstub's nvcc compatibility header (generator/compat.c) */\n"
    "#pragma clang system_header\n";

const char *ks_compat_header(size_t *len)
{
    *len = sizeof compat_header - 1;
    return compat_header;
}

size_t ks_compat_args(const ks_options *opts, const char **args, size_t max)
{
    (void)opts;
    (void)args;
    (void)max;
    return 0;
}
