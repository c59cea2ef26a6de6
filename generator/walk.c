/*
 * walk.c — the front end's walk: finds every kernel of the input (plain
 * definitions, and explicit instantiations of template kernels), reads each
 * one's parameters through typemap.c and its __launch_bounds__, and fills the
 * model. ks_parse() runs the whole front end, naming included.
 *
 * libclang shows no cursor for an explicit instantiation
 * ("template __global__ void k<float, 4>(float *, int);"). So source.c finds
 * them in the text, a reference to each specialization is appended to the
 * source in memory ("typedef decltype(&::ns::k<float, 4>) kstub_iN;"), and
 * that reference leads to a declaration with concrete parameter types and
 * the device compiler's mangled name, in the same parse.
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
    const ks_explicit_inst *current;   /* the instantiation being added, or NULL */
    pending_bounds *lbs;
    size_t nlbs;
    ks_directive *skips;         /* "kstub:skip" directives, and how often each matched */
    unsigned *skip_hits;
    size_t nskips;
} walk_ctx;

/* A kernel a "kstub:skip" names (qualified name or symbol) is left out
 * before its parameters are looked at: a kernel kstub cannot type can be
 * skipped. */
static int skipped(walk_ctx *w, const char *name, const char *symbol, CXCursor fn)
{
    for (size_t i = 0; i < w->nskips; i++)
        if (strcmp(w->skips[i].rest, name) == 0 || strcmp(w->skips[i].rest, symbol) == 0) {
            w->skip_hits[i]++;
            ks_cursor_note(&w->s, fn, "kernel '%s' left out (kstub:skip)", name);
            return 1;
        }
    return 0;
}

/* ---- one kernel ------------------------------------------------------------------------------ */

/* The declaration as written, up to its body, on one line. */
static char *signature_text(walk_ctx *w, CXCursor fn)
{
    CXToken *toks;
    unsigned n;
    ks_cursor_tokens(&w->s, fn, &toks, &n);
    ks_buf b = {0};
    int depth = 0;
    for (unsigned i = 0; i < n; i++) {
        char *t = ks_take(clang_getTokenSpelling(w->s.tu, toks[i]));
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
        } else if (nvals >= 1 && !w->current) {
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
            ks_cursor_note(&w->s, fn, "kernel '%s': __launch_bounds__ of a template instantiation "
                           "are not recorded unless they are integer literals, so the runtime "
                           "cannot check the block size against them", k->name);
        }
        for (int v = 0; v < nvals; v++)
            free(texts[v]);
        break;
    }
    clang_disposeTokens(w->s.tu, toks, n);
}

