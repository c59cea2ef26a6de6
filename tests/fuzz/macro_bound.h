/*
 * macro_bound.h — a bound on how many tokens clang's preprocessor makes of a
 * .cu text, read from the raw text with no libclang, for the fuzz targets
 * that parse their input (issue 41 #20): a one-byte mutation of a seed
 * (D5(...) to D6(...) in macro_growth.cu) asks libclang for 2^32 copies and
 * the target dies of memory after 80 runs. Such an input is skipped, not
 * parsed: the growth is libclang's, kstub's own expander is bounded
 * (source_macros.c) and fuzzed on the inputs that remain.
 *
 * The model: each macro's expansion is at most a * S + b tokens, S the
 * tokens of its arguments (expanded); a body is read token by token (a
 * parameter is S, an invocation of macro N with arguments A is
 * a_N * E(A) + b_N, any other token 1), the coefficients found by
 * unrolling the definitions one level per round, as many rounds as there are
 * definitions plus one (a chain of definitions never repeats a macro: clang
 * paints it), the largest of a name's definitions taken. The text outside
 * #define lines (#if lines expand macros too) is read the same way with
 * S = 0. Not modelled: a name made by '##' that is then invoked, and a
 * function-like name whose '(' comes from the text after the expansion;
 * the targets still run under libFuzzer's -rss_limit_mb, so an input that
 * slips through is an oom finding of its target, and `make fuzz` goes on
 * to the other targets (scripts/sanitize.sh).
 */
#ifndef KSTUB_FUZZ_MACRO_BOUND_H
#define KSTUB_FUZZ_MACRO_BOUND_H

#include <stdlib.h>
#include <string.h>

#define MB_CAP 1e30

typedef struct mb_tok {
    const char *s;
    size_t n;
    int space;                   /* white space before it */
    int bol;                     /* first of its line */
} mb_tok;

typedef struct mb_def {
    mb_tok name;
    int function_like;
    size_t params, nparams;      /* tokens [params, params + nparams) */
    size_t body, nbody;
    double a, b, na, nb;
} mb_def;

typedef struct mb {
    mb_tok *t;
    size_t n;
    mb_def *d;
    size_t nd;
    const mb_def *cur;           /* the definition whose body is read, or NULL */
} mb;

static int mb_word(unsigned char c)
{
    return c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

static int mb_is(const mb_tok *t, const char *s)
{
    return t->n == strlen(s) && memcmp(t->s, s, t->n) == 0;
}

/* Tokens of text: words, literals, one-character punctuators ("##" and
 * "%:" kept whole); comments and line splices are white space. */
static void mb_lex(mb *m, const char *p, size_t size)
{
    size_t cap = 0, i = 0;
    int space = 0, bol = 1;
    while (i < size) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\\' && i + 1 < size && (p[i + 1] == '\n' || p[i + 1] == '\r')) {
            i += 2;
            continue;
        }
        if (c == '\n' || c == '\r') {
            bol = 1, space = 1, i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
            space = 1, i++;
            continue;
        }
        if (c == '/' && i + 1 < size && p[i + 1] == '/') {
            while (i < size && p[i] != '\n' && p[i] != '\r')
                i++;
            continue;
        }
        if (c == '/' && i + 1 < size && p[i + 1] == '*') {
            i += 2;
            while (i + 1 < size && !(p[i] == '*' && p[i + 1] == '/'))
                i++;
            i += 2;
            space = 1;
            continue;
        }
        size_t start = i;
        if (mb_word(c)) {
            while (i < size && mb_word((unsigned char)p[i]))
                i++;
        } else if (c == '"' || c == '\'') {
            for (i++; i < size && p[i] != (char)c && p[i] != '\n'; i++)
                if (p[i] == '\\')
                    i++;
            i++;
        } else if ((c == '#' && i + 1 < size && p[i + 1] == '#') || (c == '%' && i + 1 < size && p[i + 1] == ':')) {
            i += 2;
        } else {
            i++;
        }
        if (i > size)
            i = size;
        if (m->n == cap) {
            cap = cap ? cap * 2 : 256;
            m->t = realloc(m->t, cap * sizeof *m->t);
        }
        m->t[m->n++] = (mb_tok){p + start, i - start, space, bol};
        space = 0, bol = 0;
    }
}

