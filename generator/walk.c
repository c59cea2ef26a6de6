/*
 * walk.c — the front end's walk: finds every kernel of the input (plain
 * definitions, and explicit instantiations of template kernels), reads each
 * one's parameters through typemap.c and its __launch_bounds__, and fills the
 * model. ks_parse() runs the whole front end; naming.c names the model after it.
 *
 * libclang shows no cursor for an explicit instantiation
 * ("template __global__ void k<float, 4>(float *, int);"). So source.c finds
 * them in the text, a reference to each specialization is appended to the
 * source in memory ("typedef decltype(&::ns::k<float, 4>) kstub_iN;"), and
 * that reference leads to a declaration with concrete parameter types and
 * the device compiler's mangled name, in the same parse.
 *
 * A template kernel launched from host code (k<float, 4><<<g, b>>>(...), or
 * its address taken) is instantiated there, and nvcc emits it: every
 * reference to a kernel template's specialization in the project's files is
 * such a declaration too, and host function templates' instantiations are
 * followed into their bodies. Each gets a stub named as an explicit
 * instantiation of the same arguments would be. The members of a class
 * template instantiated explicitly ("template class Runner<float>;") are
 * followed the same way, through references classinst.c writes.
 *
 * Which files' kernels get stubs is --kernels-in's: the input; the
 * project's own headers (not system or toolkit headers: the default); or
 * headers named on the command line. A kernel from a header included by
 * several .cu files would otherwise give each of their stubs the same C
 * functions: see naming.c for how header kernels are named.
 */
#include "front.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* __launch_bounds__ whose arguments are constant expressions, not literals. */
typedef struct pending_bounds {
    char *symbol;                /* the kernel's, to find it again */
    char *ns;                    /* its namespace, "a::b", or "" */
    char *max_expr, *min_expr;   /* min_expr may be NULL */
    unsigned line, col;
} pending_bounds;

typedef struct walk_ctx {
    ks_session s;
    ks_model *model;
    char **templates;            /* qualified names of template kernels */
    size_t ntemplates;
    ks_explicit_inst *inst;      /* explicit instantiations, kstub_i0, kstub_i1, ... */
    char **inst_used_by;         /* per instantiation: the template kernel, once seen */
    size_t ninst;
    ks_class_inst *cls;          /* "template class X<...>;", kstub_c0, kstub_c1, ... (classinst.c) */
    size_t ncls;
    pending_bounds *lbs;
    size_t nlbs;
    ks_directive *skips;         /* "kstub:skip" directives, and how often each matched */
    unsigned *skip_hits;
    size_t nskips;
    ks_directive *mirrors;       /* "kstub:mirror" directives */
    size_t nmirrors;
    const char *current_args;    /* template arguments of the instantiation being added */
    struct file_class *files;    /* per file: is it the project's, do its kernels count */
    size_t nfiles;
    char **seen;                 /* symbols of specializations already handled */
    size_t nseen;
    char **host_used;            /* template kernels instantiated from host code */
    size_t nhost_used;
    char **named;                /* --kernels-in headers, resolved */
    size_t nnamed;
    char *cuda_real;             /* the toolkit's folder, resolved */
} walk_ctx;

/* ---- whose kernels ------------------------------------------------------------------------------ */

typedef struct file_class {
    CXFile file;
    int project;                 /* neither a system header nor the toolkit's */
    int kernels;                 /* its kernels get stubs (--kernels-in) */
    char *name;                  /* as the parse names it, "./" dropped */
} file_class;

