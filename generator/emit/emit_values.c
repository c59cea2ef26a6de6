/*
 * emit_values.c — the template values one type or parameter gives, which
 * emit.c (a kernel's values) and generic.c (the _Generic names over a
 * template's instances) both build from: a type spelled as its parts
 * ({{*spelled}} in header.h.in), strict mode's types, the run-time checks'
 * values, and whether a type is the application's own (its header
 * included). Below both; it calls neither.
 */
#include "emit/emit.h"
#include "emit/emit_values.h"

#include <string.h>

/* ---- the application's own types ----------------------------------------------------------- */

static int fields_use_headers(const ks_model *m, size_t def, unsigned depth);

static int def_uses_header(const ks_model *m, size_t def, unsigned depth)
{
    const ks_def *d = &m->defs[def];
    if (depth > 64)
        return 0;
    if (d->in_member)
        return def_uses_header(m, d->owner, depth + 1);
    /* A record only pointed to (no layout) is named from its header where
     * only the header's typedef can name it. */
    return (d->complete || d->c_typedef) && d->file && d->c_header && !d->mirror && !d->has_bases &&
           strcmp(d->c_name, d->qname) == 0 && fields_use_headers(m, def, depth);
}

/* Every member a record holds by value is the application's type too: a
 * header C can include has C types only (its own includes are not read). */
static int fields_use_headers(const ks_model *m, size_t def, unsigned depth)
{
    const ks_def *d = &m->defs[def];
    for (size_t i = 0; i < d->nfields; i++) {
        const ks_type *t = &d->fields[i].type;
        if (t->nptrs || (t->base != KS_BASE_RECORD && t->base != KS_BASE_ENUM))
            continue;
        const ks_def *fd = &m->defs[t->def];
        int ok = fd->in_member && fd->owner == def ? fields_use_headers(m, t->def, depth + 1)
                                                : def_uses_header(m, t->def, depth + 1);
        if (!ok)
            return 0;
    }
    return 1;
}

int ks_def_uses_header(const ks_model *m, size_t def)
{
    return def_uses_header(m, def, 0);
}

/* A record or enum C mirrors but C++ can take as the application's own
 * (issue 30 #6): defined in a header host C++ can include, not one C
 * includes already, not kept a mirror by "// kstub:mirror", without base
 * classes (offsetof cannot check a class that is not standard-layout). A type the .cu
 * defines itself (file NULL) stays a mirror in C++ too: no header of the
 * caller's defines it. */
int ks__cxx_own(const ks_model *m, size_t def)
{
    const ks_def *d = &m->defs[def];
    return (d->kind == KS_DEF_STRUCT || d->kind == KS_DEF_UNION || d->kind == KS_DEF_ENUM) &&
           d->complete && d->file && d->cxx_header && !d->mirror && !d->in_member && !d->has_bases &&
           !ks_def_uses_header(m, def);
}

/* ---- spelling a type from its structure -------------------------------------------------------- */

/* A mirrored enum class C++ callers may name (declared again opaquely):
 * not one whose mirror has its very name ("enum class Top" at global scope
 * against "struct Top"), nor one C++ takes as the application's own. */
int ks__cxx_enum(const ks_model *m, const ks_type *t)
{
    const ks_def *d = t->base == KS_BASE_ENUM ? &m->defs[t->def] : NULL;
    return d && d->scoped && strcmp(d->c_name, d->qname) != 0 && !ks_def_uses_header(m, t->def) &&
           !ks__cxx_own(m, t->def);
}

/* cuda: the C++ overloads' names: CUDA's for the half types, the C++ name
 * of a mirrored enum class. */
static const char *base_name(const ks_model *m, const ks_type *t, int cuda)
{
    switch (t->base) {
    case KS_BASE_VOID: return "void";
    case KS_BASE_SCALAR: return ks_scalar_c_name(t->scalar);
    case KS_BASE_RECORD: return m->defs[t->def].c_name;
    case KS_BASE_ENUM: return cuda && ks__cxx_enum(m, t) ? m->defs[t->def].qname : m->defs[t->def].c_name;
    case KS_BASE_VECTOR: return t->vector;
    case KS_BASE_SPECIAL:
        return cuda && ks_special_cuda_name(t->special) ? ks_special_cuda_name(t->special)
                                                          : ks_special_c_name(t->special);
    }
    return "";
}

