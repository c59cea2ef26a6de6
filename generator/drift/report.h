/*
 * report.h — the findings of kstub check and kstub diff (drift.c) and the
 * three ways report.c prints them: as compilers do (file:line:col: error:
 * ...), as one JSON document, or as GitHub workflow annotations.
 */
#ifndef KSTUB_REPORT_H
#define KSTUB_REPORT_H

#include <stddef.h>

#include "drift/drift.h"
#include "drift/manifest.h"

/* A finding's severity: an error breaks existing callers, a warning is a
 * compatible change, a note changes nothing. */
typedef enum { KS_SEV_NOTE, KS_SEV_WARNING, KS_SEV_ERROR } ks_severity;

typedef struct ks_finding {
    ks_severity sev;
    const char *kind;        /* stable identifier, e.g. "param_type_changed" */
    char *file;              /* NULL: none */
    unsigned line, col;      /* 0: unknown */
    char *kernel;            /* qualified name, or NULL */
    char *symbol;            /* device symbol, or NULL */
    char *message;
} ks_finding;

typedef struct ks_report {
    ks_finding *v;
    size_t n;
    int breaking, changed;   /* an error was added; an error or warning was */
    size_t cap;              /* allocated findings */
} ks_report;

/* Adds a finding about kernel k (NULL: none), at file:line:col. */
void ks_report_add(ks_report *r, ks_severity sev, const char *kind, const char *file,
                   unsigned line, unsigned col, const ks_sig_kern *k, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
void ks_report_free(ks_report *r);

/* The exit status the findings give: KS_DRIFT_NONE, or CHANGED (| BREAKING). */
int ks_report_status(const ks_report *r);

/* "N breaking changes, M compatible changes" appended to b. */
struct ks_buf;
void ks_report_count(const ks_report *r, struct ks_buf *b);

/* Prints the report to stdout. command: "check" or "diff"; summary: the
 * last line of text output; fix: the command that regenerates, or NULL;
 * status: the exit status. */
void ks_report_print(const ks_report *r, ks_format fmt, const char *command, const char *summary,
                     const char *fix, int status);

#endif /* KSTUB_REPORT_H */
