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
            while (i < n && s[i] != '\n')
                i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
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

size_t ks_source_instantiations(const ks_source *src, ks_explicit_inst **out)
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
        *out = ks_xrealloc(*out, (count + 1) * sizeof **out);
        ks_explicit_inst *in = &(*out)[count++];
        in->qname = ks_xasprintf("%.*s", (int)(src->toks[k].end - src->toks[name_start].start),
                                 s + src->toks[name_start].start);
        in->args = tokens_text(src, k + 2, close);
        in->params = ks_xasprintf("%.*s", (int)(src->toks[pclose].start - src->toks[close + 1].end),
                                  s + src->toks[close + 1].end);
        in->ret = return_text(src, i + 1, name_start, pclose + 1, end);
        in->end = src->toks[end].end;
    }
    return count;
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