/* The tag a record or enum is spelled with (the templates' tag_struct,
 * tag_union and tag_enum flags): mirrors are typedefs of their own name,
 * but records keep "struct"/"union"; the application's types need the tag
 * unless its header typedefs the name. */
typedef enum tag_kind {
    TAG_NONE,                                  /* spelled by its name alone */
    TAG_STRUCT,
    TAG_UNION,
    TAG_ENUM
} tag_kind;

static tag_kind tag_of(const ks_model *m, const ks_type *t)
{
    if (t->base != KS_BASE_RECORD && t->base != KS_BASE_ENUM)
        return TAG_NONE;
    const ks_def *d = &m->defs[t->def];
    if (d->kind == KS_DEF_ARRAY || d->kind == KS_DEF_FUNCTION)
        return TAG_NONE;                       /* a typedef */
    if (ks__cxx_own(m, t->def))
        return TAG_NONE;                       /* a typedef in C++ too: spelled by its name */
    if (ks_def_uses_header(m, t->def)) {
        if (d->c_typedef)
            return TAG_NONE;
        return d->kind == KS_DEF_UNION ? TAG_UNION : d->kind == KS_DEF_ENUM ? TAG_ENUM : TAG_STRUCT;
    }
    if (t->base == KS_BASE_RECORD)
        return d->kind == KS_DEF_UNION ? TAG_UNION : TAG_STRUCT;
    return TAG_NONE;
}

static int scalar_signed(ks_scalar s);

/* What kind of type it is, a flag each, for a target that spells it in
 * another language (templates/python/ reads them; the C templates need
 * none): a pointer (any level), else a scalar integer or floating type
 * (signed or not), a struct or union, an enum, a vector, one of the half
 * types (or CUtensorMap), or another (the array or function a typedef
 * names); a pointer to a function is a pointer and a function; an array
 * (a field's dimensions) is its element's kind and an array. */
static void type_class(ks_tnode *tn, const ks_model *m, const ks_type *t)
{
    int direct = t->nptrs == 0;
    int def_kind = t->base == KS_BASE_RECORD ? (int)m->defs[t->def].kind : -1;
    int flt = t->base == KS_BASE_SCALAR && (t->scalar == KS_SCALAR_FLOAT || t->scalar == KS_SCALAR_DOUBLE);
    ks_tn_flag(tn, "type_pointer", !direct);
    ks_tn_flag(tn, "type_function", def_kind == KS_DEF_FUNCTION);
    ks_tn_flag(tn, "type_void", direct && t->base == KS_BASE_VOID);
    ks_tn_flag(tn, "type_integer", direct && t->base == KS_BASE_SCALAR && !flt);
    ks_tn_flag(tn, "type_floating", direct && flt);
    ks_tn_flag(tn, "type_signed", direct && ((t->base == KS_BASE_SCALAR && scalar_signed(t->scalar)) ||
                                             (t->base == KS_BASE_ENUM && m->defs[t->def].is_signed)));
    ks_tn_flag(tn, "type_record", direct && (def_kind == KS_DEF_STRUCT || def_kind == KS_DEF_UNION));
    ks_tn_flag(tn, "type_enum", direct && t->base == KS_BASE_ENUM);
    ks_tn_flag(tn, "type_vector", direct && t->base == KS_BASE_VECTOR);
    ks_tn_flag(tn, "type_special", direct && t->base == KS_BASE_SPECIAL);
    ks_tn_flag(tn, "type_other", direct && (def_kind == KS_DEF_ARRAY || def_kind == KS_DEF_FUNCTION));
    ks_tn_flag(tn, "type_array", t->ndims > 0);
}

/* A type as the templates spell it ({{*spelled}} in header.h.in): its
 * parts, as a list of one item under key. drop: qualifiers left off the
 * outermost pointer level; base_quals: the base's qualifiers used; cuda:
 * the C++ overloads' names. */
