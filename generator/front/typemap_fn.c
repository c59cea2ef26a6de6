/*
 * typemap_fn.c — pointers to device functions as kernel parameters
 * ("float (*op)(float)", through typedefs too): a KS_DEF_FUNCTION def whose
 * fields are the return type and each parameter's type, so C can spell the
 * pointer as a pointer to a typedef of the function type. Split from
 * typemap.c, whose steps (records, enums, pointers) it uses for the parts.
 */
#include "typemap.h"

#include <stdlib.h>
#include <string.h>

/* The typedef a type is spelled through, the first in its sugar: "unary_t"
 * of "unary_t op" (qualified: "ops::unary_t"); NULL when none. */
char *ks__tm_typedef_name_of(CXType t)
{
    for (unsigned depth = 0; depth < 64; depth++) {
        if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Typedef)
            return ks_qualified_name(clang_getTypeDeclaration(t));
        else
            return NULL;
    }
    return NULL;
}

/* The pointer type as written under t's typedefs when it points to a
 * function, so that the function type keeps its own sugar ("int64_t"
 * stays int64_t in its parameters); other pointers as before: other, the
 * type each caller has always passed. */
CXType ks__tm_written_pointer(CXType t, CXType other)
{
    CXType canon = clang_getCanonicalType(t);
    enum CXTypeKind pk = clang_getCanonicalType(clang_getPointeeType(canon)).kind;
    if (pk != CXType_FunctionProto && pk != CXType_FunctionNoProto)
        return other;
    for (unsigned depth = 0; depth < 64; depth++) {
        if (t.kind == CXType_Pointer)
            return t;
        if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Typedef)
            t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
        else
            break;
    }
    return canon;
}

/* The function type under t's sugar (typedefs), where its parameter types
 * keep theirs ("int64_t" stays int64_t); the canonical type otherwise. */
static CXType function_proto_of(CXType t)
{
    for (unsigned depth = 0; depth < 64; depth++) {
        if (t.kind == CXType_FunctionProto)
            return t;
        if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Typedef)
            t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
        else
            break;
    }
    return clang_getCanonicalType(t);
}

/* One type of a function type a pointer points to: its return type (i < 0)
 * or parameter i's, as C would declare them. Qualifiers on them mean
 * nothing to the type (C++ drops a parameter's, C warns of a return
 * type's), so none are kept at the top. */
static char *function_part(tm_ctx *c, CXType t, int i, ks_type *out)
{
    CXType canon = clang_getCanonicalType(t);
    char *what = i < 0 ? ks_xstrdup("its return type") : ks_xasprintf("its parameter %d", i + 1);
    char *why = NULL;
    memset(out, 0, sizeof *out);
    switch (canon.kind) {
    case CXType_Void:
        out->base = KS_BASE_VOID;
        break;
    case CXType_Pointer: {
        char *alias = ks__tm_typedef_name_of(t);
        why = ks__tm_pointer_type(c, ks__tm_written_pointer(t, t.kind == CXType_Pointer ? t : canon), alias, 1, out);
        free(alias);
        break;
    }
    case CXType_LValueReference:
    case CXType_RValueReference:
        why = ks__tm_refuse("%s is a reference, which C cannot spell", what);
        break;
    case CXType_MemberPointer:
        why = ks__tm_refuse("%s is a member pointer, which C cannot spell", what);
        break;
    case CXType_Record:
        if (ks__tm_is_empty_class(canon, 0)) {
            why = ks__tm_refuse("%s is an empty class, which C has no type for", what);
        } else {
            why = ks__tm_record_type(c, canon, 1, 0, NULL, out);
            /* Declared too: a function type may be written before the
             * record it takes is defined (a struct holding a pointer to a
             * function that takes the struct), and C gives a struct first
             * named in a parameter list that list's scope only. */
            if (!why && out->base == KS_BASE_RECORD)
                ks_model_declare(c->m, out->def);
        }
        break;
    case CXType_Enum:
        why = ks__tm_enum_type(c, canon, out);
        break;
    default:
        if (ks__tm_scalar_of(t, &out->scalar)) {
            out->base = KS_BASE_SCALAR;
        } else {
            char *sp = ks__tm_spelling(t);
            why = ks__tm_refuse("%s is '%s', a type C has no exact equivalent for", what, sp);
            free(sp);
        }
        break;
    }
    free(what);
    return why;
}