static int has_prefix_dir(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return dir[0] && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* path with "." parts and "dir/.." pairs taken out, lexically:
 * "a/../include/x.cuh" is "include/x.cuh". */
static char *tidy_path(const char *path)
{
    char *copy = ks_xstrdup(path), *save = NULL;
    char **parts = ks_xmalloc((strlen(path) / 2 + 2) * sizeof *parts);
    size_t n = 0;
    for (char *p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (strcmp(p, ".") == 0)
            continue;
        if (strcmp(p, "..") == 0 && n && strcmp(parts[n - 1], "..") != 0)
            n--;
        else
            parts[n++] = p;
    }
    ks_buf b = {0};
    if (path[0] == '/')
        ks_buf_puts(&b, "/");
    for (size_t i = 0; i < n; i++)
        ks_buf_printf(&b, "%s%s", i ? "/" : "", parts[i]);
    free(parts);
    free(copy);
    return b.len ? ks_buf_take(&b) : ks_xstrdup(path);
}

/* The class of the file a location lies in; NULL for no file (builtins). */
static const file_class *classify(walk_ctx *w, CXSourceLocation loc)
{
    CXFile f;
    clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
    if (!f)
        return NULL;
    for (size_t i = 0; i < w->nfiles; i++)
        if (clang_File_isEqual(f, w->files[i].file))
            return &w->files[i];
    w->files = ks_xrealloc(w->files, (w->nfiles + 1) * sizeof *w->files);
    file_class *fc = &w->files[w->nfiles++];
    memset(fc, 0, sizeof *fc);
    fc->file = f;
    char *name = ks_take(clang_getFileName(f));
    char *real = realpath(name, NULL);
    int main_file = clang_Location_isFromMainFile(loc);
    fc->project = main_file || (!clang_Location_isInSystemHeader(loc) &&
                                strcmp(name, KS_COMPAT_PATH) != 0 &&
                                !(real && w->cuda_real && has_prefix_dir(real, w->cuda_real)));
    int kernels_in = w->s.opts->kernels_in;
    if (main_file)
        fc->kernels = 1;
    else if (kernels_in == KS_KERNELS_PROJECT)
        fc->kernels = fc->project;
    else if (kernels_in == KS_KERNELS_NAMED)
        for (size_t i = 0; real && i < w->nnamed; i++)
            fc->kernels |= strcmp(real, w->named[i]) == 0;
    fc->name = tidy_path(name);
    free(real);
    free(name);
    return fc;
}

static int is_main(CXCursor c)
{
    return clang_Location_isFromMainFile(clang_getCursorLocation(c));
}

/* A note, warning or error at a cursor, in the file it lies in (the input
 * or a header). */
static void walk_diag(walk_ctx *w, CXCursor c, const char *severity, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void walk_diag(walk_ctx *w, CXCursor c, const char *severity, const char *fmt, ...)
{
    unsigned line, col;
    ks_cursor_location(c, &line, &col);
    const file_class *fc = is_main(c) ? NULL : classify(w, clang_getCursorLocation(c));
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(fc ? fc->name : w->s.opts->input, line, col, severity, fmt, ap);
    va_end(ap);
}

static int seen_symbol(walk_ctx *w, const char *symbol)
{
    for (size_t i = 0; i < w->nseen; i++)
        if (strcmp(w->seen[i], symbol) == 0)
            return 1;
    w->seen = ks_xrealloc(w->seen, (w->nseen + 1) * sizeof *w->seen);
    w->seen[w->nseen++] = ks_xstrdup(symbol);
    return 0;
}

/* A kernel a "kstub:skip" names (qualified name or symbol) is left out
 * before its parameters are looked at: a kernel kstub cannot type can be
 * skipped. */
static int skipped(walk_ctx *w, const char *name, const char *symbol, CXCursor fn)
{
    for (size_t i = 0; i < w->nskips; i++)
        if (strcmp(w->skips[i].rest, name) == 0 || strcmp(w->skips[i].rest, symbol) == 0) {
            w->skip_hits[i]++;
            walk_diag(w, fn, "note", "kernel '%s' left out (kstub:skip)", name);
            return 1;
        }
    return 0;
}

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
             * resolve_bounds), in the kernel's namespace. */
            w->lbs = ks_xrealloc(w->lbs, (w->nlbs + 1) * sizeof *w->lbs);
            pending_bounds *pb = &w->lbs[w->nlbs++];
            pb->symbol = ks_xstrdup(k->symbol);
            pb->ns = namespace_of(k->name);
            pb->max_expr = ks_xstrdup(texts[0]);
            pb->min_expr = nvals >= 2 ? ks_xstrdup(texts[1]) : NULL;
            ks_cursor_location(fn, &pb->line, &pb->col);
        } else if (nvals >= 1) {
            walk_diag(w, fn, "note", "kernel '%s': __launch_bounds__ of a template instantiation "
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
    if (clang_Cursor_isNull(def) || clang_Location_isInSystemHeader(clang_getCursorLocation(def)))
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

static void add_kernel(walk_ctx *w, CXCursor fn)
{
    const char *targs = w->current_args;
    char *name = targs ? NULL : ks_qualified_name(fn);
    char *base = targs ? ks_qualified_name(fn) : NULL;
    char *display = name ? ks_xstrdup(name) : ks_xasprintf("%s<%s>", base, targs);
    unsigned line, col;
    ks_cursor_location(fn, &line, &col);

    enum CXLinkageKind linkage = clang_getCursorLinkage(fn);
    if (linkage == CXLinkage_Internal || linkage == CXLinkage_UniqueExternal) {
        walk_diag(w, fn, "note", "kernel '%s' has internal linkage (static or in an anonymous "
                       "namespace): nvcc gives it a per-file symbol and no other file can launch "
                       "it; skipped", display);
        goto out;
    }
    if (clang_Cursor_isVariadic(fn)) {
        walk_diag(w, fn, "error", "kernel '%s' is variadic, which CUDA does not allow", display);
        goto out;
    }
    char *symbol = ks_take(clang_Cursor_getMangling(fn));
    int skip = skipped(w, display, symbol, fn);
    free(symbol);
    if (skip)
        goto out;
    ks_kern k;
    memset(&k, 0, sizeof k);
    k.max_threads = k.min_blocks = -1;
    k.name = display;
    display = NULL;
    k.base_name = base;
    base = NULL;
    k.template_args = targs ? ks_xstrdup(targs) : NULL;
    if (!is_main(fn)) {
        const file_class *fc = classify(w, clang_getCursorLocation(fn));
        k.file = fc ? ks_xstrdup(fc->name) : NULL;
        k.tu_prefixed = w->s.opts->kernels_in == KS_KERNELS_PROJECT;
    }
    k.line = line;
    k.col = col;
    k.symbol = ks_take(clang_Cursor_getMangling(fn));
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
            walk_diag(w, *pname ? arg : fn, "error", "kernel '%s', parameter %d '%s': %s "
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
            walk_diag(w, arg, "error", "kernel '%s', parameter %d '%s': the size or alignment of "
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
    if (bad) {
        ks_kern_free(&k);
        goto out;
    }
    *ks_model_add_kernel(w->model) = k;
out:
    free(name);
    free(base);
    free(display);
}

/* ---- the walk --------------------------------------------------------------------------------- */

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
static void handle_instantiation(walk_ctx *w, CXCursor typedef_cursor)
{
    char *alias = ks_take(clang_getCursorSpelling(typedef_cursor));
    static const char prefix[] = "kstub_i";
    size_t idx = (size_t)-1;
    if (strncmp(alias, prefix, sizeof prefix - 1) == 0 && isdigit((unsigned char)alias[sizeof prefix - 1])) {
        char *end;
        unsigned long v = strtoul(alias + sizeof prefix - 1, &end, 10);
        if (*end == '\0')
            idx = (size_t)v;
    }
    free(alias);
    if (idx >= w->ninst)
        return;
    CXCursor fn = clang_getNullCursor();
    clang_visitChildren(typedef_cursor, find_decl_ref, &fn);
    if (clang_Cursor_isNull(fn) || !ks_cursor_is_kernel(fn))
        return;                      /* an instantiation of some other function template */
    free(w->inst_used_by[idx]);
    w->inst_used_by[idx] = ks_qualified_name(fn);
    char *symbol = ks_take(clang_Cursor_getMangling(fn));
    int again = seen_symbol(w, symbol);
    free(symbol);
    if (again)
        return;
    w->current_args = w->inst[idx].args;
    add_kernel(w, fn);
    w->current_args = NULL;
}

/* A function with a body. With --skip-bodies libclang drops the bodies and
 * no longer calls such a function a definition, so look at what follows the
 * declarator in the text: '{' (a body) or ';' (a declaration). */
static int is_definition(walk_ctx *w, CXCursor fn)
{
    if (clang_isCursorDefinition(fn))
        return 1;
    if (!w->s.opts->skip_bodies)
        return 0;
    size_t size;
    unsigned off;
    const char *text = ks_cursor_file_text(&w->s, fn, &size, &off);
    return text && ks_source_body_follows(text, size, off);
}

static void handle_reference(walk_ctx *w, CXCursor ref);

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    walk_ctx *w = data;
    CXSourceLocation loc = clang_getCursorLocation(c);
    if (clang_Location_isInSystemHeader(loc))
        return CXChildVisit_Continue;
    const file_class *fc = classify(w, loc);
    if (!fc || !fc->project)
        return CXChildVisit_Continue;
    int main_file = clang_Location_isFromMainFile(loc);
    switch (clang_getCursorKind(c)) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
        return CXChildVisit_Recurse;
    case CXCursor_FunctionDecl:
        /* A template's specialization (shown here by some parses, e.g. with
         * a precompiled prelude) is named from its template arguments, once,
         * as the launches' are. */
        if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c)))
            handle_reference(w, c);
        /* Only definitions: a declaration alone puts nothing in the image. */
        else if (fc->kernels && is_definition(w, c) && ks_cursor_is_kernel(c))
            add_kernel(w, c);
        break;
    case CXCursor_TypedefDecl:
        if (main_file)
            handle_instantiation(w, c);
        break;
    case CXCursor_FunctionTemplate:
        if (fc->kernels && ks_cursor_is_kernel(c)) {
            w->templates = ks_xrealloc(w->templates, (w->ntemplates + 1) * sizeof *w->templates);
            w->templates[w->ntemplates++] = ks_qualified_name(c);
        }
        break;
    default:
        break;
    }
    return CXChildVisit_Continue;
}

