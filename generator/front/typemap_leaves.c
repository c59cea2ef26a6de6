/*
 * typemap_leaves.c — the leaves of type translation, below typemap.c's
 * recursive core (records, pointers, pointers to functions): scalars and
 * the std typedefs, qualifiers, enums, where a complete type is defined,
 * the typedef a type is spelled through and the pointer as written. It
 * calls nothing of typemap.c.
 */
#include "front/typemap_int.h"
#include "base/util.h"
#include "front/session_files.h"
#include "model/model.h"
#include "front/cursor.h"

#include <stdlib.h>
#include <string.h>

static const char *const std_typedefs[] = {
    "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "intmax_t", "uintmax_t",
    "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t",
};
static const ks_scalar std_scalars[] = {
    KS_SCALAR_SIZE_T, KS_SCALAR_PTRDIFF_T, KS_SCALAR_INTPTR_T, KS_SCALAR_UINTPTR_T,
    KS_SCALAR_INTMAX_T, KS_SCALAR_UINTMAX_T,
    KS_SCALAR_INT8_T, KS_SCALAR_INT16_T, KS_SCALAR_INT32_T, KS_SCALAR_INT64_T,
    KS_SCALAR_UINT8_T, KS_SCALAR_UINT16_T, KS_SCALAR_UINT32_T, KS_SCALAR_UINT64_T,
};

static int std_typedef(const char *name, ks_scalar *out)
{
    for (size_t i = 0; i < sizeof std_typedefs / sizeof *std_typedefs; i++)
        if (strcmp(std_typedefs[i], name) == 0) {
            *out = std_scalars[i];
            return 1;
        }
    return 0;
}

/* The first <stdint.h>/<stddef.h> typedef in t's chain of sugar:
 * "int64_t n" stays int64_t in C rather than becoming "long". */
static int std_typedef_of(CXType t, ks_scalar *out)
{
    for (;;) {
        if (t.kind == CXType_Elaborated) {
            t = clang_Type_getNamedType(t);
        } else if (t.kind == CXType_Typedef) {
            char *name = ks_take(clang_getTypedefName(t));
            int hit = std_typedef(name, out);
            free(name);
            if (hit)
                return 1;
            t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
        } else if (t.kind == CXType_Unexposed) {
            /* "std::int64_t" (a using-declaration) shows as unexposed sugar:
             * libclang's spelling of it names the typedef. */
            char *sp = ks_take(clang_getTypeSpelling(t));
            const char *name = sp;
            while (strncmp(name, "const ", 6) == 0 || strncmp(name, "volatile ", 9) == 0)
                name = strchr(name, ' ') + 1;
            if (strncmp(name, "std::", 5) == 0)
                name += 5;
            int hit = std_typedef(name, out);
            free(sp);
            return hit;
        } else {
            return 0;
        }
    }
}

static int builtin_scalar(enum CXTypeKind k, ks_scalar *out)
{
    switch (k) {
    case CXType_Bool: *out = KS_SCALAR_BOOL; return 1;
    case CXType_Char_S:
    case CXType_Char_U: *out = KS_SCALAR_CHAR; return 1;
    case CXType_SChar: *out = KS_SCALAR_SCHAR; return 1;
    case CXType_UChar: *out = KS_SCALAR_UCHAR; return 1;
    case CXType_Short: *out = KS_SCALAR_SHORT; return 1;
    case CXType_UShort: *out = KS_SCALAR_USHORT; return 1;
    case CXType_Int: *out = KS_SCALAR_INT; return 1;
    case CXType_UInt: *out = KS_SCALAR_UINT; return 1;
    case CXType_Long: *out = KS_SCALAR_LONG; return 1;
    case CXType_ULong: *out = KS_SCALAR_ULONG; return 1;
    case CXType_LongLong: *out = KS_SCALAR_LLONG; return 1;
    case CXType_ULongLong: *out = KS_SCALAR_ULLONG; return 1;
    case CXType_Float: *out = KS_SCALAR_FLOAT; return 1;
    case CXType_Double: *out = KS_SCALAR_DOUBLE; return 1;
    default: return 0;
    }
}

/* A scalar C names exactly (builtin or standard typedef). */
int ks__tm_scalar_of(CXType t, ks_scalar *out)
{
    return std_typedef_of(t, out) || builtin_scalar(clang_getCanonicalType(t).kind, out);
}

unsigned ks__tm_quals_of(CXType t)
{
    return (clang_isConstQualifiedType(t) ? KS_QUAL_CONST : 0) |
           (clang_isVolatileQualifiedType(t) ? KS_QUAL_VOLATILE : 0);
}

char *ks__tm_refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = ks_xvasprintf(fmt, ap);
    va_end(ap);
    return why;
}

char *ks__tm_spelling(CXType t)
{
    return ks_take(clang_getTypeSpelling(t));
}

/* ---- enums ---------------------------------------------------------------------------------- */