/* The C++ spelling of a function type without "noexcept", which C has no
 * word for and which does not change what the pointer holds. */
static char *function_key(CXType canon)
{
    char *sp = ks__tm_spelling(canon);
    char *ne = strstr(sp, " noexcept");
    if (ne)
        *ne = '\0';
    return sp;
}

/* A function a pointer points to ("float (*op)(float)": a device
 * function's address, which the caller read with cudaMemcpyFromSymbol): a
 * KS_DEF_FUNCTION def, typedef'd in C as the function type ("float_fn_float",
 * or "unary_t_fn" when spelled through the typedef unary_t), so the
 * parameter is a pointer to it. Its return and parameter types are
 * translated as C declares them; a variadic function, references and types
 * C cannot spell are refused. ptr_size, ptr_align: the pointer's. */
char *ks__tm_function_type(tm_ctx *c, CXType t, const char *alias, long long ptr_size,
                           long long ptr_align, ks_type *out)
{
    CXType canon = clang_getCanonicalType(t);
    CXType proto = function_proto_of(t);
    char *sp = ks__tm_spelling(canon);
    int n = clang_getNumArgTypes(canon);
    char *why = NULL;
    if (canon.kind != CXType_FunctionProto || n < 0)
        why = ks__tm_refuse("pointer to function '%s' without a prototype; declare its parameters", sp);
    else if (clang_isFunctionTypeVariadic(canon))
        why = ks__tm_refuse("pointer to function '%s', which is variadic: kstub types function pointers "
                     "with a fixed parameter list only; pass a pointer to a function with fixed "
                     "parameters", sp);
    else if (ptr_size <= 0 || ptr_align <= 0)
        why = ks__tm_refuse("pointer to function '%s', whose size is unknown", sp);
    size_t nparts = (size_t)(n < 0 ? 0 : n) + 1;      /* the return type, then each parameter */
    ks_type *parts = ks_xmalloc(nparts * sizeof *parts);
    memset(parts, 0, nparts * sizeof *parts);
    for (int i = -1; !why && i < n; i++) {
        CXType pt = proto.kind == CXType_FunctionProto
                        ? (i < 0 ? clang_getResultType(proto) : clang_getArgType(proto, (unsigned)i))
                        : (i < 0 ? clang_getResultType(canon) : clang_getArgType(canon, (unsigned)i));
        char *part_why = function_part(c, pt, i, &parts[i + 1]);
        if (part_why) {
            why = ks__tm_refuse("pointer to function '%s': %s", sp, part_why);
            free(part_why);
        }
    }
    if (why) {
        for (size_t i = 0; i < nparts; i++)
            ks_type_free(&parts[i]);
        free(parts);
        free(sp);
        return why;
    }
    char *key = alias ? ks_xstrdup(alias) : function_key(canon);
    int is_new;
    size_t idx = ks_model_def(c->m, KS_DEF_FUNCTION, key, &is_new);
    free(key);
    if (is_new) {
        ks_def *d = &c->m->defs[idx];
        d->fn_typedef = alias ? ks_xstrdup(alias) : NULL;
        for (size_t i = 0; i < nparts; i++) {
            ks_field *f = ks_def_add_field(d);
            f->name = i ? ks_xasprintf("arg%zu", i) : ks_xstrdup("result");   /* naming.c makes c_name */
            f->type = parts[i];
        }
        d->size = (long)ptr_size;
        d->align = (long)ptr_align;
        d->complete = 1;
        ks_model_define(c->m, idx);
    } else {
        for (size_t i = 0; i < nparts; i++)
            ks_type_free(&parts[i]);
    }
    free(parts);
    free(sp);
    memset(out, 0, sizeof *out);
    out->base = KS_BASE_RECORD;
    out->def = idx;
    return NULL;
}