/* ---- template kernels instantiated by host code -------------------------------------------- */

static int is_bool_type(CXType t)
{
    return clang_getCanonicalType(t).kind == CXType_Bool;
}

/* The enumerator of enum type t whose value is v, qualified; NULL if none. */
typedef struct enum_find {
    long long value;
    CXCursor found;
} enum_find;

static enum CXChildVisitResult find_enumerator(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    enum_find *ef = data;
    if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl &&
        clang_getEnumConstantDeclValue(c) == ef->value) {
        ef->found = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

/* A specialization's template arguments as an explicit instantiation would
 * write them: "float, 4", "true", "Op::Add". NULL when an argument is of a
 * kind kstub cannot spell (a pack, a template, a pointer). */
static char *template_args_text(CXCursor spec, int *bad)
{
    int n = clang_Cursor_getNumTemplateArguments(spec);
    CXCursor tmpl = clang_getSpecializedCursorTemplate(spec);
    *bad = -1;
    if (n < 0 || clang_Cursor_isNull(tmpl))
        return NULL;
    ks_buf b = {0};
    for (int i = 0; i < n; i++) {
        if (i)
            ks_buf_puts(&b, ", ");
        enum CXTemplateArgumentKind kind = clang_Cursor_getTemplateArgumentKind(spec, (unsigned)i);
        if (kind == CXTemplateArgumentKind_Type) {
            char *t = ks_take(clang_getTypeSpelling(clang_Cursor_getTemplateArgumentType(spec, (unsigned)i)));
            ks_buf_puts(&b, t);
            free(t);
            continue;
        }
        if (kind != CXTemplateArgumentKind_Integral) {
            free(b.data);
            *bad = i;
            return NULL;
        }
        CXCursor param = ks_template_param(tmpl, (unsigned)i);
        CXType pt = clang_getCursorType(param);   /* invalid for a null cursor */
        CXType canon = clang_getCanonicalType(pt);
        long long v = clang_Cursor_getTemplateArgumentValue(spec, (unsigned)i);
        if (!clang_Cursor_isNull(param) && is_bool_type(pt)) {
            ks_buf_puts(&b, v ? "true" : "false");
        } else if (!clang_Cursor_isNull(param) && canon.kind == CXType_Enum) {
            enum_find ef = {v, clang_getNullCursor()};
            clang_visitChildren(clang_getTypeDeclaration(canon), find_enumerator, &ef);
            if (clang_Cursor_isNull(ef.found)) {
                ks_buf_printf(&b, "%lld", v);
            } else {
                char *q = ks_qualified_name(ef.found);
                ks_buf_puts(&b, q);
                free(q);
            }
        } else if (canon.kind == CXType_UInt || canon.kind == CXType_ULong ||
                   canon.kind == CXType_ULongLong || canon.kind == CXType_UShort ||
                   canon.kind == CXType_UChar) {
            ks_buf_printf(&b, "%llu", clang_Cursor_getTemplateArgumentUnsignedValue(spec, (unsigned)i));
        } else {
            ks_buf_printf(&b, "%lld", v);
        }
    }
    return ks_buf_take(&b);
}

static void note_host_used(walk_ctx *w, CXCursor tmpl)
{
    w->host_used = ks_xrealloc(w->host_used, (w->nhost_used + 1) * sizeof *w->host_used);
    w->host_used[w->nhost_used++] = ks_qualified_name(tmpl);
}

static enum CXChildVisitResult find_launches(CXCursor c, CXCursor parent, CXClientData data);

/* A reference to a function: a kernel template's specialization becomes a
 * kernel; a host function template's specialization is followed into its
 * instantiated body, where its own launches are. */
static void handle_reference(walk_ctx *w, CXCursor ref)
{
    enum CXCursorKind rk = clang_getCursorKind(ref);
    if (rk != CXCursor_FunctionDecl && rk != CXCursor_CXXMethod)
        return;
    CXCursor tmpl = clang_getSpecializedCursorTemplate(ref);
    if (clang_Cursor_isNull(tmpl))
        return;
    char *symbol = ks_take(clang_Cursor_getMangling(ref));
    int again = !*symbol || seen_symbol(w, symbol);
    free(symbol);
    if (again)
        return;
    if (!ks_cursor_is_kernel(ref)) {
        const file_class *fc = classify(w, clang_getCursorLocation(tmpl));
        if (fc && fc->project)
            clang_visitChildren(ref, find_launches, w);
        return;
    }
    const file_class *fc = classify(w, clang_getCursorLocation(tmpl));
    if (!fc || !fc->kernels)
        return;
    note_host_used(w, tmpl);
    int bad;
    char *args = template_args_text(ref, &bad);
    if (!args) {
        char *q = ks_qualified_name(ref);
        char *sym = ks_take(clang_Cursor_getMangling(ref));
        char *why = ks_unspellable_argument(ref, bad);
        walk_diag(w, ref, "error", "template kernel '%s' is instantiated by host code, but %s; "
                  "kstub names a stub after its template arguments and cannot name this one. "
                  "Launch an instance whose arguments are types, integers, bools or enumerators "
                  "(e.g. a tag type or an int in place of the function), or leave it out with "
                  "'// kstub:skip %s'", q, why, sym);
        free(why);
        free(sym);
        free(q);
        return;
    }
    w->current_args = args;
    add_kernel(w, ref);
    w->current_args = NULL;
    free(args);
}

static enum CXChildVisitResult find_launches(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    walk_ctx *w = data;
    CXSourceLocation loc = clang_getCursorLocation(c);
    if (clang_Location_isInSystemHeader(loc))
        return CXChildVisit_Continue;
    const file_class *fc = classify(w, loc);
    if (fc && !fc->project)
        return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr)
        handle_reference(w, clang_getCursorReferenced(c));
    return CXChildVisit_Recurse;
}

