/*
 * source_int.h — what the three files that read a file's text through
 * clang share (source.c reads the file; source_macros.c expands the macros
 * its code invokes; source_tokens.c finds explicit instantiations in a token
 * list): arrows run source.c -> source_macros.c -> source_tokens.c.
 */
#ifndef KSTUB_SOURCE_INT_H
#define KSTUB_SOURCE_INT_H

#include "base/util.h"
#include "front/source.h"

/* ---- source_tokens.c ---- */
void ks__tok_push(ks_rtok **a, size_t *n, size_t *cap, ks_rtok t);
int ks__tok_spelled(const ks_rtok *t, const char *word);
/* The one-character punctuator a token is ('[' for "<:" too), or 0. */
char ks__tok_punct(const ks_rtok *t);
int ks__tok_is_word(const ks_rtok *t);
/* Tokens [from, to) as text, one space where white space stood. */
void ks__tokens_put(ks_buf *b, const ks_rtok *t, size_t from, size_t to);
char *ks__tokens_text(const ks_rtok *t, size_t from, size_t to);
/* Index of the token closing the bracket opened at token i ('<' or '('), or end. */
size_t ks__tok_matching(const ks_rtok *t, size_t i, size_t end, int *half);
void ks__add_inst(ks_explicit_inst **out, size_t *n, const ks_explicit_inst *in);
/* The explicit instantiations in t[0, n) (tokens with skip[i] set left out). */
void ks__find_instantiations(const ks_rtok *t, size_t n, const unsigned char *skip, int decl_only,
                             ks_explicit_inst **out, size_t *count);
/* A location's byte offset in its spelling file (*file: that file, when not NULL). */
unsigned ks__file_offset(CXSourceLocation loc, CXFile *file);

/* ---- source_macros.c ---- */
/* The explicit instantiations the file's top-level macro invocations write
 * (appended to *out), and skip[i] set for each token of src inside one. */
void ks__macro_instantiations(CXTranslationUnit tu, CXFile file, const ks_source *src, unsigned char *skip,
                              ks_explicit_inst **out, size_t *count);

#endif /* KSTUB_SOURCE_INT_H */
