/*
 * kernel.c — one kernel into the model (walk.c finds it): its signature as
 * written, its parameters through typemap.c, __launch_bounds__ (literal, or
 * constant expressions evaluated after the walk), and whether it uses
 * dynamic shared memory.
 */
#include "front/session_files.h"
#include "front/walkctx.h"
#include "base/util.h"
#include "model/model.h"
#include "front/session.h"
#include "front/cursor.h"
#include "front/typemap.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one kernel ------------------------------------------------------------------------------ */

/* The declaration as written, up to its body, on one line. Comments after
 * the last token before the body are left out: a parse without bodies
 * (--skip-bodies) ends the extent before them. */
static char *signature_text(walk_ctx *w, CXCursor fn)
{
    CXToken *toks;
    unsigned n;
    ks_cursor_tokens(&w->s, fn, &toks, &n);
    unsigned end = 0;            /* past the last token that is not a comment */
    int depth = 0;
    for (unsigned i = 0; i < n; i++) {
        char *t = ks_take(clang_getTokenSpelling(w->s.tu, toks[i]));
        int stop = depth == 0 && (strcmp(t, "{") == 0 || strcmp(t, ";") == 0);
        if (strcmp(t, "(") == 0)
            depth++;
        else if (strcmp(t, ")") == 0)
            depth--;
        free(t);
        if (stop)
            break;
        if (clang_getTokenKind(toks[i]) != CXToken_Comment)
            end = i + 1;
    }
    ks_buf b = {0};
    for (unsigned i = 0; i < end; i++) {
        char *t = ks_take(clang_getTokenSpelling(w->s.tu, toks[i]));
        int tight = strcmp(t, ",") == 0 || strcmp(t, ")") == 0 || strcmp(t, "(") == 0 ||
                    strcmp(t, "::") == 0 ||
                    (b.len && (b.data[b.len - 1] == '(' || (b.len > 1 && b.data[b.len - 1] == ':' &&
                                                              b.data[b.len - 2] == ':')));
        if (b.len && !tight)
            ks_buf_puts(&b, " ");
        ks_buf_puts(&b, t);
        free(t);
    }
    clang_disposeTokens(w->s.tu, toks, n);
    return ks_buf_take(&b);
}

static int parse_long_literal(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
        end++;
    if (end == s || *end || errno)
        return 0;
    *out = v;
    return 1;
}

/* The namespace part of "a::b::k": "a::b", or "". */
static char *namespace_of(const char *qualified)
{
    char *q = ks_xstrdup(qualified);
    char *last = NULL;
    for (char *p = q; (p = strstr(p, "::")) != NULL; p += 2)
        last = p;
    if (last)
        *last = '\0';
    else
        q[0] = '\0';
    return q;
}

/* __launch_bounds__(max_threads[, min_blocks]): read from the tokens of the
 * declaration (never the body), since libclang exposes the attribute
 * without its arguments. */
static void launch_bounds(walk_ctx *w, CXCursor fn, ks_kern *k)
{
    CXToken *toks;
    unsigned n;
    ks_cursor_tokens(&w->s, fn, &toks, &n);
    int outer = 0;
    for (unsigned i = 0; i + 1 < n; i++) {
        char *t = ks_take(clang_getTokenSpelling(w->s.tu, toks[i]));
        if (strcmp(t, "(") == 0)
            outer++;
        else if (strcmp(t, ")") == 0)
            outer--;
        int body = outer == 0 && (strcmp(t, "{") == 0 || strcmp(t, ";") == 0);
        int hit = strcmp(t, "__launch_bounds__") == 0 || strcmp(t, "launch_bounds") == 0;
        free(t);
        if (body)
            break;
        if (!hit)
            continue;
        char *texts[3] = {NULL, NULL, NULL};
        int nvals = 0, depth = 0;
        ks_buf arg = {0};
        for (unsigned j = i + 1; j < n; j++) {
            char *a = ks_take(clang_getTokenSpelling(w->s.tu, toks[j]));
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
        } else if (nvals >= 1 && !w->current_args) {
            /* A constant expression: evaluated after a reparse (see
             * ks__resolve_bounds), in the kernel's namespace. */
            w->lbs = ks_xrealloc(w->lbs, (w->nlbs + 1) * sizeof *w->lbs);
            pending_bounds *pb = &w->lbs[w->nlbs++];
            pb->symbol = ks_xstrdup(k->symbol);
            pb->ns = namespace_of(k->name);
            pb->max_expr = ks_xstrdup(texts[0]);
            pb->min_expr = nvals >= 2 ? ks_xstrdup(texts[1]) : NULL;
            ks_cursor_location(fn, &pb->line, &pb->col);
        } else if (nvals >= 1) {
            ks__walk_diag(w, fn, "note", "kernel '%s': __launch_bounds__ of a template instantiation "
                           "are not recorded unless they are integer literals, so the runtime "
                           "cannot check the block size against them", k->name);
        }
        for (int v = 0; v < nvals; v++)
            free(texts[v]);
        break;
    }
    clang_disposeTokens(w->s.tu, toks, n);
}

