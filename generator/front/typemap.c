/*
 * typemap.c — type translation: a kernel parameter's CXType becomes a typed
 * ks_type (base, qualifiers per pointer level), and each struct, union or
 * enum it names becomes a ks_def with its layout (fields and offsets,
 * enumerators) as data. Every type C cannot carry exactly is refused here,
 * with the reason and what to do instead. Nothing here knows how C is
 * written: that is the templates' job.
 */
#include "front/typemap_int.h"
#include "base/util.h"
#include "model/model.h"
#include "front/session.h"
#include "front/cursor.h"
#include "front/typemap.h"

#include <stdlib.h>
#include <string.h>

/* ---- records ---------------------------------------------------------------------------------- */

/* "float4", "ulonglong2", "double4_32a", "dim3": a type of CUDA's vector_types.h
 * (clang's CUDA headers declare a few of them again, e.g. uint3 and dim3). */
static int is_cuda_vector_name(const char *s)
{
    static const char *const elems[] = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                        "ulong", "longlong", "ulonglong", "float", "double", NULL};
    if (strcmp(s, "dim3") == 0)
        return 1;
    for (const char *const *e = elems; *e; e++) {
        size_t n = strlen(*e);
        if (strncmp(s, *e, n) != 0 || s[n] < '1' || s[n] > '4')
            continue;
        const char *rest = s + n + 1;
        if (!*rest || strcmp(rest, "_16a") == 0 || strcmp(rest, "_32a") == 0)
            return 1;
    }
    return 0;
}

static int declared_in_file(CXCursor decl, const char *file_basename)
{
    CXFile f;
    clang_getExpansionLocation(clang_getCursorLocation(decl), &f, NULL, NULL, NULL);
    if (!f)
        return 0;
    char *path = ks_take(clang_getFileName(f));
    int r = strcmp(ks_basename(path), file_basename) == 0;
    free(path);
    return r;
}

/* Records libkstub knows under another name. */
static const struct {
    const char *name;          /* the record's name on the device */
    ks_special special;
    int needs_cuda_h;
} known_records[] = {
    {"__half", KS_SPECIAL_HALF, 0},
    {"__half2", KS_SPECIAL_HALF2, 0},
    {"__nv_bfloat16", KS_SPECIAL_BFLOAT16, 0},
    {"__nv_bfloat162", KS_SPECIAL_BFLOAT162, 0},
    {"CUtensorMap_st", KS_SPECIAL_TENSORMAP, 1},
};

static char *pointee_type(tm_ctx *c, CXType t, ks_type *out);

typedef struct class_check {
    const char *why;
    CXCursor bases[16];        /* its direct base specifiers, in order */
    size_t nbases;
    char *base_why;            /* a refusal naming a base (malloc'd) */
} class_check;

static enum CXChildVisitResult class_checker(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    class_check *cc = data;
    switch (clang_getCursorKind(c)) {
    case CXCursor_CXXBaseSpecifier:
        if (clang_isVirtualBase(c)) {
            char *sp = ks__tm_spelling(clang_getCursorType(c));
            cc->base_why = ks__tm_refuse("has a virtual base class '%s', which it finds through a "
                                         "hidden pointer C cannot mirror; make the base non-virtual", sp);
            free(sp);
            return CXChildVisit_Break;
        }
        if (cc->nbases == sizeof cc->bases / sizeof *cc->bases) {
            cc->base_why = ks__tm_refuse("has more than %zu base classes, more than kstub mirrors",
                                         sizeof cc->bases / sizeof *cc->bases);
            return CXChildVisit_Break;
        }
        cc->bases[cc->nbases++] = c;
        break;
    case CXCursor_CXXMethod:
        if (clang_CXXMethod_isVirtual(c)) {
            cc->why = "has virtual functions, so it is not trivially copyable and its vtable "
                      "pointer means nothing on the device";
            return CXChildVisit_Break;
        }
        break;
    case CXCursor_Destructor:
        if (!clang_CXXMethod_isDefaulted(c)) {
            cc->why = "has a user-provided destructor, so it is not trivially copyable";
            return CXChildVisit_Break;
        }
        break;
    case CXCursor_Constructor:
        if ((clang_CXXConstructor_isCopyConstructor(c) || clang_CXXConstructor_isMoveConstructor(c)) &&
            !clang_CXXMethod_isDefaulted(c)) {
            cc->why = "has a user-provided copy or move constructor, so it is not trivially "
                      "copyable";
            return CXChildVisit_Break;
        }
        break;
    default:
        break;
    }
    return CXChildVisit_Continue;
}

