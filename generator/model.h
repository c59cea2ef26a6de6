/*
 * model.h — the generator's signature model: what the front end (parse.c)
 * learns about each kernel, and what the emitters (emit.c, manifest.c) write.
 * Also the small utilities every generator file shares (util.c).
 */
#ifndef KSTUB_MODEL_H
#define KSTUB_MODEL_H

#include <stdarg.h>
#include <stddef.h>

#define KSTUB_VERSION "0.1.0"
#define KSTUB_MANIFEST_FORMAT 1

/* One kernel parameter, as the stub declares and packs it. */
typedef struct ks_param {
    char *name;        /* the kernel's own name, or argN when unnamed */
    char *type;        /* source spelling, e.g. "const float *__restrict" */
    char *c_type;      /* C spelling, e.g. "const float *restrict" */
    char *tag;         /* short form for overload names, e.g. "cfloatp" */
    long size;         /* bytes */
    long align;        /* bytes */
    long offset;       /* bytes from the start of the parameter buffer */
} ks_param;

typedef struct ks_kern {
    char *name;        /* qualified C++ name, e.g. "ns::scale" */
    char *c_name;      /* the generated C function's name */
    char *symbol;      /* device symbol, mangled for C++ kernels */
    char *signature;   /* the declaration as written, one line */
    unsigned line, col;
    long max_threads;  /* __launch_bounds__ maximum threads, -1 if none */
    long min_blocks;   /* __launch_bounds__ minimum blocks, -1 if none */
    ks_param *params;
    size_t nparams;
} ks_kern;

/* A C type the header must declare before it can name it. */
typedef struct ks_fwd {
    char *c_name;      /* e.g. "ns_Particle" */
} ks_fwd;

/* A C mirror of a struct, union or enum that a kernel takes by value,
 * with its layout checks; emitted in dependency order. */
typedef struct ks_ctype {
    char *c_name;      /* e.g. "ns_Params" */
    char *text;        /* the definition and its static asserts, ready to print */
} ks_ctype;

typedef struct ks_model {
    char *source;      /* input path as given */
    ks_kern *kernels;
    size_t nkernels;
    ks_fwd *fwds;      /* forward declarations, in first-use order */
    size_t nfwds;
    ks_ctype *types;   /* mirrored types, inner ones first */
    size_t ntypes;
    int needs_vector_types;   /* a parameter names a CUDA vector type */
    int needs_cuda_h;         /* a parameter is a CUtensorMap */
} ks_model;

