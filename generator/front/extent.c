/*
 * extent.c — "// kstub:extent(PTR, EXPR)" hints: how many elements a pointer
 * parameter must hold, in terms of the kernel's integer parameters, for the
 * runtime's extents check. A hint belongs to the next kernel defined at or
 * after its line (every instantiation of a template kernel there). Checked
 * here, at generation time: PTR is a pointer parameter of that kernel with a
 * known element type, EXPR is integers, integer parameters, + - * / and
 * parentheses. The expression is kept as written (manifest, messages) and
 * compiled to postfix steps (the descriptor the runtime evaluates).
 */
#include "base/util.h"
#include "model/model.h"
#include "front/source.h"
#include "front/extent.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xparse {
    const char *s;             /* the expression */
    size_t i;
    const ks_kern *k;
    ks_xop *ops;
    size_t nops;
    const char *err;           /* the first problem, or NULL */
    char errbuf[256];
} xparse;

static void skip_space(xparse *x)
{
    while (isspace((unsigned char)x->s[x->i]))
        x->i++;
}

static void emit(xparse *x, ks_xop_kind op, long long value)
{
    x->ops = ks_xrealloc(x->ops, (x->nops + 1) * sizeof *x->ops);
    x->ops[x->nops].op = op;
    x->ops[x->nops++].value = value;
}

static void fail(xparse *x, const char *what)
{
    if (!x->err)
        x->err = what;
}

/* An integer scalar (not bool, not floating): what an extent may use. */
static int integer_param(const ks_param *p)
{
    const ks_type *t = &p->type;
    return t->nptrs == 0 && t->ndims == 0 && t->base == KS_BASE_SCALAR && t->scalar != KS_SCALAR_BOOL &&
           t->scalar != KS_SCALAR_FLOAT && t->scalar != KS_SCALAR_DOUBLE;
}

static void expr(xparse *x, unsigned depth);

static void factor(xparse *x, unsigned depth)
{
    skip_space(x);
    const char *s = x->s;
    size_t i = x->i;
    if (s[i] == '(') {
        x->i++;
        expr(x, depth + 1);
        skip_space(x);
        if (s[x->i] != ')')
            { fail(x, "expected ')'"); return; }
        x->i++;
    } else if (isdigit((unsigned char)s[i])) {
        errno = 0;
        char *end;
        long long v = strtoll(s + i, &end, 10);
        if (errno || isalnum((unsigned char)*end) || *end == '_')
            { fail(x, "expected a decimal integer"); return; }
        x->i = (size_t)(end - s);
        emit(x, KS_XOP_CONST, v);
    } else if (isalpha((unsigned char)s[i]) || s[i] == '_') {
        size_t e = i;
        while (isalnum((unsigned char)s[e]) || s[e] == '_')
            e++;
        x->i = e;
        for (size_t j = 0; j < x->k->nparams; j++) {
            const ks_param *p = &x->k->params[j];
            if (p->name && strlen(p->name) == e - i && memcmp(p->name, s + i, e - i) == 0) {
                if (!integer_param(p)) {
                    snprintf(x->errbuf, sizeof x->errbuf, "'%s' is a %s, not an integer parameter", p->name,
                             p->spelled);
                    { fail(x, x->errbuf); return; }
                }
                emit(x, KS_XOP_PARAM, (long long)j);
                return;
            }
        }
        snprintf(x->errbuf, sizeof x->errbuf, "'%.*s' is not a parameter of %s", (int)(e - i), s + i,
                 x->k->name);
        { fail(x, x->errbuf); return; }
    } else {
        fail(x, "expected an integer parameter, a number or '('");
    }
}

static void term(xparse *x, unsigned depth)
{
    factor(x, depth);
    for (;;) {
        skip_space(x);
        char c = x->s[x->i];
        if (x->err || (c != '*' && c != '/'))
            return;
        x->i++;
        factor(x, depth);
        emit(x, c == '*' ? KS_XOP_MUL : KS_XOP_DIV, 0);
    }
}

