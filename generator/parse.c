/*
 * parse.c — the front end: parses a .cu file device-side with libclang and
 * builds the signature model (kernels, parameters, C types, size, alignment,
 * offset, device symbol).
 *
 * Device-side parsing (--cuda-device-only) matters: it gives the symbol names
 * and type layouts of the device compiler, where a host-side parse would give
 * __device_stub__ wrappers.
 */
#include "model.h"

#include <clang-c/Index.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parse_ctx parse_ctx;
static int report_diagnostics(parse_ctx *ctx);

/* An explicit instantiation found in the source text. */
typedef struct instantiation {
    char *args;        /* "float, 4" */
    char *used_by;     /* the template kernel it instantiates, once seen */
} instantiation;

/* __launch_bounds__ whose arguments are constant expressions, not literals. */
typedef struct pending_bounds {
    char *symbol;                /* the kernel's, to find it again */
    char *ns;                    /* its namespace, "a::b", or "" */
    char *max_expr, *min_expr;   /* min_expr may be NULL */
    unsigned line, col;
} pending_bounds;

struct parse_ctx {
    const ks_options *opts;
    ks_model *model;
    CXTranslationUnit tu;
    int errors;
    char **templates;            /* qualified names of template kernels */
    size_t ntemplates;
    const char *name_override;   /* for a template specialization: "k<float, 4>" */
    const char *c_name_override; /* and its C name, "k_float_4" */
    pending_bounds *lbs;
    size_t nlbs;
    instantiation *inst;         /* explicit instantiations, kstub_i0, kstub_i1, ... */
    size_t ninst;
};

/* ---- small libclang helpers -------------------------------------------------- */

static char *take(CXString s)
{
    const char *c = clang_getCString(s);
    char *r = ks_xstrdup(c ? c : "");
    clang_disposeString(s);
    return r;
}

static void location_of(CXCursor c, unsigned *line, unsigned *col)
{
    clang_getExpansionLocation(clang_getCursorLocation(c), NULL, line, col, NULL);
}

static void cursor_diag(parse_ctx *ctx, CXCursor c, const char *severity, const char *fmt, va_list ap)
{
    unsigned line, col;
    location_of(c, &line, &col);
    ks_verror_at(ctx->opts->input, line, col, severity, fmt, ap);
}

