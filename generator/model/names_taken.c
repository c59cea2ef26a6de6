/*
 * names_taken.c — the set of names taken while naming one target's output:
 * what naming.c asks before it gives a name and claims after (see namer.h).
 */
#include "model/namer.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>


int ks__is_c_only_keyword(const char *s)
{
    static const char *const words[] = {
        "restrict", "_Bool", "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic",
        "_Generic", "_Noreturn", "_Static_assert", "_Thread_local", "_BitInt", "_Decimal32",
        "_Decimal64", "_Decimal128", NULL,
    };
    for (const char *const *w = words; *w; w++)
        if (strcmp(*w, s) == 0)
            return 1;
    return 0;
}

/* ks_..., KS_...: the runtime's names, unless they end in '_'. */
int ks__runtime_reserved(const char *s)
{
    size_t n = strlen(s);
    return (strncmp(s, "ks_", 3) == 0 || strncmp(s, "KS_", 3) == 0) && s[n - 1] != '_';
}

int ks__runtime_macro(const char *s)
{
    for (const char *const *p = ks_runtime_macros; *p; p++)
        if (strcmp(*p, s) == 0)
            return 1;
    return 0;
}

static int cmp_name(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

int ks__system_macro(const char *s)
{
    return bsearch(s, ks_system_macros, ks_system_nmacros, sizeof *ks_system_macros, cmp_name) != NULL;
}

int ks__system_decl(const char *s)
{
    return bsearch(s, ks_system_decls, ks_system_ndecls, sizeof *ks_system_decls, cmp_name) != NULL;
}

/* C's and C++'s keywords (C23's and GNU's included): what no kstub:name may
 * ask for, though the system's headers use few of them. */
int ks__keyword(const char *s)
{
    static const char *const words[] = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
        "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
        "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
        "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
        "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
        "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
        "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
        "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
        "throw", "true", "try", "typedef", "typeid", "typename", "typeof", "typeof_unqual",
        "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor",
        "xor_eq", NULL,
    };
    for (const char *const *w = words; *w; w++)
        if (strcmp(*w, s) == 0)
            return 1;
    return ks__is_c_only_keyword(s);
}

/* What a kernel's, variable's or type's C name (or any name made from it)
 * may not be: a macro or a file-scope name of the system's headers (a stub
 * named dlopen would interpose libc's). Appending '_' frees each, so stepping aside ends. */
static int system_reserved(const char *s)
{
    return ks__system_macro(s) || ks__system_decl(s);
}

const char *ks__why_taken(const char *want)
{
    return ks__system_macro(want) ? "a macro of the system's C headers"
           : ks__system_decl(want) ? "declared by the system's C headers"
                                   : "taken or reserved";
}

int ks__taken(const namer *nm, const char *s)
{
    return json_object_get(nm->taken, s) != NULL;
}

/* A parameter may share a name with a function (it only hides it in the
 * stub, which does not call it), not with a type or a macro. */
int ks__taken_for_param(const namer *nm, const char *s)
{
    return json_is_true(json_object_get(nm->taken, s));
}

void ks__claim(namer *nm, const char *s)
{
    json_object_set_new(nm->taken, s, json_true());
}

void ks__claim_function(namer *nm, const char *s)
{
    if (!ks__taken(nm, s))
        json_object_set_new(nm->taken, s, json_false());
}

/*
 * The file-scope names one kernel brings into the generated C, each from
 * its C name: the one table both the check that a kernel's name is free
 * and the claim of its names read. The templates spell the same names
 * ({{c_name}}_node, ks__pack_{{c_name}}, ...); one added there is added here.
 */

const struct kernel_name ks__kernel_names[] = {
    {"", "", KERNEL_FUNCTION},              /* the stub */
    {"", "_n", KERNEL_FUNCTION},            /* the 1-D launch over n items */
    {"", "_node", KERNEL_FUNCTION},         /* the graph node */
    {"", "_node_set", KERNEL_FUNCTION},     /* its update in an instance */
    {"", "_nodes_set", KERNEL_FUNCTION},    /* many nodes' update at once */
    {"", "_node_t", KERNEL_OBJECT},         /* the typed node handle (a type) */
    {"", "_args", KERNEL_OBJECT},           /* one node's arguments for _nodes_set (a type) */
    {"", "_kernel", KERNEL_OBJECT},         /* the exported ks_kernel descriptor */
    {"ks__params_", "", KERNEL_OBJECT},     /* the descriptor's parameter table */
    {"ks__pack_", "", KERNEL_MACRO},        /* the packing every entry point uses */
};

const size_t ks__nkernel_names = sizeof ks__kernel_names / sizeof ks__kernel_names[0];

/* The file-scope names one device variable brings into the generated C (the
 * templates spell the same names); its stem is claimed too, so a kernel
 * never gets a variable's C name. */
