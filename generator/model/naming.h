/*
 * naming.h — the naming stage (naming.c): every identifier one output
 * target generates, and every collision check, decided after the parse and
 * before emitting, from the target's naming table (target.h).
 */
#ifndef KSTUB_NAMING_H
#define KSTUB_NAMING_H

#include "model/model.h"
#include "base/options.h"
#include "model/target.h"

#include <stddef.h>

/* Gives every kernel, parameter, type, member and generated identifier its
 * name in target's output and checks every collision. Returns 0, or -1
 * after errors. */
int ks_name_model(const ks_target *target, const ks_options *opts, ks_model *model);
/* Every macro name libkstub's headers #define, NULL-terminated: generated
 * at build time from include/kstub/kstub.h and include/kstub/kstub_types.h
 * (scripts/runtime_macros.sh), so the reserved set is the headers' own. */
extern const char *const ks_runtime_macros[];
/* The macros and the file-scope names (functions, variables, typedefs, tags,
 * enum constants) of the system's C headers: standard C, common POSIX and
 * those libkstub includes, sorted (strcmp), generated at build time with the
 * C compiler (scripts/system_names.sh). */
extern const char *const ks_system_macros[];
extern const size_t ks_system_nmacros;
extern const char *const ks_system_decls[];
extern const size_t ks_system_ndecls;
/* "ns::inner::name" -> "ns_inner_name". */
char *ks_c_identifier(const char *qualified);
/* The identifier stem of a file name: "vector_ops" from "dir/vector_ops.cu". */
char *ks_identifier_stem(const char *path);
/* Overload tag of a type, "cfloatp" for const float *. */
char *ks_type_tag(const ks_model *m, const ks_type *t);
/* Whether a name emit.c adds after naming (a template's one C name over its
 * instances) is free of every generated and reserved name. */
int ks_name_is_free(const ks_model *m, const char *name);

#endif /* KSTUB_NAMING_H */
