/*
 * source.c — what libclang shows of a file's text but no cursor stands for:
 * explicit instantiations (no cursor), those a macro writes, "kstub:"
 * directives in comments, whether a body follows a declaration under
 * --skip-bodies.
 *
 * There is one preprocessor here, clang's (DESIGN.md contract 12). What is
 * code comes from libclang: the file's tokens (clang_tokenize knows raw
 * strings, user-defined literals, digraphs and line splices), less those
 * inside its skipped ranges (inactive #if branches) and inside preprocessor
 * directives (the extents clang_annotateTokens gives each directive). Which
 * macro an invocation used is the preprocessing record's: each expansion
 * at the file's top level refers to the definition clang used there (so
 * #if, #else, #undef and redefinition are clang's doing), and the
 * instantiations it writes are read from that definition's own tokens,
 * arguments substituted. Only macros invoked by that expansion in turn are
 * looked up here: the last definition of the name the record holds before
 * the invocation, unless an #undef of the same file lies between them.
 */
#include "front.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ------------------------------------------------------------------------------------ */

static void push(ks_rtok **a, size_t *n, size_t *cap, ks_rtok t)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *a = ks_xrealloc(*a, *cap * sizeof **a);
    }
    (*a)[(*n)++] = t;
}

static int spelled(const ks_rtok *t, const char *word)
{
    size_t n = strlen(word);
    return t->n == n && memcmp(t->s, word, n) == 0;
}

/* The one-character punctuator a token is ('[' for "<:" too), or 0. */
static char punct(const ks_rtok *t)
{
    if (t->kind != CXToken_Punctuation)
        return 0;
    if (t->n == 1)
        return t->s[0];
    if (t->n == 2) {
        static const char *const digraphs[] = {"<:[", ":>]", "<%{", "%>}", NULL};
        for (const char *const *d = digraphs; *d; d++)
            if (t->s[0] == (*d)[0] && t->s[1] == (*d)[1])
                return (*d)[2];
    }
    return 0;
}

static int is_word(const ks_rtok *t)
{
    return t->kind == CXToken_Identifier || t->kind == CXToken_Keyword;
}

/* Tokens [from, to) as text, one space where white space stood. */
static void tokens_put(ks_buf *b, const ks_rtok *t, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (i > from && t[i].space)
            ks_buf_puts(b, " ");
        ks_buf_put(b, t[i].s, t[i].n);
    }
}

static char *tokens_text(const ks_rtok *t, size_t from, size_t to)
{
    ks_buf b = {0};
    tokens_put(&b, t, from, to);
    if (!b.data)
        return ks_xstrdup("");
    return ks_buf_take(&b);
}

/* ---- explicit instantiations in a token list ------------------------------------------------ */

/* Index of the token closing the bracket opened at token i ('<' or '('),
 * or end. A ">>" closing two angles closes at once: *half says that only
 * its first '>' belongs inside (set for '<' only). */
static size_t matching(const ks_rtok *t, size_t i, size_t end, int *half)
{
    int angle = 0, paren = 0;
    char open = punct(&t[i]);
    *half = 0;
    for (size_t j = i; j < end; j++) {
        char c = punct(&t[j]);
        if (c == '(' || c == '[')
            paren++;
        else if (c == ')' || c == ']')
            paren--;
        else if (c == '<' && paren == 0)
            angle++;
        else if (c == '>' && paren == 0)
            angle--;
        else if (paren == 0 && t[j].kind == CXToken_Punctuation && spelled(&t[j], ">>")) {
            if (open == '<' && angle == 2) {
                *half = 1;
                return j;
            }
            if (open == '<' && angle < 2)
                return end;
            angle -= 2;
            continue;
        }
        if ((open == '<' && angle == 0 && paren == 0) || (open == '(' && paren == 0))
            return j;
    }
    return end;
}

/* The return type: tokens [from, to) before the name less the specifiers
 * that are no part of a type, or what follows "->" in [after, end) when it
 * is written "auto NAME<...>(...) -> T"; "void" when nothing is left. */
static char *return_text(const ks_rtok *t, size_t from, size_t to, size_t after, size_t end)
{
    static const char *const specifiers[] = {"__global__", "__host__", "__device__", "__forceinline__",
                                             "__noinline__", "__inline__", "inline", "static",
                                             "extern", "constexpr", NULL};
    ks_buf b = {0};
    for (size_t i = from; i < to; i++) {
        int skip = 0;
        for (const char *const *w = specifiers; *w && !skip; w++)
            skip = spelled(&t[i], *w);
        if (skip)
            continue;
        if (b.len && t[i].space)
            ks_buf_puts(&b, " ");
        ks_buf_put(&b, t[i].s, t[i].n);
    }
    char *ret = b.data ? ks_buf_take(&b) : NULL;
    if (ret && strcmp(ret, "auto") == 0)
        for (size_t i = after; i < end; i++)
            if (t[i].kind == CXToken_Punctuation && spelled(&t[i], "->")) {
                free(ret);
                ret = tokens_text(t, i + 1, end);
                break;
            }
    if (!ret || !*ret) {
        free(ret);
        ret = ks_xstrdup("void");
    }
    return ret;
}

