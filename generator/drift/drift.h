/*
 * drift.h — `kstub check` (are the generated files on disk what kstub would
 * write now?) and `kstub diff` (what changed between two manifests, and does
 * it break existing callers?), drift.c; their report formats, report.c.
 */
#ifndef KSTUB_DRIFT_H
#define KSTUB_DRIFT_H

#include <stddef.h>

/* Exit statuses of check and diff, a bit field as abidiff's: */
enum {
    KS_DRIFT_NONE = 0,         /* up to date / no change */
    KS_DRIFT_ERROR = 1,        /* the tool failed (unreadable or bad input) */
    KS_DRIFT_USAGE = 2,        /* bad command line */
    KS_DRIFT_CHANGED = 4,      /* something changed (out of date) */
    KS_DRIFT_BREAKING = 8      /* ... and it breaks existing callers; with CHANGED */
};

/* How check, diff and --list print what they found. */
typedef enum { KS_FORMAT_TEXT, KS_FORMAT_JSON, KS_FORMAT_GITHUB } ks_format;
/* "text", "json" or "github"; -1 if none of those. */
int ks_format_parse(const char *s);

/* kstub diff (cli/diff_cmd.c reads its command line): compares the
 * manifests at old_path and new_path, naming source in diagnostics (NULL:
 * each manifest's own), prints the report in fmt and returns diff's exit
 * status (a KS_DRIFT_* set). */
int ks_diff_run(const char *old_path, const char *new_path, const char *source, ks_format fmt);

struct ks_output;

/* What kstub check compares. */
typedef struct ks_check_input {
    const char *source;        /* the .cu path, for diagnostics */
    const char *fresh_manifest;/* the manifest of the model just parsed */
    const struct ks_output *outputs;  /* what the generator would write now */
    size_t noutputs;
    const char *manifest;      /* on-disk manifest path, or NULL */
    const char *fix_command;   /* the command line that regenerates */
    ks_format format;
    const char *image;         /* the --embed image, or NULL */
    const char *image_stale;   /* why the image is older than the input, or NULL */
} ks_check_input;

/* Compares with the files on disk and prints the report. Returns 0 with
 * *status what was found (KS_DRIFT_NONE, or KS_DRIFT_CHANGED with
 * KS_DRIFT_BREAKING when a kernel's change breaks callers), or -1 after an
 * error (the on-disk manifest cannot be read). A stale image is reported
 * after the drift, as a note: the drift is the answer. */
int ks_check_run(const ks_check_input *in, int *status);

#endif /* KSTUB_DRIFT_H */
