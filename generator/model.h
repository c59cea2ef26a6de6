/*
 * model.h — the generator's signature model: what the front end (session.c, walk.c, typemap.c)
 * learns about each kernel, and what the emitters (emit.c, manifest.c) write.
 * Also the small utilities every generator file shares (util.c).
 */
#ifndef KSTUB_MODEL_H
#define KSTUB_MODEL_H

#include <stdarg.h>
#include <stddef.h>

#define KSTUB_VERSION "0.2.0"

/*
 * The typed model. The front end (walk.c, typemap.c) fills it from libclang;
 * naming.c gives every generated identifier; emit.c and manifest.c spell it.
 * No stage after the front end reads C text: types are structure.
 */

/* Scalar types C names exactly: builtins and the <stdint.h>/<stddef.h>
 * typedefs (kept by name, so "int64_t n" stays int64_t rather than long). */
#define KS_SCALAR_LIST(X) \
    X(BOOL, "bool", "bool") X(CHAR, "char", "char") X(SCHAR, "signed char", "signedchar") \
    X(UCHAR, "unsigned char", "uchar") X(SHORT, "short", "short") \
    X(USHORT, "unsigned short", "ushort") X(INT, "int", "int") X(UINT, "unsigned int", "uint") \
    X(LONG, "long", "long") X(ULONG, "unsigned long", "ulong") X(LLONG, "long long", "longlong") \
    X(ULLONG, "unsigned long long", "ulonglong") X(FLOAT, "float", "float") \
    X(DOUBLE, "double", "double") X(SIZE_T, "size_t", "size_t") \
    X(PTRDIFF_T, "ptrdiff_t", "ptrdiff_t") X(INTPTR_T, "intptr_t", "intptr_t") \
    X(UINTPTR_T, "uintptr_t", "uintptr_t") X(INTMAX_T, "intmax_t", "intmax_t") \
    X(UINTMAX_T, "uintmax_t", "uintmax_t") X(INT8_T, "int8_t", "int8_t") \
    X(INT16_T, "int16_t", "int16_t") X(INT32_T, "int32_t", "int32_t") \
    X(INT64_T, "int64_t", "int64_t") X(UINT8_T, "uint8_t", "uint8_t") \
    X(UINT16_T, "uint16_t", "uint16_t") X(UINT32_T, "uint32_t", "uint32_t") \
    X(UINT64_T, "uint64_t", "uint64_t")

typedef enum ks_scalar {
#define KS_SCALAR_ENUM(id, c, tag) KS_SCALAR_##id,
    KS_SCALAR_LIST(KS_SCALAR_ENUM)
#undef KS_SCALAR_ENUM
    KS_SCALAR_COUNT
} ks_scalar;

/* CUDA types libkstub knows under its own names. */
typedef enum ks_special {
    KS_SPECIAL_HALF,        /* __half          -> ks_half */
    KS_SPECIAL_HALF2,       /* __half2         -> ks_half2 */
    KS_SPECIAL_BFLOAT16,    /* __nv_bfloat16   -> ks_bfloat16 */
    KS_SPECIAL_BFLOAT162,   /* __nv_bfloat162  -> ks_bfloat162 */
    KS_SPECIAL_TENSORMAP,   /* CUtensorMap_st  -> CUtensorMap (cuda.h) */
    KS_SPECIAL_COUNT
} ks_special;

typedef enum ks_base_kind {
    KS_BASE_VOID,
    KS_BASE_SCALAR,         /* .scalar */
    KS_BASE_RECORD,         /* .def: a struct or union of model->defs */
    KS_BASE_ENUM,           /* .def: an enum of model->defs */
    KS_BASE_VECTOR,         /* .vector: a CUDA vector type, "float4" */
    KS_BASE_SPECIAL         /* .special */
} ks_base_kind;

enum { KS_QUAL_CONST = 1, KS_QUAL_VOLATILE = 2, KS_QUAL_RESTRICT = 4 };

/* A type as a parameter or field uses it: a base with its qualifiers, then
 * pointer levels (ptr_quals[0] is the pointer to the base, the last one the
 * outermost), then array dimensions (fields only). */
typedef struct ks_type {
    ks_base_kind base;
    unsigned quals;            /* KS_QUAL_* on the base */
    ks_scalar scalar;
    ks_special special;
    size_t def;                /* index into ks_model.defs */
    char *vector;
    unsigned *ptr_quals;
    size_t nptrs;
    long long *dims;
    size_t ndims;
    int tag;                   /* an empty class by value (std::integral_constant<int, 4>,
                                  std::true_type, struct Tag {}): one byte nvcc passes and
                                  the stub packs itself (base is unsigned char); the caller
                                  passes nothing, its value being fixed by the type */
} ks_type;

