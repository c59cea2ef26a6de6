/*
 * options.h — the options that shape parsing and output (ks_options, filled
 * by main.c), and the one option reader (options.c).
 */
#ifndef KSTUB_OPTIONS_H
#define KSTUB_OPTIONS_H

#include <stddef.h>

/* Options that shape parsing and output. */
enum { KS_KERNELS_PROJECT, KS_KERNELS_INPUT, KS_KERNELS_NAMED };

typedef struct ks_options {
    const char *input;
    const char *outbase;
    const char *manifest;
    const char *embed;
    int embed_source;          /* --embed-source: the input itself, for NVRTC */
    int skip_bodies;           /* --skip-bodies: parse declarations only (faster) */
    int body_errors;           /* --body-errors: errors inside function bodies refuse the file */
    const char *cache_dir;     /* --cache-dir: the prelude cache; NULL: KSTUB_CACHE_DIR, XDG */
    int no_cache;              /* --no-cache (or KSTUB_CACHE=0): no precompiled prelude */
    /* --kernels-in: which files' kernels get stubs. KS_KERNELS_PROJECT
     * (default): the input and every header it includes that is not a
     * system or toolkit header; KS_KERNELS_INPUT: the input only;
     * KS_KERNELS_NAMED: the input and kernel_headers (as given). */
    int kernels_in;
    const char **kernel_headers;
    size_t nkernel_headers;
    int rdc;                   /* --rdc (nvcc -rdc=true): relocatable device code, -fgpu-rdc */
    const char *template_dir;
    const char *builtin_template_dir;  /* where a template's {{> file}} is looked for second */
    const char *cuda_path;
    const char *arch;          /* e.g. "sm_90" */
    const char *std;           /* e.g. "c++17" */
    const char **defines;      /* "-DX=1" / "-UX" in command-line order */
    size_t ndefines;
    const char **includes;     /* include directories */
    size_t nincludes;
    /* Called by ks_parse with the CXTranslationUnit (as void *) after a
     * clean parse, before the unit is disposed: depfile.c collects the
     * included files there, sparing a second parse. NULL: not called. */
    void (*tu_hook)(void *tu, void *data);
    void *tu_hook_data;
} ks_options;

/* ---- options.c: the one option reader ---- */
/* Reads argv[*i] as opt: returns 0 with *value its value when it is opt
 * ("-X VALUE", "-XVALUE", "--opt VALUE", "--opt=VALUE"; *i moved past a
 * separate value) and NULL when it is another option; -1 after reporting a
 * missing value (a usage error; *value is then ""). */
int ks_option(int argc, char **argv, int *i, const char *opt, const char **value);

#endif /* KSTUB_OPTIONS_H */