static void expr(xparse *x, unsigned depth)
{
    if (depth > 8)
        { fail(x, "nested too deeply"); return; }
    term(x, depth);
    for (;;) {
        skip_space(x);
        char c = x->s[x->i];
        if (x->err || (c != '+' && c != '-'))
            return;
        x->i++;
        term(x, depth);
        emit(x, c == '+' ? KS_XOP_ADD : KS_XOP_SUB, 0);
    }
}

/* The expression without its spaces, as the manifest and messages show it. */
static char *compact(const char *s, size_t n)
{
    char *r = ks_xmalloc(n + 1), *o = r;
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            *o++ = s[i];
    *o = '\0';
    return r;
}

/* Apply one hint "(PTR, EXPR)" to kernel k; 0, or -1 after reporting. */
static int apply(const char *input, const ks_directive *d, ks_kern *k)
{
    const char *r = d->rest;
    size_t n = strlen(r);
    if (n < 2 || r[0] != '(' || r[n - 1] != ')' || strchr(r, ',') == NULL) {
        ks_error_at(input, d->line, d->col, "expected 'kstub:extent(POINTER, COUNT)'");
        return -1;
    }
    const char *comma = strchr(r, ',');
    char *ptr = compact(r + 1, (size_t)(comma - r - 1));
    ks_param *p = NULL;
    for (size_t j = 0; j < k->nparams; j++)
        if (k->params[j].name && strcmp(k->params[j].name, ptr) == 0)
            p = &k->params[j];
    int rc = -1;
    if (p == NULL) {
        ks_error_at(input, d->line, d->col, "kstub:extent: '%s' is not a parameter of kernel %s", ptr,
                    k->name);
    } else if (p->type.nptrs == 0) {
        ks_error_at(input, d->line, d->col, "kstub:extent: '%s' of kernel %s is a %s, not a pointer", ptr,
                    k->name, p->spelled);
    } else if (p->type.nptrs == 1 && p->type.base == KS_BASE_VOID) {
        ks_error_at(input, d->line, d->col,
                    "kstub:extent: '%s' of kernel %s is a %s: its element size is not known", ptr, k->name,
                    p->spelled);
    } else if (p->extent) {
        ks_error_at(input, d->line, d->col, "kstub:extent: '%s' of kernel %s already has an extent (%s)",
                    ptr, k->name, p->extent);
    } else {
        char *text = ks_xasprintf("%.*s", (int)(r + n - 1 - comma - 1), comma + 1);
        xparse x = {.s = text, .k = k};
        expr(&x, 0);
        skip_space(&x);
        if (!x.err && x.s[x.i] != '\0')
            fail(&x, "unexpected text after the expression");
        if (x.err) {
            ks_error_at(input, d->line, d->col, "kstub:extent(%s, %s) of kernel %s: %s", ptr, text, k->name,
                        x.err);
            free(x.ops);
        } else {
            p->extent = compact(text, strlen(text));
            p->extent_ops = x.ops;
            p->nextent_ops = x.nops;
            rc = 0;
        }
        free(text);
    }
    free(ptr);
    return rc;
}

int ks_extents_apply(const char *input, const ks_source *src, ks_model *m)
{
    ks_directive *d;
    size_t n = ks_source_directives(src, &d);
    int errors = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(d[i].word, "extent") != 0)
            continue;
        /* The next kernel of the input at or after the hint: all of its instantiations. */
        unsigned best = 0;
        for (size_t j = 0; j < m->nkernels; j++) {
            const ks_kern *k = &m->kernels[j];
            if (k->file == NULL && k->line >= d[i].line && (best == 0 || k->line < best))
                best = k->line;
        }
        if (best == 0) {
            ks_error_at(input, d[i].line, d[i].col, "kstub:extent: no kernel is defined after it");
            errors++;
            continue;
        }
        for (size_t j = 0; j < m->nkernels; j++)
            if (m->kernels[j].file == NULL && m->kernels[j].line == best &&
                apply(input, &d[i], &m->kernels[j]) != 0)
                errors++;
    }
    ks_directive_free(d, n);
    return errors ? -1 : 0;
}