typedef struct field_visit {
    tm_ctx *c;
    size_t def;
    unsigned nanon;
    char *why;                 /* first refusal */
    long at;                   /* the visited class's offset in def (a base's; 0: def's own) */
    const char *from;          /* a base's own name ("Base"); NULL: def's own fields */
    const char *key;           /* a base: its qualified name, keying its unnamed members' records */
} field_visit;

/* A field's type: scalar, pointer, enum or record, under any array dimensions. */
static char *field_type(tm_ctx *c, CXType t, const char *name, size_t owner, const char *member,
                        ks_type *out)
{
    CXType e = clang_getCanonicalType(t);
    CXType elem = t;
    long long dims[64];
    size_t ndims = 0;
    while (e.kind == CXType_ConstantArray) {
        if (ndims < sizeof dims / sizeof *dims)
            dims[ndims] = clang_getArraySize(e);
        ndims++;
        elem = clang_getArrayElementType(e);
        e = clang_getCanonicalType(elem);
    }
    if (ndims > sizeof dims / sizeof *dims)
        return ks__tm_refuse("field '%s' has more than %zu array dimensions", name, sizeof dims / sizeof *dims);
    char *why = NULL;
    if (ks__tm_scalar_of(elem, &out->scalar)) {
        out->base = KS_BASE_SCALAR;
    } else if (e.kind == CXType_Pointer) {
        why = ks__tm_pointer_type(c, e, NULL, 0, out);
    } else if (e.kind == CXType_Enum) {
        why = ks__tm_enum_type(c, e, out);
    } else if (e.kind == CXType_Record) {
        why = ks__tm_record_type(c, e, 1, owner, member, out);
    } else {
        char *sp = ks__tm_spelling(t);
        why = ks__tm_refuse("field '%s' has type '%s', which C cannot mirror exactly", name, sp);
        free(sp);
    }
    for (size_t i = 0; !why && i < ndims; i++)
        ks_type_add_dim(out, dims[i]);
    return why;
}

static enum CXVisitorResult field_visitor(CXCursor f, CXClientData data)
{
    field_visit *v = data;
    tm_ctx *c = v->c;
    char *name = ks_take(clang_getCursorSpelling(f));
    CXType t = clang_getCursorType(f);
    CXCursor tdecl = clang_getTypeDeclaration(clang_getCanonicalType(t));
    const char *qname = c->m->defs[v->def].qname;
    int anonymous_member = !*name || clang_Cursor_isAnonymousRecordDecl(tdecl);
    /* How messages and the front end's key for an unnamed record call the
     * member; the generated name is the naming stage's. */
    char *c_name = anonymous_member ? ks_xasprintf("(anonymous %u)", v->nanon++) : ks_xstrdup(name);
    /* An anonymous member, or a member of an unnamed struct type
     * ("struct { ... } pair;"), has a record named after its place. */
    const char *member = anonymous_member || clang_Cursor_isAnonymous(tdecl) ? c_name : NULL;
    /* A base's unnamed member record is keyed apart from def's own. */
    char *base_member = member && v->key ? ks_xasprintf("(base %s)::%s", v->key, member) : NULL;
    if (base_member)
        member = base_member;
    if (clang_Cursor_isBitField(f)) {
        v->why = ks__tm_refuse("%s has a bit-field '%s', whose layout C does not guarantee; use "
                        "a plain integer and masks", qname, c_name);
        goto out;
    }
    long long bits = clang_Cursor_getOffsetOfField(f);
    long size = clang_Type_getSizeOf(t), align = clang_Type_getAlignOf(t);
    if (bits < 0 || size < 0 || align <= 0) {
        v->why = ks__tm_refuse("the layout of %s field '%s' cannot be computed", qname, c_name);
        goto out;
    }
    ks_type ft = {0};
    char *why = field_type(c, t, c_name, v->def, member, &ft);
    if (why) {
        v->why = ks__tm_refuse("%s: %s", c->m->defs[v->def].qname, why);
        free(why);
        ks_type_free(&ft);
        goto out;
    }
    ks_def *d = &c->m->defs[v->def];         /* defs may have moved */
    ks_field *fl = ks_def_add_field(d);
    fl->name = anonymous_member ? NULL : ks_xstrdup(name);
    fl->from = v->from ? ks_xstrdup(v->from) : NULL;
    fl->type = ft;
    fl->offset = v->at + (long)(bits / 8);
    fl->size = size;
    if (align > d->align || (fl->offset % align) != 0)
        d->packed = 1;
out:
    free(base_member);
    free(c_name);
    free(name);
    return v->why ? CXVisit_Break : CXVisit_Continue;
}

