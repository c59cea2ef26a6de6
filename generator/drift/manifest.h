/*
 * manifest.h — the signature manifest (--manifest FILE.json), in both
 * directions: manifest.c writes it from the model and reads it back as
 * signatures (strings and numbers as written; no typed model needed), which
 * is what `kstub check` and `kstub diff` (drift.c) compare. The format's
 * field names are written in manifest.c and nowhere else.
 */
#ifndef KSTUB_MANIFEST_H
#define KSTUB_MANIFEST_H

#include <stddef.h>

/* "format" of the document: changes when a field's name or meaning does. */
#define KSTUB_MANIFEST_FORMAT 1

struct ks_options;
struct ks_model;
struct ks_spellings;

/* The manifest of a model as text (JSON, ending in a newline), or NULL; sp:
 * each parameter's c_type as the header template's pieces spell it (emit.h). */
char *ks_manifest_json(const struct ks_options *opts, const struct ks_model *model,
                       const struct ks_spellings *sp);
/* kstub --list --format=json: the manifest's document, each kernel also
 * carrying its stub's "prototype" (sp: the header's spellings). */
char *ks_list_json(const struct ks_options *opts, const struct ks_model *m, const struct ks_spellings *sp);

/* A manifest's signatures. */
typedef struct ks_sig_param {
    char *name, *type, *c_type;
    long size, align, offset;
} ks_sig_param;

typedef struct ks_sig_kern {
    char *name, *c_name, *symbol;
    unsigned line, col;        /* 0: not in the manifest */
    long max_threads, min_blocks;  /* -1: none */
    ks_sig_param *params;
    size_t nparams;
} ks_sig_kern;

/* A device variable as the manifest lists it ("variables", optional). */
typedef struct ks_sig_var {
    char *name, *c_name, *symbol, *type;
    char *space;               /* "constant", "device", "managed" */
    char *dims;                /* "[16][4]", "" for none */
    unsigned line, col;
    long size, align, elem_size;
} ks_sig_var;

typedef struct ks_sigs {
    char *source;
    ks_sig_kern *kernels;
    size_t nkernels;
    ks_sig_var *vars;
    size_t nvars;
} ks_sigs;

/* Reads a manifest file, or manifest text (name for messages). A manifest
 * that is not JSON (an error at its line and column), not of this format,
 * missing or mistyping a field, or listing a kernel (name and symbol) twice
 * is refused. Returns 0, or -1 after printing an error. */
int ks_manifest_read(const char *path, ks_sigs *sigs);
int ks_manifest_parse(const char *text, const char *name, ks_sigs *sigs);
void ks_sigs_free(ks_sigs *sigs);

#endif /* KSTUB_MANIFEST_H */
