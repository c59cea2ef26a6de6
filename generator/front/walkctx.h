/*
 * walkctx.h — what the walk's files share, each calling only the ones below
 * it: walk.c (the walk, directives, ks_parse) -> instances.c (template
 * kernels instantiated explicitly, by host code and by headers) -> kernel.c
 * (one kernel into the model, its launch bounds, dynamic shared memory,
 * kstub:skip) -> walkctx.c (the context: whose kernels, diagnostics, the
 * specializations seen). Private to them.
 */
#ifndef KSTUB_WALKCTX_H
#define KSTUB_WALKCTX_H

#include "model/model.h"
#include "front/session.h"
#include "front/source.h"

/* __launch_bounds__ whose arguments are constant expressions, not literals. */
typedef struct pending_bounds {
    char *symbol;                /* the kernel's, to find it again */
    char *ns;                    /* its namespace, "a::b", or "" */
    char *max_expr, *min_expr;   /* min_expr may be NULL */
    unsigned line, col;
} pending_bounds;

typedef struct walk_ctx {
    ks_session s;
    ks_model *model;
    char **templates;            /* qualified names of template kernels */
    size_t ntemplates;
    ks_explicit_inst *inst;      /* explicit instantiations, kstub_i0, kstub_i1, ... */
    char **inst_used_by;         /* per instantiation: the template kernel, once seen */
    CXCursor *inst_spec;         /* per instantiation: its specialization, read from the first
                                    parse (oneparse.c); NULL when the input was parsed again */
    size_t nspec;                /* (the input's instantiations: a header's come later) */
    size_t fired[2];             /* how many the visit and the search for launches passed */
    size_t ninst;
    size_t *probes;              /* per instantiation: [start, end) of kstub's reference to it in
                                    the unit's text (0, 0: none), for ks_session.probes */
    ks_class_inst *cls;          /* "template class X<...>;", kstub_c0, kstub_c1, ... (classinst.c) */
    size_t ncls;
    pending_bounds *lbs;
    size_t nlbs;
    ks_directive *skips;         /* "kstub:skip" directives, and how often each matched */
    unsigned *skip_hits;
    size_t nskips;
    ks_directive *mirrors;       /* "kstub:mirror" directives */
    size_t nmirrors;
    const char *current_args;    /* template arguments of the instantiation being added */
    struct file_class *files;    /* per file: is it the project's, do its kernels count */
    size_t nfiles;
    size_t *file_slots;          /* hash index of files by identity: 1 + the file's index, 0 free */
    size_t nfile_slots;
    char **seen;                 /* symbols of specializations already handled */
    size_t nseen;
    size_t *seen_slots;          /* hash index of seen: 1 + the symbol's index, 0 free */
    size_t nseen_slots;
    char **host_used;            /* template kernels instantiated from host code */
    size_t nhost_used;
    char **named;                /* --kernels-in headers, resolved */
    size_t nnamed;
    char *cuda_real;             /* the toolkit's folder, resolved */
    int macro_instantiates;      /* a macro's body may write an explicit instantiation */
    CXFile def_file;             /* the file of the last macro definition read, */
    const char *def_text;        /* its text */
    size_t def_size;
} walk_ctx;

typedef struct file_class {
    CXFile file;
    CXFileUniqueID id;           /* the file's identity, when libclang gives one (have_id) */
    int have_id;
    int main;                    /* the input itself */
    int expands;                 /* a macro is expanded in it (ks__header_instantiations) */
    int project;                 /* neither a system header nor the toolkit's */
    int kernels;                 /* its kernels get stubs (--kernels-in) */
    char *name;                  /* as the parse names it, "./" dropped */
} file_class;

/* ---- walkctx.c: below walk.c, kernel.c and instances.c ---- */
file_class *ks__classify(walk_ctx *w, CXSourceLocation loc);
/* Whether a location, or a cursor's, is expanded in the input (a macro's
 * text included, wherever the macro was defined). */
int ks__in_main(walk_ctx *w, CXSourceLocation loc);
/* Forgets every file's class (CXFile handles do not outlive a reparse). */
void ks__forget_files(walk_ctx *w);
int ks__is_main(walk_ctx *w, CXCursor c);
/* Whether a device entity's own name is one nvcc takes (basic characters
 * only); reports nvcc's reason at c and returns -1 when not, else 0. */