static enum CXChildVisitResult enum_constant_visitor(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    ks_def *d = data;
    if (clang_getCursorKind(c) != CXCursor_EnumConstantDecl)
        return CXChildVisit_Continue;
    char *name = ks_take(clang_getCursorSpelling(c));
    long long v = d->is_signed ? clang_getEnumConstantDeclValue(c)
                               : (long long)clang_getEnumConstantDeclUnsignedValue(c);
    ks_def_add_enumerator(d, name, v);
    free(name);
    return CXChildVisit_Continue;
}

/* An enum: its underlying integer type and its enumerators. */
/* ---- where a type comes from ----------------------------------------------------------------- */

/* Whether one of a header's tokens (clang's; comments and literals aside)
 * is one of words (NULL-terminated). */
static int text_has_token(CXTranslationUnit tu, CXFile f, size_t size, const char *const *words)
{
    CXToken *toks;
    unsigned nt;
    clang_tokenize(tu, clang_getRange(ks_file_loc(tu, f, 0),
                                      ks_file_loc(tu, f, (unsigned)size)), &toks, &nt);
    int found = 0;
    for (unsigned i = 0; !found && i < nt; i++) {
        CXTokenKind k = clang_getTokenKind(toks[i]);
        if (k == CXToken_Comment || k == CXToken_Literal)
            continue;
        char *w = ks_take(clang_getTokenSpelling(tu, toks[i]));
        for (const char *const *c = words; !found && *c; c++)
            found = strcmp(w, *c) == 0;
        free(w);
    }
    clang_disposeTokens(tu, toks, nt);
    return found;
}

/* Whether a header's text can be read by a host C++ compiler, as far as
 * its own tokens tell: a .h or .hpp file with no CUDA-only keyword or
 * built-in. (Its #includes are not followed.) */
static int text_is_host_cxx(CXTranslationUnit tu, CXFile f, const char *path, size_t size)
{
    const char *dot = strrchr(path, '.');
    if (!dot || (strcmp(dot, ".h") != 0 && strcmp(dot, ".hpp") != 0 && strcmp(dot, ".hh") != 0 &&
                 strcmp(dot, ".hxx") != 0))
        return 0;
    static const char *const cuda_only[] = {
        "__global__", "__device__", "__host__", "__shared__", "__constant__", "__managed__",
        "__forceinline__", "__noinline__", "__launch_bounds__", "__grid_constant__", "threadIdx",
        "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads", NULL,
    };
    return !text_has_token(tu, f, size, cuda_only);
}

/* Whether a header's text can be read by a C compiler, as far as its own
 * tokens tell: a .h file with none of C++'s own keywords or '::'. (Its
 * #includes are not followed.) */
static int text_is_c(CXTranslationUnit tu, CXFile f, const char *path, size_t size)
{
    size_t n = strlen(path);
    if (n < 2 || strcmp(path + n - 2, ".h") != 0)
        return 0;
    static const char *const cxx_only[] = {
        "::", "namespace", "class", "template", "typename", "public", "private", "protected",
        "virtual", "operator", "using", "constexpr", "nullptr", "new", "delete", "this",
        "friend", "explicit", "mutable", "decltype", "noexcept", "static_assert", "__global__",
        "__device__", "__host__", "__shared__", "__constant__", NULL,
    };
    return !text_has_token(tu, f, size, cxx_only);
}

typedef struct typedef_find {
    CXFile file;
    const char *name;
    CXType type;
    int found;
} typedef_find;

static enum CXChildVisitResult find_same_name_typedef(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    typedef_find *tf = data;
    /* A header's extern "C" { ... } holds its C declarations (issue 39 #18). */
    if (clang_getCursorKind(c) == CXCursor_LinkageSpec || clang_getCursorKind(c) == CXCursor_UnexposedDecl)
        return CXChildVisit_Recurse;
    if (clang_getCursorKind(c) != CXCursor_TypedefDecl)
        return CXChildVisit_Continue;
    CXFile f;
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
    if (!f || !clang_File_isEqual(f, tf->file))
        return CXChildVisit_Continue;
    char *name = ks_take(clang_getCursorSpelling(c));
    if (strcmp(name, tf->name) == 0 &&
        clang_equalTypes(clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c)), tf->type)) {
        tf->found = 1;
        free(name);
        return CXChildVisit_Break;
    }
    free(name);
    return CXChildVisit_Continue;
}

/* Whether C++ can name decl by its qualified name (ks_qualified_name):
 * not inside a class template's specialization, whose arguments that name
 * leaves out ("Holder::Mode" of Holder<int>::Mode). *anonymous: inside an
 * anonymous namespace. */
static int named_by_qname(CXCursor decl, int *anonymous)
{
    *anonymous = 0;
    for (CXCursor p = clang_getCursorSemanticParent(decl);
         !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(p)))
            return 0;
        if (clang_getCursorKind(p) == CXCursor_Namespace && clang_Cursor_isAnonymous(p))
            *anonymous = 1;
    }
    return 1;
}

static enum CXChildVisitResult find_base(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_CXXBaseSpecifier)
        return CXChildVisit_Continue;
    *(int *)data = 1;
    return CXChildVisit_Break;
}