/* A class's own name without its template arguments ("Base" of
 * ns::Base<int>): what a base's renamed fields are prefixed with. */
static char *class_leaf_name(CXCursor decl)
{
    char *sp = ks_take(clang_getCursorSpelling(decl));
    char *lt = strchr(sp, '<');
    if (lt)
        *lt = '\0';
    return sp;
}

/* Whether C can mirror class canon: copyable, no virtual function, no
 * virtual base, and so each of its bases. owner_q: the record named in
 * refusals; base: canon is a base of it (0: the record itself). */
static char *check_class(CXType canon, const char *owner_q, int base, unsigned depth)
{
    CXCursor decl = clang_getTypeDeclaration(canon);
    class_check cc = {0};
    clang_visitChildren(decl, class_checker, &cc);
    char *why = NULL;
    const char *what = cc.base_why ? cc.base_why : cc.why;
    if (depth > 64) {
        why = ks__tm_refuse("%s derives from classes nested too deep", owner_q);
    } else if (what && base) {
        char *sp = ks__tm_spelling(canon);
        why = ks__tm_refuse("%s: its base class '%s' %s", owner_q, sp, what);
        free(sp);
    } else if (what) {
        why = ks__tm_refuse("%s %s", owner_q, what);
    }
    for (size_t i = 0; !why && i < cc.nbases; i++)
        why = check_class(clang_getCanonicalType(clang_getCursorType(cc.bases[i])), owner_q, 1,
                          depth + 1);
    free(cc.base_why);
    return why;
}

/* Class canon's fields into def idx at byte offset at: each non-virtual
 * base's first (recursively, in base order, each at the offset clang gives
 * it, so an empty base takes no room and a base's tail padding is reused
 * or kept exactly as the Itanium ABI lays it out), then its own. The gaps
 * between them become explicit padding (ks_def_gaps). owner_q: the record
 * named in refusals; from: canon's own name when it is a base (NULL for
 * the record itself). check_class has passed. */
static char *flatten_class(tm_ctx *c, CXType canon, size_t idx, long at, const char *owner_q,
                           const char *from)
{
    CXCursor decl = clang_getTypeDeclaration(canon);
    class_check cc = {0};
    clang_visitChildren(decl, class_checker, &cc);
    free(cc.base_why);
    char *why = NULL;
    for (size_t i = 0; !why && i < cc.nbases; i++) {
        CXType bt = clang_getCanonicalType(clang_getCursorType(cc.bases[i]));
        long long bits = clang_getOffsetOfBase(decl, cc.bases[i]);
        if (bits < 0 || bt.kind != CXType_Record) {
            char *sp = ks__tm_spelling(bt);
            why = ks__tm_refuse("the layout of %s's base class '%s' cannot be computed", owner_q, sp);
            free(sp);
            break;
        }
        c->m->defs[idx].has_bases = 1;
        char *leaf = class_leaf_name(clang_getTypeDeclaration(bt));
        why = flatten_class(c, bt, idx, at + (long)(bits / 8), owner_q, leaf);
        free(leaf);
    }
    if (!why) {
        char *bq = from ? ks_qualified_name(decl) : NULL;
        field_visit v = {c, idx, 0, NULL, at, from, bq};
        clang_Type_visitFields(canon, field_visitor, &v);
        why = v.why;
        free(bq);
    }
    return why;
}

