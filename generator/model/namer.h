/*
 * namer.h — the set of names taken while naming one target's output
 * (names_taken.c), which naming.c's rules ask and claim from: C-only
 * keywords, the runtime's reserved names and macros, the language's, and
 * the file-scope names each kernel and variable brings.
 */
#ifndef KSTUB_NAMER_H
#define KSTUB_NAMER_H

#include "model/naming.h"

#include <jansson.h>
#include <stddef.h>

typedef struct namer {
    const ks_options *opts;
    const ks_target *target;
    ks_model *m;
    json_t *taken;             /* a hash set: name -> true */
    json_t *macros;            /* the names generated as macros */
} namer;

typedef enum { KERNEL_FUNCTION, KERNEL_OBJECT, KERNEL_MACRO } kernel_name_kind;

struct kernel_name {
    const char *prefix, *suffix;
    kernel_name_kind kind;
};

/* The file-scope names a kernel brings (ks__kernel_names) and a device
 * variable brings (ks__var_names), each made from its C name. */
extern const struct kernel_name ks__kernel_names[];
extern const size_t ks__nkernel_names;
extern const struct kernel_name ks__var_names[];
extern const size_t ks__nvar_names;

int ks__is_c_only_keyword(const char *s);
/* ks_..., KS_...: the runtime's names, unless they end in '_'. */
int ks__runtime_reserved(const char *s);
int ks__runtime_macro(const char *s);
/* A macro (ks_system_macros) or a file-scope name (ks_system_decls) of
 * the system's C headers. */
int ks__system_macro(const char *s);
int ks__system_decl(const char *s);
/* Why a name steps aside, for the note: the system's headers', or "taken or reserved". */
const char *ks__why_taken(const char *want);
/* A C or C++ keyword (GNU's typeof and asm included). */
int ks__keyword(const char *s);
int ks__taken(const namer *nm, const char *s);
/* A parameter may share a name with a function, not with a type or a macro. */
int ks__taken_for_param(const namer *nm, const char *s);
void ks__claim(namer *nm, const char *s);
void ks__claim_function(namer *nm, const char *s);
char *ks__made_name(const struct kernel_name *made, const char *c_name);
/* A user-derived name made free ('_' appended while it is taken or
 * reserved); takes ownership of name, returns the free one, not claimed. */
char *ks__step_aside(const namer *nm, char *name, const struct kernel_name *made, size_t nmade);
/* A type's C name made free: as ks__step_aside, and also while the
 * system's headers declare it. */
char *ks__step_aside_type(const namer *nm, char *name);
/* The names a kernel or a variable brings, claimed. */
void ks__claim_made(namer *nm, const char *c_name, const struct kernel_name *made, size_t nmade);
/* Names generated code uses besides kstub's own: C's and the headers'. */
void ks__claim_language_names(namer *nm);

#endif /* KSTUB_NAMER_H */
