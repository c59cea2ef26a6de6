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

typedef struct ks_model {
    char *source;      /* input path as given */
    ks_kern *kernels;
    size_t nkernels;
    ks_fwd *fwds;      /* forward declarations, in first-use order */
    size_t nfwds;
    int needs_vector_types;   /* a parameter names a CUDA vector type */
} ks_model;

/* Options that shape parsing and output. */
typedef struct ks_options {
    const char *input;
    const char *outbase;
    const char *manifest;
    const char *embed;
    const char *template_dir;
    const char *cuda_path;
    const char *arch;          /* e.g. "sm_90" */
    const char *std;           /* e.g. "c++17" */
    const char **defines;      /* "-DX=1" / "-UX" in command-line order */
    size_t ndefines;
    const char **includes;     /* include directories */
    size_t nincludes;
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
void ks_verror_at(const char *file, unsigned line, unsigned col, const char *severity,
                  const char *fmt, va_list ap);

/* basename without directories; points into s. */
const char *ks_basename(const char *s);

#endif /* KSTUB_MODEL_H */