static void add_inst(ks_explicit_inst **out, size_t *n, const ks_explicit_inst *in)
{
    if (*n == 0)
        *out = ks_xmalloc(4 * sizeof **out);
    else if (*n >= 4 && (*n & (*n - 1)) == 0)
        *out = ks_xrealloc(*out, *n * 2 * sizeof **out);
    (*out)[(*n)++] = *in;
}

/* Does token i start a declaration: the first, or after ';', '{' or '}'. */
static int at_declaration(const ks_rtok *t, size_t i)
{
    char c = i ? punct(&t[i - 1]) : ';';
    return c == ';' || c == '{' || c == '}';
}

/* "template [specifiers] RET NAME<ARGS>(PARAMS);" in t[0, n); skip[i] set
 * for tokens inside a macro's invocation (a "template" there is the
 * expansion's to find). Each found gets
 * start and end from its first and last token; with decl_only, only those
 * that begin a declaration. */
static void find_instantiations(const ks_rtok *t, size_t n, const unsigned char *skip, int decl_only,
                                ks_explicit_inst **out, size_t *count)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if ((skip && skip[i]) || !spelled(&t[i], "template") || punct(&t[i + 1]) == '<' ||
            (i > 0 && spelled(&t[i - 1], "extern")) || (decl_only && !at_declaration(t, i)))
            continue;
        /* its other tokens may be macro invocations clang expands in the
         * reference too (__global__, an attribute macro); not its ';' */
        size_t end = i + 1;
        while (end < n && punct(&t[end]) != ';' && punct(&t[end]) != '{')
            end++;
        if (end >= n || punct(&t[end]) != ';' || (skip && skip[end]))
            continue;
        size_t k;
        for (k = i + 1; k + 1 < end; k++)
            if (is_word(&t[k]) && punct(&t[k + 1]) == '<')
                break;
        if (k + 1 >= end)
            continue;
        size_t name_start = k;
        while (name_start >= i + 3 && spelled(&t[name_start - 1], "::") && is_word(&t[name_start - 2]))
            name_start -= 2;
        if (name_start >= i + 2 && spelled(&t[name_start - 1], "::"))
            name_start--;
        int half, phalf;
        size_t close = matching(t, k + 1, end, &half);
        if (close >= end || close + 1 >= end || punct(&t[close + 1]) != '(')
            continue;
        size_t pclose = matching(t, close + 1, end, &phalf);
        if (pclose >= end)
            continue;
        ks_explicit_inst in;
        ks_buf a = {0};
        tokens_put(&a, t, k + 2, close);
        if (half)
            ks_buf_puts(&a, ">");
        in.qname = tokens_text(t, name_start, k + 1);
        in.args = a.data ? ks_buf_take(&a) : ks_xstrdup("");
        in.params = tokens_text(t, close + 2, pclose);
        in.ret = return_text(t, i + 1, name_start, pclose + 1, end);
        in.start = t[i].start;
        in.end = t[end].end;
        add_inst(out, count, &in);
    }
}

/* ---- the preprocessing record ------------------------------------------------------------------ */

typedef struct pp_def {
    CXCursor cursor;
    char *name;
    CXFile file;
    unsigned offset;
} pp_def;

typedef struct pp_exp {
    CXCursor cursor;
    unsigned start, end;         /* in the file read */
    size_t ndefs_before;         /* definitions the record holds before it */
} pp_exp;

typedef struct pp_record {
    CXFile file;                 /* the file read */
    pp_def *defs;
    size_t ndefs, cdefs;
    pp_exp *exps;
    size_t nexps, cexps;
} pp_record;

static unsigned file_offset(CXSourceLocation loc, CXFile *file)
{
    unsigned off = 0;
    clang_getSpellingLocation(loc, file, NULL, NULL, &off);
    return off;
}

static enum CXChildVisitResult collect_record(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    pp_record *r = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_MacroDefinition) {
        if (r->ndefs == r->cdefs) {
            r->cdefs = r->cdefs ? r->cdefs * 2 : 64;
            r->defs = ks_xrealloc(r->defs, r->cdefs * sizeof *r->defs);
        }
        pp_def *d = &r->defs[r->ndefs++];
        d->cursor = c;
        d->name = ks_take(clang_getCursorSpelling(c));
        d->offset = file_offset(clang_getCursorLocation(c), &d->file);
    } else if (k == CXCursor_MacroExpansion) {
        CXFile f;
        CXSourceRange ext = clang_getCursorExtent(c);
        unsigned start = file_offset(clang_getRangeStart(ext), &f);
        if (!f || !clang_File_isEqual(f, r->file))
            return CXChildVisit_Continue;
        if (r->nexps == r->cexps) {
            r->cexps = r->cexps ? r->cexps * 2 : 16;
            r->exps = ks_xrealloc(r->exps, r->cexps * sizeof *r->exps);
        }
        pp_exp *e = &r->exps[r->nexps++];
        e->cursor = c;
        e->start = start;
        e->end = file_offset(clang_getRangeEnd(ext), NULL);
        e->ndefs_before = r->ndefs;
    }
    return CXChildVisit_Continue;
}