/* ---- dynamic shared memory ------------------------------------------------------------------ */

/* Whether a kernel uses dynamic shared memory: an extern __shared__ array
 * declared or referred to in its body or in the body of a function it calls
 * (followed through the calls to functions defined in the translation unit,
 * outside system headers). A template's instance is judged by the
 * template's body. Without bodies (--skip-bodies) nothing is found. */
typedef struct shared_scan {
    CXCursor seen[64];         /* function bodies scanned (or being scanned) */
    size_t nseen;
    int found;
} shared_scan;

static enum CXChildVisitResult find_shared_attr(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_CUDASharedAttr) {
        *(int *)data = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static int is_extern_shared(CXCursor var)
{
    if (clang_getCursorKind(var) != CXCursor_VarDecl ||
        clang_Cursor_getStorageClass(var) != CX_SC_Extern)
        return 0;
    int shared = 0;
    clang_visitChildren(var, find_shared_attr, &shared);
    return shared;
}

static void scan_function(shared_scan *sc, CXCursor fn);

/* Whether the file a cursor lies in was found where system headers are (as
 * walkctx.c judges it: not by "#pragma GCC system_header" in its text). */
static int in_system_folder(CXCursor c)
{
    CXFile f;
    CXSourceLocation loc = clang_getCursorLocation(c);
    clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
    if (!f)
        return 1;
    if (!clang_Location_isInSystemHeader(loc))
        return 0;
    CXSourceLocation top = ks_file_top_near(clang_Cursor_getTranslationUnit(c), f, loc);
    CXFile tf;
    clang_getExpansionLocation(top, &tf, NULL, NULL, NULL);
    return tf && clang_File_isEqual(tf, f) ? clang_Location_isInSystemHeader(top) : 1;
}

static enum CXChildVisitResult scan_body(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    shared_scan *sc = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_VarDecl && is_extern_shared(c)) {
        sc->found = 1;
        return CXChildVisit_Break;
    }
    if (kind == CXCursor_DeclRefExpr || kind == CXCursor_MemberRefExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        if (is_extern_shared(r)) {
            sc->found = 1;
            return CXChildVisit_Break;
        }
        enum CXCursorKind rk = clang_getCursorKind(r);
        if (rk == CXCursor_FunctionDecl || rk == CXCursor_FunctionTemplate ||
            rk == CXCursor_CXXMethod) {
            scan_function(sc, r);
            if (sc->found)
                return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

static void scan_function(shared_scan *sc, CXCursor fn)
{
    CXCursor tmpl = clang_getSpecializedCursorTemplate(fn);
    if (!clang_Cursor_isNull(tmpl))
        fn = tmpl;
    CXCursor def = clang_getCursorDefinition(fn);
    if (clang_Cursor_isNull(def) || in_system_folder(def))
        return;
    for (size_t i = 0; i < sc->nseen; i++)
        if (clang_equalCursors(sc->seen[i], def))
            return;
    if (sc->nseen == sizeof sc->seen / sizeof *sc->seen)
        return;                  /* deeper than any call chain worth following */
    sc->seen[sc->nseen++] = def;
    clang_visitChildren(def, scan_body, sc);
}

static int uses_dynamic_shared(CXCursor kernel)
{
    shared_scan sc;
    memset(&sc, 0, sizeof sc);
    scan_function(&sc, kernel);
    return sc.found;
}

/* ---- internal linkage -------------------------------------------------------------------- */

/* The input's name as nvcc writes it into per-compilation names: its length,
 * '_', and the base name with each byte that is not a letter or digit as '_'
 * ("st.cu": "5_st_cu"). */
static char *nvcc_file_tag(const char *input)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    char *tag = ks_xasprintf("%zu_%s", strlen(base), base);
    for (char *p = strchr(tag, '_') + 1; *p; p++)
        if (!isalnum((unsigned char)*p))
            *p = '_';
    return tag;
}

/*
 * The symbol as nvcc emits it, or its pattern (common/symbol.h) where nvcc's
 * has a part that differs per compilation. clang mangles a name with internal
 * linkage with an 'L' before it ("_ZL8k_staticPfi") that nvcc never writes;
 * an anonymous namespace as "12_GLOBAL__N_1", which nvcc writes
 * "<n>_GLOBAL__N__<hash>_<file>_<hash>"; a static function named in a
 * template argument "_ZL3sfnff", which nvcc writes
 * "_ZN<n>_INTERNAL_<hash>_<file>_<hash>3sfnEff" (one more substitution
 * candidate, which the runtime's matching allows for). clang 22 writes the
 * address of an array "adsoiL_Z1aEE", nvcc "adL_Z1aE". A kernel with any
 * per-compilation part is internal to its file, and -rdc=true prefixes it
 * "__nv_static_…".
 */
char *ks__device_symbol(walk_ctx *w, CXCursor fn, const char *mangled)
{
    enum CXLinkageKind linkage = clang_getCursorLinkage(fn);
    int internal = linkage == CXLinkage_Internal || linkage == CXLinkage_UniqueExternal;
    char *name = ks_take(clang_getCursorSpelling(fn));
    char *own = ks_xasprintf("L%zu%s", strlen(name), name);
    char *tag = nvcc_file_tag(w->s.opts->input);
    ks_buf b = {0};
    int own_done = !internal;
    char *nv = ks__nvcc_ucn_names(mangled);
    mangled = nv;
    for (const char *p = mangled; *p;) {
        int after_digit = p > mangled && isdigit((unsigned char)p[-1]);
        if (!own_done && p > mangled + 1 && strncmp(p, own, strlen(own)) == 0) {
            own_done = 1;       /* the kernel's own name: nvcc writes no 'L' */
            p++;
        } else if (!after_digit && strncmp(p, "12_GLOBAL__N_1", 14) == 0) {
            ks_buf_printf(&b, "{anon:%s}", tag);
            internal = 1;
            p += 14;
        } else if (p - mangled >= 2 && strncmp(p - 2, "ad", 2) == 0 && strncmp(p, "so", 2) == 0 &&
                   islower((unsigned char)p[2]) && strncmp(p + 3, "L_Z", 3) == 0 &&
                   isdigit((unsigned char)p[6])) {
            /* "&array" as clang 22 writes it, "adso<type>L_Z<n>arrayEE" (a
             * subobject); nvcc (and clang 17's ABI) "adL_Z<n>arrayE" */
            char *end;
            unsigned long n = strtoul(p + 6, &end, 10);
            if (strlen(end) < n + 2 || end[n] != 'E' || end[n + 1] != 'E') {
                ks_buf_put(&b, p, 1);
                p++;
                continue;
            }
            ks_buf_puts(&b, "L_Z");
            ks_buf_put(&b, p + 6, (size_t)(end - (p + 6)) + n);
            ks_buf_puts(&b, "E");
            p = end + n + 2;
        } else if (strncmp(p, "_ZL", 3) == 0 && p > mangled && isdigit((unsigned char)p[3])) {
            /* "_ZL<n><name>" (a static function in a template argument) */
            char *end;
            unsigned long n = strtoul(p + 3, &end, 10);
            if (strlen(end) < n)
                break;
            ks_buf_printf(&b, "_ZN{internal:%s}", tag);
            ks_buf_put(&b, p + 3, (size_t)(end - (p + 3)) + n);
            ks_buf_puts(&b, "E");
            internal = 1;
            p = end + n;
        } else {
            ks_buf_put(&b, p, 1);
            p++;
        }
    }
    char *body = ks_buf_take(&b);
    char *out = internal ? ks_xasprintf("{static:%s}%s", tag, body) : ks_xstrdup(body);
    free(body);
    free(nv);
    free(tag);
    free(own);
    free(name);
    return out;
}

/* A function parameter pack's elements share the pack's name ("args"): each
 * is named after it and its place in the pack, "args_0", "args_1". */
static void name_pack_elements(ks_kern *k)
{
    for (size_t i = 0; i < k->nparams; i++) {
        const char *name = k->params[i].name;
        if (!name)
            continue;
        size_t same = 0;
        for (size_t j = i; j < k->nparams; j++)
            same += k->params[j].name && strcmp(k->params[j].name, name) == 0;
        if (same < 2)
            continue;
        char *pack = ks_xstrdup(name);
        size_t n = 0;
        for (size_t j = i; j < k->nparams; j++)
            if (k->params[j].name && strcmp(k->params[j].name, pack) == 0) {
                free(k->params[j].name);
                k->params[j].name = ks_xasprintf("%s_%zu", pack, n++);
            }
        free(pack);
    }
}

/* The most bytes a kernel's parameters may take, with their padding, on
 * every architecture nvcc 12.1 and later builds for (nvcc refuses more:
 * "Formal parameter space overflowed"). */
#define KS_PARAM_SPACE_MAX 32764

void ks__add_kernel(walk_ctx *w, CXCursor fn)
{
    const char *targs = w->current_args;
    char *name = targs ? NULL : ks_qualified_name(fn);
    char *base = targs ? ks_qualified_name(fn) : NULL;
    char *display = name ? ks_xstrdup(name) : ks_xasprintf("%s<%s>", base, targs);
    unsigned line, col;
    ks_cursor_location(fn, &line, &col);

    if (clang_Cursor_isVariadic(fn)) {
        ks__walk_diag(w, fn, "error", "kernel '%s' is variadic, which CUDA does not allow", display);
        goto out;
    }
    if (ks__skipped(w, display, base, fn) || ks__basic_name(w, fn, "kernel") != 0)
        goto out;
    ks_kern k;
    memset(&k, 0, sizeof k);
    k.max_threads = k.min_blocks = -1;
    k.name = display;
    display = NULL;
    k.base_name = base;
    base = NULL;
    k.template_args = targs ? ks_xstrdup(targs) : NULL;
    if (!ks__is_main(w, fn)) {
        const file_class *fc = ks__classify(w, clang_getCursorLocation(fn));
        k.file = fc ? ks_xstrdup(fc->name) : NULL;
        k.tu_prefixed = w->s.opts->kernels_in == KS_KERNELS_PROJECT;
    }
    k.line = line;
    k.col = col;
    char *mangled = ks_take(clang_Cursor_getMangling(fn));
    k.symbol = ks__device_symbol(w, fn, mangled);
    free(mangled);
    k.signature = signature_text(w, fn);
    launch_bounds(w, fn, &k);
    k.dynamic_shared = uses_dynamic_shared(fn);

    int nargs = clang_Cursor_getNumArguments(fn);
    long end = 0;
    int bad = 0;
    for (int i = 0; i < nargs; i++) {
        CXCursor arg = clang_Cursor_getArgument(fn, (unsigned)i);
        CXType t = clang_getCursorType(arg);
        char *pname = ks_take(clang_getCursorSpelling(arg));
        ks_type type;
        char *why = NULL;
        if (ks_typemap_param(&w->s, w->model, t, &type, &why) != 0) {
            ks__walk_diag(w, *pname ? arg : fn, "error", "kernel '%s', parameter %d '%s': %s "
                            "(leave the kernel out with '// kstub:skip %s')", k.name, i + 1,
                            *pname ? pname : "(unnamed)", why, k.name);
            free(why);
            free(pname);
            bad = 1;
            continue;
        }
        long size = clang_Type_getSizeOf(t), align = clang_Type_getAlignOf(t);
        if (type.nptrs && clang_getCanonicalType(t).kind != CXType_Pointer)
            size = align = 8;  /* an array parameter is a (64-bit) device pointer */
        if (size < 0 || align <= 0) {
            char *sp = ks_take(clang_getTypeSpelling(t));
            ks__walk_diag(w, arg, "error", "kernel '%s', parameter %d '%s': the size or alignment of "
                            "'%s' cannot be computed (libclang layout error %ld)", k.name, i + 1,
                            pname, sp, size < 0 ? size : align);
            free(sp);
            free(pname);
            ks_type_free(&type);
            bad = 1;
            continue;
        }
        ks_param *p = ks_kern_add_param(&k);
        p->name = *pname ? pname : NULL;
        if (!*pname)
            free(pname);
        p->spelled = ks_take(clang_getTypeSpelling(t));
        p->type = type;
        p->size = size;
        p->align = align;
        p->offset = (end + align - 1) / align * align;
        end = p->offset + size;
    }
    if (!bad && end > KS_PARAM_SPACE_MAX) {
        ks__walk_diag(w, fn, "error", "kernel '%s': Formal parameter space overflowed (%ld bytes "
                      "required, max %d bytes allowed), as nvcc says; pass the data through a "
                      "pointer to device memory", k.name, end, KS_PARAM_SPACE_MAX);
        bad = 1;
    }
    if (bad) {
        ks_kern_free(&k);
        goto out;
    }
    name_pack_elements(&k);
    *ks_model_add_kernel(w->model) = k;
out:
    free(name);
    free(base);
    free(display);
}

/* ---- __launch_bounds__ expressions ------------------------------------------------------------- */

/* Evaluates the injected "kstub_lb_<i>_<max|min>" constants. */
static enum CXChildVisitResult visit_bounds(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    walk_ctx *w = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_Namespace)
        return clang_Location_isFromMainFile(clang_getCursorLocation(c)) ? CXChildVisit_Recurse
                                                                          : CXChildVisit_Continue;
    if (kind != CXCursor_VarDecl)
        return CXChildVisit_Continue;
    char *name = ks_take(clang_getCursorSpelling(c));
    unsigned idx;
    char which[4] = "";
    if (sscanf(name, "kstub_lb_%u_%3s", &idx, which) == 2 && idx < w->nlbs) {
        pending_bounds *pb = &w->lbs[idx];
        CXEvalResult r = clang_Cursor_Evaluate(c);
        long long v = -1;
        if (r && clang_EvalResult_getKind(r) == CXEval_Int)
            v = clang_EvalResult_getAsLongLong(r);
        if (r)
            clang_EvalResult_dispose(r);
        for (size_t i = 0; i < w->model->nkernels; i++) {
            ks_kern *k = &w->model->kernels[i];
            if (strcmp(k->symbol, pb->symbol) != 0)
                continue;
            if (v <= 0)
                ks_note_at(w->s.opts->input, pb->line, pb->col, "kernel '%s': __launch_bounds__ "
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

/* The __launch_bounds__ expressions, appended as constants in their
 * kernel's namespace, evaluated after one reparse. */
int ks__resolve_bounds(walk_ctx *w, const char *text, size_t size)
{
    ks_buf src = {0};
    ks_buf_put(&src, text, size);
    ks_buf_puts(&src, "\n");
    for (size_t i = 0; i < w->nlbs; i++) {
        pending_bounds *pb = &w->lbs[i];
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
    int rc = ks_session_reparse(&w->s, src.data, src.len);
    if (rc != 0)
        ks_note_at(w->s.opts->input, 0, 0, "while evaluating __launch_bounds__ expressions");
    else
        clang_visitChildren(clang_getTranslationUnitCursor(w->s.tu), visit_bounds, w);
    free(src.data);
    return rc;
}

/* ---- kstub:skip ------------------------------------------------------------------------------- */

/* Whether two names are the same but for spaces and '&' ("k<&f>" is "k<f>"). */
static int same_name(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ' || *a == '&')
            a++;
        while (*b == ' ' || *b == '&')
            b++;
        if (*a != *b)
            return 0;
        if (!*a)
            return 1;
        a++, b++;
    }
}

/* A kernel a "kstub:skip" names is left out before its parameters are looked
 * at: a kernel kstub cannot type can be skipped. It names it by its qualified
 * name ("k", "k<float>", "k<f>" or "k<&f>"), a template's instances by the
 * template's name (\p base), or by its symbol: nvcc's (the manifest's, a
 * pattern for internal linkage) or clang's mangling. */
int ks__skipped(walk_ctx *w, const char *name, const char *base, CXCursor fn)
{
    char *mangled = NULL, *device = NULL;
    int hit = 0;
    for (size_t i = 0; i < w->nskips && !hit; i++) {
        const char *want = w->skips[i].rest;
        if (same_name(want, name) || (base && same_name(want, base))) {
            hit = 1;
        } else {
            if (!mangled) {
                mangled = ks_take(clang_Cursor_getMangling(fn));
                device = ks__device_symbol(w, fn, mangled);
            }
            hit = strcmp(want, mangled) == 0 || strcmp(want, device) == 0;
        }
        if (hit) {
            w->skip_hits[i]++;
            ks__walk_diag(w, fn, "note", "kernel '%s' left out (kstub:skip)", name);
        }
    }
    free(mangled);
    free(device);
    return hit;
}

/* Whether a "kstub:skip" names the device variable \p var (its qualified
 * name or its symbol); a note says so. */
int ks__skipped_variable(walk_ctx *w, const char *name, const char *symbol, CXCursor var)
{
    for (size_t i = 0; i < w->nskips; i++)
        if (same_name(w->skips[i].rest, name) || strcmp(w->skips[i].rest, symbol) == 0) {
            w->skip_hits[i]++;
            ks__walk_diag(w, var, "note", "variable '%s' left out (kstub:skip)", name);
            return 1;
        }
    return 0;
}
