/*
 * targs.h — template arguments (targs.c).
 */
#ifndef KSTUB_TARGS_H
#define KSTUB_TARGS_H

#include <clang-c/Index.h>

/* The i-th template parameter of a template, or a null cursor. */
CXCursor ks_template_param(CXCursor tmpl, unsigned i);
/* Why the i-th template argument of specialization spec cannot be spelled
 * in a stub's name ("its template argument 2 ('op' float (*)(float)) is the
 * address of ..."); i < 0: the arguments cannot be read. malloc'd. */
char *ks_unspellable_argument(CXCursor spec, int i);

#endif /* KSTUB_TARGS_H */