static void record_free(pp_record *r)
{
    for (size_t i = 0; i < r->ndefs; i++)
        free(r->defs[i].name);
    free(r->defs);
    free(r->exps);
}

/* ---- macro expansion, from the definitions' own tokens ---------------------------------------- */

/* A token list. */
typedef struct tlist {
    ks_rtok *t;
    size_t n, cap;
} tlist;

/* A macro's definition, tokenized. */
typedef struct mdef {
    size_t def;                  /* index in the record */
    int function_like, variadic;
    ks_rtok *params;             /* parameter names ("__VA_ARGS__" for "...") */
    size_t nparams;
    ks_rtok *body;
    size_t nbody;
} mdef;

/* Expansions nest at most KS_MACRO_DEPTH deep, and one invocation's stops
 * after KS_MACRO_TOKENS tokens in all (hostile text: each level may square it). */
#define KS_MACRO_DEPTH 16
#define KS_MACRO_TOKENS (1u << 18)

typedef struct expander {
    CXTranslationUnit tu;
    const pp_record *r;
    const ks_source *src;
    mdef **defs;                 /* tokenized so far */
    size_t ndefs;
    char **owned;                /* spellings made here (stringified, pasted, definitions') */
    size_t nowned;
    size_t spent;                /* tokens made for this invocation */
    size_t ndefs_before;         /* of the invocation being expanded */
    unsigned at;                 /* its offset */
    const mdef *active[KS_MACRO_DEPTH + 1];
} expander;

static const char *own(expander *x, char *s)
{
    x->owned = ks_xrealloc(x->owned, (x->nowned + 1) * sizeof *x->owned);
    x->owned[x->nowned++] = s;
    return s;
}

static const mdef *tokenized(expander *x, size_t def)
{
    for (size_t i = 0; i < x->ndefs; i++)
        if (x->defs[i]->def == def)
            return x->defs[i];
    CXCursor c = x->r->defs[def].cursor;
    CXToken *toks;
    unsigned n;
    clang_tokenize(x->tu, clang_getCursorExtent(c), &toks, &n);
    mdef m;
    memset(&m, 0, sizeof m);
    m.def = def;
    /* function-like: a '(' right after the name (clang_Cursor_isMacroFunctionLike
     * asks the macro the name has at the end of the file, none after an #undef) */
    size_t cap = 0, pcap = 0, i = 1;
    unsigned prev_end = 0;
    tlist params = {NULL, 0, 0}, body = {NULL, 0, 0};
    for (unsigned j = 0; j < n; j++) {
        CXSourceRange e = clang_getTokenExtent(x->tu, toks[j]);
        unsigned s = file_offset(clang_getRangeStart(e), NULL), end = file_offset(clang_getRangeEnd(e), NULL);
        ks_rtok t;
        t.start = x->at;
        t.end = x->at;
        t.kind = (unsigned char)clang_getTokenKind(toks[j]);
        t.space = j > 0 && s > prev_end;
        prev_end = end;
        if (t.kind == CXToken_Comment)
            continue;
        t.s = own(x, ks_take(clang_getTokenSpelling(x->tu, toks[j])));
        t.n = strlen(t.s);
        if (j == 0)
            continue;                              /* the name */
        if (j == 1 && !t.space && punct(&t) == '(') {
            m.function_like = 1;
            i = 2;                                 /* in the parameters */
            continue;
        }
        if (i == 2) {
            if (punct(&t) == ')')
                i = 3;
            else if (spelled(&t, "...")) {
                m.variadic = 1;                    /* "NAME..." names the rest NAME */
                if (!params.n || params.t[params.n - 1].kind == CXToken_Punctuation) {
                    t.s = "__VA_ARGS__";
                    t.n = 11;
                    t.kind = CXToken_Identifier;
                    push(&params.t, &params.n, &pcap, t);
                }
            } else {
                push(&params.t, &params.n, &pcap, t);
            }
            continue;
        }
        push(&body.t, &body.n, &cap, t);
    }
    clang_disposeTokens(x->tu, toks, n);
    /* parameters: the names, commas dropped */
    m.params = ks_xmalloc((params.n + 1) * sizeof *m.params);
    for (size_t p = 0; p < params.n; p++)
        if (is_word(&params.t[p]))
            m.params[m.nparams++] = params.t[p];
    free(params.t);
    if (body.n)
        body.t[0].space = 0;
    m.body = body.t;
    m.nbody = body.n;
    x->defs = ks_xrealloc(x->defs, (x->ndefs + 1) * sizeof *x->defs);
    x->defs[x->ndefs] = ks_xmalloc(sizeof m);
    *x->defs[x->ndefs] = m;
    return x->defs[x->ndefs++];
}

/* The definition of name live where the invocation being expanded stands:
 * the record's last before it, unless an #undef of the file read lies
 * between them. */
static const mdef *lookup(expander *x, const ks_rtok *name)
{
    if (name->kind != CXToken_Identifier)
        return NULL;
    for (size_t d = x->ndefs_before; d-- > 0;) {
        const pp_def *pd = &x->r->defs[d];
        if (strlen(pd->name) != name->n || memcmp(pd->name, name->s, name->n) != 0)
            continue;
        if (clang_File_isEqual(pd->file, x->r->file))
            for (size_t u = 0; u < x->src->nundefs; u++) {
                const ks_rtok *ut = &x->src->undefs[u];
                if (ut->start > pd->offset && ut->start < x->at && ut->n == name->n &&
                    memcmp(ut->s, name->s, name->n) == 0)
                    return NULL;
            }
        return tokenized(x, d);
    }
    return NULL;
}