static int host_used(const walk_ctx *w, const char *qname)
{
    for (size_t i = 0; i < w->nhost_used; i++)
        if (strcmp(w->host_used[i], qname) == 0)
            return 1;
    return 0;
}

static void note_uninstantiated(walk_ctx *w)
{
    for (size_t t = 0; t < w->ntemplates; t++) {
        int used = host_used(w, w->templates[t]);
        for (size_t i = 0; i < w->ninst; i++)
            used |= w->inst_used_by[i] && strcmp(w->inst_used_by[i], w->templates[t]) == 0;
        if (!used) {
            const char *colon = strrchr(w->templates[t], ':');
            ks_note_at(w->s.opts->input, 0, 0, "template kernel '%s' is never explicitly "
                       "instantiated ('template __global__ void %s<...>(...);') nor launched "
                       "from host code kstub sees; skipped", w->templates[t],
                       colon ? colon + 1 : w->templates[t]);
        }
    }
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
static int resolve_bounds(walk_ctx *w, const char *text, size_t size)
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

/* ---- directives ---------------------------------------------------------------------------------- */

/* "kstub:name KERNEL = C_NAME" becomes a rename for naming.c; "kstub:skip
 * KERNEL" drops a kernel (by qualified name or symbol) during the walk. */
static void read_directives(walk_ctx *w, const ks_source *src)
{
    ks_directive *d;
    size_t n = ks_source_directives(src, &d);
    const char *input = w->s.opts->input;
    ks_model *m = w->model;
    w->skips = ks_xmalloc((n + 1) * sizeof *w->skips);
    w->skip_hits = ks_xmalloc((n + 1) * sizeof *w->skip_hits);
    w->mirrors = ks_xmalloc((n + 1) * sizeof *w->mirrors);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(d[i].word, "name") == 0) {
            char *eq = strrchr(d[i].rest, '=');
            if (!eq) {
                ks_error_at(input, d[i].line, d[i].col, "expected 'kstub:name KERNEL = C_NAME'");
                continue;
            }
            *eq = '\0';
            char *who = d[i].rest, *to = eq + 1;
            for (char *e = who + strlen(who); e > who && isspace((unsigned char)e[-1]);)
                *--e = '\0';
            while (isspace((unsigned char)*to))
                to++;
            m->renames = ks_xrealloc(m->renames, (m->nrenames + 1) * sizeof *m->renames);
            ks_rename *r = &m->renames[m->nrenames++];
            memset(r, 0, sizeof *r);
            r->kernel = ks_xstrdup(who);
            r->c_name = ks_xstrdup(to);
            r->line = d[i].line;
            r->col = d[i].col;
        } else if (strcmp(d[i].word, "skip") == 0) {
            w->skips[w->nskips] = d[i];
            w->skip_hits[w->nskips++] = 0;
            d[i].word = d[i].rest = NULL;          /* moved */
        } else if (strcmp(d[i].word, "mirror") == 0) {
            w->mirrors[w->nmirrors++] = d[i];
            d[i].word = d[i].rest = NULL;          /* moved */
        } else if (strcmp(d[i].word, "extent") == 0) {
            /* extent.c reads these once the kernels are known */
        } else {
            ks_error_at(input, d[i].line, d[i].col, "unknown directive 'kstub:%s' (kstub:name, "
                        "kstub:skip, kstub:mirror, kstub:extent)", d[i].word);
        }
    }
    ks_directive_free(d, n);
}