/* A struct or union taken by value: its layout as data, checked copyable. */
static char *define_record(tm_ctx *c, CXType canon, size_t idx)
{
    ks_def *d = &c->m->defs[idx];
    char *qname = ks_xstrdup(d->qname);
    CXCursor decl = clang_getTypeDeclaration(canon);
    char *why = check_class(canon, qname, 0, 0);
    long size = clang_Type_getSizeOf(canon), align = clang_Type_getAlignOf(canon);
    if (why) {
        /* refused: left incomplete */
    } else if (size < 0 || align <= 0) {
        why = ks__tm_refuse("the size or alignment of %s cannot be computed (an incomplete or "
                     "dependent type?)", qname);
    } else {
        d->size = size;
        d->align = align;
        d->complete = 1;        /* set first: a self-reference through a pointer is fine */
        if (!d->in_member)
            ks__tm_note_origin(c, decl, d);
        why = flatten_class(c, canon, idx, 0, qname, NULL);
        if (!why)
            ks_model_define(c->m, idx);
    }
    free(qname);
    return why;
}

/* A class template specialization's C++ name as clang prints the type
 * ("ns::Params<float, 4>", qualifiers dropped), with its arguments
 * ("float, 4") and the template's qualified name ("ns::Params") apart:
 * naming.c makes the mirror's C name of them. */
static char *specialization_name(CXCursor decl, CXType canon, char **args, char **tname)
{
    char *printed = ks_take(clang_getTypeSpelling(clang_getUnqualifiedType(canon)));
    char *open = strchr(printed, '<');
    size_t n = strlen(printed);
    *tname = ks_qualified_name(decl);
    /* The template's own name, without the arguments a cursor may spell. */
    char *lt = strchr(*tname, '<');
    if (lt)
        *lt = '\0';
    if (open && n && printed[n - 1] == '>') {
        *args = ks_xasprintf("%.*s", (int)(printed + n - 1 - open - 1), open + 1);
    } else {
        *args = ks_xstrdup("");
    }
    char *q = ks_xasprintf("%s<%s>", *tname, *args);
    free(printed);
    return q;
}

typedef struct empty_check {
    unsigned depth;
    int empty;
} empty_check;


static enum CXVisitorResult count_field(CXCursor f, CXClientData data)
{
    (void)f;
    ((empty_check *)data)->empty = 0;
    return CXVisit_Break;
}

