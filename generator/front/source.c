/*
 * source.c — the one scanner of the raw .cu text, for what libclang does not
 * show: explicit instantiations (no cursor), "kstub:" directives in comments,
 * whether a body follows a declaration under --skip-bodies, and the leading
 * #include lines the prelude cache may precompile (pch.c). Comments,
 * string and character literals and preprocessor lines are skipped the same
 * way for all three.
 */
#include "front.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Past a string or character literal opened at s[i] (quote q). */
static size_t skip_literal(const char *s, size_t n, size_t i)
{
    char q = s[i];
    for (i++; i < n && s[i] != q && s[i] != '\n'; i++)
        if (s[i] == '\\')
            i++;
    return i < n ? i + 1 : n;
}

/* Past a comment opened at s[i] ("//" or a block comment), or i if none. */
static size_t skip_comment(const char *s, size_t n, size_t i)
{
    if (i + 1 >= n || s[i] != '/')
        return i;
    if (s[i + 1] == '/') {
        while (i < n && s[i] != '\n')
            i++;
        return i;
    }
    if (s[i + 1] == '*') {
        for (i += 2; i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'); i++)
            ;
        return i + 2 < n ? i + 2 : n;
    }
    return i;
}

static void push_tok(ks_rtok **a, size_t *n, size_t start, size_t end)
{
    if (*n == 0)
        *a = ks_xmalloc(64 * sizeof **a);
    else if (*n >= 64 && (*n & (*n - 1)) == 0)   /* full: capacity doubles at powers of two */
        *a = ks_xrealloc(*a, *n * 2 * sizeof **a);
    (*a)[*n].start = start;
    (*a)[(*n)++].end = end;
}

void ks_source_scan(ks_source *src, const char *s, size_t n)
{
    memset(src, 0, sizeof *src);
    src->text = s;
    src->size = n;
    size_t i = 0;
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
        size_t after = skip_comment(s, n, i);
        if (after != i) {
            push_tok(&src->comments, &src->ncomments, i, after);
            i = after;
            continue;
        }
        if (c == '#' && line_start) {
            size_t start = i;
            while (i < n && s[i] != '\n')
                i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
            push_tok(&src->directives, &src->ndirectives, start, i < n ? i : n);
            continue;
        }
        line_start = 0;
        size_t start = i;
        if (c == '"' || c == '\'') {
            i = skip_literal(s, n, i);
        } else if (isalnum((unsigned char)c) || c == '_') {
            while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' ||
                             (isdigit((unsigned char)c) && (s[i] == '.' || s[i] == '\''))))
                i++;
        } else if (c == ':' && i + 1 < n && s[i + 1] == ':') {
            i += 2;
        } else {
            i++;
        }
        push_tok(&src->toks, &src->ntoks, start, i);
    }
}