/* "kstub:mirror TYPE": the generated header mirrors TYPE (its qualified
 * name) even when it could include the application's header for it. */
static void apply_mirrors(walk_ctx *w)
{
    ks_model *m = w->model;
    for (size_t i = 0; i < w->nmirrors; i++) {
        int hit = 0;
        for (size_t j = 0; j < m->ndefs; j++)
            if (!m->defs[j].member && strcmp(m->defs[j].qname, w->mirrors[i].rest) == 0)
                hit = m->defs[j].mirror = 1;
        if (!hit)
            ks_error_at(w->s.opts->input, w->mirrors[i].line, w->mirrors[i].col, "kstub:mirror '%s' "
                        "names no type a kernel takes (give the qualified name, as 'ns::Params')",
                        w->mirrors[i].rest);
    }
}

static void check_skips(walk_ctx *w)
{
    for (size_t i = 0; i < w->nskips; i++)
        if (!w->skip_hits[i])
            ks_error_at(w->s.opts->input, w->skips[i].line, w->skips[i].col, "kstub:skip '%s' "
                        "matches no kernel (give the qualified name as in the manifest, or the "
                        "symbol)", w->skips[i].rest);
}

/* ---- explicit instantiations in headers ------------------------------------------------------ */

/* The namespaces around a header's explicit instantiation, outermost first,
 * as "namespace a { namespace b { " and its closing " } }"; -1 when it does
 * not lie at namespace scope. */