static void add_kernel(walk_ctx *w, CXCursor fn)
{
    char *name = w->current ? NULL : ks_qualified_name(fn);
    char *base = w->current ? ks_qualified_name(fn) : NULL;
    char *display = name ? ks_xstrdup(name) : ks_xasprintf("%s<%s>", base, w->current->args);
    unsigned line, col;
    ks_cursor_location(fn, &line, &col);

    enum CXLinkageKind linkage = clang_getCursorLinkage(fn);
    if (linkage == CXLinkage_Internal || linkage == CXLinkage_UniqueExternal) {
        ks_cursor_note(&w->s, fn, "kernel '%s' has internal linkage (static or in an anonymous "
                       "namespace): nvcc gives it a per-file symbol and no other file can launch "
                       "it; skipped", display);
        goto out;
    }
    if (clang_Cursor_isVariadic(fn)) {
        ks_cursor_error(&w->s, fn, "kernel '%s' is variadic, which CUDA does not allow", display);
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
    k.template_args = w->current ? ks_xstrdup(w->current->args) : NULL;
    k.line = line;
    k.col = col;
    k.symbol = ks_take(clang_Cursor_getMangling(fn));
    k.signature = signature_text(w, fn);
    launch_bounds(w, fn, &k);

    int nargs = clang_Cursor_getNumArguments(fn);
    long end = 0;
    int bad = 0;
    for (int i = 0; i < nargs; i++) {
        CXCursor arg = clang_Cursor_getArgument(fn, (unsigned)i);
        CXType t = clang_getCursorType(arg);
        char *pname = ks_take(clang_getCursorSpelling(arg));
        ks_type type;
        char *why = ks_typemap_param(&w->s, w->model, t, &type);
        if (why) {
            ks_cursor_error(&w->s, *pname ? arg : fn, "kernel '%s', parameter %d '%s': %s "
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
            ks_cursor_error(&w->s, arg, "kernel '%s', parameter %d '%s': the size or alignment of "
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
    w->current = &w->inst[idx];
    add_kernel(w, fn);
    w->current = NULL;
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

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    walk_ctx *w = data;
    if (!clang_Location_isFromMainFile(clang_getCursorLocation(c)))
        return CXChildVisit_Continue;
    switch (clang_getCursorKind(c)) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
        return CXChildVisit_Recurse;
    case CXCursor_FunctionDecl:
        /* Only definitions: a declaration alone puts nothing in the image. */
        if (is_definition(w, c) && ks_cursor_is_kernel(c))
            add_kernel(w, c);
        break;
    case CXCursor_TypedefDecl:
        handle_instantiation(w, c);
        break;
    case CXCursor_FunctionTemplate:
        if (ks_cursor_is_kernel(c)) {
            w->templates = ks_xrealloc(w->templates, (w->ntemplates + 1) * sizeof *w->templates);
            w->templates[w->ntemplates++] = ks_qualified_name(c);
        }
        break;
    default:
        break;
    }
    return CXChildVisit_Continue;
}

static void note_uninstantiated(walk_ctx *w)
{
    for (size_t t = 0; t < w->ntemplates; t++) {
        int used = 0;
        for (size_t i = 0; i < w->ninst; i++)
            used |= w->inst_used_by[i] && strcmp(w->inst_used_by[i], w->templates[t]) == 0;
        if (!used) {
            const char *colon = strrchr(w->templates[t], ':');
            ks_note_at(w->s.opts->input, 0, 0, "template kernel '%s' is never explicitly "
                       "instantiated ('template __global__ void %s<...>(...);'); skipped",
                       w->templates[t], colon ? colon + 1 : w->templates[t]);
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
            r->kernel = ks_xstrdup(who);
            r->c_name = ks_xstrdup(to);
            r->line = d[i].line;
            r->col = d[i].col;
        } else if (strcmp(d[i].word, "skip") == 0) {
            w->skips[w->nskips] = d[i];
            w->skip_hits[w->nskips++] = 0;
            d[i].word = d[i].rest = NULL;          /* moved */
        } else {
            ks_error_at(input, d[i].line, d[i].col, "unknown directive 'kstub:%s' (kstub:name, "
                        "kstub:skip)", d[i].word);
        }
    }
    ks_directive_free(d, n);
}

static void check_skips(walk_ctx *w)
{
    for (size_t i = 0; i < w->nskips; i++)
        if (!w->skip_hits[i])
            ks_error_at(w->s.opts->input, w->skips[i].line, w->skips[i].col, "kstub:skip '%s' "
                        "matches no kernel (give the qualified name as in the manifest, or the "
                        "symbol)", w->skips[i].rest);
}

/* ---- entry point ------------------------------------------------------------------------------------ */

/* Each explicit instantiation gets " typedef decltype(static_cast<void
 * (*)(PARAMS)>(&NAME<ARGS>)) kstub_iN;" right after its ';', in the same
 * scope and on the same line (so no line or earlier column moves). The cast
 * picks the right overload. */
static char *inject_instantiations(const ks_source *src, const ks_explicit_inst *in, size_t n)
{
    ks_buf out = {0};
    size_t copied = 0;
    for (size_t i = 0; i < n; i++) {
        ks_buf_put(&out, src->text + copied, in[i].end - copied);
        ks_buf_printf(&out, " typedef decltype(static_cast<void (*)(%s)>(&%s<%s>)) kstub_i%zu;",
                      in[i].params, in[i].qname, in[i].args, i);
        copied = in[i].end;
    }
    ks_buf_put(&out, src->text + copied, src->size - copied);
    return ks_buf_take(&out);
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
        ks_error_at(opts->input, 0, 0, "cannot open: %s", strerror(errno));
        return ks_error_count() - errors_before;
    }
    ks_source src;
    ks_source_scan(&src, text, text_size);
    w.ninst = ks_source_instantiations(&src, &w.inst);
    w.inst_used_by = ks_xmalloc((w.ninst + 1) * sizeof *w.inst_used_by);
    memset(w.inst_used_by, 0, (w.ninst + 1) * sizeof *w.inst_used_by);
    char *injected = w.ninst ? inject_instantiations(&src, w.inst, w.ninst) : NULL;

    w.s.opts = opts;
    read_directives(&w, &src);
    if (ks_session_open(&w.s, opts, injected, injected ? strlen(injected) : 0) == 0) {
        clang_visitChildren(clang_getTranslationUnitCursor(w.s.tu), visit, &w);
        note_uninstantiated(&w);
        if (w.nlbs && ks_error_count() == errors_before) {
            const char *base = injected ? injected : text;
            resolve_bounds(&w, base, strlen(base));
        }
        check_skips(&w);
        if (ks_error_count() == errors_before)
            ks_name_model(opts, model);
        /* e.g. the depfile writer, which reads the inclusions */
        if (ks_error_count() == errors_before && opts->tu_hook)
            opts->tu_hook(w.s.tu, opts->tu_hook_data);
    }
    ks_session_close(&w.s);
    for (size_t i = 0; i < w.ntemplates; i++)
        free(w.templates[i]);
    free(w.templates);
    for (size_t i = 0; i < w.ninst; i++)
        free(w.inst_used_by[i]);
    free(w.inst_used_by);
    ks_explicit_inst_free(w.inst, w.ninst);
    for (size_t i = 0; i < w.nlbs; i++) {
        free(w.lbs[i].symbol);
        free(w.lbs[i].ns);
        free(w.lbs[i].max_expr);
        free(w.lbs[i].min_expr);
    }
    free(w.lbs);
    ks_directive_free(w.skips, w.nskips);
    free(w.skip_hits);
    ks_source_free(&src);
    free(injected);
    free(text);
    return ks_error_count() - errors_before;
}
