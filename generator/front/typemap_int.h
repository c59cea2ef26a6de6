/*
 * typemap_int.h — what typemap.c (the recursive core: records, pointers,
 * pointers to functions) and typemap_leaves.c (scalars, qualifiers, enums,
 * typedefs, below it) share: the translation's context and the leaves the
 * core calls. Private to those two files; the front end's entry point is
 * ks_typemap_param (typemap.h).
 */
#ifndef KSTUB_TYPEMAP_INT_H
#define KSTUB_TYPEMAP_INT_H

#include "model/model.h"
#include "front/session.h"

typedef struct tm_ctx {
    const ks_session *s;
    ks_model *m;
} tm_ctx;

/* ---- typemap_leaves.c: calls nothing of typemap.c ---- */
/* A refusal's text (malloc'd), for the caller to report. */
char *ks__tm_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* clang's spelling of a type (malloc'd). */
char *ks__tm_spelling(CXType t);
/* Whether t is a C scalar, and which. */
int ks__tm_scalar_of(CXType t, ks_scalar *out);
/* t's own const and volatile (KS_QUAL_*). */
unsigned ks__tm_quals_of(CXType t);
/* Records where the complete def d (declared at decl) is defined. */
void ks__tm_note_origin(tm_ctx *c, CXCursor decl, ks_def *d);
/* An enum: NULL with *out filled, or a refusal (malloc'd). */
char *ks__tm_enum_type(tm_ctx *c, CXType canon, ks_type *out);
/* The typedef a type is spelled through ("unary_t"), or NULL; malloc'd. */
char *ks__tm_typedef_name_of(CXType t);
/* The pointer type as written (its sugar kept) when t is one, else other. */
CXType ks__tm_written_pointer(CXType t, CXType other);

/* ---- typemap.c: the recursive core ---- */
/* Whether a class has no data (tags: std::true_type, integral_constant). */
int ks__tm_is_empty_class(CXType canon, unsigned depth);
/* Each returns NULL with *out filled, or a refusal (malloc'd). */
char *ks__tm_record_type(tm_ctx *c, CXType canon, int by_value, size_t owner, const char *member,
                         ks_type *out);
char *ks__tm_pointer_type(tm_ctx *c, CXType t, const char *alias, int top_level, ks_type *out);
/* A pointer to a function: a KS_DEF_FUNCTION def of its function type. */
char *ks__tm_function_type(tm_ctx *c, CXType t, const char *alias, long long ptr_size,
                           long long ptr_align, ks_type *out);

#endif /* KSTUB_TYPEMAP_INT_H */