static void tl_push(expander *x, tlist *l, ks_rtok t)
{
    x->spent++;
    push(&l->t, &l->n, &l->cap, t);
}

static void rescan(expander *x, const ks_rtok *in, size_t n, tlist *out, int depth);

/* The arguments of the invocation whose '(' is in[open]: split at the
 * commas outside inner parentheses. Returns the index of its ')', or n
 * when it is not closed. */
static size_t split_args(const ks_rtok *in, size_t n, size_t open, size_t **bounds, size_t *nargs)
{
    int depth = 0;
    size_t cap = 0;
    *bounds = NULL;
    *nargs = 0;
    for (size_t j = open; j < n; j++) {
        char c = punct(&in[j]);
        if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        if ((depth == 1 && c == ',') || depth == 0) {
            if (*nargs + 2 > cap) {
                cap = cap ? cap * 2 : 8;
                *bounds = ks_xrealloc(*bounds, cap * sizeof **bounds);
            }
            if (*nargs == 0)
                (*bounds)[0] = open + 1;
            (*bounds)[++*nargs] = j;             /* arg a: [bounds[a] (+1 past a comma), bounds[a+1]) */
            if (depth == 0)
                return j;
        }
    }
    free(*bounds);
    *bounds = NULL;
    *nargs = 0;
    return n;
}

/* Argument a as tokens [*from, *to) of in. */
static void arg_range(const size_t *bounds, size_t a, size_t *from, size_t *to)
{
    *from = a == 0 ? bounds[0] : bounds[a] + 1;
    *to = bounds[a + 1];
}

/* The parameter a body token names: its index, or -1. */
static long param_of(const mdef *m, const ks_rtok *t)
{
    if (!m->function_like || t->kind != CXToken_Identifier)
        return -1;
    for (size_t p = 0; p < m->nparams; p++)
        if (m->params[p].n == t->n && memcmp(m->params[p].s, t->s, t->n) == 0)
            return (long)p;
    return -1;
}

/* The tokens parameter p takes (the variadic rest: the remaining
 * arguments, commas included), as written. */
static void param_tokens(const mdef *m, long p, const ks_rtok *in, const size_t *bounds, size_t nargs,
                         size_t *from, size_t *to)
{
    if ((size_t)p >= nargs) {
        *from = *to = 0;
        return;
    }
    arg_range(bounds, (size_t)p, from, to);
    if (m->variadic && (size_t)p + 1 == m->nparams)
        *to = bounds[nargs];
    (void)in;
}

/* m's body with its parameters replaced by the arguments ("#p" a string,
 * "a ## b" pasted, other uses expanded first), then rescanned with m
 * active. */
static void expand(expander *x, const mdef *m, const ks_rtok *in, const size_t *bounds, size_t nargs,
                   unsigned space, tlist *out, int depth)
{
    tlist body = {NULL, 0, 0};
    int paste = 0;
    for (size_t i = 0; i < m->nbody && x->spent < KS_MACRO_TOKENS; i++) {
        const ks_rtok *t = &m->body[i];
        if (t->kind == CXToken_Punctuation && spelled(t, "##")) {
            paste = body.n > 0;
            continue;
        }
        int next_paste = i + 1 < m->nbody && spelled(&m->body[i + 1], "##");
        size_t mark = body.n;
        long p;
        if (m->function_like && t->kind == CXToken_Punctuation && (spelled(t, "#") || spelled(t, "%:")) &&
            i + 1 < m->nbody && (p = param_of(m, &m->body[i + 1])) >= 0) {
            size_t from, to;
            param_tokens(m, p, in, bounds, nargs, &from, &to);
            ks_buf s = {0};
            ks_buf_puts(&s, "\"");
            for (size_t a = from; a < to; a++) {
                if (a > from && in[a].space)
                    ks_buf_puts(&s, " ");
                for (size_t c = 0; c < in[a].n; c++)
                    ks_buf_printf(&s, "%s%c", (in[a].s[c] == '"' || in[a].s[c] == '\\') &&
                                  in[a].kind == CXToken_Literal ? "\\" : "", in[a].s[c]);
            }
            ks_buf_puts(&s, "\"");
            ks_rtok lit = *t;
            lit.s = own(x, ks_buf_take(&s));
            lit.n = strlen(lit.s);
            lit.kind = CXToken_Literal;
            tl_push(x, &body, lit);
            i++;
        } else if ((p = param_of(m, t)) >= 0) {
            size_t from, to;
            param_tokens(m, p, in, bounds, nargs, &from, &to);
            if (paste || next_paste) {
                for (size_t a = from; a < to; a++)
                    tl_push(x, &body, in[a]);
            } else {
                rescan(x, in + from, to - from, &body, depth + 1);
            }
        } else {
            tl_push(x, &body, *t);
        }
        if (body.n > mark)
            body.t[mark].space = t->space;
        if (paste && body.n > mark && mark > 0) {
            ks_rtok *l = &body.t[mark - 1], *r = &body.t[mark];
            ks_buf s = {0};
            ks_buf_put(&s, l->s, l->n);
            ks_buf_put(&s, r->s, r->n);
            l->s = own(x, ks_buf_take(&s));
            l->n = strlen(l->s);
            if (l->kind == CXToken_Keyword || r->kind == CXToken_Identifier)
                l->kind = l->kind == CXToken_Literal ? CXToken_Literal : CXToken_Identifier;
            memmove(r, r + 1, (body.n - mark - 1) * sizeof *r);
            body.n--;
        }
        paste = 0;
    }
    if (body.n)
        body.t[0].space = (unsigned char)space;
    x->active[depth] = m;
    rescan(x, body.t, body.n, out, depth + 1);
    free(body.t);
}