int ks__basic_name(walk_ctx *w, CXCursor c, const char *what);
/* clang's mangled name with each name holding characters outside the basic
 * set written as nvcc writes it: each such character "_uXXXX" (or
 * "_UXXXXXXXX" above U+FFFF), the length counted again ("3n\xc3\xa9" is
 * "7n_u00e9"). A copy. */
char *ks__nvcc_ucn_names(const char *mangled);
/* A note, warning or error at a cursor, in the file it lies in (the input
 * or a header). */
void ks__walk_diag(walk_ctx *w, CXCursor c, const char *severity, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether the specialization with this symbol was handled already (and
 * remembers it). */
int ks__seen_symbol(walk_ctx *w, const char *symbol);

/* ---- kernel.c: below instances.c ---- */
void ks__add_kernel(walk_ctx *w, CXCursor fn);
/* Kernel \p fn's symbol as nvcc emits it (clang's is \p mangled), or its
 * pattern where nvcc's has a per-compilation part (common/symbol.h). */
char *ks__device_symbol(walk_ctx *w, CXCursor fn, const char *mangled);
/* Evaluates the pending __launch_bounds__ expressions; 0, or -1 after errors. */
int ks__resolve_bounds(walk_ctx *w, const char *text, size_t size);
/* The errors in kstub's references to explicit instantiations the parses
 * held back (ks_session.probe_errors): reported where the instantiation
 * names a template kernel's name, else only under KSTUB_DEBUG_PCH (an
 * instantiation of a member function template, which no reference to a
 * free function can name, is no kernel's). */
void ks__probe_errors(walk_ctx *w);
/* Whether a "kstub:skip" names the kernel \p fn, called \p name (an instance
 * of template \p base, or NULL); a note says so. */
int ks__skipped(walk_ctx *w, const char *name, const char *base, CXCursor fn);
/* The same for a device variable, by qualified name or symbol (kernel.c). */
int ks__skipped_variable(walk_ctx *w, const char *name, const char *symbol, CXCursor var);

/* ---- variable.c ---- */
/* A namespace-scope VarDecl: a device variable into the model, or a note. */
void ks__add_variable(walk_ctx *w, CXCursor var);
/* An unexposed declaration: a note when it is a device variable template. */
void ks__note_variable_template(walk_ctx *w, CXCursor decl);

/* ---- instances.c ---- */
/* A "kstub_iN" typedef leads to the Nth explicit instantiation. */
void ks__handle_instantiation(walk_ctx *w, CXCursor typedef_cursor);
void ks__handle_reference(walk_ctx *w, CXCursor ref);
enum CXChildVisitResult ks__find_launches(CXCursor c, CXCursor parent, CXClientData data);
void ks__note_uninstantiated(walk_ctx *w);
int ks__header_instantiations(walk_ctx *w, const char *base, size_t base_len, const char *members);
void ks__check_headers_used(walk_ctx *w);

/* The specialization the Nth explicit instantiation defines (a kernel of
 * its own when the template is one). */
void ks__instantiated(walk_ctx *w, size_t idx, CXCursor fn);
/* A specialization's template arguments as an explicit instantiation would
 * write them, or NULL (*bad: the argument kstub cannot spell). */
char *ks__template_args_text(CXCursor spec, int *bad);

/* ---- oneparse.c: explicit instantiations read from the first parse ---- */
/* Whether the text may hold an explicit instantiation ("template" not
 * followed by '<'): then the parse lists its declarations as handed over
 * (ks_session.local_decls). Only a guess: a wrong one costs a parse. */
int ks__oneparse_hint(const char *text, size_t len);
/* 1 when every explicit instantiation of the input is matched to its
 * specialization among those declarations (w->inst_spec); 0: parse again. */
int ks__oneparse_match(walk_ctx *w);
/* Whether the visit of the unit passes over \p c: a specialization that
 * only the list of declarations handed over shows (its place is the
 * instantiation's, ks__oneparse_fire). */
int ks__oneparse_hidden(walk_ctx *w, CXCursor c, CXCursor parent);
/* What the reference written after each explicit instantiation (walk.c)
 * would make the visit (launches 0) or the search for launches (1) do,
 * for those that end before \p c (every one left, for a null cursor). */
void ks__oneparse_fire(walk_ctx *w, CXCursor c, int launches);

#endif /* KSTUB_WALKCTX_H */