/* Options that shape parsing and output. */
typedef struct ks_options {
    const char *input;
    const char *outbase;
    const char *manifest;
    const char *embed;
    int embed_source;          /* --embed-source: the input itself, for NVRTC */
    int skip_bodies;           /* --skip-bodies: parse declarations only (faster) */
    const char *template_dir;
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

/* ---- parse.c ---- */
/* Parses opts->input and fills *model. Prints diagnostics to stderr; returns
 * the number of errors (0 on success). */
int ks_parse(const ks_options *opts, ks_model *model);
void ks_model_free(ks_model *model);

/* ---- emit.c ---- */
typedef struct ks_image_blob {
    unsigned char *data;
    size_t size;               /* bytes including a trailing NUL for PTX */
    const char *kind;          /* "PTX", "CUBIN" or "FATBIN" */
    const char *name;          /* basename of the embedded file */
} ks_image_blob;

/* Reads an nvcc-built image and tells PTX, cubin and fatbin apart by content.
 * Returns 0, or -1 after printing an error. */
int ks_image_read(const char *path, ks_image_blob *blob);

/* The input .cu itself as a KS_IMAGE_SOURCE image, compiled by libkstub with
 * NVRTC at run time (--embed-source). Returns 0, or -1 after an error. */
int ks_source_read(const char *path, ks_image_blob *blob);

/* Renders templates/NAME with the model; returns malloc'd text or NULL after
 * printing an error. */
char *ks_emit(const ks_options *opts, const ks_model *model, const ks_image_blob *image,
              const char *template_name);

/* ---- manifest.c ---- */
char *ks_manifest_json(const ks_options *opts, const ks_model *model);

/* ---- util.c ---- */
typedef struct ks_buf {
    char *data;
    size_t len, cap;
} ks_buf;

void ks_buf_put(ks_buf *b, const char *s, size_t n);
void ks_buf_puts(ks_buf *b, const char *s);
void ks_buf_printf(ks_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *ks_buf_take(ks_buf *b);     /* NUL-terminated; b is left empty */

void *ks_xmalloc(size_t n);
void *ks_xrealloc(void *p, size_t n);
char *ks_xstrdup(const char *s);
char *ks_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ks_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Reads a whole file; returns malloc'd bytes (NUL-terminated) or NULL with errno. */
char *ks_read_file(const char *path, size_t *size);

/* Writes each file through a temporary file and rename, only where the
 * content differs from what is on disk. All or nothing: on failure no output
 * is left half-written. Returns 0 or -1 after printing an error. */
typedef struct ks_output {
    const char *path;
    const char *text;
} ks_output;
int ks_write_outputs(const ks_output *outs, size_t n);

/* Prints "file:line:col: error: ..." (line 0 means no location). */
void ks_error_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ks_note_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ks_warning_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ks_verror_at(const char *file, unsigned line, unsigned col, const char *severity,
                  const char *fmt, va_list ap);

/* basename without directories; points into s. */
const char *ks_basename(const char *s);

/* ---- depfile.c: make depfiles (-MD, -MMD, -MF, -MT, -MQ) ---- */
/* The files a parse read: the input first, then every included file once,
 * in first-inclusion order. */
typedef struct ks_deps {
    char **files;
    unsigned char *is_system;  /* per file: a system header (clang's view) */
    size_t nfiles;
    int collected;             /* set by ks_deps_hook */
} ks_deps;

/* A ks_options.tu_hook: data is a ks_deps *. */
void ks_deps_hook(void *tu, void *data);

void ks_deps_free(ks_deps *deps);
/* Adds a file the generator read besides the parse (the --embed image, user
 * templates); a file already listed is not added again. */
void ks_deps_add(ks_deps *deps, const char *path);

/* Make's spelling of a path in a rule: spaces and tabs escaped with '\',
 * '$' doubled, '#' escaped (as gcc's -MQ and depfile prerequisites). */
char *ks_make_quote(const char *path);

/* The depfile text: "TARGETS: input headers...", then an empty rule per
 * header (gcc's -MP) so a deleted header does not break make. targets are
 * written as given (already quoted). With skip_system, leaves out system
 * headers and files under any of system_dirs (gcc's -MMD). */
char *ks_depfile_text(const ks_deps *deps, const char *const *targets, size_t ntargets,
                      int skip_system, const char *const *system_dirs, size_t nsystem_dirs);

/* ---- compdb.c: options from compile_commands.json (-p BUILD_DIR) ---- */
/* What a compile command contributes; strings are owned here. */
typedef struct ks_compdb {
    char **includes;           /* -I and -isystem directories, made absolute */
    size_t nincludes;
    char **system_dirs;        /* the -isystem ones again, for -MMD */
    size_t nsystem_dirs;
    char **defines;            /* "-DX=1" / "-UX", in order */
    size_t ndefines;
    char *std;                 /* e.g. "c++17", or NULL */
    char *arch;                /* e.g. "sm_80", or NULL */
    char *directory;           /* the entry's "directory" */
} ks_compdb;

/* Translates one nvcc (or clang) command line, argv[0] being the compiler,
 * into *db; flags that only shape code generation are dropped. Relative
 * paths are taken from directory. Returns the number of arguments dropped
 * with a warning (0 when nothing surprising was seen). */
int ks_compdb_translate(const char *directory, const char *const *argv, size_t argc,
                        ks_compdb *db);
/* Reads BUILD_DIR/compile_commands.json and translates the entry for input.
 * Returns 0, or -1 after printing an error. */
int ks_compdb_load(const char *build_dir, const char *input, ks_compdb *db);
void ks_compdb_free(ks_compdb *db);

/* ---- drift.c: kstub check and kstub diff ---- */
/* Exit statuses of check and diff, a bit field as abidiff's: */
enum {
    KS_DRIFT_NONE = 0,         /* up to date / no change */
    KS_DRIFT_ERROR = 1,        /* the tool failed (unreadable or bad input) */
    KS_DRIFT_USAGE = 2,        /* bad command line */
    KS_DRIFT_CHANGED = 4,      /* something changed (out of date) */
    KS_DRIFT_BREAKING = 8      /* ... and it breaks existing callers; with CHANGED */
};

typedef enum { KS_FORMAT_TEXT, KS_FORMAT_JSON, KS_FORMAT_GITHUB } ks_format;
/* "text", "json" or "github"; -1 if none of those. */
int ks_format_parse(const char *s);

/* Reads a manifest into a model (names, types, layout, lines, bounds).
 * Returns 0, or -1 after printing an error. */
int ks_manifest_read(const char *path, ks_model *model);

/* kstub diff [--format=F] [--source PATH] OLD.json NEW.json */
int ks_diff_main(int argc, char **argv);

/* What kstub check compares. */
typedef struct ks_check_input {
    const char *source;        /* the .cu path, for diagnostics */
    const ks_model *fresh;     /* the model just parsed */
    const ks_output *outputs;  /* what the generator would write now */
    size_t noutputs;
    const char *manifest;      /* on-disk manifest path, or NULL */
    const char *fix_command;   /* the command line that regenerates */
    ks_format format;
} ks_check_input;

/* Compares with the files on disk, prints the report; returns the exit status. */
int ks_check_run(const ks_check_input *in);

#endif /* KSTUB_MODEL_H */