/* in[0, n) with each invocation of a macro (not one being expanded: a
 * macro does not expand itself) replaced by its expansion, appended to out. */
static void rescan(expander *x, const ks_rtok *in, size_t n, tlist *out, int depth)
{
    for (size_t i = 0; i < n; i++) {
        const mdef *m = NULL;
        if (depth < KS_MACRO_DEPTH && x->spent < KS_MACRO_TOKENS)
            m = lookup(x, &in[i]);
        for (int a = 0; m && a < depth; a++)
            if (x->active[a] == m)
                m = NULL;
        if (!m) {
            tl_push(x, out, in[i]);
            continue;
        }
        if (!m->function_like) {
            expand(x, m, in, NULL, 0, in[i].space, out, depth);
            continue;
        }
        size_t *bounds, nargs;
        size_t close = i + 1 < n && punct(&in[i + 1]) == '(' ? split_args(in, n, i + 1, &bounds, &nargs) : n;
        if (close >= n) {
            tl_push(x, out, in[i]);             /* no arguments: not an invocation */
            continue;
        }
        if (nargs == 1 && bounds[0] == bounds[1] && m->nparams == 0)
            nargs = 0;                          /* NAME() */
        expand(x, m, in, bounds, nargs, in[i].space, out, depth);
        free(bounds);
        i = close;
    }
}

/* The explicit instantiations each top-level macro invocation of the file
 * writes, placed at the invocation (start: the macro's name; end: past its
 * ')', or past the ';' that follows when the expansion does not end with
 * one). */
static void macro_instantiations(expander *x, const pp_record *r, const ks_source *src,
                                 const ks_rtok *all, size_t nall, ks_explicit_inst **out, size_t *count)
{
    for (size_t e = 0; e < r->nexps; e++) {
        const pp_exp *pe = &r->exps[e];
        CXCursor def = clang_getCursorReferenced(pe->cursor);
        if (clang_Cursor_isNull(def) || clang_getCursorKind(def) != CXCursor_MacroDefinition)
            continue;
        size_t d;
        for (d = pe->ndefs_before; d-- > 0;)
            if (clang_equalCursors(r->defs[d].cursor, def))
                break;
        if (d == (size_t)-1)
            continue;
        /* the invocation's tokens, as the file has them */
        size_t first = 0;
        while (first < nall && all[first].start < pe->start)
            first++;
        size_t last = first;
        while (last < nall && all[last].end <= pe->end)
            last++;
        if (first == last)
            continue;
        x->spent = 0;
        x->ndefs_before = pe->ndefs_before;
        x->at = pe->start;
        const mdef *m = tokenized(x, d);
        tlist res = {NULL, 0, 0};
        x->active[0] = m;
        if (!m->function_like) {
            expand(x, m, all + first, NULL, 0, 0, &res, 0);
        } else {
            size_t *bounds, nargs;
            size_t close = last - first > 1 ? split_args(all + first, last - first, 1, &bounds, &nargs)
                                            : last - first;
            if (close >= last - first) {
                free(res.t);
                continue;
            }
            if (nargs == 1 && bounds[0] == bounds[1] && m->nparams == 0)
                nargs = 0;
            expand(x, m, all + first, bounds, nargs, 0, &res, 0);
            free(bounds);
        }
        /* the ';' written after the invocation */
        size_t end = pe->end;
        if (last < nall && punct(&all[last]) == ';' && (res.n == 0 || punct(&res.t[res.n - 1]) != ';')) {
            ks_rtok semi = all[last];
            end = semi.end;
            semi.space = 0;
            push(&res.t, &res.n, &res.cap, semi);
        }
        ks_explicit_inst *found = NULL;
        size_t nfound = 0;
        find_instantiations(res.t, res.n, NULL, 1, &found, &nfound);
        for (size_t f = 0; f < nfound; f++) {
            found[f].start = pe->start;
            found[f].end = end;
            add_inst(out, count, &found[f]);
        }
        free(found);
        free(res.t);
    }
    (void)src;
}

/* ---- reading a file ------------------------------------------------------------------------- */

typedef struct span {
    unsigned start, end;
} span;

