/*
 * front.h — the front end's private interfaces, one section per file:
 * session.c (libclang), source.c (the raw .cu text), typemap.c (CXType to
 * the typed model). walk.c ties them together into ks_parse().
 */
#ifndef KSTUB_FRONT_H
#define KSTUB_FRONT_H

#include "model.h"
#include "options.h"
#include "session_files.h"
#include "util.h"
#include "walk.h"

#include <clang-c/Index.h>

/* ---- session.c: one libclang translation unit ---- */
/* The precompiled prelude (pch.c): what every file's parse starts with, the
 * CUDA device prelude clang includes implicitly, kstub's compat header and
 * the input's own leading toolkit includes, precompiled once per
 * configuration and kept in the cache directory. */
typedef struct ks_prelude {
    int fd;                    /* the verified PCH, open while the TU lives; -1: none */
    char *pch_arg;             /* "/proc/self/fd/N": clang reads exactly what was verified */
    char **files;              /* the files it was built from, in inclusion order */
    unsigned char *is_system;  /* per file: a system header */
    size_t nfiles;
    char **leading;            /* the input's leading includes it holds ("cuda_fp16.h") */
    size_t nleading;
    int dirfd;                 /* the cache directory, or -1 */
    unsigned char key[32];     /* SHA-256 of everything that shapes the prelude */
    int built;                 /* built by this process (a cold run) */
    const char **bargs;        /* the arguments it was built with: the parse's less the input's own
                                * -I/-D/-U that cannot change it (pch.c) */
    size_t nbargs;
    char *pch_name;            /* the PCH's file name in the cache directory, once open */
    struct ks_prelude *base;   /* a layer's base (the prelude without leading includes), whose
                                * PCH the layer's chains on; NULL for a whole prelude */
} ks_prelude;

typedef struct ks_session {
    const ks_options *opts;
    CXIndex index;
    CXTranslationUnit tu;
    const char **args;
    size_t nargs;
    char **owned;
    size_t nowned;
    size_t nuser;              /* the last nuser args: the input's own -I DIR, -D, -U */
    ks_prelude prelude;        /* used by this parse when prelude.fd >= 0 */
    int local_decls;           /* set before opening: the unit's cursor lists the declarations
                                  the parse handed over, in that order, the specializations
                                  instantiated included (walk.c reads explicit instantiations
                                  from them), not the translation unit's own */
    int quiet;                 /* set before opening: a parse again of what a parse before
                                  reported (errors in bodies not reported twice) */
    char *late;                /* the input's -D/-U moved after the CUDA wrapper (latedefs.c), or NULL */
} ks_session;

/* Parses opts->input device-side, as nvcc's device pass sees it; text, when
 * not NULL, replaces the file's contents (same line numbers). Reports every
 * error diagnostic. Returns 0, or -1 after reporting. */
int ks_session_open(ks_session *s, const ks_options *opts, const char *text, size_t len);
/* Parses again with text as the input's contents; -1 after reporting errors. */
int ks_session_reparse(ks_session *s, const char *text, size_t len);
/* The same, where the text differs from the parse's only by what kstub
 * added: the errors in function bodies the parse reported as warnings are
 * not reported again. */
int ks_session_reparse_quiet(ks_session *s, const char *text, size_t len);
void ks_session_close(ks_session *s);

/* ---- prelude_key.c: what shapes a prelude (pch.c's helper) ---- */
/* p->key from everything that shapes the prelude built with args (the
 * parse's less the input's own -I/-D/-U) and the prelude text. */
void ks_prelude_key(ks_prelude *p, const char *const *args, size_t nargs, const char *text);
/* p->key of the prelude built with those of the input's own arguments that
 * can change it (rel), from the base prelude's key in p->key. */
void ks_prelude_variant_key(ks_prelude *p, const char *const *rel, size_t nrel);
/* p->key of the layer of p's leading includes on the base prelude, from
 * the whole prelude's key in p->key (the base found at descriptor fd). */
void ks_prelude_layer_key(ks_prelude *p, int fd);
/* The names p's files (and the compat header) could hold and the headers
 * their __has_include queries ask for, as the KEY.names text; -1 when a file
 * cannot be read. */
int ks_prelude_names(const ks_prelude *p, ks_buf *out);
/* The same, from prior (the names text of the files before p->files[from]
 * and the compat header: a layer's base's) and the files from there on;
 * prior NULL: every file. */