/* Whether the class decl names a base class. */
static int has_bases(CXCursor decl)
{
    int found = 0;
    clang_visitChildren(decl, find_base, &found);
    return found;
}

/* Records where a complete def is defined: a project header (its name,
 * whether C can include it, whether it typedefs the type's own name), or
 * the input / a system header (file NULL). */
void ks__tm_note_origin(tm_ctx *c, CXCursor decl, ks_def *d)
{
    if (d->file)
        return;                                /* seen through a pointer first */
    CXSourceLocation loc = clang_getCursorLocation(decl);
    CXFile f;
    clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
    if (!f || clang_Location_isFromMainFile(loc) || clang_Location_isInSystemHeader(loc))
        return;
    char *name = ks_take(clang_getFileName(f));
    d->file = ks_xstrdup(strncmp(name, "./", 2) == 0 ? name + 2 : name);
    free(name);
    size_t size = 0;
    const char *text = clang_getFileContents(c->s->tu, f, &size);
    int file_c = text && text_is_c(c->s->tu, f, d->file, size);
    int file_cxx = text && text_is_host_cxx(c->s->tu, f, d->file, size);
    /* What C and C++ callers could take from the header, as far as the
     * type itself tells: C cannot name a qualified name; C++ cannot name a
     * type inside a class template's specialization, nor take as its own a
     * class with base classes (emit_values.c: offsetof cannot check it). */
    int c_may = file_c && !strstr(d->qname, "::");
    int cxx_may = named_by_qname(decl, &d->anon_namespace) && file_cxx && !has_bases(decl);
    /* Its own tokens are not the whole story (its #includes, macros that
     * spell CUDA keywords, a warning under -Werror): compile it alone, in
     * each language whose verdict can change the output (a C++17 trial of
     * a CUTLASS header costs about half a second). */
    if (c_may || cxx_may)
        ks__tm_host_trial(c, d, c_may, cxx_may);
    d->c_header = c_may && !d->host_c_fails;
    d->cxx_header = cxx_may && !d->host_cxx_fails;
    /* The declaration's own type, not canon: a parameter's canonical type
     * keeps its qualifiers ("const Dimensions d"), and a typedef's
     * underlying type has none, so they would never compare equal. */
    typedef_find tf = {f, d->qname, clang_getCanonicalType(clang_getCursorType(decl)), 0};
    clang_visitChildren(clang_getTranslationUnitCursor(c->s->tu), find_same_name_typedef, &tf);
    d->c_typedef = tf.found;
}

/* An enum class whose every enclosing scope is a named namespace: its
 * name and namespaces, for an opaque redeclaration in C++. */
static void note_scoped(CXCursor decl, ks_def *d)
{
    if (!clang_EnumDecl_isScoped(decl))
        return;
    size_t n = 0;
    for (CXCursor p = clang_getCursorSemanticParent(decl);
         !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        if (clang_getCursorKind(p) != CXCursor_Namespace || clang_Cursor_isAnonymous(p))
            return;
        n++;
    }
    d->scopes = ks_xmalloc((n + 1) * sizeof *d->scopes);
    d->scope_inline = ks_xmalloc(n + 1);
    d->nscopes = n;
    size_t i = n;
    for (CXCursor p = clang_getCursorSemanticParent(decl);
         !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        i--;
        d->scopes[i] = ks_take(clang_getCursorSpelling(p));
        d->scope_inline[i] = (unsigned char)clang_Cursor_isInlineNamespace(p);
    }
    d->leaf = ks_take(clang_getCursorSpelling(decl));
    d->scoped = 1;
}

char *ks__tm_enum_type(tm_ctx *c, CXType canon, ks_type *out)
{
    CXCursor decl = clang_getTypeDeclaration(canon);
    char *q = ks_qualified_name(decl);
    if (!*q || strstr(q, "::::") || clang_Cursor_isAnonymous(decl)) {
        free(q);
        return ks__tm_refuse("an unnamed enum; give the enum a name");
    }
    int is_new;
    size_t idx = ks_model_def(c->m, KS_DEF_ENUM, q, &is_new);
    free(q);
    if (is_new) {
        ks_def *d = &c->m->defs[idx];
        CXType under = clang_getEnumDeclIntegerType(decl);
        if (!ks__tm_scalar_of(under, &d->underlying))
            return ks__tm_refuse("an enum whose underlying type C cannot name");
        enum CXTypeKind uk = clang_getCanonicalType(under).kind;
        d->is_signed = uk == CXType_SChar || uk == CXType_Char_S || uk == CXType_Short ||
                       uk == CXType_Int || uk == CXType_Long || uk == CXType_LongLong;
        d->size = clang_Type_getSizeOf(canon);
        d->align = clang_Type_getAlignOf(canon);
        d->complete = 1;
        ks__tm_note_origin(c, decl, d);
        note_scoped(decl, d);
        clang_visitChildren(decl, enum_constant_visitor, d);
        ks_model_define(c->m, idx);
    }
    out->base = KS_BASE_ENUM;
    out->def = idx;
    return NULL;
}

/* ---- typedefs and written pointers ---------------------------------------------------------- */

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