void ks__push_type(ks_tnode *n, const char *key, const ks_model *m, const ks_type *t, unsigned drop,
                      unsigned base_quals, int cuda)
{
    ks_tnode *tn = ks_tn_push(ks_tn_list(n, key), n);
    tag_kind tag = tag_of(m, t);
    ks_tn_flag(tn, "const", base_quals & KS_QUAL_CONST);
    ks_tn_flag(tn, "volatile", base_quals & KS_QUAL_VOLATILE);
    ks_tn_flag(tn, "tag_struct", tag == TAG_STRUCT);
    ks_tn_flag(tn, "tag_union", tag == TAG_UNION);
    ks_tn_flag(tn, "tag_enum", tag == TAG_ENUM);
    ks_tn_set(tn, "base", "%s", base_name(m, t, cuda));
    size_t trailing = 0;
    for (size_t i = t->nptrs; i > 0; i--) {
        if (t->ptr_quals[i - 1] & ~(i == t->nptrs ? drop : 0u))
            break;
        trailing++;
    }
    ks_tval *levels = ks_tn_list(tn, "levels");
    unsigned prev = 1;                         /* the base: a space before its first '*' */
    for (size_t i = 0; i + trailing < t->nptrs; i++) {
        unsigned q = t->ptr_quals[i] & ~(i + 1 == t->nptrs ? drop : 0u);
        ks_tnode *ln = ks_tn_push(levels, tn);
        ks_tn_flag(ln, "space", prev != 0);
        ks_tn_flag(ln, "const", q & KS_QUAL_CONST);
        ks_tn_flag(ln, "volatile", q & KS_QUAL_VOLATILE);
        ks_tn_flag(ln, "restrict", q & KS_QUAL_RESTRICT);
        ks_tn_flag(ln, "cv", (q & KS_QUAL_CONST) && (q & (KS_QUAL_VOLATILE | KS_QUAL_RESTRICT)));
        ks_tn_flag(ln, "vr", (q & KS_QUAL_VOLATILE) && (q & KS_QUAL_RESTRICT));
        prev = q;
    }
    type_class(tn, m, t);
    ks_tval *stars = ks_tn_list(tn, "stars");
    for (size_t i = 0; i < trailing; i++)
        ks_tn_flag(ks_tn_push(stars, tn), "first", i == 0);
    ks_tval *dims = ks_tn_list(tn, "dims");
    for (size_t i = 0; i < t->ndims; i++)
        ks_tn_set(ks_tn_push(dims, tn), "n", "%lld", t->dims[i]);
}

/* A pointer to a function (one level): a device function's address, no
 * memory the run-time checks could look at. */
static int function_pointer(const ks_model *m, const ks_type *t)
{
    return t->nptrs == 1 && t->base == KS_BASE_RECORD && m->defs[t->def].kind == KS_DEF_FUNCTION;
}

/* Strict mode's test of one argument: its exact type (no top-level
 * restrict, which means nothing to a caller) and, for a pointer to const,
 * the same pointer without that const. */
void ks__strict_values(const ks_model *m, const ks_param *p, ks_tnode *pn)
{
    const ks_type *t = &p->type;
    ks__push_type(pn, "strict", m, t, KS_QUAL_RESTRICT, t->quals, 0);
    int alt = t->nptrs == 1 && (t->quals & KS_QUAL_CONST) &&
              (t->ptr_quals[0] & ~(unsigned)KS_QUAL_RESTRICT) == 0;
    ks_tn_flag(pn, "strict_alt", alt);
    if (alt)
        ks__push_type(pn, "alt", m, t, KS_QUAL_RESTRICT, t->quals & ~(unsigned)KS_QUAL_CONST, 0);
    else
        ks_tn_list(pn, "alt");
}

/* Signed integer scalars (char included: it is signed on the device and on
 * the hosts nvcc supports). */
static int scalar_signed(ks_scalar s)
{
    switch (s) {
    case KS_SCALAR_CHAR: case KS_SCALAR_SCHAR: case KS_SCALAR_SHORT: case KS_SCALAR_INT:
    case KS_SCALAR_LONG: case KS_SCALAR_LLONG: case KS_SCALAR_PTRDIFF_T: case KS_SCALAR_INTPTR_T:
    case KS_SCALAR_INTMAX_T: case KS_SCALAR_INT8_T: case KS_SCALAR_INT16_T: case KS_SCALAR_INT32_T:
    case KS_SCALAR_INT64_T:
        return 1;
    default:
        return 0;
    }
}