int ks_prelude_names_after(const ks_prelude *p, size_t from, const char *prior, ks_buf *out);
/* The input's own arguments (user: "-I" DIR pairs, -D, -U) that can change
 * the prelude p, given its names text (NULL: unknown, so all of them), in
 * their order, into out (room for nuser). Returns how many. */
size_t ks_prelude_relevant_args(const ks_prelude *p, const char *names, const char *const *user, size_t nuser,
                                const char **out);

/* ---- prelude_layer.c: a layer on the base prelude (pch.c's helper) ---- */
/* The descriptor a layer finds its base's directory at: "/proc/self/fd/1000/NAME". */
#define KS_PRELUDE_BASE_DIR_FD 1000
/* The cache directory dirfd at KS_PRELUDE_BASE_DIR_FD: 0, or -1 when that
 * descriptor is another file's or cannot be had. */
int ks_prelude_pin_dir(int dirfd);
/* The line a layer's entry names its base by ("base NAME SIZE MTIME"),
 * from p->base's open PCH; NULL when p has no base. */
char *ks_prelude_base_line(const ks_prelude *p);
/* The entry payload's base, if any, is p's base as it is now: 0, or -1
 * with *why. */
int ks_prelude_check_base(const ks_prelude *p, const char *payload, const char **why);

/* ---- prelude_files.c: the files a prelude was built from (pch.c's helper) ---- */
/* Adds the files tu includes (clang_getInclusions: not inside a PCH it
 * loaded) to p's, each with whether it is a system header: 0, or -1 when
 * a path holds a newline (a depfile cannot hold it). */
int ks_prelude_collect_files(ks_prelude *p, CXTranslationUnit tu);
/* Appends path to p's files. */
void ks_prelude_add_file(ks_prelude *p, const char *path, int sys);

/* ---- pch.c: the prelude cache (the session's private helper) ---- */
#define KS_PRELUDE_PATH "/__kstub__/prelude.cu"
/* The input's leading "#include <name>" lines (only blank lines and comments
 * before and between them) whose headers may be precompiled with the
 * prelude: toolkit and standard headers. Returns how many; *names
 * malloc'd (free with ks_prelude_names_free). blanked: NULL, or a copy of
 * text in which those directives become blanks (what the parse with the
 * prelude reads instead of the file). */
size_t ks_prelude_leading(const char *text, size_t len, char ***names, char *blanked);
void ks_prelude_names_free(char **names, size_t n);
/* Finds, verifies and opens the prelude for this configuration (args: the
 * parse's arguments, the compat -include among them; the last nuser of them
 * the input's own -I DIR pairs, -D and -U, of which only those that can
 * change the prelude shape it), building it when it is missing, stale or
 * unusable. 0 with p->fd open, or -1: parse without it (why under
 * KSTUB_DEBUG_PCH=1). */
int ks_prelude_open(ks_prelude *p, const ks_options *opts, const char *const *args, size_t nargs,
                    size_t nuser, char **leading, size_t nleading);
/* The entry p used turned out unusable (libclang refused it): removes it
 * and builds it again, with the arguments it was built with, for the next run. */
void ks_prelude_rebuild(ks_prelude *p, const ks_options *opts);
void ks_prelude_close(ks_prelude *p);
/* The 64-bit checksum of a PCH file's bytes kept in its cache entry. */
unsigned long long ks_prelude_checksum(const void *data, size_t n);