static const mb_def *mb_macro(const mb *m, const mb_tok *t)
{
    const mb_def *best = NULL;
    for (size_t d = 0; d < m->nd; d++)
        if (m->d[d].name.n == t->n && memcmp(m->d[d].name.s, t->s, t->n) == 0 &&
            (!best || m->d[d].a + m->d[d].b > best->a + best->b))
            best = &m->d[d];
    return best;
}

static int mb_param(const mb *m, const mb_tok *t)
{
    if (!m->cur)
        return 0;
    if (mb_is(t, "__VA_ARGS__"))
        return 1;
    for (size_t i = 0; i < m->cur->nparams; i++)
        if (m->t[m->cur->params + i].n == t->n && memcmp(m->t[m->cur->params + i].s, t->s, t->n) == 0)
            return 1;
    return 0;
}

/* Tokens [from, to) of m->t as a * S + b. */
static void mb_range(const mb *m, size_t from, size_t to, double *a, double *b)
{
    *a = 0, *b = 0;
    for (size_t i = from; i < to; i++) {
        const mb_tok *t = &m->t[i];
        const mb_def *d = mb_word((unsigned char)t->s[0]) ? mb_macro(m, t) : NULL;
        if (mb_word((unsigned char)t->s[0]) && mb_param(m, t)) {
            *a += 1;
        } else if (d && d->function_like && i + 1 < to && mb_is(&m->t[i + 1], "(")) {
            size_t close = i + 2;
            for (int depth = 1; close < to; close++) {
                depth += mb_is(&m->t[close], "(") - mb_is(&m->t[close], ")");
                if (depth == 0)
                    break;
            }
            double aa, ab;
            mb_range(m, i + 2, close, &aa, &ab);
            *a += d->a * aa;
            *b += d->a * ab + d->b;
            i = close;
        } else if (d) {
            *b += d->b > 1 ? d->b : 1;
        } else {
            *b += 1;
        }
        if (*a > MB_CAP || *b > MB_CAP) {
            *a = *b = MB_CAP;
            return;
        }
    }
}

/* The bound on the tokens text[0, size) preprocesses to. */
static double macro_bound(const char *text, size_t size)
{
    mb m;
    memset(&m, 0, sizeof m);
    mb_lex(&m, text, size);
    /* the definitions; the other lines' tokens moved to the front */
    size_t keep = 0, cd = 0;
    mb_tok *rest = malloc((m.n + 1) * sizeof *rest);
    for (size_t i = 0; i < m.n;) {
        size_t end = i + 1;
        while (end < m.n && !m.t[end].bol)
            end++;
        if (end - i >= 3 && (mb_is(&m.t[i], "#") || mb_is(&m.t[i], "%:")) && mb_is(&m.t[i + 1], "define")) {
            if (m.nd == cd) {
                cd = cd ? cd * 2 : 16;
                m.d = realloc(m.d, cd * sizeof *m.d);
            }
            mb_def *d = &m.d[m.nd++];
            memset(d, 0, sizeof *d);
            d->name = m.t[i + 2];
            size_t j = i + 3;
            if (j < end && mb_is(&m.t[j], "(") && !m.t[j].space) {
                d->function_like = 1;
                d->params = ++j;
                while (j < end && !mb_is(&m.t[j], ")"))
                    j++;
                d->nparams = j - d->params;
                j = j < end ? j + 1 : end;
            }
            d->body = j;
            d->nbody = end - j;
            d->a = d->function_like ? 1 : 0;
            d->b = 3;
        } else {
            for (size_t k = i; k < end; k++)
                rest[keep++] = m.t[k];
        }
        i = end;
    }
    for (size_t round = 0; round <= m.nd; round++) {
        for (size_t d = 0; d < m.nd; d++) {
            m.cur = &m.d[d];
            mb_range(&m, m.d[d].body, m.d[d].body + m.d[d].nbody, &m.d[d].na, &m.d[d].nb);
        }
        for (size_t d = 0; d < m.nd; d++) {
            m.d[d].a = m.d[d].na > m.d[d].a ? m.d[d].na : m.d[d].a;
            m.d[d].b = m.d[d].nb > m.d[d].b ? m.d[d].nb : m.d[d].b;
        }
    }
    m.cur = NULL;
    free(m.t);
    m.t = rest;
    double a, b;
    mb_range(&m, 0, keep, &a, &b);
    free(rest);
    free(m.d);
    return b;
}

#endif /* KSTUB_FUZZ_MACRO_BOUND_H */
