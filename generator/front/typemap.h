/*
 * typemap.h — CXType to the typed model (typemap.c): the front end's
 * entry to the translation (its files' shared seams: typemap_int.h).
 */
#ifndef KSTUB_TYPEMAP_H
#define KSTUB_TYPEMAP_H

#include "front/session.h"
#include "model/model.h"

#include <clang-c/Index.h>

/* Translates a parameter's type into *out (top-level qualifiers dropped, an
 * array parameter a pointer). Returns 0, or -1 with *why a malloc'd refusal
 * saying why and what to do instead: the caller, who knows the kernel and
 * the parameter, reports it. */
int ks_typemap_param(const ks_session *s, ks_model *m, CXType t, ks_type *out, char **why);
/* A device variable's type: its element type with the array dimensions in
 * out->dims (name: the variable's, for refusals). 0, or -1 with *why. */
int ks_typemap_variable(const ks_session *s, ks_model *m, CXType t, const char *name, ks_type *out,
                        char **why);

#endif /* KSTUB_TYPEMAP_H */