static int inside(const span *s, size_t n, unsigned start, unsigned end)
{
    size_t lo = 0, hi = n;                 /* spans sorted, disjoint: the last starting at or before */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && end <= s[lo - 1].end && start >= s[lo - 1].start;
}

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int ks_source_load(ks_source *src, CXTranslationUnit tu, CXFile file)
{
    memset(src, 0, sizeof *src);
    size_t size = 0;
    const char *text = clang_getFileContents(tu, file, &size);
    if (!text)
        return -1;
    src->text = ks_xmalloc(size + 1);
    memcpy(src->text, text, size);
    src->text[size] = '\0';
    src->size = size;

    CXToken *toks;
    unsigned n;
    CXSourceRange whole = clang_getRange(clang_getLocationForOffset(tu, file, 0),
                                         clang_getLocationForOffset(tu, file, (unsigned)size));
    clang_tokenize(tu, whole, &toks, &n);
    CXCursor *ann = ks_xmalloc((n + 1) * sizeof *ann);
    if (n)
        clang_annotateTokens(tu, toks, n, ann);

    /* inactive code: skipped ranges; directives: the extent of each */
    size_t nspans = 0, cspans = 0;
    span *spans = NULL;
    CXSourceRangeList *skipped = clang_getSkippedRanges(tu, file);
    for (unsigned i = 0; skipped && i < skipped->count; i++) {
        span s = {file_offset(clang_getRangeStart(skipped->ranges[i]), NULL),
                  file_offset(clang_getRangeEnd(skipped->ranges[i]), NULL)};
        if (nspans == cspans) {
            cspans = cspans ? cspans * 2 : 16;
            spans = ks_xrealloc(spans, cspans * sizeof *spans);
        }
        spans[nspans++] = s;
    }
    if (skipped)
        clang_disposeSourceRangeList(skipped);
    ks_rtok *all = NULL;
    size_t nall = 0, call = 0, ccom = 0, cund = 0;
    unsigned prev_end = 0;
    for (unsigned i = 0; i < n; i++) {
        CXSourceRange e = clang_getTokenExtent(tu, toks[i]);
        ks_rtok t;
        t.start = file_offset(clang_getRangeStart(e), NULL);
        t.end = file_offset(clang_getRangeEnd(e), NULL);
        if (t.end > size || t.start > t.end)
            continue;
        t.s = src->text + t.start;
        t.n = t.end - t.start;
        t.kind = (unsigned char)clang_getTokenKind(toks[i]);
        t.space = t.start > prev_end;
        prev_end = (unsigned)t.end;
        if (t.kind == CXToken_Comment) {
            push(&src->comments, &src->ncomments, &ccom, t);
            continue;
        }
        if (clang_getCursorKind(ann[i]) == CXCursor_PreprocessingDirective &&
            t.kind == CXToken_Punctuation && (spelled(&t, "#") || spelled(&t, "%:"))) {
            CXSourceRange de = clang_getCursorExtent(ann[i]);
            span s = {file_offset(clang_getRangeStart(de), NULL), file_offset(clang_getRangeEnd(de), NULL)};
            if (s.start == t.start && s.end >= t.end) {
                if (nspans == cspans) {
                    cspans = cspans ? cspans * 2 : 16;
                    spans = ks_xrealloc(spans, cspans * sizeof *spans);
                }
                spans[nspans++] = s;
                /* "#undef NAME": for the lookup of macros a macro invokes */
                if (i + 2 < n && clang_getTokenKind(toks[i + 1]) == CXToken_Identifier) {
                    char *w = ks_take(clang_getTokenSpelling(tu, toks[i + 1]));
                    if (strcmp(w, "undef") == 0) {
                        CXSourceRange ne = clang_getTokenExtent(tu, toks[i + 2]);
                        ks_rtok u = t;
                        u.start = file_offset(clang_getRangeStart(ne), NULL);
                        u.end = file_offset(clang_getRangeEnd(ne), NULL);
                        if (u.end <= size && u.start <= u.end) {
                            u.s = src->text + u.start;
                            u.n = u.end - u.start;
                            push(&src->undefs, &src->nundefs, &cund, u);
                        }
                    }
                    free(w);
                }
            }
        }
        push(&all, &nall, &call, t);
    }
    free(ann);
    clang_disposeTokens(tu, toks, n);
    if (nspans)
        qsort(spans, nspans, sizeof *spans, span_cmp);
    /* merge: a directive inside a skipped range */
    size_t m = 0;
    for (size_t i = 0; i < nspans; i++) {
        if (m && spans[i].start < spans[m - 1].end) {
            if (spans[i].end > spans[m - 1].end)
                spans[m - 1].end = spans[i].end;
        } else {
            spans[m++] = spans[i];
        }
    }
    nspans = m;
    /* active code */
    size_t ctok = 0;
    for (size_t i = 0; i < nall; i++)
        if (!inside(spans, nspans, (unsigned)all[i].start, (unsigned)all[i].end))
            push(&src->toks, &src->ntoks, &ctok, all[i]);
    free(all);
    free(spans);
    for (size_t i = 0; i < src->ntoks; i++)
        src->toks[i].space = i == 0 || src->toks[i].start > src->toks[i - 1].end;

    /* the macros the file's code invokes, and what they write */
    pp_record r;
    memset(&r, 0, sizeof r);
    r.file = file;
    clang_visitChildren(clang_getTranslationUnitCursor(tu), collect_record, &r);
    unsigned char *skip = ks_xmalloc(src->ntoks + 1);
    memset(skip, 0, src->ntoks + 1);
    for (size_t e = 0, i = 0; e < r.nexps; e++) {
        while (i < src->ntoks && src->toks[i].start < r.exps[e].start)
            i++;
        for (size_t j = i; j < src->ntoks && src->toks[j].end <= r.exps[e].end; j++)
            skip[j] = 1;
    }
    size_t nwritten = 0, nmacro = 0;
    ks_explicit_inst *written = NULL, *expanded = NULL;
    find_instantiations(src->toks, src->ntoks, skip, 0, &written, &nwritten);
    if (r.nexps) {
        expander x;
        memset(&x, 0, sizeof x);
        x.tu = tu;
        x.r = &r;
        x.src = src;
        macro_instantiations(&x, &r, src, src->toks, src->ntoks, &expanded, &nmacro);
        for (size_t i = 0; i < x.ndefs; i++) {
            free(x.defs[i]->params);
            free(x.defs[i]->body);
            free(x.defs[i]);
        }
        free(x.defs);
        for (size_t i = 0; i < x.nowned; i++)
            free(x.owned[i]);
        free(x.owned);
    }
    free(skip);
    record_free(&r);
    /* in order of end */
    src->ninst = nwritten + nmacro;
    src->inst = ks_xmalloc((src->ninst + 1) * sizeof *src->inst);
    size_t a = 0, b = 0, k = 0;
    while (a < nwritten || b < nmacro)
        src->inst[k++] = b == nmacro || (a < nwritten && written[a].end <= expanded[b].end) ? written[a++]
                                                                                           : expanded[b++];
    free(written);
    free(expanded);
    return 0;
}