typedef struct ks_field {
    char *name;                /* the member's name; NULL for an anonymous member */
    char *c_name;              /* naming.c's: the name, or ks__anonN */
    ks_type type;
    long offset, size;
} ks_field;

typedef struct ks_enumerator {
    char *name;
    char *c_name;              /* naming.c's: the constant's macro, "<enum>_<name>" */
    long long value;           /* as unsigned long long when the enum is unsigned */
} ks_enumerator;

/* KS_DEF_ARRAY: the array a parameter points to ("float (*x)[28]"), a C
 * typedef of its element type (fields[0].type, with the dimensions) so the
 * parameter is a plain pointer to it: "float_arr28 *x".
 * KS_DEF_FUNCTION: the function type a parameter points to ("float (*op)(float)",
 * a device function's address), a C typedef of the function type
 * (fields[0].type the return type, fields[1..] the parameters' types, each
 * field unnamed) so the parameter is a plain pointer to it: "float_fn_float *op".
 * size and align are the pointer's. */
typedef enum ks_def_kind {
    KS_DEF_STRUCT, KS_DEF_UNION, KS_DEF_ENUM, KS_DEF_ARRAY, KS_DEF_FUNCTION
} ks_def_kind;

/* A struct, union or enum a kernel names. By value it is defined (complete:
 * layout known); through pointers only it is declared. */
typedef struct ks_def {
    ks_def_kind kind;
    char *qname;               /* C++ name, "ns::Params"; for anonymous records the
                                  name naming.c derives from (owner's C name, member) */
    size_t owner;              /* anonymous records: the def whose member this is */
    char *member;              /* ... and that member's C name; NULL otherwise */
    char *c_name;              /* naming.c's */
    char *template_args;       /* a class template specialization ("ns::Params<float, 4>"):
                                  its arguments as clang prints them, "float, 4"; NULL else */
    char *template_name;       /* ... and the template's qualified name, "ns::Params" */
    char *fn_typedef;          /* KS_DEF_FUNCTION spelled through a typedef of the pointer or
                                  of the function ("unary_t op"): its qualified name, which
                                  naming.c names the type after; NULL: named from its types */
    int complete;
    long size, align;
    int packed;                /* a field is less aligned than its type */
    ks_field *fields;
    size_t nfields;
    ks_scalar underlying;      /* enums */
    int is_signed;
    ks_enumerator *enumerators;
    size_t nenumerators;
    /* Where a complete def comes from, for using the application's own type
     * instead of a mirror (typemap.c decides; no template uses it yet): */
    char *file;                /* the project header defining it, as the parse names it;
                                  NULL: the input itself, or a system/toolkit header */
    int c_header;              /* file can be included from C: a .h whose text has no
                                  C++-only token, and the type has no qualified name */
    int c_typedef;             /* file also declares a typedef of the same name for it,
                                  so C can write the bare name (else "struct X"/"enum X") */
    int mirror;                /* "// kstub:mirror NAME": mirrored even so */
    /* A scoped enum (enum class) declared at namespace scope: C++ may declare
     * it again opaquely, so C++ callers can pass its values to the mirror. */
    int scoped;                /* enum class, every enclosing scope a named namespace */
    char *leaf;                /* its own name, "Act" of "nn::Act" */
    char **scopes;             /* enclosing namespaces, outermost first */
    unsigned char *scope_inline; /* ... each an inline namespace or not */
    size_t nscopes;
} ks_def;

/* One step of an extent hint, in postfix order (the runtime's ks_extent_op). */
typedef enum ks_xop_kind { KS_XOP_CONST, KS_XOP_PARAM, KS_XOP_ADD, KS_XOP_SUB, KS_XOP_MUL, KS_XOP_DIV } ks_xop_kind;
typedef struct ks_xop {
    ks_xop_kind op;
    long long value;           /* CONST: the number; PARAM: the parameter's index */
} ks_xop;

/* One kernel parameter, as the stub declares and packs it. */
typedef struct ks_param {
    char *name;                /* the kernel's own name, or NULL when unnamed */
    char *c_name;              /* naming.c's: the name in the stub */
    char *spelled;             /* libclang's spelling of the type, for comments */
    ks_type type;
    long size;                 /* bytes */
    long align;                /* bytes */
    long offset;               /* bytes from the start of the parameter buffer */
    /* "// kstub:extent(NAME, EXPR)" (extent.c): how many elements it must hold */
    char *extent;              /* EXPR as written (spaces dropped), or NULL */
    ks_xop *extent_ops;        /* ... compiled, in postfix order */
    size_t nextent_ops;
} ks_param;

