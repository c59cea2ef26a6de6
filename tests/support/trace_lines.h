/*
 * trace_lines.h — a trace file (common/tracefmt.h) as the JSON lines
 * `kstub trace FILE` prints, for the tests that read traces back: the
 * runtime's CPU suites and tests/gpu. Header-only (each suite is its own
 * program); the rendering is libkstub's own (common/trace_render.c, in
 * libkstub.a), so what the tests read is what users read.
 */
#ifndef KS_TEST_TRACE_LINES_H
#define KS_TEST_TRACE_LINES_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "tracefmt.h"

/* The trace at path rendered into a temporary file, rewound; NULL when it
 * cannot be read or is no trace (why on stderr). counts: when non-NULL. */
static inline FILE *trace_lines(const char *path, ks__trace_counts *counts)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(path);
        return NULL;
    }
    FILE *out = tmpfile();
    char why[256];
    ks__trace_counts n;
    int rc = out ? ks__trace_render(fd, out, &n, why, sizeof why) : -1;
    close(fd);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", path, out ? why : "no temporary file");
        if (out)
            fclose(out);
        return NULL;
    }
    if (counts)
        *counts = n;
    rewind(out);
    return out;
}

#endif /* KS_TEST_TRACE_LINES_H */
