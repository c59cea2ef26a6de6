/*
 * emit_values.h — what emit.c and generic.c share: the template values
 * one parameter or type gives (emit_values.c, below both). Private to the
 * emit folder.
 */
#ifndef KSTUB_EMIT_VALUES_H
#define KSTUB_EMIT_VALUES_H

#include "model/model.h"
#include "emit/render.h"

/* ---- emit_values.c ---- */
/* A type as the templates spell it ({{*spelled}} in header.h.in): its
 * parts, as a list of one item under key. */
void ks__push_type(ks_tnode *n, const char *key, const ks_model *m, const ks_type *t, unsigned drop,
                   unsigned base_quals, int cuda);
/* A parameter's strict-mode types and its run-time check values. */
void ks__strict_values(const ks_model *m, const ks_param *p, ks_tnode *pn);
void ks__check_values(const ks_model *m, const ks_param *p, ks_tnode *pn);
int ks__value_converts(const ks_model *m, const ks_type *t);
/* A mirrored enum class C++ callers may name (declared again opaquely). */
int ks__cxx_enum(const ks_model *m, const ks_type *t);
/* A record or enum C mirrors but C++ can take as the application's own. */
int ks__cxx_own(const ks_model *m, size_t def);

/* ---- generic.c ---- */
/* The "generics" list and has_generics. */
void ks__generic_values(const ks_model *m, ks_tnode *root);

#endif /* KSTUB_EMIT_VALUES_H */