static void cursor_error(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cursor_error(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cursor_diag(ctx, c, "error", fmt, ap);
    va_end(ap);
    ctx->errors++;
}

static void cursor_note(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cursor_note(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cursor_diag(ctx, c, "note", fmt, ap);
    va_end(ap);
}

static enum CXChildVisitResult find_global_attr(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_CUDAGlobalAttr) {
        *(int *)data = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static int is_kernel(CXCursor c)
{
    int found = 0;
    clang_visitChildren(c, find_global_attr, &found);
    return found;
}

/* "ns::inner::name" from the cursor's semantic parents. */
static char *qualified_name(CXCursor c)
{
    char *name = take(clang_getCursorSpelling(c));
    for (CXCursor p = clang_getCursorSemanticParent(c);
         !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        enum CXCursorKind k = clang_getCursorKind(p);
        if (k == CXCursor_LinkageSpec)
            continue;
        char *part = take(clang_getCursorSpelling(p));
        char *joined = ks_xasprintf("%s::%s", *part ? part : "(anonymous)", name);
        free(part);
        free(name);
        name = joined;
    }
    return name;
}

/* C identifier from a qualified name: "::" becomes "_". */
static char *c_identifier(const char *qualified)
{
    ks_buf b = {0};
    for (const char *p = qualified; *p; p++) {
        if (p[0] == ':' && p[1] == ':') {
            ks_buf_puts(&b, "_");
            p++;
        } else {
            ks_buf_put(&b, p, 1);
        }
    }
    return ks_buf_take(&b);
}

/* ---- types -------------------------------------------------------------------------- */

static const char *const std_typedefs[] = {
    "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "intmax_t", "uintmax_t",
    "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    NULL,
};

static int is_std_typedef(const char *name)
{
    for (const char *const *p = std_typedefs; *p; p++)
        if (strcmp(*p, name) == 0)
            return 1;
    return 0;
}

/* The first <stdint.h>/<stddef.h> typedef in t's chain of sugar, or NULL:
 * "int64_t n" stays int64_t in C rather than becoming "long". */
static char *std_typedef_name(CXType t)
{
    for (;;) {
        if (t.kind == CXType_Elaborated) {
            t = clang_Type_getNamedType(t);
        } else if (t.kind == CXType_Typedef) {
            char *name = take(clang_getTypedefName(t));
            if (is_std_typedef(name))
                return name;
            free(name);
            t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
        } else if (t.kind == CXType_Unexposed) {
            /* "std::int64_t" (a using-declaration) shows as unexposed sugar. */
            char *sp = take(clang_getTypeSpelling(t));
            const char *name = sp;
            while (strncmp(name, "const ", 6) == 0 || strncmp(name, "volatile ", 9) == 0)
                name = strchr(name, ' ') + 1;
            if (strncmp(name, "std::", 5) == 0)
                name += 5;
            char *r = is_std_typedef(name) ? ks_xstrdup(name) : NULL;
            free(sp);
            return r;
        } else {
            return NULL;
        }
    }
}

/* C spelling of a builtin scalar type, or NULL if C has no exact equivalent. */
static const char *builtin_c_name(enum CXTypeKind k)
{
    switch (k) {
    case CXType_Bool: return "bool";
    case CXType_Char_S:
    case CXType_Char_U: return "char";
    case CXType_SChar: return "signed char";
    case CXType_UChar: return "unsigned char";
    case CXType_Short: return "short";
    case CXType_UShort: return "unsigned short";
    case CXType_Int: return "int";
    case CXType_UInt: return "unsigned int";
    case CXType_Long: return "long";
    case CXType_ULong: return "unsigned long";
    case CXType_LongLong: return "long long";
    case CXType_ULongLong: return "unsigned long long";
    case CXType_Float: return "float";
    case CXType_Double: return "double";
    default: return NULL;
    }
}

/* Why a type cannot be a parameter, with what to do instead; NULL if it can. */
typedef struct type_result {
    char *c_type;        /* malloc'd C spelling, or NULL */
    char *why;           /* malloc'd refusal, or NULL */
} type_result;

static type_result refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static type_result refuse(const char *fmt, ...)
{
    type_result r = {NULL, NULL};
    va_list ap;
    va_start(ap, fmt);
    r.why = ks_xvasprintf(fmt, ap);
    va_end(ap);
    return r;
}

static type_result accept(char *c_type)
{
    type_result r = {c_type, NULL};
    return r;
}

static void add_fwd(ks_model *m, const char *c_name)
{
    for (size_t i = 0; i < m->nfwds; i++)
        if (strcmp(m->fwds[i].c_name, c_name) == 0)
            return;
    m->fwds = ks_xrealloc(m->fwds, (m->nfwds + 1) * sizeof *m->fwds);
    m->fwds[m->nfwds++].c_name = ks_xstrdup(c_name);
}

static int declared_in_file(CXCursor decl, const char *file_basename)
{
    CXFile f;
    clang_getExpansionLocation(clang_getCursorLocation(decl), &f, NULL, NULL, NULL);
    if (!f)
        return 0;
    char *path = take(clang_getFileName(f));
    int r = strcmp(ks_basename(path), file_basename) == 0;
    free(path);
    return r;
}

static char *qualifier_prefix(CXType t)
{
    return ks_xasprintf("%s%s", clang_isConstQualifiedType(t) ? "const " : "",
                        clang_isVolatileQualifiedType(t) ? "volatile " : "");
}

typedef struct enum_visit {
    ks_buf *b;
    const char *cn;
    int is_signed;
} enum_visit;

static enum CXChildVisitResult enum_constant_visitor(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    enum_visit *ev = data;
    if (clang_getCursorKind(c) != CXCursor_EnumConstantDecl)
        return CXChildVisit_Continue;
    char *name = take(clang_getCursorSpelling(c));
    if (ev->is_signed)
        ks_buf_printf(ev->b, "#define %s_%s KS_ENUM_VALUE(%s, %lld)\n", ev->cn, name, ev->cn,
                      clang_getEnumConstantDeclValue(c));
    else
        ks_buf_printf(ev->b, "#define %s_%s KS_ENUM_VALUE(%s, %lluu)\n", ev->cn, name, ev->cn,
                      clang_getEnumConstantDeclUnsignedValue(c));
    free(name);
    return CXChildVisit_Continue;
}

/* Records C knows under another name. */
static const struct {
    const char *name;       /* the record's name on the device */
    const char *c_name;
    int needs_cuda_h;
} known_records[] = {
    {"__half", "ks_half", 0},
    {"__half2", "ks_half2", 0},
    {"__nv_bfloat16", "ks_bfloat16", 0},
    {"__nv_bfloat162", "ks_bfloat162", 0},
    {"CUtensorMap_st", "CUtensorMap", 1},
};

static const ks_ctype *find_ctype(const ks_model *m, const char *c_name)
{
    for (size_t i = 0; i < m->ntypes; i++)
        if (strcmp(m->types[i].c_name, c_name) == 0)
            return &m->types[i];
    return NULL;
}

static void add_ctype(ks_model *m, const char *c_name, char *text)
{
    m->types = ks_xrealloc(m->types, (m->ntypes + 1) * sizeof *m->types);
    m->types[m->ntypes].c_name = ks_xstrdup(c_name);
    m->types[m->ntypes].text = text;
    m->ntypes++;
}

static type_result enum_c_type(parse_ctx *ctx, CXType canon);
static type_result pointer_c_type(parse_ctx *ctx, CXType t, int top_level);
static type_result record_c_type(parse_ctx *ctx, CXType canon, int by_value, const char *anon_name);

/* A scalar's C spelling (builtin or <stdint.h>/<stddef.h> typedef), or NULL. */
static char *scalar_c_name(CXType t)
{
    char *std = std_typedef_name(t);
    if (std)
        return std;
    const char *b = builtin_c_name(clang_getCanonicalType(t).kind);
    return b ? ks_xstrdup(b) : NULL;
}

/* An enum becomes a one-member struct of its underlying integer type: same
 * size and alignment, and C cannot mix it up with plain integers or other
 * enums. Its constants become macros. */
static type_result enum_c_type(parse_ctx *ctx, CXType canon)
{
    CXCursor decl = clang_getTypeDeclaration(canon);
    char *q = qualified_name(decl);
    if (!*q || strstr(q, "::::") || clang_Cursor_isAnonymous(decl)) {
        free(q);
        return refuse("an unnamed enum; give the enum a name");
    }
    char *cn = c_identifier(q);
    type_result r = {NULL, NULL};
    if (!find_ctype(ctx->model, cn)) {
        char *under = scalar_c_name(clang_getEnumDeclIntegerType(decl));
        if (!under) {
            free(q);
            free(cn);
            return refuse("an enum whose underlying type C cannot name");
        }
        long size = clang_Type_getSizeOf(canon), align = clang_Type_getAlignOf(canon);
        ks_buf b = {0};
        ks_buf_printf(&b, "#ifndef KS_TYPE_%s\n#define KS_TYPE_%s\n", cn, cn);
        ks_buf_printf(&b, "/* enum %s: its underlying %s, kept a distinct type. */\n", q, under);
        ks_buf_printf(&b, "typedef struct %s { %s value; } %s;\n", cn, under, cn);
        ks_buf consts = {0};
        CXType ut = clang_getCanonicalType(clang_getEnumDeclIntegerType(decl));
        int is_signed = ut.kind == CXType_SChar || ut.kind == CXType_Char_S ||
                        ut.kind == CXType_Short || ut.kind == CXType_Int ||
                        ut.kind == CXType_Long || ut.kind == CXType_LongLong;
        enum_visit ev = {&consts, cn, is_signed};
        clang_visitChildren(decl, enum_constant_visitor, &ev);
        ks_buf_puts(&b, consts.data ? consts.data : "");
        free(consts.data);
        ks_buf_printf(&b, "KS_STATIC_ASSERT(sizeof(%s) == %ld && KS_ALIGNOF(%s) == %ld,\n"
                          "                 \"kstub: enum %s is %ld bytes, %ld-aligned on the device\", %s);\n",
                      cn, size, cn, align, q, size, align, cn);
        ks_buf_printf(&b, "#endif");
        add_ctype(ctx->model, cn, ks_buf_take(&b));
        free(under);
    }
    r = accept(ks_xstrdup(cn));
    free(q);
    free(cn);
    return r;
}

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

/* ---- mirrored records ---- */

typedef struct field_visit {
    parse_ctx *ctx;
    const char *cn;        /* the mirror's C name */
    const char *qname;     /* the record's C++ name, for messages */
    int is_union;
    long cur;              /* bytes laid out so far */
    int packed;            /* a field is less aligned than its type */
    long record_align;
    int nanon, npad;
    ks_buf body, asserts;
    char *why;             /* first refusal */
} field_visit;

/* "float x", "int m[2][3]", "struct Inner in": a field's C declaration. */
static type_result field_decl(parse_ctx *ctx, CXType t, const char *name, const char *anon_name)
{
    ks_buf dims = {0};
    CXType e = clang_getCanonicalType(t);
    CXType elem = t;
    while (e.kind == CXType_ConstantArray) {
        ks_buf_printf(&dims, "[%lld]", clang_getArraySize(e));
        elem = clang_getArrayElementType(e);
        e = clang_getCanonicalType(elem);
    }
    type_result r;
    char *scalar = scalar_c_name(elem);
    if (scalar) {
        r = accept(scalar);
    } else if (e.kind == CXType_Pointer) {
        r = pointer_c_type(ctx, e, 0);
    } else if (e.kind == CXType_Enum) {
        r = enum_c_type(ctx, e);
    } else if (e.kind == CXType_Record) {
        r = record_c_type(ctx, e, 1, anon_name);
    } else {
        char *sp = take(clang_getTypeSpelling(t));
        r = refuse("field '%s' has type '%s', which C cannot mirror exactly", name, sp);
        free(sp);
    }
    if (r.c_type) {
        size_t n = strlen(r.c_type);
        char *d = ks_xasprintf("%s%s%s%s", r.c_type, n && r.c_type[n - 1] == '*' ? "" : " ", name,
                               dims.data ? dims.data : "");
        free(r.c_type);
        r.c_type = d;
    }
    free(dims.data);
    return r;
}

static enum CXVisitorResult field_visitor(CXCursor f, CXClientData data)
{
    field_visit *v = data;
    if (v->why)
        return CXVisit_Break;
    char *name = take(clang_getCursorSpelling(f));
    CXType t = clang_getCursorType(f);
    char *anon_name = NULL;
    CXCursor tdecl = clang_getTypeDeclaration(clang_getCanonicalType(t));
    if (!*name || clang_Cursor_isAnonymousRecordDecl(tdecl)) {
        /* An anonymous member gets a name in C (C99 has no anonymous members). */
        free(name);
        name = ks_xasprintf("ks__anon%d", v->nanon++);
        anon_name = ks_xasprintf("%s_%s", v->cn, name);
    } else if (clang_Cursor_isAnonymous(tdecl)) {
        anon_name = ks_xasprintf("%s_%s", v->cn, name);   /* struct { ... } pair; */
    }
    if (clang_Cursor_isBitField(f)) {
        v->why = ks_xasprintf("%s has a bit-field '%s', whose layout C does not guarantee; use "
                              "a plain integer and masks", v->qname, name);
        free(name);
        free(anon_name);
        return CXVisit_Break;
    }
    long long bits = clang_Cursor_getOffsetOfField(f);
    long size = clang_Type_getSizeOf(t), align = clang_Type_getAlignOf(t);
    if (bits < 0 || size < 0 || align <= 0) {
        v->why = ks_xasprintf("the layout of %s field '%s' cannot be computed", v->qname, name);
        free(name);
        free(anon_name);
        return CXVisit_Break;
    }
    long off = (long)(bits / 8);
    type_result d = field_decl(v->ctx, t, name, anon_name);
    if (!d.c_type) {
        v->why = ks_xasprintf("%s: %s", v->qname, d.why);
        free(d.why);
        free(name);
        free(anon_name);
        return CXVisit_Break;
    }
    if (!v->is_union && off > v->cur)
        ks_buf_printf(&v->body, "    char ks__pad%d[%ld];\n", v->npad++, off - v->cur);
    if (align > v->record_align || (off % align) != 0)
        v->packed = 1;
    ks_buf_printf(&v->body, "    %s;%*s/* offset %ld */\n", d.c_type,
                  (int)(strlen(d.c_type) < 30 ? 30 - strlen(d.c_type) : 1), "", off);
    ks_buf_printf(&v->asserts, "KS_STATIC_ASSERT(offsetof(%s, %s) == %ld,\n"
                               "                 \"kstub: %s field %s is at offset %ld on the device\", %s_%s);\n",
                  v->cn, name, off, v->qname, name, off, v->cn, name);
    if (off + size > v->cur)
        v->cur = off + size;
    free(d.c_type);
    free(name);
    free(anon_name);
    return CXVisit_Continue;
}

typedef struct class_check {
    const char *why;
} class_check;

static enum CXChildVisitResult class_checker(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    class_check *cc = data;
    switch (clang_getCursorKind(c)) {
    case CXCursor_CXXBaseSpecifier:
        cc->why = "has base classes; C has no inheritance, so put the base's fields in the "
                  "struct or pass the base as a member";
        return CXChildVisit_Break;
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

/* Builds the C mirror of a struct or union taken by value. */
static char *mirror_record(parse_ctx *ctx, CXType canon, const char *cn, const char *qname)
{
    if (find_ctype(ctx->model, cn))
        return NULL;
    CXCursor decl = clang_getTypeDeclaration(canon);
    class_check cc = {NULL};
    clang_visitChildren(decl, class_checker, &cc);
    if (cc.why)
        return ks_xasprintf("%s %s", qname, cc.why);
    long size = clang_Type_getSizeOf(canon), align = clang_Type_getAlignOf(canon);
    if (size < 0 || align <= 0)
        return ks_xasprintf("the size or alignment of %s cannot be computed (an incomplete or "
                            "dependent type?)", qname);
    field_visit v;
    memset(&v, 0, sizeof v);
    v.ctx = ctx;
    v.cn = cn;
    v.qname = qname;
    v.is_union = clang_getCursorKind(decl) == CXCursor_UnionDecl;
    v.record_align = align;
    clang_Type_visitFields(canon, field_visitor, &v);
    if (v.why) {
        free(v.body.data);
        free(v.asserts.data);
        return v.why;
    }
    if (v.cur == 0 && size > 0)          /* empty: one byte in C++, none in C */
        ks_buf_printf(&v.body, "    char ks__empty[%ld];\n", size);
    else if (!v.is_union && size > v.cur && (v.cur + align - 1) / align * align != size)
        ks_buf_printf(&v.body, "    char ks__pad%d[%ld];\n", v.npad++, size - v.cur);

    const char *kw = v.is_union ? "union" : "struct";
    unsigned line;
    location_of(decl, &line, NULL);
    ks_buf b = {0};
    ks_buf_printf(&b, "#ifndef KS_TYPE_%s\n#define KS_TYPE_%s\n", cn, cn);
    ks_buf_printf(&b, "/* %s %s, mirrored: the same size, alignment and field offsets. */\n", kw,
                  qname);
    ks_buf_printf(&b, "typedef %s KS_ALIGNED(%ld)%s %s {\n%s} %s;\n", kw, align,
                  v.packed ? " KS_PACKED" : "", cn, v.body.data ? v.body.data : "", cn);
    ks_buf_printf(&b, "KS_STATIC_ASSERT(sizeof(%s) == %ld,\n"
                      "                 \"kstub: %s is %ld bytes on the device\", %s_size);\n",
                  cn, size, qname, size, cn);
    ks_buf_printf(&b, "KS_STATIC_ASSERT(KS_ALIGNOF(%s) == %ld,\n"
                      "                 \"kstub: %s is %ld-byte aligned on the device\", %s_align);\n",
                  cn, align, qname, align, cn);
    ks_buf_puts(&b, v.asserts.data ? v.asserts.data : "");
    ks_buf_puts(&b, "#endif");
    free(v.body.data);
    free(v.asserts.data);
    add_ctype(ctx->model, cn, ks_buf_take(&b));
    return NULL;
}

/* The C name of a struct/union/class: a known equivalent, a CUDA vector
 * type, a forward declaration (pointees) or a mirror (by value). */
static type_result record_c_type(parse_ctx *ctx, CXType canon, int by_value, const char *anon_name)
{
    CXCursor decl = clang_getTypeDeclaration(canon);
    char *spelled = take(clang_getCursorSpelling(decl));
    type_result r = {NULL, NULL};
    for (size_t i = 0; i < sizeof known_records / sizeof known_records[0]; i++)
        if (strcmp(spelled, known_records[i].name) == 0) {
            ctx->model->needs_cuda_h |= known_records[i].needs_cuda_h;
            free(spelled);
            return accept(ks_xstrdup(known_records[i].c_name));
        }
    if (declared_in_file(decl, "vector_types.h") ||
        (is_cuda_vector_name(spelled) && clang_Location_isInSystemHeader(clang_getCursorLocation(decl)))) {
        ctx->model->needs_vector_types = 1;
        return accept(spelled);
    }
    char *q = NULL, *cn = NULL;
    if (anon_name && (clang_Cursor_isAnonymous(decl) || !*spelled)) {
        q = ks_xstrdup(anon_name);
        cn = ks_xstrdup(anon_name);
    } else if (!*spelled || clang_Cursor_isAnonymous(decl)) {
        r = refuse("an unnamed struct; give the struct a name");
    } else if (clang_Type_getNumTemplateArguments(canon) > 0) {
        r = refuse("a class template specialization, which C cannot name; use a plain struct");
    } else {
        q = qualified_name(decl);
        cn = c_identifier(q);
    }
    if (cn) {
        const char *kw = clang_getCursorKind(decl) == CXCursor_UnionDecl ? "union" : "struct";
        if (by_value) {
            char *why = mirror_record(ctx, canon, cn, q);
            r = why ? (type_result){NULL, why} : accept(ks_xasprintf("%s %s", kw, cn));
        } else {
            add_fwd(ctx->model, cn);
            r = accept(ks_xasprintf("%s %s", kw, cn));
        }
    }
    free(spelled);
    free(q);
    free(cn);
    return r;
}

/* C spelling of a type that a pointer points to (qualifiers included). */
static type_result pointee_c_type(parse_ctx *ctx, CXType t);

static type_result pointer_c_type(parse_ctx *ctx, CXType t, int top_level)
{
    type_result inner = pointee_c_type(ctx, clang_getPointeeType(t));
    if (!inner.c_type)
        return inner;
    size_t n = strlen(inner.c_type);
    const char *sep = n && inner.c_type[n - 1] == '*' ? "" : " ";
    /* Top-level const/volatile on a parameter mean nothing to the caller. */
    int c = !top_level && clang_isConstQualifiedType(t);
    int v = !top_level && clang_isVolatileQualifiedType(t);
    int r = clang_isRestrictQualifiedType(t);
    char *s = ks_xasprintf("%s%s*%s%s%s%s%s", inner.c_type, sep,
                           c ? "const" : "", c && (v || r) ? " " : "",
                           v ? "volatile" : "", v && r ? " " : "",
                           r ? "restrict" : "");
    free(inner.c_type);
    return accept(s);
}

static type_result pointee_c_type(parse_ctx *ctx, CXType t)
{
    char *quals = qualifier_prefix(t);
    CXType canon = clang_getCanonicalType(t);
    type_result r = {NULL, NULL};
    char *std = std_typedef_name(t);
    const char *builtin = builtin_c_name(canon.kind);

    if (std) {
        r = accept(ks_xasprintf("%s%s", quals, std));
        free(std);
    } else if (builtin) {
        r = accept(ks_xasprintf("%s%s", quals, builtin));
    } else if (canon.kind == CXType_Void) {
        r = accept(ks_xasprintf("%svoid", quals));
    } else if (canon.kind == CXType_Pointer) {
        type_result p = pointer_c_type(ctx, canon, 0);
        if (p.c_type) {
            r = accept(ks_xasprintf("%s%s", p.c_type, ""));
            free(p.c_type);
        } else {
            r = p;
        }
    } else if (canon.kind == CXType_Enum) {
        type_result e = enum_c_type(ctx, canon);
        r = e.c_type ? accept(ks_xasprintf("%s%s", quals, e.c_type)) : e;
        free(e.c_type);
    } else if (canon.kind == CXType_Record) {
        type_result e = record_c_type(ctx, canon, 0, NULL);
        r = e.c_type ? accept(ks_xasprintf("%s%s", quals, e.c_type)) : e;
        free(e.c_type);
    } else {
        char *sp = take(clang_getTypeSpelling(t));
        switch (canon.kind) {
        case CXType_FunctionProto:
        case CXType_FunctionNoProto:
            r = refuse("pointer to function '%s': device function pointers cannot be made "
                       "on the host; pass an index or a flag instead", sp);
            break;
        case CXType_ConstantArray:
        case CXType_IncompleteArray:
            r = refuse("pointer to array '%s'; pass a pointer to the element type", sp);
            break;
        default:
            r = refuse("pointer to '%s', a type C has no exact equivalent for", sp);
            break;
        }
        free(sp);
    }
    free(quals);
    return r;
}

/* C spelling of a by-value parameter type (top-level qualifiers dropped). */
static type_result param_c_type(parse_ctx *ctx, CXType t)
{
    CXType canon = clang_getCanonicalType(t);
    char *sp = take(clang_getTypeSpelling(t));
    type_result r;

    switch (canon.kind) {
    case CXType_Pointer:
        r = pointer_c_type(ctx, t.kind == CXType_Pointer ? t : canon, 1);
        break;
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray: {
        /* "float x[]" declares a pointer parameter, as in C. */
        CXType elem = clang_getArrayElementType(canon);
        type_result e = pointee_c_type(ctx, elem);
        if (e.c_type) {
            /* libclang may keep the element's qualifiers on the array type. */
            int c = clang_isConstQualifiedType(canon) && !clang_isConstQualifiedType(elem);
            int v = clang_isVolatileQualifiedType(canon) && !clang_isVolatileQualifiedType(elem);
            size_t n = strlen(e.c_type);
            r = accept(ks_xasprintf("%s%s%s%s*", c ? "const " : "", v ? "volatile " : "", e.c_type,
                                    n && e.c_type[n - 1] == '*' ? "" : " "));
            free(e.c_type);
        } else {
            r = e;
        }
        break;
    }
    case CXType_LValueReference:
    case CXType_RValueReference:
        r = refuse("'%s' is a reference; a kernel's arguments are copied from the host, so "
                   "take the value, or a device pointer", sp);
        break;
    case CXType_MemberPointer:
        r = refuse("'%s' is a member pointer, which C cannot pass; pass an offset or an index", sp);
        break;
    case CXType_Record:
        r = record_c_type(ctx, canon, 1, NULL);
        break;
    case CXType_Enum:
        r = enum_c_type(ctx, canon);
        break;
    case CXType_Dependent:
    case CXType_Unexposed:
        r = refuse("'%s' is a dependent type; only non-template kernels are supported", sp);
        break;
    default: {
        char *std = std_typedef_name(t);
        const char *builtin = builtin_c_name(canon.kind);
        if (std)
            r = accept(std);
        else if (builtin)
            r = accept(ks_xstrdup(builtin));
        else
            r = refuse("'%s' has no exact C equivalent; use an integer, floating-point "
                       "or pointer type", sp);
        break;
    }
    }
    free(sp);
    return r;
}

/* "cfloatp" from "const float *restrict": a compact, readable type tag. */
static char *type_tag(const char *c_type)
{
    ks_buf b = {0};
    const char *p = c_type;
    while (*p) {
        if (strncmp(p, "const ", 6) == 0 || strncmp(p, "const*", 6) == 0) {
            ks_buf_puts(&b, "c");
            p += 5;
        } else if (strncmp(p, "volatile", 8) == 0) {
            ks_buf_puts(&b, "v");
            p += 8;
        } else if (strncmp(p, "restrict", 8) == 0) {
            p += 8;
        } else if (strncmp(p, "unsigned ", 9) == 0) {
            ks_buf_puts(&b, "u");
            p += 9;
        } else if (strncmp(p, "struct ", 7) == 0) {
            p += 7;
        } else if (*p == '*') {
            ks_buf_puts(&b, "p");
            p++;
        } else if (*p == ' ') {
            p++;
        } else {
            ks_buf_put(&b, p, 1);
            p++;
        }
    }
    return ks_buf_take(&b);
}

/* ---- kernels ------------------------------------------------------------------------- */

/* Tokens of the cursor's source text. Its extent starts inside a macro
 * (__global__) so it is mapped to file positions first, or libclang gives none. */
static void tokens_of(parse_ctx *ctx, CXCursor c, CXToken **toks, unsigned *n)
{
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile f1, f2;
    unsigned l1, c1, l2, c2;
    clang_getExpansionLocation(clang_getRangeStart(r), &f1, &l1, &c1, NULL);
    clang_getExpansionLocation(clang_getRangeEnd(r), &f2, &l2, &c2, NULL);
    if (f1 && f2)
        r = clang_getRange(clang_getLocation(ctx->tu, f1, l1, c1),
                           clang_getLocation(ctx->tu, f2, l2, c2));
    clang_tokenize(ctx->tu, r, toks, n);
}

/* The declaration as written, up to its body, on one line. */
static char *signature_text(parse_ctx *ctx, CXCursor fn)
{
    CXToken *toks;
    unsigned n;
    tokens_of(ctx, fn, &toks, &n);
    ks_buf b = {0};
    int depth = 0;
    for (unsigned i = 0; i < n; i++) {
        char *t = take(clang_getTokenSpelling(ctx->tu, toks[i]));
        if (depth == 0 && (strcmp(t, "{") == 0 || strcmp(t, ";") == 0)) {
            free(t);
            break;
        }
        if (strcmp(t, "(") == 0)
            depth++;
        else if (strcmp(t, ")") == 0)
            depth--;
        int tight = strcmp(t, ",") == 0 || strcmp(t, ")") == 0 || strcmp(t, "(") == 0 ||
                    strcmp(t, "::") == 0 ||
                    (b.len && (b.data[b.len - 1] == '(' || (b.len > 1 && b.data[b.len - 1] == ':' &&
                                                              b.data[b.len - 2] == ':')));
        if (b.len && !tight)
            ks_buf_puts(&b, " ");
        ks_buf_puts(&b, t);
        free(t);
    }
    clang_disposeTokens(ctx->tu, toks, n);
    /* It goes into a C comment. */
    for (char *p = b.data; p && (p = strstr(p, "*/")) != NULL;)
        p[1] = ' ';
    return ks_buf_take(&b);
}

static int parse_long_literal(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
        end++;
    if (end == s || *end)
        return 0;
    *out = v;
    return 1;
}

/* __launch_bounds__(max_threads[, min_blocks]): read from the tokens, since
 * libclang exposes the attribute without its arguments. */
static void launch_bounds(parse_ctx *ctx, CXCursor fn, ks_kern *k)
{
    CXToken *toks;
    unsigned n;
    tokens_of(ctx, fn, &toks, &n);
    k->max_threads = k->min_blocks = -1;
    for (unsigned i = 0; i + 1 < n; i++) {
        char *t = take(clang_getTokenSpelling(ctx->tu, toks[i]));
        int hit = strcmp(t, "__launch_bounds__") == 0 || strcmp(t, "launch_bounds") == 0;
        free(t);
        if (!hit)
            continue;
        char *texts[3] = {NULL, NULL, NULL};
        int nvals = 0, depth = 0;
        ks_buf arg = {0};
        for (unsigned j = i + 1; j < n; j++) {
            char *a = take(clang_getTokenSpelling(ctx->tu, toks[j]));
            int open = strcmp(a, "(") == 0, close = strcmp(a, ")") == 0;
            int comma = strcmp(a, ",") == 0;
            if (open && depth++ == 0) {
                free(a);
                continue;
            }
            if ((close && --depth == 0) || (comma && depth == 1)) {
                if (nvals < 3)
                    texts[nvals++] = ks_buf_take(&arg);
                free(arg.data);
                arg.data = NULL;
                arg.len = arg.cap = 0;
                free(a);
                if (close)
                    break;
                continue;
            }
            if (arg.len)
                ks_buf_puts(&arg, " ");
            ks_buf_puts(&arg, a);
            free(a);
        }
        free(arg.data);
        long vals[3];
        int literal = nvals >= 1;
        for (int v = 0; v < nvals && v < 2; v++)
            literal = literal && parse_long_literal(texts[v], &vals[v]);
        if (literal) {
            k->max_threads = vals[0];
            k->min_blocks = nvals >= 2 ? vals[1] : -1;
        } else if (nvals >= 1 && !ctx->name_override) {
            /* A constant expression: evaluated after a reparse (see
             * resolve_injections), in the kernel's namespace. */
            ctx->lbs = ks_xrealloc(ctx->lbs, (ctx->nlbs + 1) * sizeof *ctx->lbs);
            pending_bounds *pb = &ctx->lbs[ctx->nlbs++];
            pb->symbol = take(clang_Cursor_getMangling(fn));
            char *q = ks_xstrdup(k->name);
            char *last = NULL;
            for (char *p = q; (p = strstr(p, "::")) != NULL; p += 2)
                last = p;
            if (last)
                *last = '\0';
            else
                q[0] = '\0';
            pb->ns = q;
            pb->max_expr = ks_xstrdup(texts[0]);
            pb->min_expr = nvals >= 2 ? ks_xstrdup(texts[1]) : NULL;
            unsigned line, col;
            location_of(fn, &line, &col);
            pb->line = line;
            pb->col = col;
        } else {
            cursor_note(ctx, fn, "kernel '%s': __launch_bounds__ of a template instantiation "
                        "are not recorded unless they are integer literals, so the runtime "
                        "cannot check the block size against them", k->name);
        }
        for (int v = 0; v < nvals; v++)
            free(texts[v]);
        break;
    }
    clang_disposeTokens(ctx->tu, toks, n);
}

/* Words C reserves that C++ code may use as names. */
static int is_c_only_keyword(const char *s)
{
    static const char *const words[] = {
        "restrict", "_Bool", "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic",
        "_Generic", "_Noreturn", "_Static_assert", "_Thread_local", "_BitInt", NULL,
    };
    for (const char *const *w = words; *w; w++)
        if (strcmp(*w, s) == 0)
            return 1;
    return 0;
}

static void add_kernel(parse_ctx *ctx, CXCursor fn)
{
    ks_model *m = ctx->model;
    ks_kern k;
    memset(&k, 0, sizeof k);
    k.name = ctx->name_override ? ks_xstrdup(ctx->name_override) : qualified_name(fn);
    location_of(fn, &k.line, &k.col);

    enum CXLinkageKind linkage = clang_getCursorLinkage(fn);
    if (linkage == CXLinkage_Internal || linkage == CXLinkage_UniqueExternal) {
        cursor_error(ctx, fn, "kernel '%s' has internal linkage (static or in an anonymous "
                     "namespace): nvcc gives such kernels a per-file symbol that cannot be "
                     "known from the source; remove 'static' or move it out of the anonymous "
                     "namespace", k.name);
        free(k.name);
        return;
    }
    if (clang_Cursor_isVariadic(fn)) {
        cursor_error(ctx, fn, "kernel '%s' is variadic, which CUDA does not allow", k.name);
        free(k.name);
        return;
    }

    k.c_name = ctx->c_name_override ? ks_xstrdup(ctx->c_name_override) : c_identifier(k.name);
    if (is_c_only_keyword(k.c_name)) {
        char *renamed = ks_xasprintf("%s_", k.c_name);
        free(k.c_name);
        k.c_name = renamed;
    }
    k.symbol = take(clang_Cursor_getMangling(fn));
    k.signature = signature_text(ctx, fn);
    launch_bounds(ctx, fn, &k);

    int nargs = clang_Cursor_getNumArguments(fn);
    k.params = ks_xmalloc((size_t)(nargs > 0 ? nargs : 1) * sizeof *k.params);
    long end = 0;
    int bad = 0;
    for (int i = 0; i < nargs; i++) {
        CXCursor arg = clang_Cursor_getArgument(fn, (unsigned)i);
        CXType t = clang_getCursorType(arg);
        ks_param *p = &k.params[k.nparams];
        char *name = take(clang_getCursorSpelling(arg));
        if (!*name) {
            free(name);
            name = ks_xasprintf("arg%d", i);
        } else if (is_c_only_keyword(name)) {
            char *renamed = ks_xasprintf("%s_", name);   /* "restrict" is a name in C++ */
            free(name);
            name = renamed;
        }
        type_result tr = param_c_type(ctx, t);
        if (!tr.c_type) {
            cursor_error(ctx, *name ? arg : fn, "kernel '%s', parameter %d '%s': %s", k.name,
                         i + 1, name, tr.why);
            free(tr.why);
            free(name);
            bad = 1;
            continue;
        }
        long size = clang_Type_getSizeOf(t), align = clang_Type_getAlignOf(t);
        switch (clang_getCanonicalType(t).kind) {
        case CXType_ConstantArray:
        case CXType_IncompleteArray:
        case CXType_VariableArray:
        case CXType_DependentSizedArray:
            size = align = 8;  /* an array parameter is a (64-bit) device pointer */
            break;
        default:
            break;
        }
        if (size < 0 || align <= 0) {
            char *sp = take(clang_getTypeSpelling(t));
            cursor_error(ctx, arg, "kernel '%s', parameter %d '%s': the size or alignment of "
                         "'%s' cannot be computed (libclang layout error %ld)", k.name, i + 1,
                         name, sp, size < 0 ? size : align);
            free(sp);
            free(tr.c_type);
            free(name);
            bad = 1;
            continue;
        }
        p->name = name;
        p->type = take(clang_getTypeSpelling(t));
        p->c_type = tr.c_type;
        p->tag = type_tag(tr.c_type);
        p->size = size;
        p->align = align;
        p->offset = (end + align - 1) / align * align;
        end = p->offset + size;
        k.nparams++;
    }
    if (bad) {
        for (size_t i = 0; i < k.nparams; i++) {
            free(k.params[i].name);
            free(k.params[i].type);
            free(k.params[i].c_type);
            free(k.params[i].tag);
        }
        free(k.params);
        free(k.name);
        free(k.c_name);
        free(k.symbol);
        free(k.signature);
        return;
    }
    m->kernels = ks_xrealloc(m->kernels, (m->nkernels + 1) * sizeof *m->kernels);
    m->kernels[m->nkernels++] = k;
}

static void handle_instantiation(parse_ctx *ctx, CXCursor typedef_cursor);

/* A function with a body. With --skip-bodies libclang drops the bodies and
 * no longer calls such a function a definition, so look at what follows the
 * declarator in the text: '{' (a body) or ';' (a declaration). */
static int is_definition(parse_ctx *ctx, CXCursor fn)
{
    if (clang_isCursorDefinition(fn))
        return 1;
    if (!ctx->opts->skip_bodies)
        return 0;
    CXFile f;
    unsigned off;
    clang_getExpansionLocation(clang_getRangeEnd(clang_getCursorExtent(fn)), &f, NULL, NULL, &off);
    size_t size = 0;
    const char *text = f ? clang_getFileContents(ctx->tu, f, &size) : NULL;
    int depth = 0;
    for (size_t i = off; text && i < size; i++) {
        char c = text[i];
        if (c == '/' && i + 1 < size && text[i + 1] == '/') {
            while (i < size && text[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < size && text[i + 1] == '*') {
            for (i += 2; i + 1 < size && !(text[i] == '*' && text[i + 1] == '/'); i++)
                ;
            i++;
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
        } else if (depth <= 0 && (c == '{' || c == ';')) {
            return c == '{';
        }
    }
    return 0;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    parse_ctx *ctx = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (!clang_Location_isFromMainFile(clang_getCursorLocation(c)))
        return CXChildVisit_Continue;
    switch (kind) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
        return CXChildVisit_Recurse;
    case CXCursor_FunctionDecl:
        /* Only definitions: a declaration alone puts nothing in the image. */
        if (is_definition(ctx, c) && is_kernel(c))
            add_kernel(ctx, c);
        break;
    case CXCursor_TypedefDecl:
        handle_instantiation(ctx, c);
        break;
    case CXCursor_FunctionTemplate:
        if (is_kernel(c)) {
            ctx->templates = ks_xrealloc(ctx->templates, (ctx->ntemplates + 1) * sizeof *ctx->templates);
            ctx->templates[ctx->ntemplates++] = qualified_name(c);
        }
        break;
    default:
        break;
    }
    return CXChildVisit_Continue;
}

/* Overloads share a C name; give each "<name>__<tag>_<tag>..." (tags from
 * type_tag), or "<name>__void" for no parameters. */
static void disambiguate(parse_ctx *ctx)
{
    ks_model *m = ctx->model;
    int *dup = ks_xmalloc((m->nkernels + 1) * sizeof *dup);
    for (size_t i = 0; i < m->nkernels; i++) {
        dup[i] = 0;
        for (size_t j = 0; j < m->nkernels; j++)
            if (i != j && strcmp(m->kernels[i].c_name, m->kernels[j].c_name) == 0)
                dup[i] = 1;
    }
    for (size_t i = 0; i < m->nkernels; i++) {
        if (!dup[i])
            continue;
        ks_kern *k = &m->kernels[i];
        ks_buf b = {0};
        ks_buf_printf(&b, "%s_", k->c_name);
        for (size_t p = 0; p < k->nparams; p++)
            ks_buf_printf(&b, "_%s", k->params[p].tag);
        if (k->nparams == 0)
            ks_buf_puts(&b, "_void");
        free(k->c_name);
        k->c_name = ks_buf_take(&b);
    }
    free(dup);
}

/*
 * User-chosen C names, from comments in the source:
 *     // kstub:name ns::scale<float, 4> = scale4f
 * names the kernel (by its qualified name as kstub prints it, or by its
 * device symbol) whose C function becomes scale4f.
 */
static void apply_renames(parse_ctx *ctx)
{
    CXFile f = clang_getFile(ctx->tu, ctx->opts->input);
    size_t size = 0;
    const char *text = f ? clang_getFileContents(ctx->tu, f, &size) : NULL;
    if (!text)
        return;
    char *copy = ks_xmalloc(size + 1);
    memcpy(copy, text, size);
    copy[size] = '\0';
    unsigned line = 1;
    for (char *p = copy; *p; line++) {
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = '\0';
        char *d = strstr(p, "kstub:name");
        /* Only as a comment's first word: "// kstub:name …" or a block comment. */
        if (d) {
            char *b = d;
            while (b > p && (b[-1] == ' ' || b[-1] == '\t'))
                b--;
            if (b - p < 2 || !(b[-2] == '/' && (b[-1] == '/' || b[-1] == '*')))
                d = NULL;
        }
        if (d) {
            unsigned col = (unsigned)(d - p) + 1;
            char *eq = strrchr(d, '=');
            char *who = d + strlen("kstub:name");
            if (!eq) {
                ks_error_at(ctx->opts->input, line, col, "expected 'kstub:name KERNEL = C_NAME'");
                ctx->errors++;
            } else {
                *eq = '\0';
                char *to = eq + 1;
                while (isspace((unsigned char)*who))
                    who++;
                for (char *e = who + strlen(who); e > who && isspace((unsigned char)e[-1]);)
                    *--e = '\0';
                while (isspace((unsigned char)*to))
                    to++;
                char *te = to;
                while (isalnum((unsigned char)*te) || *te == '_')
                    te++;
                int valid = te > to && !isdigit((unsigned char)*to);
                while (isspace((unsigned char)*te))
                    te++;
                if (!valid || (*te && strncmp(te, "*/", 2) != 0)) {
                    ks_error_at(ctx->opts->input, line, col, "'%s' is not a C identifier", to);
                    ctx->errors++;
                } else {
                    *(to + strspn(to, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")) = '\0';
                    int hit = 0;
                    for (size_t i = 0; i < ctx->model->nkernels; i++) {
                        ks_kern *k = &ctx->model->kernels[i];
                        if (strcmp(k->name, who) == 0 || strcmp(k->symbol, who) == 0) {
                            free(k->c_name);
                            k->c_name = ks_xstrdup(to);
                            hit++;
                        }
                    }
                    if (hit != 1) {
                        ks_error_at(ctx->opts->input, line, col, "kstub:name '%s' %s", who,
                                    hit ? "matches several kernels (overloads): name one by "
                                          "its device symbol"
                                        : "matches no kernel (give the qualified name as in the "
                                          "manifest, e.g. 'ns::k<float, 4>', or the symbol)");
                        ctx->errors++;
                    }
                }
            }
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    free(copy);
}

static void check_unique(parse_ctx *ctx)
{
    ks_model *m = ctx->model;
    /* <c_name>_n is generated too */
    for (size_t i = 0; i < m->nkernels; i++)
        for (size_t j = 0; j < m->nkernels; j++) {
            size_t li = strlen(m->kernels[i].c_name);
            if (strncmp(m->kernels[j].c_name, m->kernels[i].c_name, li) == 0 &&
                strcmp(m->kernels[j].c_name + li, "_n") == 0) {
                ks_error_at(ctx->opts->input, m->kernels[j].line, m->kernels[j].col,
                            "kernel '%s' has the C name '%s', which is also the occupancy-sized "
                            "entry point of kernel '%s'; rename one with a "
                            "'// kstub:name KERNEL = C_NAME' comment",
                            m->kernels[j].name, m->kernels[j].c_name, m->kernels[i].name);
                ctx->errors++;
            }
        }
    for (size_t i = 0; i < m->nkernels; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->kernels[i].c_name, m->kernels[j].c_name) == 0) {
                ks_error_at(ctx->opts->input, m->kernels[i].line, m->kernels[i].col,
                            "kernels '%s' (line %u) and '%s' both get the C name '%s'; "
                            "name one with a '// kstub:name KERNEL = C_NAME' comment",
                            m->kernels[j].name, m->kernels[j].line, m->kernels[i].name,
                            m->kernels[i].c_name);
                ctx->errors++;
            }
}

/* ---- template kernels ------------------------------------------------------------------ */
/*
 * libclang shows no cursor for an explicit instantiation
 * ("template __global__ void k<float, 4>(float *, int);"). So the file's
 * tokens are scanned for them, a reference to each specialization is
 * appended to the source in memory ("typedef decltype(&::ns::k<float, 4>)
 * i0;"), and after a reparse that reference leads to a declaration with
 * concrete parameter types and the device compiler's mangled name.
 */


static const char *unqualified(const char *q)
{
    const char *p = strrchr(q, ':');
    return p ? p + 1 : q;
}

/* "float, 4" -> "float_4"; "unsigned int *" -> "unsigned_int_p"; "-1" -> "m1". */
static char *args_identifier(const char *args)
{
    ks_buf b = {0};
    int sep = 0;
    for (const char *p = args; *p; p++) {
        char c = *p;
        if (isalnum((unsigned char)c) || c == '_') {
            if (sep && b.len)
                ks_buf_puts(&b, "_");
            sep = 0;
            ks_buf_put(&b, &c, 1);
        } else if (c == '*' || c == '-') {
            ks_buf_puts(&b, b.len ? "_" : "");
            ks_buf_puts(&b, c == '*' ? "p" : "m");
            sep = 0;
        } else {
            sep = 1;
        }
    }
    return ks_buf_take(&b);
}

static enum CXChildVisitResult find_decl_ref(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        if (clang_getCursorKind(r) == CXCursor_FunctionDecl) {
            *(CXCursor *)data = r;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

/* A "kstub_iN" typedef injected after the Nth explicit instantiation leads to
 * the specialization: a kernel of its own, when the template is one. */
static void handle_instantiation(parse_ctx *ctx, CXCursor typedef_cursor)
{
    char *alias = take(clang_getCursorSpelling(typedef_cursor));
    size_t idx = (size_t)strtoul(alias + strlen("kstub_i"), NULL, 10);
    int ok = strncmp(alias, "kstub_i", 7) == 0 && idx < ctx->ninst;
    free(alias);
    if (!ok)
        return;
    instantiation *in = &ctx->inst[idx];
    CXCursor fn = clang_getNullCursor();
    clang_visitChildren(typedef_cursor, find_decl_ref, &fn);
    if (clang_Cursor_isNull(fn) || !is_kernel(fn))
        return;                      /* an instantiation of some other function template */
    char *q = qualified_name(fn);
    in->used_by = ks_xstrdup(q);
    char *name = ks_xasprintf("%s<%s>", q, in->args);
    char *base = c_identifier(q), *suffix = args_identifier(in->args);
    char *cname = ks_xasprintf("%s_%s", base, suffix);
    ctx->name_override = name;
    ctx->c_name_override = cname;
    add_kernel(ctx, fn);
    ctx->name_override = ctx->c_name_override = NULL;
    free(q);
    free(name);
    free(base);
    free(suffix);
    free(cname);
}

typedef struct bounds_visit {
    parse_ctx *ctx;
} bounds_visit;

/* Evaluates the injected "kstub_lb_<i>_<max|min>" constants. */
static enum CXChildVisitResult visit_bounds(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    bounds_visit *bv = data;
    parse_ctx *ctx = bv->ctx;
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_Namespace)
        return clang_Location_isFromMainFile(clang_getCursorLocation(c)) ? CXChildVisit_Recurse
                                                                          : CXChildVisit_Continue;
    if (kind != CXCursor_VarDecl)
        return CXChildVisit_Continue;
    char *name = take(clang_getCursorSpelling(c));
    unsigned idx;
    char which[4] = "";
    if (sscanf(name, "kstub_lb_%u_%3s", &idx, which) == 2 && idx < ctx->nlbs) {
        pending_bounds *pb = &ctx->lbs[idx];
        CXEvalResult r = clang_Cursor_Evaluate(c);
        long long v = -1;
        if (r && clang_EvalResult_getKind(r) == CXEval_Int)
            v = clang_EvalResult_getAsLongLong(r);
        if (r)
            clang_EvalResult_dispose(r);
        for (size_t i = 0; i < ctx->model->nkernels; i++) {
            ks_kern *k = &ctx->model->kernels[i];
            if (strcmp(k->symbol, pb->symbol) != 0)
                continue;
            if (v <= 0)
                ks_note_at(ctx->opts->input, pb->line, pb->col, "kernel '%s': __launch_bounds__ "
                           "argument '%s' is not a positive integer constant; not recorded",
                           k->name, strcmp(which, "max") == 0 ? pb->max_expr : pb->min_expr);
            else if (strcmp(which, "max") == 0)
                k->max_threads = v;
            else
                k->min_blocks = v;
        }
    }
    free(name);
    return CXChildVisit_Continue;
}

/*
 * What one reparse resolves, appended to the source in memory: references
 * to template instantiations, and __launch_bounds__ expressions as
 * constants in their kernel's namespace.
 */
static void resolve_injections(parse_ctx *ctx, const char *text, size_t size)
{
    ks_buf src = {0};
    ks_buf_put(&src, text, size);
    ks_buf_puts(&src, "\n");
    for (size_t i = 0; i < ctx->nlbs; i++) {
        pending_bounds *pb = &ctx->lbs[i];
        /* "a::b" opens as "namespace a { namespace b {" */
        int depth = 0;
        if (*pb->ns) {
            char *ns = ks_xstrdup(pb->ns), *save = NULL;
            for (char *part = strtok_r(ns, ":", &save); part; part = strtok_r(NULL, ":", &save)) {
                ks_buf_printf(&src, "namespace %s { ", part);
                depth++;
            }
            free(ns);
        }
        ks_buf_printf(&src, "constexpr long long kstub_lb_%zu_max = (%s);", i, pb->max_expr);
        if (pb->min_expr)
            ks_buf_printf(&src, " constexpr long long kstub_lb_%zu_min = (%s);", i, pb->min_expr);
        for (int d = 0; d < depth; d++)
            ks_buf_puts(&src, " }");
        ks_buf_puts(&src, "\n");
    }
    struct CXUnsavedFile unsaved = {ctx->opts->input, src.data, (unsigned long)src.len};
    int rc = clang_reparseTranslationUnit(ctx->tu, 1, &unsaved, clang_defaultReparseOptions(ctx->tu));
    if (rc != 0) {
        ks_error_at(ctx->opts->input, 0, 0, "libclang could not reparse for the "
                    "__launch_bounds__ expressions (error %d)", rc);
        ctx->errors++;
    } else if ((rc = report_diagnostics(ctx)) != 0) {
        ks_note_at(ctx->opts->input, 0, 0, "while evaluating __launch_bounds__ expressions");
        ctx->errors += rc;
    } else {
        bounds_visit bv = {ctx};
        clang_visitChildren(clang_getTranslationUnitCursor(ctx->tu), visit_bounds, &bv);
    }
    free(src.data);
}

/* ---- explicit instantiations, found in the text before the parse ---------------------------- */

typedef struct rtok {
    size_t start, end;
} rtok;

static int tok_is(const char *s, const rtok *t, const char *word)
{
    size_t n = strlen(word);
    return t->end - t->start == n && memcmp(s + t->start, word, n) == 0;
}

/* A small C++ tokenizer: enough to find explicit instantiations, skipping
 * comments, string and character literals and preprocessor lines. */
static size_t raw_tokens(const char *s, size_t n, rtok **out)
{
    size_t cap = 256, count = 0, i = 0;
    rtok *t = ks_xmalloc(cap * sizeof *t);
    int line_start = 1;
    while (i < n) {
        char c = s[i];
        if (c == '\n') {
            line_start = 1;
            i++;
            continue;
        }
        if (isspace((unsigned char)c)) {
            i++;
            continue;
        }
        if (c == '#' && line_start) {
            while (i < n && s[i] != '\n')
                i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
            continue;
        }
        line_start = 0;
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'))
                i++;
            i += 2;
            continue;
        }
        size_t start = i;
        if (c == '"' || c == '\'') {
            for (i++; i < n && s[i] != c && s[i] != '\n'; i++)
                if (s[i] == '\\')
                    i++;
            i++;
        } else if (isalnum((unsigned char)c) || c == '_') {
            while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' ||
                             (isdigit((unsigned char)c) && (s[i] == '.' || s[i] == '\''))))
                i++;
        } else if (c == ':' && i + 1 < n && s[i + 1] == ':') {
            i += 2;
        } else {
            i++;
        }
        if (count == cap)
            t = ks_xrealloc(t, (cap *= 2) * sizeof *t);
        t[count].start = start;
        t[count].end = i < n ? i : n;
        count++;
    }
    *out = t;
    return count;
}

/* Index of the token closing the bracket opened at t[i] ('<' or '('), or n. */
static size_t matching(const char *s, const rtok *t, size_t n, size_t i)
{
    int angle = 0, paren = 0;
    for (size_t j = i; j < n; j++) {
        char c = s[t[j].start];
        size_t len = t[j].end - t[j].start;
        if (len != 1)
            continue;
        if (c == '(' || c == '[')
            paren++;
        else if (c == ')' || c == ']')
            paren--;
        else if (c == '<' && paren == 0)
            angle++;
        else if (c == '>' && paren == 0)
            angle--;
        char open = s[t[i].start];
        if ((open == '<' && angle == 0 && paren == 0) || (open == '(' && paren == 0))
            return j;
    }
    return n;
}

/*
 * Each "template [__global__] void NAME<ARGS>(PARAMS);" in the text gets
 * " typedef decltype(static_cast<void (*)(PARAMS)>(&NAME<ARGS>)) kstub_iN;"
 * right after its ';', in the same scope and on the same line (so no line or
 * earlier column moves). The cast picks the right overload. Returns the
 * text to parse (NULL if nothing was added).
 */
static char *inject_instantiations(parse_ctx *ctx, const char *s, size_t n)
{
    rtok *t;
    size_t nt = raw_tokens(s, n, &t);
    ks_buf out = {0};
    size_t copied = 0;
    for (size_t i = 0; i + 1 < nt; i++) {
        if (!tok_is(s, &t[i], "template") || tok_is(s, &t[i + 1], "<") ||
            (i > 0 && tok_is(s, &t[i - 1], "extern")))
            continue;
        size_t end = i + 1;
        while (end < nt && !tok_is(s, &t[end], ";") && !tok_is(s, &t[end], "{"))
            end++;
        if (end >= nt || !tok_is(s, &t[end], ";"))
            continue;
        size_t k;
        for (k = i + 1; k + 1 < end; k++)
            if ((isalpha((unsigned char)s[t[k].start]) || s[t[k].start] == '_') &&
                tok_is(s, &t[k + 1], "<"))
                break;
        if (k + 1 >= end)
            continue;
        size_t name_start = k;
        while (name_start >= 2 && tok_is(s, &t[name_start - 1], "::") &&
               (isalpha((unsigned char)s[t[name_start - 2].start]) || s[t[name_start - 2].start] == '_'))
            name_start -= 2;
        if (name_start >= 1 && tok_is(s, &t[name_start - 1], "::"))
            name_start--;
        size_t close = matching(s, t, end, k + 1);
        if (close >= end || close + 1 >= end || !tok_is(s, &t[close + 1], "("))
            continue;
        size_t pclose = matching(s, t, end, close + 1);
        if (pclose >= end)
            continue;
        const char *qname = s + t[name_start].start;
        int qlen = (int)(t[k].end - t[name_start].start);
        const char *args = s + t[k + 1].end;
        int alen = (int)(t[close].start - t[k + 1].end);
        const char *params = s + t[close + 1].end;
        int plen = (int)(t[pclose].start - t[close + 1].end);

        ctx->inst = ks_xrealloc(ctx->inst, (ctx->ninst + 1) * sizeof *ctx->inst);
        instantiation *in = &ctx->inst[ctx->ninst];
        char *a = ks_xasprintf("%.*s", alen, args);
        char *a0 = a;                                     /* trimmed, spaces folded */
        ks_buf folded = {0};
        int space = 0;
        for (; *a; a++) {
            if (isspace((unsigned char)*a)) {
                space = 1;
                continue;
            }
            if (space && folded.len)
                ks_buf_puts(&folded, " ");
            space = 0;
            ks_buf_put(&folded, a, 1);
        }
        free(a0);
        in->args = ks_buf_take(&folded);
        in->used_by = NULL;

        ks_buf_put(&out, s + copied, t[end].end - copied);
        ks_buf_printf(&out, " typedef decltype(static_cast<void (*)(%.*s)>(&%.*s<%.*s>)) kstub_i%zu;",
                      plen, params, qlen, qname, alen, args, ctx->ninst);
        copied = t[end].end;
        ctx->ninst++;
    }
    free(t);
    if (ctx->ninst == 0)
        return NULL;
    ks_buf_put(&out, s + copied, n - copied);
    return ks_buf_take(&out);
}

static void note_uninstantiated(parse_ctx *ctx)
{
    for (size_t t = 0; t < ctx->ntemplates; t++) {
        int used = 0;
        for (size_t i = 0; i < ctx->ninst; i++)
            used |= ctx->inst[i].used_by && strcmp(ctx->inst[i].used_by, ctx->templates[t]) == 0;
        if (!used)
            ks_note_at(ctx->opts->input, 0, 0, "template kernel '%s' is never explicitly "
                       "instantiated ('template __global__ void %s<...>(...);'); skipped",
                       ctx->templates[t], unqualified(ctx->templates[t]));
    }
}

/* ---- entry point ------------------------------------------------------------------------ */

static int report_diagnostics(parse_ctx *ctx)
{
    int errors = 0;
    unsigned n = clang_getNumDiagnostics(ctx->tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(ctx->tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error) {
            char *msg = take(clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation |
                                                           CXDiagnostic_DisplayColumn |
                                                           CXDiagnostic_DisplayOption));
            fprintf(stderr, "%s\n", msg);
            free(msg);
            errors++;
        }
        clang_disposeDiagnostic(d);
    }
    return errors;
}

/* ---- the toolkit: what nvcc would define, and where clang's own headers are ------------------ */

#define KS_TOOLKIT_MAX_FLAGS 16

/* "release 13.0, V13.0.88" from "<cuda>/bin/nvcc --version": the version of
 * the toolkit actually used, build number included. */
static int nvcc_version(const char *cuda_path, int *major, int *minor, int *build)
{
    char *nvcc = ks_xasprintf("%s/bin/nvcc", cuda_path);
    int fd[2];
    if (access(nvcc, X_OK) != 0 || pipe(fd) != 0) {
        free(nvcc);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 2);
        }
        execl(nvcc, nvcc, "--version", (char *)NULL);
        _exit(127);
    }
    free(nvcc);
    close(fd[1]);
    char out[4096];
    size_t n = 0;
    ssize_t r;
    while (pid > 0 && n + 1 < sizeof out && (r = read(fd[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fd[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    const char *v = strstr(out, ", V");
    return v && sscanf(v + 3, "%d.%d.%d", major, minor, build) == 3 ? 0 : -1;
}

/* CUDA_VERSION from <cuda>/include/cuda.h (13000 for 13.0), when nvcc
 * cannot be run. */
static int cuda_h_version(const char *cuda_path, int *major, int *minor)
{
    char *path = ks_xasprintf("%s/include/cuda.h", cuda_path);
    char *text = ks_read_file(path, NULL);
    free(path);
    const char *d = text ? strstr(text, "#define CUDA_VERSION ") : NULL;
    long v = d ? strtol(d + strlen("#define CUDA_VERSION "), NULL, 10) : 0;
    free(text);
    if (v <= 0)
        return -1;
    *major = (int)(v / 1000);
    *minor = (int)(v % 1000 / 10);
    return 0;
}

/* clang's resource directory (its own headers, cuda_wrappers among them)
 * beside the libclang in use: libclang's default is relative to the working
 * directory, so CUB's placement new and the like were not found. */
static char *resource_dir(void)
{
    Dl_info info;
    union { CXString (*fn)(void); void *p; } sym = {clang_getClangVersion};
    if (!dladdr(sym.p, &info) || !info.dli_fname)
        return NULL;
    char *lib = realpath(info.dli_fname, NULL);
    if (!lib)
        return NULL;
    char *slash = strrchr(lib, '/');
    if (slash)
        *slash = '\0';
    char *version = take(clang_getClangVersion());
    const char *v = strstr(version, "version ");
    int major = v ? atoi(v + 8) : 0;
    free(version);
    char *dir = ks_xasprintf("%s/clang/%d", lib, major);
    char *probe = ks_xasprintf("%s/include/__clang_cuda_runtime_wrapper.h", dir);
    int ok = access(probe, R_OK) == 0;
    free(probe);
    free(lib);
    if (!ok) {
        free(dir);
        return NULL;
    }
    return dir;
}

/*
 * The flags that make clang see a .cu file as nvcc's device pass does:
 * nvcc's predefined macros for the toolkit found (code tests __NVCC__ and
 * __CUDACC_VER_MAJOR__, and a struct laid out under them must get nvcc's
 * layout, never clang's), the toolkit's SDK version (clang 22 finds none in
 * CUDA 13 and falls back to the pre-CUDA-9 launch API, so host code's
 * <<<>>> failed), and the resource directory. Returns 0, or -1 after an error.
 */
static int toolkit_flags(const ks_options *opts, const char **args, size_t *nargs, char **owned,
                         size_t *nowned)
{
    int major, minor, build;
    if (nvcc_version(opts->cuda_path, &major, &minor, &build) != 0) {
        if (cuda_h_version(opts->cuda_path, &major, &minor) != 0) {
            ks_error_at(opts->input, 0, 0, "cannot tell the CUDA version of '%s' (neither "
                        "bin/nvcc --version nor include/cuda.h); set --cuda-path or CUDA_PATH",
                        opts->cuda_path);
            return -1;
        }
        build = 0;
        ks_warning_at(opts->input, 0, 0, "cannot run %s/bin/nvcc: __CUDACC_VER_BUILD__ is "
                      "taken as 0 (pass -D__CUDACC_VER_BUILD__=N to set it)", opts->cuda_path);
    }
    int sm = atoi(opts->arch + 3);
#define KS_ARG(...) (args[(*nargs)++] = owned[(*nowned)++] = ks_xasprintf(__VA_ARGS__))
    KS_ARG("-D__NVCC__");
    KS_ARG("-D__CUDACC_VER_MAJOR__=%d", major);
    KS_ARG("-D__CUDACC_VER_MINOR__=%d", minor);
    KS_ARG("-D__CUDACC_VER_BUILD__=%d", build);
    KS_ARG("-D__CUDA_API_VER_MAJOR__=%d", major);
    KS_ARG("-D__CUDA_API_VER_MINOR__=%d", minor);
    KS_ARG("-D__CUDA_ARCH_LIST__=%d", sm * 10);
    KS_ARG("-D__NVCC_DIAG_PRAGMA_SUPPORT__=1");
    KS_ARG("-DCUDA_DOUBLE_MATH_FUNCTIONS");
    KS_ARG("-D__KSTUB__=1");
    args[(*nargs)++] = "-Xclang";
    KS_ARG("-target-sdk-version=%d.%d", major, minor);
    char *rd = resource_dir();
    if (rd) {
        args[(*nargs)++] = "-resource-dir";
        args[(*nargs)++] = owned[(*nowned)++] = rd;
    }
#undef KS_ARG
    return 0;
}

int ks_parse(const ks_options *opts, ks_model *model)
{
    parse_ctx ctx = {opts, model, NULL, 0, NULL, 0, NULL, NULL, NULL, 0, NULL, 0};
    memset(model, 0, sizeof *model);
    model->source = ks_xstrdup(opts->input);

    FILE *probe = fopen(opts->input, "rb");
    if (!probe) {
        ks_error_at(opts->input, 0, 0, "cannot open: %s", strerror(errno));
        return 1;
    }
    fclose(probe);

    size_t cap = 16 + KS_TOOLKIT_MAX_FLAGS + opts->ndefines + 2 * opts->nincludes;
    const char **args = ks_xmalloc(cap * sizeof *args);
    char **owned = ks_xmalloc(cap * sizeof *owned);
    size_t nargs = 0, nowned = 0;
    args[nargs++] = "-x";
    args[nargs++] = "cuda";
    args[nargs++] = "--cuda-device-only";
    args[nargs++] = "-nocudalib";
    args[nargs++] = "-Wno-unknown-cuda-version";
    args[nargs++] = owned[nowned++] = ks_xasprintf("--cuda-path=%s", opts->cuda_path);
    args[nargs++] = owned[nowned++] = ks_xasprintf("--cuda-gpu-arch=%s", opts->arch);
    args[nargs++] = owned[nowned++] = ks_xasprintf("-std=%s", opts->std);
    if (toolkit_flags(opts, args, &nargs, owned, &nowned) != 0) {
        ctx.errors++;
        goto out_args;
    }
    /* CUDA 13 keeps libcu++ (cuda/std/...) under include/cccl, which nvcc
     * adds to the search path by itself. */
    char *cccl = ks_xasprintf("%s/include/cccl", opts->cuda_path);
    FILE *probe_cccl = fopen(cccl, "r");
    if (probe_cccl) {
        fclose(probe_cccl);
        args[nargs++] = "-isystem";
        args[nargs++] = owned[nowned++] = cccl;
    } else {
        free(cccl);
    }
    for (size_t i = 0; i < opts->nincludes; i++) {
        args[nargs++] = "-I";
        args[nargs++] = opts->includes[i];
    }
    for (size_t i = 0; i < opts->ndefines; i++)
        args[nargs++] = opts->defines[i];

    /* Explicit instantiations are found in the text and referenced in place,
     * so one parse sees them (libclang shows no cursor for them). */
    size_t text_size = 0;
    char *text = ks_read_file(opts->input, &text_size);
    char *injected = text ? inject_instantiations(&ctx, text, text_size) : NULL;
    struct CXUnsavedFile unsaved = {opts->input, injected, injected ? (unsigned long)strlen(injected) : 0};

    unsigned flags = CXTranslationUnit_KeepGoing;
    if (opts->skip_bodies)
        flags |= CXTranslationUnit_SkipFunctionBodies;
    CXIndex index = clang_createIndex(0, 0);
    enum CXErrorCode ec = clang_parseTranslationUnit2(
        index, opts->input, args, (int)nargs, injected ? &unsaved : NULL, injected ? 1 : 0,
        flags, &ctx.tu);
    if (ec != CXError_Success || !ctx.tu) {
        ks_error_at(opts->input, 0, 0, "libclang could not parse the file (error %d)", (int)ec);
        ctx.errors++;
    } else {
        ctx.errors += report_diagnostics(&ctx);
        if (ctx.errors == 0) {
            clang_visitChildren(clang_getTranslationUnitCursor(ctx.tu), visit, &ctx);
            note_uninstantiated(&ctx);
            if (ctx.nlbs && ctx.errors == 0) {
                const char *base = injected ? injected : text;
                resolve_injections(&ctx, base, base ? strlen(base) : 0);
            }
            disambiguate(&ctx);
            apply_renames(&ctx);
            check_unique(&ctx);
            /* e.g. the depfile writer, which reads the inclusions */
            if (ctx.errors == 0 && opts->tu_hook)
                opts->tu_hook(ctx.tu, opts->tu_hook_data);
        }
        clang_disposeTranslationUnit(ctx.tu);
    }
    for (size_t i = 0; i < ctx.ntemplates; i++)
        free(ctx.templates[i]);
    free(ctx.templates);
    for (size_t i = 0; i < ctx.ninst; i++) {
        free(ctx.inst[i].args);
        free(ctx.inst[i].used_by);
    }
    free(ctx.inst);
    free(injected);
    free(text);
    for (size_t i = 0; i < ctx.nlbs; i++) {
        free(ctx.lbs[i].symbol);
        free(ctx.lbs[i].ns);
        free(ctx.lbs[i].max_expr);
        free(ctx.lbs[i].min_expr);
    }
    free(ctx.lbs);
    /* The translation unit must go before the index that owns it. */
    clang_disposeIndex(index);
out_args:
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    free(args);
    return ctx.errors;
}

void ks_model_free(ks_model *m)
{
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_kern *k = &m->kernels[i];
        for (size_t j = 0; j < k->nparams; j++) {
            free(k->params[j].name);
            free(k->params[j].type);
            free(k->params[j].c_type);
            free(k->params[j].tag);
        }
        free(k->params);
        free(k->name);
        free(k->c_name);
        free(k->symbol);
        free(k->signature);
    }
    for (size_t i = 0; i < m->nfwds; i++)
        free(m->fwds[i].c_name);
    for (size_t i = 0; i < m->ntypes; i++) {
        free(m->types[i].c_name);
        free(m->types[i].text);
    }
    free(m->types);
    free(m->fwds);
    free(m->kernels);
    free(m->source);
    memset(m, 0, sizeof *m);
}