typedef struct ks_kern {
    char *name;                /* qualified C++ name, e.g. "ns::scale" or "ns::k<float, 4>" */
    char *base_name;           /* for an instantiation: the template's, "ns::k" */
    char *template_args;       /* ... and its arguments as written, "float, 4"; else NULL */
    char *c_name;              /* naming.c's: the generated C function */
    char *descriptor;          /* naming.c's: its exported ks_kernel, "<c_name>_kernel" */
    char *symbol;              /* device symbol, mangled for C++ kernels */
    char *signature;           /* the declaration as written, one line */
    unsigned line, col;        /* in file */
    char *file;                /* a project header defining it, as the parse names it
                                  (relative to the working directory when below it);
                                  NULL: the input */
    int tu_prefixed;           /* a header's kernel under --kernels-in=project: its C
                                  name starts with the input's stem (naming.c says why) */
    long max_threads;          /* __launch_bounds__ maximum threads, -1 if none */
    long min_blocks;           /* __launch_bounds__ minimum blocks, -1 if none */
    int dynamic_shared;        /* its body, or a function it calls, uses an extern
                                  __shared__ array: no <c_name>_n (launched with 0 bytes
                                  of dynamic shared memory, it would run with none) */
    ks_param *params;
    size_t nparams;
    /* naming.c's names for the stubs' own parameters, stepping aside for the kernel's */
    char *launch_name, *stream_name, *n_items_name;
} ks_kern;

/* "// kstub:name KERNEL = C_NAME" as found in the source. */
typedef struct ks_rename {
    char *kernel, *c_name;
    unsigned line, col;
    int type;                  /* naming.c: it named a class template specialization's mirror */
} ks_rename;

typedef struct ks_model {
    char *source;              /* input path as given */
    ks_kern *kernels;
    size_t nkernels;
    ks_def *defs;
    size_t ndefs;
    size_t *decl_order;        /* defs to declare (used through pointers), first use first */
    size_t ndecl_order;
    size_t *def_order;         /* complete defs, inner ones first */
    size_t ndef_order;
    ks_rename *renames;
    size_t nrenames;
    char *prefix;              /* naming.c's: the identifier stem of the input */
    char *header;              /* the generated header's file name */
    char *guard;               /* its include guard */
    char *image;               /* the image's symbol, "<prefix>_kstub_image" */
    int needs_vector_types;    /* a parameter names a CUDA vector type */
    int needs_cuda_h;          /* a parameter is a CUtensorMap */
} ks_model;

/* ---- model.c: builders and free ---- */
ks_kern *ks_model_add_kernel(ks_model *m);
ks_param *ks_kern_add_param(ks_kern *k);
/* The def named qname of this kind, or a new incomplete one. */
size_t ks_model_def(ks_model *m, ks_def_kind kind, const char *qname, int *is_new);
void ks_model_declare(ks_model *m, size_t def);   /* add to decl_order once */
void ks_model_define(ks_model *m, size_t def);    /* add to def_order once */
ks_field *ks_def_add_field(ks_def *d);
void ks_def_add_enumerator(ks_def *d, const char *name, long long value);
void ks_type_add_ptr(ks_type *t, unsigned quals);
void ks_type_add_dim(ks_type *t, long long n);
void ks_type_copy(ks_type *dst, const ks_type *src);
void ks_type_free(ks_type *t);
void ks_kern_free(ks_kern *k);
void ks_model_free(ks_model *m);
/* Each scalar's C spelling and overload tag. */
const char *ks_scalar_c_name(ks_scalar s);
const char *ks_scalar_tag(ks_scalar s);
const char *ks_special_c_name(ks_special s);
/* CUDA's own name of a special type ("__half"); NULL for CUtensorMap, which
 * C names as cuda.h does. */
const char *ks_special_cuda_name(ks_special s);

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
/* Whether argv[*i] is opt: 1 with *value set ("-X VALUE", "-XVALUE",
 * "--opt VALUE", "--opt=VALUE"; *i moved past a separate value), 0 when it
 * is another option, -1 after reporting a missing value (a usage error). */
int ks_option(int argc, char **argv, int *i, const char *opt, const char **value);

/* ---- walk.c: the front end ---- */
/* Parses opts->input and fills *model (names included: see naming.c).
 * Prints diagnostics to stderr; returns the number of errors (0 on success). */
int ks_parse(const ks_options *opts, ks_model *model);

/* ---- naming.c ---- */
/* Gives every kernel, parameter, type and generated identifier its C name
 * and checks every collision. Returns the number of errors. */
int ks_name_model(const ks_options *opts, ks_model *model);
/* Every macro name libkstub's headers #define, NULL-terminated: generated
 * at build time from runtime/kstub.h and runtime/kstub_types.h
 * (scripts/runtime_macros.sh), so the reserved set is the headers' own. */