/* Whether C converts a value argument to type t (an arithmetic type, an
 * enum of the application's own, a pointer): the macro form's default mode
 * lets it pass; a struct (a mirrored enum, a vector, a half) must match. */
int ks__value_converts(const ks_model *m, const ks_type *t)
{
    if (t->nptrs || t->base == KS_BASE_SCALAR)
        return 1;
    return t->base == KS_BASE_ENUM && ks_def_uses_header(m, t->def);
}

/* What the runtime's checks and trace need of a parameter (ks_param_desc):
 * its kind (KS_PARAM_<kind>), for a pointer the element type (sizeof and
 * alignment are taken of it in C, where the header asserts the device's
 * layout) unless that is void or an incomplete type, whether it points to
 * const (read only), and its extent hint. */
void ks__check_values(const ks_model *m, const ks_param *p, ks_tnode *pn)
{
    static const char *const xops[] = {"CONST", "PARAM", "ADD", "SUB", "MUL", "DIV"};
    const ks_type *t = &p->type;
    const char *kind = "BYTES";
    int fn = function_pointer(m, t);
    if (fn)
        kind = "UNSIGNED";                     /* an address in code, traced as its value */
    else if (t->nptrs)
        kind = "POINTER";
    else if (t->base == KS_BASE_SCALAR)
        kind = t->scalar == KS_SCALAR_FLOAT || t->scalar == KS_SCALAR_DOUBLE ? "FLOAT"
               : scalar_signed(t->scalar)                              ? "SIGNED"
                                                                              : "UNSIGNED";
    else if (t->base == KS_BASE_ENUM)
        kind = m->defs[t->def].is_signed ? "SIGNED" : "UNSIGNED";
    ks_tn_set(pn, "kind", "%s", kind);
    ks_type elem = *t;
    int known = 0;
    if (t->nptrs && !fn) {
        elem.nptrs--;
        known = elem.nptrs > 0 || (t->base != KS_BASE_VOID &&
                                   !((t->base == KS_BASE_RECORD || t->base == KS_BASE_ENUM) &&
                                     !m->defs[t->def].complete));
    }
    ks_tn_flag(pn, "pointee_known", known);
    /* The macro form's default test: void * (and const void * for a pointer
     * to const) pass where they are not the parameter's own type already. */
    int void_elem = t->nptrs == 1 && t->base == KS_BASE_VOID;
    /* A function pointer: its own test, whose value keeps NULL convertible
     * (header.h.in); void * passes it as C allows (with -Wpedantic's warning). */
    ks_tn_flag(pn, "is_function", fn);
    ks_tn_flag(pn, "is_pointer", t->nptrs > 0 && !fn);
    ks_tn_flag(pn, "void_ok", t->nptrs > 0 && !void_elem);
    ks_tn_flag(pn, "const_void_ok", t->nptrs == 1 && !void_elem && (t->quals & KS_QUAL_CONST));
    ks_tn_flag(pn, "converts", !fn && ks__value_converts(m, t));
    if (known)
        ks__push_type(pn, "pointee", m, &elem, 0, t->quals, 0);
    else
        ks_tn_list(pn, "pointee");
    /* The races check's access: a pointer to const is only read through. */
    unsigned pointee_quals = t->nptrs > 1 ? t->ptr_quals[t->nptrs - 2] : t->quals;
    ks_tn_flag(pn, "readonly", t->nptrs > 0 && !fn && (pointee_quals & KS_QUAL_CONST));
    ks_tn_flag(pn, "has_extent", p->extent != NULL);
    ks_tn_set(pn, "extent", "%s", p->extent ? p->extent : "");
    ks_tn_set(pn, "nextent", "%zu", p->nextent_ops);
    ks_tval *ops = ks_tn_list(pn, "extent_ops");
    for (size_t i = 0; i < p->nextent_ops; i++) {
        ks_tnode *on = ks_tn_push(ops, pn);
        ks_tn_set(on, "op", "%s", xops[p->extent_ops[i].op]);
        ks_tn_set(on, "value", "%lld", p->extent_ops[i].value);
    }
}
