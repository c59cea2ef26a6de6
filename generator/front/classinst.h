/*
 * classinst.h — members of explicitly instantiated class templates
 * (classinst.c).
 */
#ifndef KSTUB_CLASSINST_H
#define KSTUB_CLASSINST_H

#include "front/session.h"
#include "front/source.h"

#include <clang-c/Index.h>
#include <stddef.h>

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

#endif /* KSTUB_CLASSINST_H */