const struct kernel_name ks__var_names[] = {
    {"", "", KERNEL_FUNCTION},              /* the stem (a parameter may share it) */
    {"", "_write", KERNEL_FUNCTION},        /* elements from the host */
    {"", "_read", KERNEL_FUNCTION},         /* elements to the host */
    {"", "_set", KERNEL_FUNCTION},          /* the whole variable from the host */
    {"", "_get", KERNEL_FUNCTION},          /* the whole variable to the host */
    {"", "_address", KERNEL_FUNCTION},      /* its typed device address */
    {"", "_node", KERNEL_FUNCTION},         /* a graph node writing it */
    {"", "_global", KERNEL_OBJECT},         /* the exported ks_global descriptor */
};

const size_t ks__nvar_names = sizeof ks__var_names / sizeof ks__var_names[0];

char *ks__made_name(const struct kernel_name *made, const char *c_name)
{
    return ks_xasprintf("%s%s%s", made->prefix, c_name, made->suffix);
}

/* A user-derived name made free: '_' appended while it is a C-only keyword,
 * reserved by the runtime, or taken; for a kernel or a variable (made: the
 * names it brings, ks__kernel_names or ks__var_names), also while any name made
 * from it is taken or a macro of the runtime's headers. Takes ownership of
 * name; returns the free one, not yet claimed. */
char *ks__step_aside(const namer *nm, char *name, const struct kernel_name *made, size_t nmade)
{
    for (;;) {
        int busy = ks__is_c_only_keyword(name) || ks__runtime_reserved(name) ||
                   ks__system_macro(name) || (!made && ks__taken_for_param(nm, name));
        for (size_t i = 0; !busy && i < nmade; i++) {
            char *n = ks__made_name(&made[i], name);
            busy = ks__taken(nm, n) || (i > 0 && ks__runtime_macro(n)) || system_reserved(n);
            free(n);
        }
        if (!busy)
            return name;
        char *longer = ks_xasprintf("%s_", name);
        free(name);
        name = longer;
    }
}

/* A type's C name made free: as ks__step_aside, and also while the system's
 * headers declare it (a struct stat or a typedef div_t of the user's would
 * meet libc's in a C file that includes both). */
char *ks__step_aside_type(const namer *nm, char *name)
{
    for (;;) {
        name = ks__step_aside(nm, name, NULL, 0);
        if (!system_reserved(name))
            return name;
        char *longer = ks_xasprintf("%s_", name);
        free(name);
        name = longer;
    }
}

/* The names a kernel or a variable brings, claimed: functions (which a
 * parameter may share), objects and macros. */
void ks__claim_made(namer *nm, const char *c_name, const struct kernel_name *made, size_t nmade)
{
    for (size_t j = 0; j < nmade; j++) {
        char *n = ks__made_name(&made[j], c_name);
        if (made[j].kind == KERNEL_FUNCTION) {
            ks__claim_function(nm, n);
        } else {
            ks__claim(nm, n);
            if (made[j].kind == KERNEL_MACRO)
                json_object_set_new(nm->macros, n, json_true());
        }
        free(n);
    }
}

/* Names generated code uses besides kstub's own: C's and the headers'. */
void ks__claim_language_names(namer *nm)
{
    static const char *const names[] = {
        "bool", "true", "false", "NULL", "offsetof", "size_t", "ptrdiff_t", "intptr_t",
        "uintptr_t", "intmax_t", "uintmax_t", "int8_t", "int16_t", "int32_t", "int64_t",
        "uint8_t", "uint16_t", "uint32_t", "uint64_t", "CUtensorMap", "CUtensorMap_st",
        "alignof", "static_assert", "wchar_t", "char16_t",
        "char32_t", NULL,
    };
    for (const char *const *p = names; *p; p++)
        ks__claim(nm, *p);
    /* The runtime headers' macros (KSTUB_H, KSTUB_VERSION, KS_RESTRICT...):
     * a parameter, type or member of such a name steps aside. */
    for (const char *const *p = ks_runtime_macros; *p; p++) {
        ks__claim(nm, *p);
        json_object_set_new(nm->macros, *p, json_true());
    }
    /* The macros GNU C predefines outside the reserved names (gcc and clang
     * in their default -std=gnu17 and -std=gnu++17: unix and linux; i386 on
     * 32-bit x86): there each is 1, so a parameter, type, member or kernel
     * spelled so fails to compile where -std=c11 takes it. kstub's names
     * step aside for them as for the runtime's macros. */
    static const char *const gnu_macros[] = {"unix", "linux", "i386", NULL};
    for (const char *const *p = gnu_macros; *p; p++) {
        ks__claim(nm, *p);
        json_object_set_new(nm->macros, *p, json_true());
    }
    /* Every CUDA vector type a parameter names. */
    for (size_t i = 0; i < nm->m->nkernels; i++)
        for (size_t j = 0; j < nm->m->kernels[i].nparams; j++)
            if (nm->m->kernels[i].params[j].type.vector)
                ks__claim(nm, nm->m->kernels[i].params[j].type.vector);
    for (size_t i = 0; i < nm->m->ndefs; i++)
        for (size_t j = 0; j < nm->m->defs[i].nfields; j++)
            if (nm->m->defs[i].fields[j].type.vector)
                ks__claim(nm, nm->m->defs[i].fields[j].type.vector);
}