void ks_source_free(ks_source *src)
{
    free(src->text);
    free(src->toks);
    free(src->comments);
    free(src->undefs);
    ks_explicit_inst_free(src->inst, src->ninst);
    memset(src, 0, sizeof *src);
}

void ks_source_position(const ks_source *src, size_t offset, unsigned *line, unsigned *col)
{
    unsigned l = 1, c = 1;
    for (size_t i = 0; i < offset && i < src->size; i++) {
        if (src->text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

size_t ks_source_instantiations(ks_source *src, ks_explicit_inst **out)
{
    *out = src->inst;
    size_t n = src->ninst;
    src->inst = NULL;
    src->ninst = 0;
    return n;
}

void ks_explicit_inst_free(ks_explicit_inst *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(in[i].qname);
        free(in[i].args);
        free(in[i].params);
        free(in[i].ret);
    }
    free(in);
}

size_t ks_source_class_instantiations(const ks_source *src, ks_class_inst **out)
{
    const ks_rtok *t = src->toks;
    size_t nt = src->ntoks, count = 0;
    *out = NULL;
    for (size_t i = 0; i + 3 < nt; i++) {
        if (!spelled(&t[i], "template") || (i > 0 && spelled(&t[i - 1], "extern")) ||
            !(spelled(&t[i + 1], "class") || spelled(&t[i + 1], "struct")))
            continue;
        size_t k = i + 2, name_start = k;
        if (spelled(&t[k], "::"))
            k++;
        while (k + 2 < nt && is_word(&t[k]) && spelled(&t[k + 1], "::"))
            k += 2;
        if (k + 1 >= nt || !is_word(&t[k]) || punct(&t[k + 1]) != '<')
            continue;
        size_t end = k + 1;
        while (end < nt && punct(&t[end]) != ';' && punct(&t[end]) != '{')
            end++;
        int half;
        size_t close = end < nt ? matching(t, k + 1, end, &half) : end;
        if (end >= nt || punct(&t[end]) != ';' || close + 1 != end)
            continue;
        *out = ks_xrealloc(*out, (count + 1) * sizeof **out);
        ks_class_inst *in = &(*out)[count++];
        in->qname = tokens_text(t, name_start, k + 1);
        ks_buf a = {0};
        tokens_put(&a, t, k + 2, close);
        if (half)
            ks_buf_puts(&a, ">");
        in->args = a.data ? ks_buf_take(&a) : ks_xstrdup("");
        in->start = t[i].start;
        in->end = t[end].end;
    }
    return count;
}

void ks_class_inst_free(ks_class_inst *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(in[i].qname);
        free(in[i].args);
    }
    free(in);
}

/* ---- directives in comments ------------------------------------------------------------------ */

size_t ks_source_directives(const ks_source *src, ks_directive **out)
{
    size_t count = 0;
    *out = NULL;
    for (size_t i = 0; i < src->ncomments; i++) {
        const ks_rtok *c = &src->comments[i];
        const char *s = src->text;
        int block = s[c->start + 1] == '*';
        size_t p = c->start + 2, end = c->end;
        if (block && end >= c->start + 4)
            end -= 2;                              /* the closing star-slash */
        while (p < end && (s[p] == ' ' || s[p] == '\t'))
            p++;
        if (end - p < 6 || memcmp(s + p, "kstub:", 6) != 0)
            continue;
        size_t w = p + 6, we = w;
        while (we < end && (isalnum((unsigned char)s[we]) || s[we] == '_'))
            we++;
        size_t r = we;
        while (r < end && isspace((unsigned char)s[r]))
            r++;
        size_t re = end;
        while (re > r && isspace((unsigned char)s[re - 1]))
            re--;
        *out = ks_xrealloc(*out, (count + 1) * sizeof **out);
        ks_directive *d = &(*out)[count++];
        d->word = ks_xasprintf("%.*s", (int)(we - w), s + w);
        d->rest = ks_xasprintf("%.*s", (int)(re - r), s + r);
        ks_source_position(src, p, &d->line, &d->col);
    }
    return count;
}

void ks_directive_free(ks_directive *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(d[i].word);
        free(d[i].rest);
    }
    free(d);
}