static int namespaces_at(walk_ctx *w, CXFile file, size_t offset, ks_buf *open, ks_buf *close)
{
    CXCursor at = clang_getCursor(w->s.tu, clang_getLocationForOffset(w->s.tu, file, (unsigned)offset));
    char *names[64];
    int n = 0, ok = 1;
    for (CXCursor c = at; !clang_Cursor_isNull(c) && clang_getCursorKind(c) != CXCursor_TranslationUnit;
         c = clang_getCursorSemanticParent(c)) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_LinkageSpec)
            continue;
        if (k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl ||
            k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization ||
            k == CXCursor_CompoundStmt || n == 64) {
            ok = 0;
            break;
        }
        if (k != CXCursor_Namespace)
            continue;        /* the instantiation's own declaration or a name in it */
        names[n++] = ks_take(clang_getCursorSpelling(c));
    }
    for (int i = n - 1; i >= 0; i--) {
        if (ok) {
            ks_buf_printf(open, "namespace %s { ", names[i]);
            ks_buf_puts(close, " }");
        }
        free(names[i]);
    }
    return ok ? 0 : -1;
}

static enum CXChildVisitResult visit_injected(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (!is_main(c))
        return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec)
        return CXChildVisit_Recurse;
    if (k == CXCursor_TypedefDecl) {
        walk_ctx *w = data;
        CXCursor member = ks_classinst_member(c, w->ncls);
        if (clang_Cursor_isNull(member))
            handle_instantiation(w, c);
        else
            handle_reference(w, member);
    }
    return CXChildVisit_Continue;
}

/* Explicit instantiations written in the headers whose kernels count: the
 * input's are referenced in place (inject_instantiations), a header's from
 * the end of the input, in the namespaces it was written in, read after one
 * reparse, with members (classinst.c's references to the members of the
 * input's class instantiations, or NULL). Returns 0, or -1 after the reparse
 * reported errors. */
