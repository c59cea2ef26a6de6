/*
 * emit_values.h — what emit.c and generic.c share: the template values
 * one parameter or type gives. Private to those two files.
 */
#ifndef KSTUB_EMIT_VALUES_H
#define KSTUB_EMIT_VALUES_H

#include "model.h"
#include "render.h"

/* A type as the templates spell it ({{*spelled}} in header.h.in): its
 * parts, as a list of one item under key (emit.c). */
void ks__push_type(ks_tnode *n, const char *key, const ks_model *m, const ks_type *t, unsigned drop,
                   unsigned base_quals, int cuda);
/* A parameter's strict-mode types and its run-time check values (emit.c). */
void ks__strict_values(const ks_model *m, const ks_param *p, ks_tnode *pn);
void ks__check_values(const ks_model *m, const ks_param *p, ks_tnode *pn);
/* The "generics" list and has_generics (generic.c). */
void ks__generic_values(const ks_model *m, ks_tnode *root);

#endif /* KSTUB_EMIT_VALUES_H */
