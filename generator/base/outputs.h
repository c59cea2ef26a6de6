/*
 * outputs.h — the all-or-nothing output writer (outputs.c).
 */
#ifndef KSTUB_OUTPUTS_H
#define KSTUB_OUTPUTS_H

#include <stddef.h>

/* Writes each file through a temporary file and rename, only where the
 * content differs from what is on disk. All or nothing: on failure no output
 * is left half-written. Returns 0 or -1 after printing an error. */
typedef struct ks_output {
    const char *path;
    const char *text;
} ks_output;
int ks_write_outputs(const ks_output *outs, size_t n);

#endif /* KSTUB_OUTPUTS_H */