extern const char *const ks_runtime_macros[];
/* "ns::inner::name" -> "ns_inner_name". */
char *ks_c_identifier(const char *qualified);
/* The identifier stem of a file name: "vector_ops" from "dir/vector_ops.cu". */
char *ks_identifier_stem(const char *path);
/* The C name of the nth anonymous member of a record. */
char *ks_name_anonymous_member(unsigned n);
/* The C name of the nth padding member of def, clear of its fields' names. */
char *ks_name_padding(const ks_def *def, const char *what, unsigned n);
/* Overload tag of a type, "cfloatp" for const float *. */
char *ks_type_tag(const ks_model *m, const ks_type *t);
/* Whether a name emit.c adds after naming (a template's one C name over its
 * instances) is free of every generated and reserved name. */
int ks_name_is_free(const ks_model *m, const char *name);

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

/* Whether the generated header includes the application's header for def
 * instead of mirroring it: a complete type from a project header C can
 * include, under its own name, not named by "kstub:mirror", and whose by-value
 * members are such types too (an anonymous member follows its owner). */
int ks_def_uses_header(const ks_model *m, size_t def);

/* The C spelling of a type ("const float *restrict"), from its structure. */
char *ks_spell_c_type(const ks_model *m, const ks_type *t);

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

/* Reads a whole regular file, never blocking (a FIFO, a device or a
 * directory is refused without waiting for a writer); returns malloc'd
 * bytes (NUL-terminated), or NULL with the reason in ks_file_error().
 * ks_read_file reads an input of the run and remembers it (inputs.h), so
 * that no output may replace it; ks_peek_file only looks (an output already
 * on disk, a header the include pre-scan follows). */
char *ks_read_file(const char *path, size_t *size);
char *ks_peek_file(const char *path, size_t *size);
/* Why the last ks_read_file or ks_peek_file returned NULL: strerror's text,
 * or "not a regular file (a FIFO)" and the like. */
const char *ks_file_error(void);

/* Writes each file through a temporary file and rename, only where the
 * content differs from what is on disk. All or nothing: on failure no output
 * is left half-written. Returns 0 or -1 after printing an error. */
typedef struct ks_output {
    const char *path;
    const char *text;
} ks_output;
int ks_write_outputs(const ks_output *outs, size_t n);

/* The diagnostic sink: every error printed through it (or counted with
 * ks_count_error when printed otherwise, as libclang's) is counted. */
int ks_error_count(void);
int ks_warning_count(void);
void ks_count_error(void);
/* s with each control character (newline, tab, escape...) written as a C
 * escape (\n, \t, \x1b), so that a file name cannot start a line of its
 * own in a log or a CI annotation; malloc'd. */
char *ks_escape_controls(const char *s);
/* Prints "file:line:col: error: ..." (line 0 means no location); control
 * characters in the file name and the message are escaped (ks_escape_controls). */
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
/* The components of path made absolute against the working directory, "."
 * and ".." taken lexically (no file need exist); returns the count, *parts
 * malloc'd (free with ks_path_parts_free). */
size_t ks_path_parts(const char *path, char ***parts);
void ks_path_parts_free(char **parts, size_t n);

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

/* Make's spelling of a path in a rule: spaces, tabs, ':' and '#' escaped
 * with '\', '$' doubled (as gcc's -MQ and depfile prerequisites). A path
 * with a newline cannot be named in a rule: NULL, after an error. */
char *ks_make_quote(const char *path);

/* The depfile text: "TARGETS: input headers...", then an empty rule per
 * header (gcc's -MP) so a deleted header does not break make. targets are
 * written as given (already quoted). With skip_system, leaves out system
 * headers and files under any of system_dirs (gcc's -MMD). NULL, after an
 * error, when a target or a file cannot be written in make's syntax. */
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
    int rdc;                   /* -rdc=true, -dc or -fgpu-rdc seen */
    char *directory;           /* the entry's "directory" */
} ks_compdb;

/* Translates one nvcc (or clang) command line, argv[0] being the compiler,
 * into *db; flags that only shape code generation are dropped. Relative
 * paths are taken from directory. Returns the number of arguments dropped
 * with a warning (0 when nothing surprising was seen), or -1 after an error
 * (an option without its value, an unterminated quote). */
int ks_compdb_translate(const char *directory, const char *const *argv, size_t argc,
                        ks_compdb *db);
/* Reads BUILD_DIR/compile_commands.json and translates the entry for input.
 * Returns 0, or -1 after printing an error. */
int ks_compdb_load(const char *build_dir, const char *input, ks_compdb *db);
void ks_compdb_free(ks_compdb *db);

#endif /* KSTUB_MODEL_H */
