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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parse_ctx {
    const ks_options *opts;
    ks_model *model;
    CXTranslationUnit tu;
    int errors;
} parse_ctx;

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

static void cursor_error(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cursor_error(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
{
    unsigned line, col;
    location_of(c, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(ctx->opts->input, line, col, "error", fmt, ap);
    va_end(ap);
    ctx->errors++;
}

static void cursor_note(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cursor_note(parse_ctx *ctx, CXCursor c, const char *fmt, ...)
{
    unsigned line, col;
    location_of(c, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(ctx->opts->input, line, col, "note", fmt, ap);
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
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    r.why = ks_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(r.why, (size_t)n + 1, fmt, ap);
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
        /* C cannot name a C++ enum's underlying type as an enum; point at
         * the underlying integer type, which has the same size. */
        CXType under = clang_getEnumDeclIntegerType(clang_getTypeDeclaration(canon));
        const char *b = builtin_c_name(clang_getCanonicalType(under).kind);
        if (b)
            r = accept(ks_xasprintf("%s%s", quals, b));
        else
            r = refuse("pointer to an enum whose underlying type C cannot name");
    } else if (canon.kind == CXType_Record) {
        CXCursor decl = clang_getTypeDeclaration(canon);
        char *spelled = take(clang_getCursorSpelling(decl));
        if (!*spelled || clang_Cursor_isAnonymous(decl)) {
            r = refuse("pointer to an unnamed struct; give the struct a name");
        } else if (clang_Type_getNumTemplateArguments(canon) > 0) {
            r = refuse("pointer to a class template specialization, which C cannot name; "
                       "pass 'void *' or a pointer to a plain struct");
        } else if (declared_in_file(decl, "vector_types.h")) {
            ctx->model->needs_vector_types = 1;
            r = accept(ks_xasprintf("%s%s", quals, spelled));
        } else {
            char *q = qualified_name(decl);
            char *cn = c_identifier(q);
            add_fwd(ctx->model, cn);
            r = accept(ks_xasprintf("%sstruct %s", quals, cn));
            free(cn);
            free(q);
        }
        free(spelled);
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
        r = refuse("'%s' is a struct, class or union passed by value, which kstub does not "
                   "support yet; pass a pointer to it", sp);
        break;
    case CXType_Enum:
        r = refuse("'%s' is an enum, which kstub does not support yet; pass its underlying "
                   "integer type", sp);
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
        long vals[3];
        int nvals = 0, ok = 1, depth = 0;
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
                long v;
                if (nvals < 3 && arg.data && parse_long_literal(arg.data, &v))
                    vals[nvals++] = v;
                else
                    ok = 0;
                free(arg.data);
                arg.data = NULL;
                arg.len = arg.cap = 0;
                free(a);
                if (close)
                    break;
                continue;
            }
            ks_buf_puts(&arg, a);
            free(a);
        }
        free(arg.data);
        if (ok && nvals >= 1) {
            k->max_threads = vals[0];
            k->min_blocks = nvals >= 2 ? vals[1] : -1;
        } else {
            cursor_note(ctx, fn, "kernel '%s': __launch_bounds__ arguments are not integer "
                        "literals; they are not recorded, so the runtime cannot check "
                        "the block size against them", k->name);
        }
        break;
    }
    clang_disposeTokens(ctx->tu, toks, n);
}

static void add_kernel(parse_ctx *ctx, CXCursor fn)
{
    ks_model *m = ctx->model;
    ks_kern k;
    memset(&k, 0, sizeof k);
    k.name = qualified_name(fn);
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

    k.c_name = c_identifier(k.name);
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
        if (clang_isCursorDefinition(c) && is_kernel(c))
            add_kernel(ctx, c);
        break;
    case CXCursor_FunctionTemplate:
        if (is_kernel(c)) {
            char *q = qualified_name(c);
            cursor_note(ctx, c, "template kernel '%s' skipped: kstub generates stubs for "
                        "non-template kernels only", q);
            free(q);
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
    for (size_t i = 0; i < m->nkernels; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->kernels[i].c_name, m->kernels[j].c_name) == 0) {
                ks_error_at(ctx->opts->input, m->kernels[i].line, m->kernels[i].col,
                            "kernels '%s' (line %u) and '%s' both get the C name '%s'",
                            m->kernels[j].name, m->kernels[j].line, m->kernels[i].name,
                            m->kernels[i].c_name);
                ctx->errors++;
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

int ks_parse(const ks_options *opts, ks_model *model)
{
    parse_ctx ctx = {opts, model, NULL, 0};
    memset(model, 0, sizeof *model);
    model->source = ks_xstrdup(opts->input);

    FILE *probe = fopen(opts->input, "rb");
    if (!probe) {
        ks_error_at(opts->input, 0, 0, "cannot open: %s", strerror(errno));
        return 1;
    }
    fclose(probe);

    size_t cap = 16 + opts->ndefines + 2 * opts->nincludes;
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

    CXIndex index = clang_createIndex(0, 0);
    enum CXErrorCode ec = clang_parseTranslationUnit2(
        index, opts->input, args, (int)nargs, NULL, 0,
        CXTranslationUnit_KeepGoing, &ctx.tu);
    if (ec != CXError_Success || !ctx.tu) {
        ks_error_at(opts->input, 0, 0, "libclang could not parse the file (error %d)", (int)ec);
        ctx.errors++;
    } else {
        ctx.errors += report_diagnostics(&ctx);
        if (ctx.errors == 0) {
            clang_visitChildren(clang_getTranslationUnitCursor(ctx.tu), visit, &ctx);
            disambiguate(&ctx);
        }
        clang_disposeTranslationUnit(ctx.tu);
    }
    /* The translation unit must go before the index that owns it. */
    clang_disposeIndex(index);
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
    free(m->fwds);
    free(m->kernels);
    free(m->source);
    memset(m, 0, sizeof *m);
}