static enum CXChildVisitResult check_bases(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    empty_check *e = data;
    if (clang_getCursorKind(c) == CXCursor_CXXBaseSpecifier &&
        !ks__tm_is_empty_class(clang_getCanonicalType(clang_getCursorType(c)), e->depth + 1)) {
        e->empty = 0;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

/* An empty class: no data member in it or its bases, so C++ gives it one
 * byte and nvcc passes that byte (".param .align 1 .b8 t[1]"). Its value
 * is its type (std::integral_constant<int, 4>, std::true_type, a tag):
 * nothing for a caller to choose, and C has no empty struct to mirror it. */
int ks__tm_is_empty_class(CXType canon, unsigned depth)
{
    if (canon.kind != CXType_Record || depth > 32 || clang_Type_getSizeOf(canon) != 1)
        return 0;
    CXCursor decl = clang_getTypeDeclaration(canon);
    if (clang_getCursorKind(decl) == CXCursor_UnionDecl)
        return 0;
    empty_check e = {depth, 1};
    clang_Type_visitFields(canon, count_field, &e);
    if (e.empty)
        clang_visitChildren(decl, check_bases, &e);
    return e.empty;
}

/* A struct/union/class: a known equivalent, a CUDA vector type, a declared
 * record (pointees) or a defined one (by value). */
char *ks__tm_record_type(tm_ctx *c, CXType canon, int by_value, size_t owner, const char *member,
                         ks_type *out)
{
    CXCursor decl = clang_getTypeDeclaration(canon);
    char *spelled = ks_take(clang_getCursorSpelling(decl));
    char *why = NULL;
    for (size_t i = 0; i < sizeof known_records / sizeof known_records[0]; i++)
        if (strcmp(spelled, known_records[i].name) == 0) {
            c->m->needs_cuda_h |= known_records[i].needs_cuda_h;
            out->base = KS_BASE_SPECIAL;
            out->special = known_records[i].special;
            free(spelled);
            return NULL;
        }
    if (declared_in_file(decl, "vector_types.h") ||
        (is_cuda_vector_name(spelled) && clang_Location_isInSystemHeader(clang_getCursorLocation(decl)))) {
        c->m->needs_vector_types = 1;
        out->base = KS_BASE_VECTOR;
        out->vector = spelled;
        return NULL;
    }
    ks_def_kind kind = clang_getCursorKind(decl) == CXCursor_UnionDecl ? KS_DEF_UNION : KS_DEF_STRUCT;
    char *q = NULL, *targs = NULL, *tname = NULL;
    if (member && (clang_Cursor_isAnonymous(decl) || !*spelled))
        q = ks_xasprintf("%s::%s", c->m->defs[owner].qname, member);
    else if (!*spelled || clang_Cursor_isAnonymous(decl))
        why = ks__tm_refuse("an unnamed struct; give the struct a name");
    else if (clang_Type_getNumTemplateArguments(canon) > 0)
        q = specialization_name(decl, canon, &targs, &tname);
    else
        q = ks_qualified_name(decl);
    if (q) {
        int is_new;
        size_t idx = ks_model_def(c->m, kind, q, &is_new);
        if (is_new && member && !(clang_Cursor_isAnonymous(decl) == 0 && *spelled)) {
            c->m->defs[idx].in_member = 1;
            c->m->defs[idx].owner = owner;
            c->m->defs[idx].member_field = c->m->defs[owner].nfields;  /* the field being added */
        }
        if (is_new && targs) {
            c->m->defs[idx].template_args = targs;
            c->m->defs[idx].template_name = tname;
            targs = tname = NULL;
        }
        out->base = KS_BASE_RECORD;
        out->def = idx;
        if (by_value && !c->m->defs[idx].complete)
            why = define_record(c, canon, idx);
        else if (!by_value) {
            /* Only pointed to: no layout, but where it is declared, so that a
             * typedef'd anonymous struct ("typedef struct { ... } X;") is
             * spelled X from its header, never "struct X" (issue 31 #7). */
            CXCursor def = clang_getCursorDefinition(decl);
            if (!member && !c->m->defs[idx].complete && !clang_Cursor_isNull(def))
                ks__tm_note_origin(c, def, &c->m->defs[idx]);
            ks_model_declare(c->m, idx);
        }
    }
    free(spelled);
    free(q);
    free(targs);
    free(tname);
    return why;
}

/* ---- pointers ----------------------------------------------------------------------------------- */

/* An array a pointer points to ("float (*x)[28]", "const float (*w)[5][5]"):
 * a KS_DEF_ARRAY def, typedef'd in C as "float_arr28" / "float_arr5_5", its
 * element a scalar, record, enum or CUDA type; the element's qualifiers stay
 * on out (const applied to an array typedef applies to its elements). */
static char *array_type(tm_ctx *c, CXType t, ks_type *out)
{
    CXType e = clang_getCanonicalType(t), elem = t;
    long long dims[8];
    size_t ndims = 0;
    while (e.kind == CXType_ConstantArray && ndims < 8) {
        dims[ndims++] = clang_getArraySize(e);
        elem = clang_getArrayElementType(e);
        e = clang_getCanonicalType(elem);
    }
    ks_type et = {0};
    char *why = NULL;
    if (e.kind == CXType_ConstantArray || e.kind == CXType_Pointer)
        why = ks__tm_refuse("pointer to an array of more than 8 dimensions or of pointers; pass a "
                     "pointer to the element type");
    else
        why = pointee_type(c, elem, &et);
    if (!why && (et.nptrs || et.tag))
        why = ks__tm_refuse("pointer to an array of pointers; pass a pointer to the element type");
    if (!why && et.base == KS_BASE_RECORD && !c->m->defs[et.def].complete)
        why = define_record(c, clang_getCanonicalType(elem), et.def);
    if (why) {
        ks_type_free(&et);
        return why;
    }
    /* libclang may keep the element's qualifiers on the array type. */
    unsigned quals = et.quals | ks__tm_quals_of(t) | ks__tm_quals_of(clang_getCanonicalType(t));
    et.quals = 0;
    char *elem_name = ks_take(clang_getTypeSpelling(clang_getUnqualifiedType(e)));
    ks_buf q = {0};
    ks_buf_puts(&q, elem_name);
    for (size_t i = 0; i < ndims; i++)
        ks_buf_printf(&q, "[%lld]", dims[i]);
    free(elem_name);
    int is_new;
    size_t idx = ks_model_def(c->m, KS_DEF_ARRAY, q.data, &is_new);
    free(q.data);
    if (is_new) {
        ks_def *d = &c->m->defs[idx];
        ks_field *f = ks_def_add_field(d);
        f->name = ks_xstrdup("elem");
        for (size_t i = 0; i < ndims; i++)
            ks_type_add_dim(&et, dims[i]);
        f->type = et;
        d->size = clang_Type_getSizeOf(clang_getCanonicalType(t));
        d->align = clang_Type_getAlignOf(clang_getCanonicalType(t));
        f->size = d->size;
        d->complete = 1;
        ks_model_define(c->m, idx);
    } else {
        ks_type_free(&et);
    }
    memset(out, 0, sizeof *out);
    out->base = KS_BASE_RECORD;
    out->def = idx;
    out->quals = quals;
    return NULL;
}

/* The type a pointer points to, qualifiers included. */
static char *pointee_type(tm_ctx *c, CXType t, ks_type *out)
{
    CXType canon = clang_getCanonicalType(t);
    out->quals = ks__tm_quals_of(t);
    if (ks__tm_scalar_of(t, &out->scalar)) {
        out->base = KS_BASE_SCALAR;
        return NULL;
    }
    switch (canon.kind) {
    case CXType_Void:
        out->base = KS_BASE_VOID;
        return NULL;
    case CXType_Pointer: {
        out->quals = 0;         /* they belong to the pointer level */
        char *alias = ks__tm_typedef_name_of(t);
        char *why = ks__tm_pointer_type(c, ks__tm_written_pointer(t, canon), alias, 0, out);
        free(alias);
        return why;
    }
    case CXType_Enum: {
        char *why = ks__tm_enum_type(c, canon, out);
        return why;
    }
    case CXType_Record:
        return ks__tm_record_type(c, canon, 0, 0, NULL, out);
    default: {
        char *sp = ks__tm_spelling(t);
        char *why;
        if (canon.kind == CXType_FunctionProto || canon.kind == CXType_FunctionNoProto)
            why = ks__tm_refuse("function type '%s' where a pointer to it was expected", sp);
        else if (canon.kind == CXType_ConstantArray)
            why = array_type(c, t, out);
        else if (canon.kind == CXType_IncompleteArray)
            why = ks__tm_refuse("pointer to array of unknown size '%s'; pass a pointer to the element "
                         "type", sp);
        else
            why = ks__tm_refuse("pointer to '%s', a type C has no exact equivalent for", sp);
        free(sp);
        return why;
    }
    }
}

/* A pointer; alias: the typedef it was spelled through, if any (it names
 * a function type the pointer points to). */
char *ks__tm_pointer_type(tm_ctx *c, CXType t, const char *alias, int top_level, ks_type *out)
{
    CXType pointee = clang_getPointeeType(t);
    enum CXTypeKind pk = clang_getCanonicalType(pointee).kind;
    char *why;
    if (pk == CXType_FunctionProto || pk == CXType_FunctionNoProto) {
        char *own = alias ? NULL : ks__tm_typedef_name_of(pointee);
        why = ks__tm_function_type(c, pointee, alias ? alias : own, clang_Type_getSizeOf(t),
                            clang_Type_getAlignOf(t), out);
        free(own);
    } else {
        why = pointee_type(c, pointee, out);
    }
    if (why)
        return why;
    /* Top-level const/volatile on a parameter mean nothing to the caller. */
    unsigned q = top_level ? 0 : ks__tm_quals_of(t);
    if (clang_isRestrictQualifiedType(t))
        q |= KS_QUAL_RESTRICT;
    ks_type_add_ptr(out, q);
    return NULL;
}

int ks_typemap_param(const ks_session *s, ks_model *m, CXType t, ks_type *out, char **refusal)
{
    tm_ctx c = {s, m};
    CXType canon = clang_getCanonicalType(t);
    memset(out, 0, sizeof *out);
    char *sp = ks__tm_spelling(t);
    char *why = NULL;
    switch (canon.kind) {
    case CXType_Pointer: {
        char *alias = ks__tm_typedef_name_of(t);
        why = ks__tm_pointer_type(&c, ks__tm_written_pointer(t, t.kind == CXType_Pointer ? t : canon), alias, 1, out);
        free(alias);
        break;
    }
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray: {
        /* "float x[]" declares a pointer parameter, as in C. */
        CXType elem = clang_getArrayElementType(canon);
        why = pointee_type(&c, elem, out);
        if (!why) {
            /* libclang may keep the element's qualifiers on the array type. */
            unsigned extra = ks__tm_quals_of(canon) & ~ks__tm_quals_of(elem);
            if (out->nptrs)
                out->ptr_quals[out->nptrs - 1] |= extra;
            else
                out->quals |= extra;
            ks_type_add_ptr(out, 0);
        }
        break;
    }
    case CXType_LValueReference:
    case CXType_RValueReference:
        why = ks__tm_refuse("'%s' is a reference; a kernel's arguments are copied from the host, so "
                     "take the value, or a device pointer", sp);
        break;
    case CXType_MemberPointer:
        why = ks__tm_refuse("'%s' is a member pointer, which C cannot pass; pass an offset or an index", sp);
        break;
    case CXType_Record:
        if (ks__tm_is_empty_class(canon, 0)) {
            out->base = KS_BASE_SCALAR;
            out->scalar = KS_SCALAR_UCHAR;
            out->tag = 1;
        } else {
            why = ks__tm_record_type(&c, canon, 1, 0, NULL, out);
        }
        break;
    case CXType_Enum:
        why = ks__tm_enum_type(&c, canon, out);
        break;
    case CXType_Dependent:
    case CXType_Unexposed:
        why = ks__tm_refuse("'%s' is a dependent type; only non-template kernels are supported", sp);
        break;
    default:
        if (ks__tm_scalar_of(t, &out->scalar))
            out->base = KS_BASE_SCALAR;
        else
            why = ks__tm_refuse("'%s' has no exact C equivalent; use an integer, floating-point "
                         "or pointer type", sp);
        break;
    }
    free(sp);
    *refusal = why;
    if (why)
        ks_type_free(out);
    return why ? -1 : 0;
}

int ks_typemap_variable(const ks_session *s, ks_model *m, CXType t, const char *name, ks_type *out,
                        char **refusal)
{
    tm_ctx c = {s, m};
    memset(out, 0, sizeof *out);
    CXType canon = clang_getCanonicalType(t);
    char *why = NULL;
    /* An unnamed struct type ("__constant__ struct { int a; } p;") has no
     * name a C mirror could take, and nothing else names it. */
    CXType e = canon;
    while (e.kind == CXType_ConstantArray)
        e = clang_getCanonicalType(clang_getArrayElementType(e));
    if (e.kind == CXType_IncompleteArray)
        why = ks__tm_refuse("'%s' is an array of unknown bound: its size is the definition's, "
                            "which kstub cannot see", name);
    else if (e.kind == CXType_Record && clang_Cursor_isAnonymous(clang_getTypeDeclaration(e)))
        why = ks__tm_refuse("'%s' has an unnamed struct or union type, which C cannot name; give "
                            "the type a name", name);
    else if (e.kind == CXType_Record && ks__tm_is_empty_class(e, 0))
        why = ks__tm_refuse("'%s' has an empty class type: nothing to read or write", name);
    else
        why = field_type(&c, t, name, 0, NULL, out);
    *refusal = why;
    if (why)
        ks_type_free(out);
    return why ? -1 : 0;
}

/* ---- pointers to functions ------------------------------------------------------------------ */

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