/* A line on stderr under KSTUB_DEBUG_PCH=1: what the cache did and why. */
void ks_prelude_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- cursor.c: cursor helpers (the front end's ground floor) ---- */
char *ks_take(CXString s);
void ks_cursor_location(CXCursor c, unsigned *line, unsigned *col);
void ks_cursor_error(const ks_session *s, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ks_cursor_note(const ks_session *s, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The cursor's tokens, its extent mapped to file positions (a kernel's
 * extent starts inside the __global__ macro). Free with clang_disposeTokens. */
void ks_cursor_tokens(const ks_session *s, CXCursor c, CXToken **toks, unsigned *n);
/* "ns::inner::name" from the cursor's semantic parents. */
char *ks_qualified_name(CXCursor c);
int ks_cursor_is_kernel(CXCursor c);

/* ---- compat.c: what nvcc provides and clang's CUDA mode lacks ---- */
/* KS_COMPAT_PATH: session_files.h. */
#define KS_COMPAT_MAX_ARGS 16
const char *ks_compat_header(size_t *len);
/* Extra parse flags for opts (at most max, at most KS_COMPAT_MAX_ARGS, strings
 * static or living as long as the process); returns how many were stored. */
size_t ks_compat_args(const ks_options *opts, const char **args, size_t max);

/* ---- source.c: what clang shows of a file's text, read as code ---- */
/* A token of clang's (or one a macro expansion made). */
typedef struct ks_rtok {
    size_t start, end;         /* in the file (a macro's: its invocation's start) */
    const char *s;             /* its spelling, n bytes */
    size_t n;
    unsigned char kind;        /* CXTokenKind */
    unsigned char space;       /* white space (or a comment) before it */
} ks_rtok;

typedef struct ks_explicit_inst ks_explicit_inst;

typedef struct ks_source {
    char *text;                /* the file as clang read it (a copy: outlives the parse) */
    size_t size;
    ks_rtok *toks;             /* its active code: clang's tokens less comments, those in
                                  skipped ranges and those in preprocessor directives */
    size_t ntoks;
    ks_rtok *comments;         /* each comment (clang's), delimiters included */
    size_t ncomments;
    ks_rtok *undefs;           /* the name of each active "#undef NAME" */
    size_t nundefs;
    ks_explicit_inst *inst;    /* see ks_source_instantiations */
    size_t ninst;
} ks_source;

/* Reads file of tu (parsed with CXTranslationUnit_DetailedPreprocessingRecord):
 * its tokens, comments and explicit instantiations. 0, or -1 when tu has
 * no text for it. */
int ks_source_load(ks_source *src, CXTranslationUnit tu, CXFile file);
void ks_source_free(ks_source *src);
/* 1-based line and column of a byte offset. */
void ks_source_position(const ks_source *src, size_t offset, unsigned *line, unsigned *col);

/* "template [__global__] void NAME<ARGS>(PARAMS);" as written. */
struct ks_explicit_inst {
    char *qname;               /* "ns::k" or "::k", as written */
    char *args;                /* "float, 4", trimmed, spaces folded */
    char *params;              /* "float *, int", as written */
    char *ret;                 /* "void", "int", "float *": the return type as written
                                  (__global__, __host__, inline... left out; a trailing
                                  "auto ... -> T" gives T) */
    size_t start;              /* offset of its "template" (of the macro's name when a
                                  macro wrote it) */
    size_t end;                /* offset just past its ';' (past the macro invocation,
                                  or the ';' after it, when a macro wrote it) */
};

/* Every explicit instantiation of the file's active code, in order of end,
 * moved out of src; returns the count. Those a macro writes
 * ("#define EXPORT(n) template void f<n>(int *);" ... "EXPORT(1) EXPORT(2)")
 * are found at each invocation clang's preprocessing record shows at the
 * file's top level, expanded from the tokens of the definition clang used
 * there: parameters substituted (# and ## included), macros the expansion
 * invokes expanded in turn (the last definition before the invocation;
 * an #undef counts when it is in the same file). */
size_t ks_source_instantiations(ks_source *src, ks_explicit_inst **out);
void ks_explicit_inst_free(ks_explicit_inst *in, size_t n);

/* "template class NAME<ARGS>;" (or struct) as written: an explicit
 * instantiation of a class template, every member instantiated with it. */
typedef struct ks_class_inst {
    char *qname;               /* "ns::Runner", as written */
    char *args;                /* "float, 4" */
    size_t start;              /* offset of its "template" */
    size_t end;                /* offset just past its ';' */
} ks_class_inst;

size_t ks_source_class_instantiations(const ks_source *src, ks_class_inst **out);
void ks_class_inst_free(ks_class_inst *in, size_t n);

/* A "kstub:WORD REST" directive: a comment whose first word is kstub:WORD. */
typedef struct ks_directive {
    char *word;                /* "name", "skip", ... */
    char *rest;                /* what follows, trimmed, comment closer removed */
    unsigned line, col;        /* of "kstub:" */
} ks_directive;

size_t ks_source_directives(const ks_source *src, ks_directive **out);
void ks_directive_free(ks_directive *d, size_t n);

/* Whether a body ('{') rather than ';' follows offset of file at
 * parenthesis depth 0, in clang's tokens: with --skip-bodies libclang no
 * longer calls a function with a body a definition. */
int ks_source_body_follows(CXTranslationUnit tu, CXFile file, unsigned offset);
/* leading.c (pch.c must know the prelude before the parse): read from
 * clang's raw tokens of the start of text; tests/fuzz/fuzz_gen_source.c
 * holds it to the preprocessing record. The leading "#include <name>" lines
 * of text (only blank lines and comments before and between them, each
 * alone on its line; anything unsure ends the list), as long as allowed()
 * accepts each name; stops at the first other line. Returns how many;
 * *names malloc'd (each and the array). blanked, when not NULL, is a copy
 * of the len bytes of text: each of those directives, '#' to '>', becomes
 * blanks there (line breaks, comments and every offset stay). */
size_t ks_source_leading_includes(const char *text, size_t len,
                                  int (*allowed)(const char *name, size_t n), char ***names, char *blanked);

/* ---- extent.c: "kstub:extent(PTR, EXPR)" hints ---- */
/* Attach each hint of src to the next kernel of the input at or after it
 * (ks_param.extent, .extent_ops), checking names and types. Returns 0, or
 * -1 after errors. */
int ks_extents_apply(const char *input, const ks_source *src, ks_model *m);

/* ---- classinst.c: members of explicitly instantiated class templates ---- */
#define KS_CLASSINST_ALIAS "kstub_c"     /* "typedef Runner<float> kstub_c0;" */
#define KS_CLASSINST_MEMBER "kstub_m"    /* "typedef decltype(&::kstub_c0::run) kstub_m0_3;" */
/* The typedef injected right after the idx-th class instantiation's ';'
 * (same line, same scope). */
char *ks_classinst_inject(const ks_class_inst *in, size_t idx);
/* What to append to the input so that a reparse shows each instantiated
 * member function of each class instantiation (through the injected
 * typedefs of s's parse): one "kstub_m" typedef per member a reference can
 * name; a note at the instantiation for each member left out that launches
 * a kernel template. NULL when there is nothing to append. */
char *ks_classinst_references(const ks_session *s, const ks_source *src, const ks_class_inst *cls,
                              size_t n);
/* The instantiated member function an appended "kstub_m" typedef refers
 * to, or a null cursor when alias is no such typedef. */
CXCursor ks_classinst_member(CXCursor alias, size_t ncls);
/* Whether alias is PREFIX<idx> or PREFIX<idx>_<more>, idx < n. */
int ks_classinst_alias_index(const char *alias, const char *prefix, size_t n, size_t *idx);

/* ---- targs.c: template arguments ---- */
/* The i-th template parameter of a template, or a null cursor. */
CXCursor ks_template_param(CXCursor tmpl, unsigned i);
/* Why the i-th template argument of specialization spec cannot be spelled
 * in a stub's name ("its template argument 2 ('op' float (*)(float)) is the
 * address of ..."); i < 0: the arguments cannot be read. malloc'd. */
char *ks_unspellable_argument(CXCursor spec, int i);

/* ---- typemap.c: CXType to the typed model ---- */
/* Translates a parameter's type into *out (top-level qualifiers dropped, an
 * array parameter a pointer). Returns 0, or -1 with *why a malloc'd refusal
 * saying why and what to do instead: the caller, who knows the kernel and
 * the parameter, reports it. */
int ks_typemap_param(const ks_session *s, ks_model *m, CXType t, ks_type *out, char **why);
/* A device variable's type: its element type with the array dimensions in
 * out->dims (name: the variable's, for refusals). 0, or -1 with *why. */
int ks_typemap_variable(const ks_session *s, ks_model *m, CXType t, const char *name, ks_type *out,
                        char **why);

/* prelude_key.c: the hex SHA-256 of what every search directory of args
 * (-I, -isystem, -iquote, -idirafter; the include path variables) holds of
 * the paths p's files and the "h" lines of names could be found by; an
 * entry records it and a hit compares it (a header that appears in such a
 * directory after the build makes the entry stale). */
void ks_prelude_search_sig(const ks_prelude *p, const char *names, const char *const *args, size_t nargs,
                           char hex[65]);

#endif /* KSTUB_FRONT_H */