static int header_instantiations(walk_ctx *w, const char *base, size_t base_len, const char *members)
{
    ks_buf add = {0};
    if (members)
        ks_buf_puts(&add, members);
    size_t before = w->ninst, nfiles = w->nfiles;
    for (size_t f = 0; f < nfiles; f++) {
        file_class fc = w->files[f];
        CXSourceLocation start = clang_getLocationForOffset(w->s.tu, fc.file, 0);
        if (!fc.kernels || clang_Location_isFromMainFile(start))
            continue;
        size_t size = 0;
        const char *t = clang_getFileContents(w->s.tu, fc.file, &size);
        if (!t)
            continue;
        ks_source hs;
        ks_source_scan(&hs, t, size);
        ks_explicit_inst *hi;
        size_t n = ks_source_instantiations(&hs, &hi);
        for (size_t j = 0; j < n; j++) {
            ks_buf open = {0}, close = {0};
            if (namespaces_at(w, fc.file, hi[j].end - 1, &open, &close) != 0) {
                unsigned line, col;
                ks_source_position(&hs, hi[j].end - 1, &line, &col);
                ks_note_at(fc.name, line, col, "explicit instantiation of '%s<%s>' is not at namespace "
                           "scope; kstub does not follow it", hi[j].qname, hi[j].args);
            } else {
                ks_buf_printf(&add, "%stypedef decltype(static_cast<%s (*)(%s)>(&%s<%s>)) "
                              "kstub_i%zu;%s\n", open.data ? open.data : "", hi[j].ret, hi[j].params,
                              hi[j].qname, hi[j].args, w->ninst, close.data ? close.data : "");
                w->inst = ks_xrealloc(w->inst, (w->ninst + 1) * sizeof *w->inst);
                w->inst_used_by = ks_xrealloc(w->inst_used_by, (w->ninst + 1) * sizeof *w->inst_used_by);
                w->inst[w->ninst] = hi[j];
                memset(&hi[j], 0, sizeof hi[j]);
                w->inst_used_by[w->ninst++] = NULL;
            }
            free(open.data);
            free(close.data);
        }
        ks_explicit_inst_free(hi, n);
        ks_source_free(&hs);
    }
    if (w->ninst == before && !members) {
        free(add.data);
        return 0;
    }
    ks_buf src = {0};
    ks_buf_put(&src, base, base_len);
    ks_buf_puts(&src, "\n");
    ks_buf_put(&src, add.data, add.len);
    free(add.data);
    /* CXFile handles do not outlive a reparse. */
    for (size_t i = 0; i < w->nfiles; i++)
        free(w->files[i].name);
    w->nfiles = 0;
    int rc = ks_session_reparse(&w->s, src.data, src.len);
    free(src.data);
    if (rc != 0) {
        ks_note_at(w->s.opts->input, 0, 0, "while reading the explicit instantiations of its headers "
                   "and class templates");
        return -1;
    }
    clang_visitChildren(clang_getTranslationUnitCursor(w->s.tu), visit_injected, w);
    return 0;
}

/* A header named with --kernels-in that the input never includes is a
 * mistake worth an error: its kernels would silently get no stubs. */
static void check_headers_used(walk_ctx *w)
{
    for (size_t i = 0; i < w->nnamed; i++) {
        int found = 0;
        for (size_t f = 0; f < w->nfiles && !found; f++) {
            char *name = ks_take(clang_getFileName(w->files[f].file));
            char *real = realpath(name, NULL);
            found = real && strcmp(real, w->named[i]) == 0;
            free(real);
            free(name);
        }
        if (!found)
            ks_error_at(w->s.opts->input, 0, 0, "--kernels-in '%s': the input does not include "
                        "it (or declares nothing in it)", w->named[i]);
    }
}

/* ---- entry point ------------------------------------------------------------------------------------ */

/* Each explicit instantiation gets " typedef decltype(static_cast<RET
 * (*)(PARAMS)>(&NAME<ARGS>)) kstub_iN;" right after its ';', in the same
 * scope and on the same line (so no line or earlier column moves). The cast
 * picks the right overload; RET is the return type as written (a host
 * function template returning int is instantiated the same way). */
static char *inject_instantiations(const ks_source *src, const ks_explicit_inst *in, size_t n,
                                   const ks_class_inst *cls, size_t ncls)
{
    ks_buf out = {0};
    size_t copied = 0;
    for (size_t i = 0, c = 0; i < n || c < ncls;) {
        if (c < ncls && (i == n || cls[c].end < in[i].end)) {
            ks_buf_put(&out, src->text + copied, cls[c].end - copied);
            char *alias = ks_classinst_inject(&cls[c], c);
            ks_buf_puts(&out, alias);
            free(alias);
            copied = cls[c++].end;
            continue;
        }
        ks_buf_put(&out, src->text + copied, in[i].end - copied);
        ks_buf_printf(&out, " typedef decltype(static_cast<%s (*)(%s)>(&%s<%s>)) kstub_i%zu;",
                      in[i].ret, in[i].params, in[i].qname, in[i].args, i);
        copied = in[i++].end;
    }
    ks_buf_put(&out, src->text + copied, src->size - copied);
    return ks_buf_take(&out);
}