void ks_source_free(ks_source *src)
{
    free(src->toks);
    free(src->comments);
    free(src->directives);
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

/* ---- explicit instantiations --------------------------------------------------------------- */

/* a, holding n elements of size, with room for one more: capacity doubles
 * at powers of two (a macro may write thousands). */
static void *grow(void *a, size_t n, size_t size)
{
    if (n == 0)
        return ks_xmalloc(4 * size);
    if (n >= 4 && (n & (n - 1)) == 0)
        return ks_xrealloc(a, n * 2 * size);
    return a;
}

static int tok_is(const ks_source *src, size_t i, const char *word)
{
    const ks_rtok *t = &src->toks[i];
    size_t n = strlen(word);
    return t->end - t->start == n && memcmp(src->text + t->start, word, n) == 0;
}

static int tok_is_word(const ks_source *src, size_t i)
{
    char c = src->text[src->toks[i].start];
    return isalpha((unsigned char)c) || c == '_';
}

/* Index of the token closing the bracket opened at token i ('<' or '('), or end. */
static size_t matching(const ks_source *src, size_t i, size_t end)
{
    int angle = 0, paren = 0;
    char open = src->text[src->toks[i].start];
    for (size_t j = i; j < end; j++) {
        const ks_rtok *t = &src->toks[j];
        if (t->end - t->start != 1)
            continue;
        char c = src->text[t->start];
        if (c == '(' || c == '[')
            paren++;
        else if (c == ')' || c == ']')
            paren--;
        else if (c == '<' && paren == 0)
            angle++;
        else if (c == '>' && paren == 0)
            angle--;
        if ((open == '<' && angle == 0 && paren == 0) || (open == '(' && paren == 0))
            return j;
    }
    return end;
}

/* Tokens [from, to) as written, one space wherever white space or a comment
 * stood between two of them. */
static char *tokens_text(const ks_source *src, size_t from, size_t to)
{
    ks_buf b = {0};
    for (size_t i = from; i < to; i++) {
        if (i > from && src->toks[i].start > src->toks[i - 1].end)
            ks_buf_puts(&b, " ");
        ks_buf_put(&b, src->text + src->toks[i].start, src->toks[i].end - src->toks[i].start);
    }
    return ks_buf_take(&b);
}

/* The return type of an explicit instantiation: tokens [from, to) before
 * its name without the specifiers that are no part of a type, or what
 * follows "->" in [after, end) when it is written "auto NAME<...>(...) -> T".
 * "void" when nothing is left. */
static char *return_text(const ks_source *src, size_t from, size_t to, size_t after, size_t end)
{
    static const char *const specifiers[] = {"__global__", "__host__", "__device__", "__forceinline__",
                                             "__noinline__", "__inline__", "inline", "static",
                                             "extern", "constexpr", NULL};
    ks_buf b = {0};
    for (size_t i = from; i < to; i++) {
        int skip = 0;
        for (const char *const *w = specifiers; *w && !skip; w++)
            skip = tok_is(src, i, *w);
        if (skip)
            continue;
        if (b.len && src->toks[i].start > src->toks[i - 1].end)
            ks_buf_puts(&b, " ");
        ks_buf_put(&b, src->text + src->toks[i].start, src->toks[i].end - src->toks[i].start);
    }
    char *ret = ks_buf_take(&b);
    if (ret && strcmp(ret, "auto") == 0)
        for (size_t i = after; i + 1 < end; i++)
            if (tok_is(src, i, "-") && tok_is(src, i + 1, ">") &&
                src->toks[i + 1].start == src->toks[i].end) {
                free(ret);
                ret = tokens_text(src, i + 2, end);
                break;
            }
    if (!ret || !*ret) {
        free(ret);
        ret = ks_xstrdup("void");
    }
    return ret;
}

static size_t written_instantiations(const ks_source *src, ks_explicit_inst **out)
{
    const char *s = src->text;
    size_t nt = src->ntoks, count = 0;
    *out = NULL;
    for (size_t i = 0; i + 1 < nt; i++) {
        if (!tok_is(src, i, "template") || tok_is(src, i + 1, "<") ||
            (i > 0 && tok_is(src, i - 1, "extern")))
            continue;
        size_t end = i + 1;
        while (end < nt && !tok_is(src, end, ";") && !tok_is(src, end, "{"))
            end++;
        if (end >= nt || !tok_is(src, end, ";"))
            continue;
        size_t k;
        for (k = i + 1; k + 1 < end; k++)
            if (tok_is_word(src, k) && tok_is(src, k + 1, "<"))
                break;
        if (k + 1 >= end)
            continue;
        size_t name_start = k;
        while (name_start >= 2 && tok_is(src, name_start - 1, "::") && tok_is_word(src, name_start - 2))
            name_start -= 2;
        if (name_start >= 1 && tok_is(src, name_start - 1, "::"))
            name_start--;
        size_t close = matching(src, k + 1, end);
        if (close >= end || close + 1 >= end || !tok_is(src, close + 1, "("))
            continue;
        size_t pclose = matching(src, close + 1, end);
        if (pclose >= end)
            continue;
        *out = grow(*out, count, sizeof **out);
        ks_explicit_inst *in = &(*out)[count++];
        in->qname = ks_xasprintf("%.*s", (int)(src->toks[k].end - src->toks[name_start].start),
                                 s + src->toks[name_start].start);
        in->args = tokens_text(src, k + 2, close);
        in->params = ks_xasprintf("%.*s", (int)(src->toks[pclose].start - src->toks[close + 1].end),
                                  s + src->toks[close + 1].end);
        in->ret = return_text(src, i + 1, name_start, pclose + 1, end);
        in->start = src->toks[i].start;
        in->end = src->toks[end].end;
    }
    return count;
}

/* ---- explicit instantiations written by macros ------------------------------------------------ */

/* A function-like macro of the text: "#define NAME(PARAMS) BODY". */
typedef struct macro {
    const char *name;            /* in the text */
    size_t name_len;
    size_t at;                   /* offset of its '#': an invocation before it does not use it */
    char **params;               /* "__VA_ARGS__" for "..." */
    size_t nparams;
    int variadic;                /* the last parameter takes the remaining arguments */
    char *body;                  /* the replacement list, continuations joined */
} macro;

typedef struct macros {
    macro *m;
    size_t n;
    size_t spent;                /* bytes expanded so far for this invocation of the text */
} macros;

static size_t skip_hspace(const char *s, size_t i, size_t end)
{
    for (;;) {
        if (i < end && (s[i] == ' ' || s[i] == '\t'))
            i++;
        else if (i + 1 < end && s[i] == '\\' && s[i + 1] == '\n')
            i += 2;
        else if (i + 2 < end && s[i] == '\\' && s[i + 1] == '\r' && s[i + 2] == '\n')
            i += 3;
        else
            return i;
    }
}

static size_t ident_end(const char *s, size_t i, size_t end)
{
    while (i < end && (isalnum((unsigned char)s[i]) || s[i] == '_'))
        i++;
    return i;
}

/* Reads "#define NAME(PARAMS) BODY" from the directive [a, b); 0 when it is
 * no function-like macro definition. */
static int read_define(const char *s, size_t a, size_t b, macro *m)
{
    size_t i = skip_hspace(s, a + 1, b), e = ident_end(s, i, b);
    if (e - i != 6 || memcmp(s + i, "define", 6) != 0)
        return 0;
    i = skip_hspace(s, e, b);
    e = ident_end(s, i, b);
    if (e == i || e >= b || s[e] != '(' || isdigit((unsigned char)s[i]))
        return 0;                          /* object-like: clang expands it in place */
    memset(m, 0, sizeof *m);
    m->name = s + i;
    m->name_len = e - i;
    m->at = a;
    i = e + 1;
    for (;;) {
        i = skip_hspace(s, i, b);
        if (i < b && s[i] == ')')
            break;
        size_t pe = ident_end(s, i, b);
        if (pe + 2 < b && memcmp(s + pe, "...", 3) == 0) {
            m->variadic = 1;
            m->params = ks_xrealloc(m->params, (m->nparams + 1) * sizeof *m->params);
            m->params[m->nparams++] = pe == i ? ks_xstrdup("__VA_ARGS__")
                                              : ks_xasprintf("%.*s", (int)(pe - i), s + i);
            pe += 3;
        } else if (pe > i) {
            m->params = ks_xrealloc(m->params, (m->nparams + 1) * sizeof *m->params);
            m->params[m->nparams++] = ks_xasprintf("%.*s", (int)(pe - i), s + i);
        } else {
            break;                         /* not a parameter list kstub reads */
        }
        i = skip_hspace(s, pe, b);
        if (i < b && s[i] == ',')
            i++;
        else
            break;
    }
    if (i >= b || s[i] != ')') {
        for (size_t p = 0; p < m->nparams; p++)
            free(m->params[p]);
        free(m->params);
        return 0;
    }
    ks_buf body = {0};
    for (i++; i < b;) {
        size_t j = skip_hspace(s, i, b);
        if (j != i) {
            ks_buf_puts(&body, " ");
            i = j;
        } else {
            ks_buf_put(&body, s + i++, 1);
        }
    }
    m->body = ks_buf_take(&body);
    return 1;
}

static void macros_free(macros *ms)
{
    for (size_t i = 0; i < ms->n; i++) {
        for (size_t p = 0; p < ms->m[i].nparams; p++)
            free(ms->m[i].params[p]);
        free(ms->m[i].params);
        free(ms->m[i].body);
    }
    free(ms->m);
}

/* The macro named by token i of src, defined before offset at (the last
 * such definition), and invoked: a '(' follows. NULL otherwise. */
static const macro *invoked(macros *ms, const ks_source *src, size_t i, size_t at)
{
    if (i + 1 >= src->ntoks || !tok_is_word(src, i) || !tok_is(src, i + 1, "("))
        return NULL;
    const ks_rtok *t = &src->toks[i];
    const macro *found = NULL;
    for (size_t k = 0; k < ms->n; k++)
        if (ms->m[k].at < at && ms->m[k].name_len == t->end - t->start &&
            memcmp(ms->m[k].name, src->text + t->start, t->end - t->start) == 0)
            found = &ms->m[k];
    return found;
}

/* The arguments of the invocation whose '(' is token open: split at the
 * commas outside inner parentheses. Returns the index of its ')', or
 * src->ntoks when it is not closed. */
static size_t split_args(const ks_source *src, size_t open, char ***args, size_t *nargs)
{
    *args = NULL;
    *nargs = 0;
    int depth = 0;
    size_t from = open + 1;
    for (size_t j = open; j < src->ntoks; j++) {
        if (tok_is(src, j, "("))
            depth++;
        else if (tok_is(src, j, ")"))
            depth--;
        if ((depth == 1 && tok_is(src, j, ",")) || depth == 0) {
            if (depth == 0 && j == open + 1 && *nargs == 0)
                return j;                  /* NAME() */
            *args = ks_xrealloc(*args, (*nargs + 1) * sizeof **args);
            (*args)[(*nargs)++] = tokens_text(src, from, j);
            from = j + 1;
            if (depth == 0)
                return j;
        }
    }
    for (size_t a = 0; a < *nargs; a++)
        free((*args)[a]);
    free(*args);
    *args = NULL;
    *nargs = 0;
    return src->ntoks;
}

/* Expansions nest at most KS_MACRO_DEPTH deep, and one invocation's stops
 * after KS_MACRO_TEXT bytes in all (hostile text: each level may square it). */
#define KS_MACRO_DEPTH 16
#define KS_MACRO_TEXT (1u << 20)

static char *rescan(macros *ms, const char *text, const macro **active, int depth);

/* The argument for parameter word of m ("" when missing), or NULL when
 * word is no parameter; variadic rest joined with ", ". */
static char *argument(const macro *m, char **args, size_t nargs, const char *word, size_t len)
{
    for (size_t p = 0; p < m->nparams; p++) {
        if (strlen(m->params[p]) != len || memcmp(m->params[p], word, len) != 0)
            continue;
        if (m->variadic && p + 1 == m->nparams) {
            ks_buf b = {0};
            for (size_t a = p; a < nargs; a++)
                ks_buf_printf(&b, "%s%s", a > p ? ", " : "", args[a]);
            return ks_buf_take(&b);
        }
        return ks_xstrdup(p < nargs ? args[p] : "");
    }
    return NULL;
}

/* m's body with its parameters replaced by args ("#p" a string, "a ## b"
 * pasted), then rescanned for the text's other macros. */
static char *expand(macros *ms, const macro *m, char **args, size_t nargs,
                    const macro **active, int depth)
{
    /* Arguments are expanded before they are substituted (in the context
     * of the invocation: m may expand inside them); "#p" and "a ## b" take
     * them as written. */
    if (ms->spent >= KS_MACRO_TEXT)
        return ks_xstrdup("");
    char **xargs = ks_xmalloc((nargs + 1) * sizeof *xargs);
    for (size_t a = 0; a < nargs; a++)
        xargs[a] = rescan(ms, args[a], active, depth);
    active[depth] = m;                     /* the arguments' rescans used the slot */
    ks_source body;
    ks_source_scan(&body, m->body, strlen(m->body));
    ks_buf out = {0};
    int paste = 0;
    for (size_t i = 0; i < body.ntoks; i++) {
        const ks_rtok *t = &body.toks[i];
        const char *w = m->body + t->start;
        size_t len = t->end - t->start;
        if (tok_is(&body, i, "#") && i + 1 < body.ntoks && tok_is(&body, i + 1, "#") &&
            body.toks[i + 1].start == t->end) {
            while (out.len && out.data[out.len - 1] == ' ')
                out.data[--out.len] = '\0';
            paste = 1;
            i++;
            continue;
        }
        if (!paste && i > 0 && t->start > body.toks[i - 1].end)
            ks_buf_puts(&out, " ");
        int pasted = paste || (i + 2 < body.ntoks && tok_is(&body, i + 1, "#") &&
                               tok_is(&body, i + 2, "#") && body.toks[i + 2].start == body.toks[i + 1].end);
        paste = 0;
        if (tok_is(&body, i, "#") && i + 1 < body.ntoks && tok_is_word(&body, i + 1)) {
            const ks_rtok *p = &body.toks[i + 1];
            char *arg = argument(m, args, nargs, m->body + p->start, p->end - p->start);
            if (arg) {
                ks_buf_puts(&out, "\"");
                for (const char *c = arg; *c; c++)
                    ks_buf_printf(&out, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
                ks_buf_puts(&out, "\"");
                free(arg);
                i++;
                continue;
            }
        }
        char *arg = tok_is_word(&body, i) ? argument(m, pasted ? args : xargs, nargs, w, len) : NULL;
        if (arg)
            ks_buf_puts(&out, arg);
        else
            ks_buf_put(&out, w, len);
        free(arg);
    }
    ks_source_free(&body);
    for (size_t a = 0; a < nargs; a++)
        free(xargs[a]);
    free(xargs);
    ms->spent += out.len;
    char *text = ks_buf_take(&out);
    char *done = rescan(ms, text, active, depth + 1);
    free(text);
    return done;
}

/* text with each invocation of a macro of ms (not one being expanded:
 * a macro does not expand itself) replaced by its expansion. */
static char *rescan(macros *ms, const char *text, const macro **active, int depth)
{
    if (ms->spent >= KS_MACRO_TEXT || depth >= KS_MACRO_DEPTH)
        return ks_xstrdup(text);
    ks_source src;
    ks_source_scan(&src, text, strlen(text));
    ks_buf out = {0};
    size_t copied = 0;
    for (size_t i = 0; i < src.ntoks && ms->spent < KS_MACRO_TEXT; i++) {
        const macro *m = invoked(ms, &src, i, (size_t)-1);
        for (int a = 0; m && a < depth; a++)
            if (active[a] == m)
                m = NULL;
        char **args;
        size_t nargs;
        size_t close = m ? split_args(&src, i + 1, &args, &nargs) : src.ntoks;
        if (close >= src.ntoks)
            continue;
        active[depth] = m;
        char *x = expand(ms, m, args, nargs, active, depth);
        ks_buf_put(&out, text + copied, src.toks[i].start - copied);
        ks_buf_puts(&out, x);
        copied = src.toks[close].end;
        free(x);
        for (size_t a = 0; a < nargs; a++)
            free(args[a]);
        free(args);
        i = close;
    }
    ks_buf_puts(&out, text + copied);
    ks_source_free(&src);
    return ks_buf_take(&out);
}

/* The explicit instantiations the invocations of the text's function-like
 * macros write, each placed at its invocation (start: the macro's name;
 * end: past its ')', or past the ';' that follows when the expansion does
 * not end with one). */
static size_t macro_instantiations(const ks_source *src, ks_explicit_inst **out)
{
    macros ms = {NULL, 0, 0};
    size_t count = 0;
    *out = NULL;
    for (size_t d = 0; d < src->ndirectives; d++) {
        macro m;
        if (read_define(src->text, src->directives[d].start, src->directives[d].end, &m)) {
            ms.m = ks_xrealloc(ms.m, (ms.n + 1) * sizeof *ms.m);
            ms.m[ms.n++] = m;
        }
    }
    const macro *active[KS_MACRO_DEPTH + 1];
    for (size_t i = 0; ms.n && i < src->ntoks; i++) {
        const macro *m = invoked(&ms, src, i, src->toks[i].start);
        char **args;
        size_t nargs;
        size_t close = m ? split_args(src, i + 1, &args, &nargs) : src->ntoks;
        if (close >= src->ntoks)
            continue;
        active[0] = m;
        ms.spent = 0;
        char *x = expand(&ms, m, args, nargs, active, 0);
        for (size_t a = 0; a < nargs; a++)
            free(args[a]);
        free(args);
        size_t end = src->toks[close].end;
        size_t xl = strlen(x);
        while (xl && isspace((unsigned char)x[xl - 1]))
            x[--xl] = '\0';
        if (close + 1 < src->ntoks && tok_is(src, close + 1, ";") && (xl == 0 || x[xl - 1] != ';')) {
            end = src->toks[close + 1].end;
            char *semi = ks_xasprintf("%s;", x);
            free(x);
            x = semi;
        }
        ks_source xs;
        ks_source_scan(&xs, x, strlen(x));
        ks_explicit_inst *found;
        size_t n = written_instantiations(&xs, &found);
        size_t t = 0;
        for (size_t f = 0; f < n; f++) {
            /* at the start of a declaration, not "x.template f<T>()" */
            while (t < xs.ntoks && xs.toks[t].start < found[f].start)
                t++;
            if (t > 0 && !tok_is(&xs, t - 1, ";") && !tok_is(&xs, t - 1, "}") && !tok_is(&xs, t - 1, "{")) {
                free(found[f].qname);
                free(found[f].args);
                free(found[f].params);
                free(found[f].ret);
                continue;
            }
            found[f].start = src->toks[i].start;
            found[f].end = end;
            *out = grow(*out, count, sizeof **out);
            (*out)[count++] = found[f];
        }
        free(found);
        ks_source_free(&xs);
        free(x);
        i = close;
    }
    macros_free(&ms);
    return count;
}

size_t ks_source_instantiations(const ks_source *src, ks_explicit_inst **out)
{
    ks_explicit_inst *written, *expanded;
    size_t nw = written_instantiations(src, &written);
    size_t nx = macro_instantiations(src, &expanded);
    if (nx == 0) {
        *out = written;
        return nw;
    }
    *out = ks_xmalloc((nw + nx) * sizeof **out);
    size_t a = 0, b = 0, n = 0;
    while (a < nw || b < nx)
        (*out)[n++] = b == nx || (a < nw && written[a].end <= expanded[b].end) ? written[a++] : expanded[b++];
    free(written);
    free(expanded);
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
    const char *s = src->text;
    size_t nt = src->ntoks, count = 0;
    *out = NULL;
    for (size_t i = 0; i + 3 < nt; i++) {
        if (!tok_is(src, i, "template") || (i > 0 && tok_is(src, i - 1, "extern")) ||
            !(tok_is(src, i + 1, "class") || tok_is(src, i + 1, "struct")))
            continue;
        size_t k = i + 2, name_start = k;
        if (tok_is(src, k, "::"))
            k++;
        while (k + 2 < nt && tok_is_word(src, k) && tok_is(src, k + 1, "::"))
            k += 2;
        if (k + 1 >= nt || !tok_is_word(src, k) || !tok_is(src, k + 1, "<"))
            continue;
        size_t end = k + 1;
        while (end < nt && !tok_is(src, end, ";") && !tok_is(src, end, "{"))
            end++;
        size_t close = end < nt ? matching(src, k + 1, end) : end;
        if (end >= nt || !tok_is(src, end, ";") || close + 1 != end)
            continue;
        *out = ks_xrealloc(*out, (count + 1) * sizeof **out);
        ks_class_inst *in = &(*out)[count++];
        in->qname = ks_xasprintf("%.*s", (int)(src->toks[k].end - src->toks[name_start].start),
                                 s + src->toks[name_start].start);
        in->args = tokens_text(src, k + 2, close);
        in->start = src->toks[i].start;
        in->end = src->toks[end].end;
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

int ks_source_body_follows(const char *s, size_t n, size_t i)
{
    int depth = 0;
    while (i < n) {
        size_t after = skip_comment(s, n, i);
        if (after != i) {
            i = after;
            continue;
        }
        char c = s[i];
        if (c == '"' || c == '\'') {
            i = skip_literal(s, n, i);
            continue;
        }
        if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        else if (depth <= 0 && (c == '{' || c == ';'))
            return c == '{';
        i++;
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
                                  int (*allowed)(const char *name, size_t n), char ***names)
{
    size_t n = 0;
    *names = NULL;
    size_t i = 0;
    for (;;) {
        i = skip_blank_lines(t, len, i, 1);
        if (i >= len || t[i] != '#')
            break;
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
        *names = ks_xrealloc(*names, (n + 1) * sizeof **names);
        (*names)[n] = ks_xasprintf("%.*s", (int)name_len, t + start);
        n++;
    }
    return n;
}
