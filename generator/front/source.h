/*
 * source.h — what clang shows of a file's text, read as code (source.c,
 * source_tokens.c, source_macros.c): tokens, comments, explicit
 * instantiations, kstub: directives.
 */
#ifndef KSTUB_SOURCE_H
#define KSTUB_SOURCE_H

#include <clang-c/Index.h>
#include <stddef.h>

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
    char **spliced;            /* the text of each token written across lines, splices removed */
    size_t nspliced;
} ks_source;

/* Reads file of tu (parsed with CXTranslationUnit_DetailedPreprocessingRecord):
 * its tokens, comments and explicit instantiations. 0, or -1 when tu has
 * no text for it. */
int ks_source_load(ks_source *src, CXTranslationUnit tu, CXFile file);
void ks_source_free(ks_source *src);
/* Forgets what ks_source_load keeps of the unit it read last (its
 * preprocessing record): before the unit is parsed again or disposed of. */
void ks_source_forget_unit(void);
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

#endif /* KSTUB_SOURCE_H */