/* Everything the walk holds besides the model, freed once. */
static void walk_ctx_free(walk_ctx *w)
{
    ks_session_close(&w->s);
    for (size_t i = 0; i < w->nfiles; i++)
        free(w->files[i].name);
    free(w->files);
    for (size_t i = 0; i < w->nseen; i++)
        free(w->seen[i]);
    free(w->seen);
    for (size_t i = 0; i < w->nhost_used; i++)
        free(w->host_used[i]);
    free(w->host_used);
    for (size_t i = 0; i < w->nnamed; i++)
        free(w->named[i]);
    free(w->named);
    free(w->cuda_real);
    for (size_t i = 0; i < w->ntemplates; i++)
        free(w->templates[i]);
    free(w->templates);
    for (size_t i = 0; i < w->ninst; i++)
        free(w->inst_used_by[i]);
    free(w->inst_used_by);
    ks_explicit_inst_free(w->inst, w->ninst);
    ks_class_inst_free(w->cls, w->ncls);
    for (size_t i = 0; i < w->nlbs; i++) {
        free(w->lbs[i].symbol);
        free(w->lbs[i].ns);
        free(w->lbs[i].max_expr);
        free(w->lbs[i].min_expr);
    }
    free(w->lbs);
    ks_directive_free(w->skips, w->nskips);
    ks_directive_free(w->mirrors, w->nmirrors);
    free(w->skip_hits);
}

/* The --kernels-in headers, resolved. */
static void resolve_named(walk_ctx *w, const ks_options *opts)
{
    w->named = ks_xmalloc((opts->nkernel_headers + 1) * sizeof *w->named);
    for (size_t i = 0; i < opts->nkernel_headers; i++) {
        char *real = realpath(opts->kernel_headers[i], NULL);
        if (!real)
            ks_error_at(opts->kernel_headers[i], 0, 0, "--kernels-in: cannot open: %s",
                        strerror(errno));
        else
            w->named[w->nnamed++] = real;
    }
}

/* The walk over a clean parse: kernels, instantiations, bounds, directives. */
static void walk_unit(walk_ctx *w, const ks_source *src, const char *base, int errors_before)
{
    CXCursor root = clang_getTranslationUnitCursor(w->s.tu);
    clang_visitChildren(root, visit, w);
    clang_visitChildren(root, find_launches, w);
    check_headers_used(w);
    if (ks_error_count() == errors_before) {
        char *members = ks_classinst_references(&w->s, src, w->cls, w->ncls);
        header_instantiations(w, base, strlen(base), members);
        free(members);
    }
    note_uninstantiated(w);
    if (w->nlbs && ks_error_count() == errors_before)
        resolve_bounds(w, base, strlen(base));
    check_skips(w);
    apply_mirrors(w);
    ks_extents_apply(w->s.opts->input, src, w->model);
}

int ks_parse(const ks_options *opts, ks_model *model)
{
    int errors_before = ks_error_count();
    walk_ctx w;
    memset(&w, 0, sizeof w);
    w.model = model;
    memset(model, 0, sizeof *model);
    model->source = ks_xstrdup(opts->input);

    size_t text_size = 0;
    char *text = ks_read_file(opts->input, &text_size);
    if (!text) {
        ks_error_at(opts->input, 0, 0, "cannot open: %s", ks_file_error());
        return -1;
    }
    ks_source src;
    ks_source_scan(&src, text, text_size);
    w.ninst = ks_source_instantiations(&src, &w.inst);
    w.inst_used_by = ks_xmalloc((w.ninst + 1) * sizeof *w.inst_used_by);
    memset(w.inst_used_by, 0, (w.ninst + 1) * sizeof *w.inst_used_by);
    w.ncls = ks_source_class_instantiations(&src, &w.cls);
    char *injected = w.ninst || w.ncls ? inject_instantiations(&src, w.inst, w.ninst, w.cls, w.ncls) : NULL;

    w.s.opts = opts;
    read_directives(&w, &src);
    w.cuda_real = opts->cuda_path ? realpath(opts->cuda_path, NULL) : NULL;
    if (opts->kernels_in == KS_KERNELS_NAMED)
        resolve_named(&w, opts);
    if (ks_error_count() == errors_before &&
        ks_session_open(&w.s, opts, injected, injected ? strlen(injected) : 0) == 0) {
        walk_unit(&w, &src, injected ? injected : text, errors_before);
        /* e.g. the depfile writer, which reads the inclusions */
        if (ks_error_count() == errors_before && opts->tu_hook)
            opts->tu_hook(w.s.tu, opts->tu_hook_data);
    }
    walk_ctx_free(&w);
    ks_source_free(&src);
    free(injected);
    free(text);
    return ks_error_count() == errors_before ? 0 : -1;
}