/* ---- definitions ------------------------------------------------------------------------------ */

int ks_source_body_follows(CXTranslationUnit tu, CXFile file, unsigned offset)
{
    size_t size = 0;
    if (!clang_getFileContents(tu, file, &size) || offset > size)
        return 0;
    /* clang's tokens from offset on, a growing window at a time */
    int depth = 0;
    unsigned from = offset;
    for (size_t window = 1024; from < size; window *= 2) {
        unsigned to = size - from > window ? from + (unsigned)window : (unsigned)size;
        CXToken *toks;
        unsigned n;
        clang_tokenize(tu, clang_getRange(clang_getLocationForOffset(tu, file, from),
                                          clang_getLocationForOffset(tu, file, to)), &toks, &n);
        /* the last token may be cut by the window: read up to it, then go on from it */
        unsigned upto = to < size && n > 0 ? n - 1 : n, next = to;
        int found = -1;
        for (unsigned i = 0; i < upto && found < 0; i++) {
            if (clang_getTokenKind(toks[i]) != CXToken_Punctuation)
                continue;
            char *p = ks_take(clang_getTokenSpelling(tu, toks[i]));
            if (strcmp(p, "(") == 0)
                depth++;
            else if (strcmp(p, ")") == 0)
                depth--;
            else if (depth <= 0 && (strcmp(p, "{") == 0 || strcmp(p, "<%") == 0))
                found = 1;
            else if (depth <= 0 && strcmp(p, ";") == 0)
                found = 0;
            free(p);
        }
        if (upto < n)
            next = file_offset(clang_getTokenLocation(tu, toks[upto]), NULL);
        clang_disposeTokens(tu, toks, n);
        if (found >= 0)
            return found;
        from = next;                   /* the same place with a larger window, when one token filled it */
    }
    return 0;
}

/* ---- the leading #include lines (for the prelude cache) ---- */

/* Past blanks and comments from i; a line comment continued by a backslash,
 * or one never closed, stops the scan (returns len). */
static size_t skip_blank_lines(const char *t, size_t len, size_t i, int newlines)
{
    while (i < len) {
        char c = t[i];
        if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || (newlines && c == '\n')) {
            i++;
        } else if (c == '/' && i + 1 < len && t[i + 1] == '*') {
            const char *e = NULL;
            for (size_t j = i + 2; j + 1 < len; j++)
                if (t[j] == '*' && t[j + 1] == '/') {
                    e = t + j;
                    break;
                }
            if (!e)
                return len;
            i = (size_t)(e - t) + 2;
        } else if (c == '/' && i + 1 < len && t[i + 1] == '/') {
            size_t j = i;
            while (j < len && t[j] != '\n')
                j++;
            if (j > i && (t[j - 1] == '\\' || (t[j - 1] == '\r' && j > i + 1 && t[j - 2] == '\\')))
                return len;
            i = j;
        } else {
            break;
        }
    }
    return i;
}

size_t ks_source_leading_includes(const char *t, size_t len,
                                  int (*allowed)(const char *name, size_t n), char ***names, char *blanked)
{
    size_t n = 0;
    *names = NULL;
    size_t i = 0;
    for (;;) {
        i = skip_blank_lines(t, len, i, 1);
        if (i >= len || t[i] != '#')
            break;
        size_t hash = i;
        i = skip_blank_lines(t, len, i + 1, 0);
        if (len - i < 7 || memcmp(t + i, "include", 7) != 0)
            break;
        i = skip_blank_lines(t, len, i + 7, 0);
        if (i >= len || t[i] != '<')
            break;
        size_t start = ++i;
        while (i < len && t[i] != '>' && t[i] != '\n')
            i++;
        if (i >= len || t[i] != '>' || !allowed(t + start, i - start))
            break;
        size_t name_len = i - start;
        i = skip_blank_lines(t, len, i + 1, 0);
        if (i < len && t[i] != '\n')
            break;                       /* more on the line, or a backslash: stop */
        /* '#' to '>': the directive, not what follows it; a comment
         * inside it may hold a line break, which stays */
        for (size_t k = hash; blanked && k <= start + name_len; k++)
            if (blanked[k] != '\n')
                blanked[k] = ' ';
        *names = ks_xrealloc(*names, (n + 1) * sizeof **names);
        (*names)[n] = ks_xasprintf("%.*s", (int)name_len, t + start);
        n++;
    }
    return n;
}
