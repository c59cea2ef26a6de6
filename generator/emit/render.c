/*
 * render.c — fills a template (templates/, or the user's -T directory) from
 * a tree of values. Templates use a small subset of mustache so they read
 * like the output:
 *   {{name}}            a value, as it is
 *   {{name:comment}}    a value escaped for a C comment
 *   {{name:string}}     a value escaped for a C string literal
 *   {{name:include}}    a value as it is, inside #include "…": refused when it
 *                       holds what that line cannot spell (C has no escapes there)
 *   {{name:py}}         a value as a Python name: a Python keyword gets a trailing '_'
 *   {{name:py_param}}   the same, and a Python target's launch keyword (grid, stream, ...) too
 *   {{#list}}…{{/list}} repeated per item (or shown once if a value is non-empty)
 *   {{^list}}…{{/list}} shown when the list or value is empty
 *   {{! comment }}      dropped
 * and, for declarations laid out in columns (resolved after rendering):
 *   {{=}}               remember this column (the hang of a parameter list)
 *   {{+}}               indent to the column {{=}} remembered last
 *   {{>}} … {{<}}       pad at {{>}} so that, on every line of the group, {{<}}
 *                       falls in one column: the widest line's, with one space
 *                       before what lies between (stars before a name);
 *                       widths count from the line's {{=}} / {{+}}, or its start
 *   {{[}} … {{]}}       a group of such lines; outside one, a line is its own
 *   {{|N}}              pad to column N (from the line's start), one space at least
 * and named pieces of template (how a type is spelled, say):
 *   {{*name}}…{{/name}} defines a piece (no output; on a line of its own, the
 *                       line goes with it)
 *   {{name}}            where no value has that name: the piece, filled from
 *                       the values in scope there
 *   {{> file}}          the text of file (the type-spelling pieces, say), from
 *                       the template's own folder, else the built-in templates'
 *                       folder; read before rendering, as if written there (on a
 *                       line of its own, the line goes with it). Partials
 *                       include partials, KS_RENDER_MAX_PARTIALS deep
 * A section, comment or group tag alone on its line takes the whole line with it.
 * An unknown name is an error, so a typo in a user's template is caught.
 */
#include "emit/render.h"
#include "base/inputs.h"
#include "emit/tree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sections nest no deeper than this (a hostile template must not exhaust the stack). */
#define KS_RENDER_MAX_DEPTH 64
/* {{> file}} nests no deeper than this (a partial that includes itself stops here). */
#define KS_RENDER_MAX_PARTIALS 8

/* The work one render may do (bytes written plus tags rendered): 1 Mi,
 * plus 64 times the template's and the values' own size. A template renders
 * each list item through the sections that iterate it, which stays within a
 * small multiple of those sizes (the default templates: 1-6 times, a 20 MB
 * embedded image included); a section that iterates a list inside its own
 * iteration multiplies instead (40 nested {{#kernels}} over two kernels:
 * 2^40 renders) and is stopped at the first tag past the budget, within a
 * second even under ASan. */
#define KS_RENDER_WORK_FLOOR ((size_t)1 << 20)
#define KS_RENDER_WORK_FACTOR 64

/* ---- the renderer ------------------------------------------------------------------------------ */

typedef struct tag tag;

/* A layout tag's place in the output, resolved after rendering. */
typedef struct mark {
    size_t pos;         /* in the output */
    size_t tpl_pos;     /* in the template, for messages */
    char kind;          /* '=', '+', '>', '<', '[', ']', '|' */
    size_t column;      /* '|': the column */
} mark;

/* A {{*name}} piece: its body in the template. */
typedef struct piece {
    const char *key;
    size_t keylen, start, end;
} piece;

/* Where a stretch of the text (partials spliced in) came from, for messages:
 * from position at on, file name's text from offset off. */
typedef struct span {
    size_t at;
    const char *name;
    const char *text;
    size_t off;
} span;

typedef struct tpl {
    const char *name;   /* template file, for messages */
    const char *text;
    size_t len;
    const span *spans;  /* in order of at; NULL: all of text is name's */
    size_t nspans;
    int errors;
    mark *marks;
    size_t nmarks, marks_cap;   /* grown by doubling: a render may leave millions */
    piece *pieces;
    size_t npieces;
    tag *closes;        /* per template position: the section opened there's close, */
    unsigned char *closed; /* ... once found (sections are rendered once per item) */
    size_t work, budget;   /* tags rendered so far (bytes written are out->len), the limit */
    size_t out_start;      /* out->len when the render began */
    const tag *open[KS_RENDER_MAX_DEPTH + 1]; /* the sections (and pieces) being rendered */
    size_t nopen;
} tpl;

struct tag {
    size_t start, end;            /* "{{" .. past "}}" */
    size_t outer_start, outer_end;/* with the whole line when standalone */
    char sigil;                   /* '#', '^', '/', '!' or 0 */
    const char *key;
    size_t keylen;
    const char *filter;           /* after ':', or NULL */
    size_t filterlen;
};

static void line_col(const char *text, size_t pos, unsigned *line, unsigned *col)
{
    unsigned l = 1, c = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* The file that position pos of t came from, and the line and column there. */
static const char *position_in(const tpl *t, size_t pos, unsigned *line, unsigned *col)
{
    if (!t->nspans) {
        line_col(t->text, pos, line, col);
        return t->name;
    }
    size_t i = t->nspans - 1;
    while (i > 0 && t->spans[i].at > pos)
        i--;
    const span *sp = &t->spans[i];
    line_col(sp->text, sp->off + (pos - sp->at), line, col);
    return sp->name;
}

static void position(const tpl *t, size_t pos, unsigned *line, unsigned *col)
{
    (void)position_in(t, pos, line, col);
}

static void tpl_error(tpl *t, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tpl_error(tpl *t, size_t pos, const char *fmt, ...)
{
    unsigned line, col;
    const char *file = position_in(t, pos, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(file, line, col, "error", fmt, ap);
    va_end(ap);
    t->errors++;
}

/* Tag sigils: sections, comments, layout, pieces. */
static int is_sigil(char c)
{
    switch (c) {
    case '#': case '^': case '/': case '!': case '=': case '+': case '>': case '<':
    case '[': case ']': case '|': case '*':
        return 1;
    }
    return 0;
}

/* Layout tags, resolved after rendering; inline ones are never standalone. */
static int is_layout(char c)
{
    return c == '=' || c == '+' || c == '>' || c == '<' || c == '[' || c == ']' || c == '|';
}

static int is_inline_layout(char c)
{
    return is_layout(c) && c != '[' && c != ']';
}

/* Finds the next tag at or after pos (before end); 0 if none. */
static int next_tag(tpl *t, size_t pos, size_t end, tag *g)
{
    const char *s = t->text;
    size_t open = end;
    for (size_t i = pos; i + 1 < end; i++)
        if (s[i] == '{' && s[i + 1] == '{') {
            open = i;
            break;
        }
    if (open == end)
        return 0;
    size_t close = end;
    for (size_t i = open + 2; i + 1 < end; i++)
        if (s[i] == '}' && s[i + 1] == '}') {
            close = i;
            break;
        }
    if (close == end) {
        tpl_error(t, open, "unterminated '{{'");
        return 0;
    }
    g->start = open;
    g->end = close + 2;
    size_t k = open + 2;
    g->sigil = is_sigil(s[k]) ? s[k++] : 0;
    while (k < close && isspace((unsigned char)s[k]))
        k++;
    size_t ke = close;
    while (ke > k && isspace((unsigned char)s[ke - 1]))
        ke--;
    g->key = s + k;
    g->keylen = ke - k;
    g->filter = NULL;
    g->filterlen = 0;
    const char *colon = g->sigil ? NULL : memchr(g->key, ':', g->keylen);
    if (colon) {
        g->filter = colon + 1;
        g->filterlen = g->keylen - (size_t)(colon + 1 - g->key);
        g->keylen = (size_t)(colon - g->key);
    }

    g->outer_start = g->start;
    g->outer_end = g->end;
    if (g->sigil && !is_inline_layout(g->sigil)) {
        size_t ls = g->start;
        while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t'))
            ls--;
        size_t le = g->end;
        while (le < end && (s[le] == ' ' || s[le] == '\t'))
            le++;
        if ((ls == 0 || s[ls - 1] == '\n') && (le == end || s[le] == '\n')) {
            g->outer_start = ls;
            g->outer_end = le < end ? le + 1 : le;
        }
    }
    return 1;
}

/* Finds the {{/key}} that closes the section opened by g. */
static int find_close(tpl *t, const tag *g, size_t end, tag *close)
{
    if (t->closed[g->start] && t->closes[g->start].outer_end <= end) {
        *close = t->closes[g->start];
        return 1;
    }
    int depth = 1;
    size_t pos = g->outer_end;
    tag x;
    while (next_tag(t, pos, end, &x)) {
        if (x.keylen == g->keylen && memcmp(x.key, g->key, g->keylen) == 0) {
            if (x.sigil == '#' || x.sigil == '^')
                depth++;
            else if (x.sigil == '/' && --depth == 0) {
                *close = x;
                t->closes[g->start] = x;
                t->closed[g->start] = 1;
                return 1;
            }
        }
        pos = x.end;
    }
    if (t->errors == 0)
        tpl_error(t, g->start, "section '%.*s' is never closed", (int)g->keylen, g->key);
    return 0;
}

/* {{name:py}}: a name as a Python identifier, a Python keyword followed by '_' (PEP 8's way);
 * {{name:py_param}}: the same for a kernel's parameter, which also steps aside from the
 * launch keywords every function of templates/python takes after the kernel's own. */
static char *python_name(const char *v, int param)
{
    static const char *const keywords[] = {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
        "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
        "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
        "with", "yield"};
    static const char *const launch[] = {"grid", "block", "shared", "stream", "cluster", "cooperative",
                                         "pdl", "priority"};
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strcmp(v, keywords[i]) == 0)
            return ks_xasprintf("%s_", v);
    for (size_t i = 0; param && i < sizeof launch / sizeof launch[0]; i++)
        if (strcmp(v, launch[i]) == 0)
            return ks_xasprintf("%s_", v);
    return ks_xstrdup(v);
}

static void put_value(tpl *t, const tag *g, const char *v, ks_buf *out)
{
    if (!g->filter) {
        ks_buf_puts(out, v);
        return;
    }
    char *e = NULL;
    if (g->filterlen == 7 && memcmp(g->filter, "comment", 7) == 0)
        e = ks_escape_comment(v);
    else if (g->filterlen == 6 && memcmp(g->filter, "string", 6) == 0)
        e = ks_escape_string(v);
    else if (g->filterlen == 5 && memcmp(g->filter, "ident", 5) == 0)
        e = ks_escape_identifier(v);
    else if (g->filterlen == 2 && memcmp(g->filter, "py", 2) == 0)
        e = python_name(v, 0);
    else if (g->filterlen == 8 && memcmp(g->filter, "py_param", 8) == 0)
        e = python_name(v, 1);
    else if (g->filterlen == 7 && memcmp(g->filter, "include", 7) == 0) {
        const char *why = ks_include_unspellable(v);
        if (why) {
            char *shown = ks_escape_string(v);
            tpl_error(t, g->start, "'%.*s' is \"%s\", which holds %s: an #include \"...\" line cannot "
                      "name that file (C has no escapes there); choose another output name (-o)",
                      (int)g->keylen, g->key, shown, why);
            free(shown);
        } else {
            e = ks_xstrdup(v);
        }
    } else
        tpl_error(t, g->start, "unknown filter ':%.*s' (comment, string, include, ident, py, py_param)", (int)g->filterlen,
                  g->filter);
    if (e)
        ks_buf_puts(out, e);
    free(e);
}

/* Stops the render once its work passes the budget, at the innermost
 * section being rendered (or the tag itself), naming an enclosing section of
 * the same name when there is one: the repetition that multiplies. */
static int over_budget(tpl *t, const tag *g, const ks_buf *out)
{
    size_t done = ++t->work + (out->len - t->out_start);
    if (done <= t->budget)
        return 0;
    const tag *in = t->nopen ? t->open[t->nopen - 1] : g, *outer = NULL;
    for (size_t i = 0; i + 1 < t->nopen && !outer; i++)
        if (t->open[i]->keylen == in->keylen && memcmp(t->open[i]->key, in->key, in->keylen) == 0)
            outer = t->open[i];
    if (outer) {
        unsigned line, col;
        position(t, outer->start, &line, &col);
        tpl_error(t, in->start, "rendering stopped after %zu bytes of work (the template and its "
                  "values allow %zu): section '%.*s' repeats inside itself (opened at line %u), "
                  "%zu sections deep", done, t->budget, (int)in->keylen, in->key, line, t->nopen);
    } else {
        tpl_error(t, in->start, "rendering stopped after %zu bytes of work (the template and its "
                  "values allow %zu), %zu sections deep", done, t->budget, t->nopen);
    }
    return 1;
}

/* Renders a section's body (or a piece) once, with its tag on the open stack. */
static void render(tpl *t, size_t pos, size_t end, const ks_tnode *ctx, ks_buf *out, int depth);
static void render_body(tpl *t, const tag *at, size_t pos, size_t end, const ks_tnode *ctx,
                        ks_buf *out, int depth)
{
    t->open[t->nopen++] = at;
    render(t, pos, end, ctx, out, depth);
    t->nopen--;
}

static void render(tpl *t, size_t pos, size_t end, const ks_tnode *ctx, ks_buf *out, int depth)
{
    tag g;
    while (t->errors == 0 && next_tag(t, pos, end, &g)) {
        ks_buf_put(out, t->text + pos, g.outer_start - pos);
        pos = g.outer_end;
        if (over_budget(t, &g, out))
            return;
        if (g.sigil == '!')
            continue;
        if (g.sigil == '*') {               /* a piece's definition: skipped here */
            tag close;
            if (!find_close(t, &g, end, &close))
                return;
            pos = close.outer_end;
            if ((g.start == 0 || t->text[g.start - 1] == '\n') && pos < end && t->text[pos] == '\n')
                pos++;
            continue;
        }
        if (is_layout(g.sigil)) {
            size_t column = 0;
            if (g.sigil == '|') {
                for (size_t i = 0; i < g.keylen && isdigit((unsigned char)g.key[i]); i++)
                    column = column * 10 + (size_t)(g.key[i] - '0');
                if (!g.keylen || g.keylen > 4 || !isdigit((unsigned char)g.key[g.keylen - 1])) {
                    tpl_error(t, g.start, "'{{|N}}' takes a column number");
                    return;
                }
            } else if (g.keylen) {
                tpl_error(t, g.start, "'{{%c' takes no name", g.sigil);
                return;
            }
            if (t->nmarks == t->marks_cap) {
                t->marks_cap = t->marks_cap ? 2 * t->marks_cap : 64;
                t->marks = ks_xrealloc(t->marks, t->marks_cap * sizeof *t->marks);
            }
            t->marks[t->nmarks++] = (mark){out->len, g.start, g.sigil, column};
            continue;
        }
        if (g.sigil == '/') {
            tpl_error(t, g.start, "'{{/%.*s}}' closes no section", (int)g.keylen, g.key);
            return;
        }
        const ks_tval *v = ks__tn_find(ctx, g.key, g.keylen);
        if (!v && !g.sigil) {
            const piece *pc = NULL;
            for (size_t i = 0; i < t->npieces && !pc; i++)
                if (t->pieces[i].keylen == g.keylen && memcmp(t->pieces[i].key, g.key, g.keylen) == 0)
                    pc = &t->pieces[i];
            if (pc) {
                if (g.filter) {
                    tpl_error(t, g.start, "'%.*s' is a piece of template: no filter", (int)g.keylen, g.key);
                    return;
                }
                if (depth >= KS_RENDER_MAX_DEPTH) {
                    tpl_error(t, g.start, "sections nest deeper than %d", KS_RENDER_MAX_DEPTH);
                    return;
                }
                render_body(t, &g, pc->start, pc->end, ctx, out, depth + 1);
                continue;
            }
        }
        if (!v) {
            tpl_error(t, g.start, "unknown name '%.*s'", (int)g.keylen, g.key);
            return;
        }
        if (!g.sigil) {
            if (!v->str) {
                tpl_error(t, g.start, "'%.*s' is a list; use it as a section", (int)g.keylen, g.key);
                return;
            }
            put_value(t, &g, v->str, out);
            continue;
        }
        if (depth >= KS_RENDER_MAX_DEPTH) {
            tpl_error(t, g.start, "sections nest deeper than %d", KS_RENDER_MAX_DEPTH);
            return;
        }
        tag close;
        if (!find_close(t, &g, end, &close))
            return;
        int empty = v->str ? v->str[0] == '\0' : v->nitems == 0;
        if (g.sigil == '^') {
            if (empty)
                render_body(t, &g, g.outer_end, close.outer_start, ctx, out, depth + 1);
        } else if (v->str) {
            if (!empty)
                render_body(t, &g, g.outer_end, close.outer_start, ctx, out, depth + 1);
        } else {
            for (size_t i = 0; i < v->nitems && t->errors == 0; i++)
                render_body(t, &g, g.outer_end, close.outer_start, v->items[i], out, depth + 1);
        }
        pos = close.outer_end;
    }
    if (t->errors == 0)
        ks_buf_put(out, t->text + pos, end - pos);
}

/* ---- columns ---------------------------------------------------------------------------------- */

/* The start of the line holding position to, given ls, the start of the
 * line holding from (from <= to): only the text between is searched, so a
 * pass over the marks in order reads the output once, however long its
 * lines (a line of millions of marks was quadratic). */
static size_t line_start_after(const char *s, size_t from, size_t to, size_t ls)
{
    for (size_t i = to; i > from; i--)
        if (s[i - 1] == '\n')
            return i;
    return ls;
}

/* A parameter list hangs under its '(' up to this column; past it (a
 * template instance's name of thousands of characters), continuation
 * lines are indented by KS__HANG_LONG instead: a header of such names was
 * a quarter blanks. */
#define KS__HANG_MAX 96
#define KS__HANG_LONG 8

/* Pads the output at its {{>}} marks and indents it at its {{+}} marks. */
static void lay_out(tpl *t, ks_buf *out)
{
    const char *s = out->data;
    size_t n = t->nmarks;
    /* Pass 1: each {{>}}'s width (origin to {{<}}) and each group's column. */
    size_t *used = ks_xmalloc((n + 1) * sizeof *used), *group = ks_xmalloc((n + 1) * sizeof *group);
    size_t *cols = ks_xmalloc((n + 1) * sizeof *cols), ngroups = 0;
    size_t cur = (size_t)-1, origin = 0, seen = 0, ls = 0;
    for (size_t i = 0; i < n && t->errors == 0; i++) {
        mark *mk = &t->marks[i];
        ls = line_start_after(s, seen, mk->pos, ls);
        seen = mk->pos;
        if (mk->kind == '[') {
            if (cur != (size_t)-1)
                tpl_error(t, mk->tpl_pos, "'{{[}}' inside a group");
            cur = ngroups;
            cols[ngroups++] = 0;
        } else if (mk->kind == ']') {
            if (cur == (size_t)-1)
                tpl_error(t, mk->tpl_pos, "'{{]}}' closes no group");
            cur = (size_t)-1;
        } else if (mk->kind == '=' || mk->kind == '+') {
            origin = mk->pos;
        } else if (mk->kind == '>') {
            size_t from = origin >= ls ? origin : ls;
            if (i + 1 >= n || t->marks[i + 1].kind != '<' ||
                memchr(s + mk->pos, '\n', t->marks[i + 1].pos - mk->pos)) {
                tpl_error(t, mk->tpl_pos, "'{{>}}' needs a '{{<}}' after it on its line");
                break;
            }
            size_t width = t->marks[i + 1].pos - from + 1;
            if (cur == (size_t)-1) {
                group[i] = ngroups;
                cols[ngroups++] = width;
            } else {
                group[i] = cur;
                if (width > cols[cur])
                    cols[cur] = width;
            }
            used[i] = t->marks[i + 1].pos - from;   /* the line's width without its pad */
        }
    }
    if (cur != (size_t)-1 && t->errors == 0)
        tpl_error(t, t->marks[n - 1].tpl_pos, "a '{{[}}' group is never closed");
    /* Pass 2: the output again, with the pads and indents. */
    ks_buf b = {0};
    size_t pos = 0, hang = 0, bls = 0;
    for (size_t i = 0; i < n && t->errors == 0; i++) {
        mark *mk = &t->marks[i];
        size_t before = b.len;
        ks_buf_put(&b, s + pos, mk->pos - pos);
        pos = mk->pos;
        bls = line_start_after(b.data ? b.data : "", before, b.len, bls);
        size_t col = b.len - bls;
        if (mk->kind == '=')
            hang = col <= KS__HANG_MAX ? col : KS__HANG_LONG;
        else if (mk->kind == '+')
            ks_buf_printf(&b, "%*s", (int)(hang > col ? hang - col : 0), "");
        else if (mk->kind == '>')
            ks_buf_printf(&b, "%*s", (int)(cols[group[i]] - used[i]), "");
        else if (mk->kind == '|')
            ks_buf_printf(&b, "%*s", (int)(mk->column > col ? mk->column - col : 1), "");
    }
    if (t->errors == 0) {
        ks_buf_put(&b, s + pos, out->len - pos);
        free(out->data);
        *out = b;
    } else {
        free(b.data);
    }
    free(used);
    free(group);
    free(cols);
}

/* The size of the values under n: their strings' bytes and one per list
 * item; an item borrowed from another list counts its own strings only. */
static size_t values_size(const ks_tnode *n, int shallow)
{
    size_t size = 0;
    for (size_t i = 0; i < n->nvals; i++) {
        const ks_tval *v = n->vals[i];
        size += v->keylen + (v->str ? strlen(v->str) : 0);
        for (size_t j = 0; !shallow && j < v->nitems; j++)
            size += 1 + values_size(v->items[j], v->borrowed);
    }
    return size;
}

/* ---- partials --------------------------------------------------------------------------------- */

/* The text with its {{> file}} partials spliced in, and where each stretch came from. */
typedef struct expansion {
    ks_buf out;
    span *spans;
    size_t nspans;
    char **owned;       /* the partials' paths and texts */
    size_t nowned;
    const char *partials;   /* the second folder searched, or NULL */
    void (*seen)(void *, const char *);  /* told each partial's path, or NULL */
    void *seen_ctx;
} expansion;

static void add_span(expansion *ex, const char *name, const char *text, size_t off)
{
    ex->spans = ks_xrealloc(ex->spans, (ex->nspans + 1) * sizeof *ex->spans);
    ex->spans[ex->nspans++] = (span){ex->out.len, name, text, off};
}

static void own(expansion *ex, char *p)
{
    ex->owned = ks_xrealloc(ex->owned, (ex->nowned + 1) * sizeof *ex->owned);
    ex->owned[ex->nowned++] = p;
}

static void expand_error(const char *name, const char *text, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void expand_error(const char *name, const char *text, size_t pos, const char *fmt, ...)
{
    unsigned line, col;
    line_col(text, pos, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(name, line, col, "error", fmt, ap);
    va_end(ap);
}

/* Reads partial file (fl bytes) for the template name: from name's folder,
 * else ex->partials. Its path and text are ex's; NULL with the reason in
 * ks_file_error() when neither has it. */
static char *read_partial(expansion *ex, const char *name, const char *file, size_t fl, size_t *len,
                          const char **path)
{
    const char *slash = strrchr(name, '/');
    char *p = slash ? ks_xasprintf("%.*s/%.*s", (int)(slash - name), name, (int)fl, file)
                    : ks_xasprintf("%.*s", (int)fl, file);
    char *text = ks_read_file(p, len);
    if (!text && ex->partials) {
        free(p);
        p = ks_xasprintf("%s/%.*s", ex->partials, (int)fl, file);
        text = ks_read_file(p, len);
    }
    if (!text) {
        free(p);
        return NULL;
    }
    own(ex, p);
    own(ex, text);
    if (ex->seen)
        ex->seen(ex->seen_ctx, p);
    *path = p;
    return text;
}

/* A partial's name: a file name in a template folder, no folder of its own. */
static int partial_name_ok(const char *s, size_t n)
{
    if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || (unsigned char)s[i] < 0x20)
            return 0;
    return 1;
}

/* Appends text (name's) to ex->out with its partials spliced in. 0, or -1
 * after an error at the {{> file}} tag that could not be read. */
static int expand(expansion *ex, const char *name, const char *text, size_t len, int depth)
{
    size_t copied = 0;
    add_span(ex, name, text, 0);
    for (size_t i = 0; i + 2 < len;) {
        if (text[i] != '{' || text[i + 1] != '{') {
            i++;
            continue;
        }
        size_t close = i + 2;
        while (close + 1 < len && !(text[close] == '}' && text[close + 1] == '}'))
            close++;
        if (close + 1 >= len)
            break;                  /* unterminated: the renderer says so */
        size_t k = i + 3, ke = close;
        while (k < ke && isspace((unsigned char)text[k]))
            k++;
        while (ke > k && isspace((unsigned char)text[ke - 1]))
            ke--;
        if (text[i + 2] != '>' || k == ke) {    /* not a partial ({{>}} pads) */
            i = close + 2;
            continue;
        }
        if (!partial_name_ok(text + k, ke - k)) {
            expand_error(name, text, i, "'{{> %.*s}}': a partial is a file name in the template's "
                         "folder, with no folder of its own", (int)(ke - k), text + k);
            return -1;
        }
        if (depth >= KS_RENDER_MAX_PARTIALS) {
            expand_error(name, text, i, "partials nest deeper than %d ('{{> %.*s}}')",
                         KS_RENDER_MAX_PARTIALS, (int)(ke - k), text + k);
            return -1;
        }
        size_t plen;
        const char *ppath;
        const char *ptext = read_partial(ex, name, text + k, ke - k, &plen, &ppath);
        if (!ptext) {
            expand_error(name, text, i, "cannot read partial '%.*s': %s", (int)(ke - k), text + k,
                         ks_file_error());
            return -1;
        }
        /* Alone on its line, the tag takes the line with it. */
        size_t ls = i, le = close + 2;
        while (ls > 0 && (text[ls - 1] == ' ' || text[ls - 1] == '\t'))
            ls--;
        while (le < len && (text[le] == ' ' || text[le] == '\t'))
            le++;
        if (!((ls == 0 || text[ls - 1] == '\n') && (le == len || text[le] == '\n'))) {
            ls = i;
            le = close + 2;
        } else if (le < len) {
            le++;
        }
        ks_buf_put(&ex->out, text + copied, ls - copied);
        if (expand(ex, ppath, ptext, plen, depth + 1) != 0)
            return -1;
        copied = i = le;
        add_span(ex, name, text, copied);
    }
    ks_buf_put(&ex->out, text + copied, len - copied);
    return 0;
}

static void expansion_free(expansion *ex)
{
    for (size_t i = 0; i < ex->nowned; i++)
        free(ex->owned[i]);
    free(ex->owned);
    free(ex->spans);
    free(ex->out.data);
}

/* Renders text[from, len) with the pieces defined anywhere in text (its
 * partials spliced in first; from lies past the last of them). */
static int render_range(const char *name, const char *text_in, size_t len_in, size_t from,
                        const char *partials, const ks_tnode *root, ks_buf *out)
{
    expansion ex = {{0}, NULL, 0, NULL, 0, partials, NULL, NULL};
    if (expand(&ex, name, text_in, len_in, 0) != 0) {
        expansion_free(&ex);
        return -1;
    }
    ks_buf_put(&ex.out, "", 0);
    const char *text = ex.out.data;
    size_t len = ex.out.len;
    if (from)
        from += len - len_in;
    tpl t = {name, text, len, ex.nowned ? ex.spans : NULL, ex.nowned ? ex.nspans : 0, 0, NULL, 0, 0,
             NULL, 0, ks_xmalloc((len + 1) * sizeof(tag)), NULL, 0, 0, out->len, {NULL}, 0};
    size_t scale = len + values_size(root, 0);
    t.budget = KS_RENDER_WORK_FLOOR + (scale > ((size_t)-1 - KS_RENDER_WORK_FLOOR) / KS_RENDER_WORK_FACTOR
                                       ? (size_t)-1 - KS_RENDER_WORK_FLOOR
                                       : scale * KS_RENDER_WORK_FACTOR);
    t.closed = ks_xmalloc(len + 1);
    memset(t.closed, 0, len + 1);
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        tpl_error(&t, (size_t)(nul - text), "a NUL byte in a template");
        free(t.closes);
        free(t.closed);
        expansion_free(&ex);
        return -1;
    }
    /* The pieces, wherever they are defined. */
    tag g;
    for (size_t pos = 0; t.errors == 0 && next_tag(&t, pos, len, &g);) {
        pos = g.end;
        if (g.sigil != '*')
            continue;
        tag close;
        if (!find_close(&t, &g, len, &close))
            break;
        t.pieces = ks_xrealloc(t.pieces, (t.npieces + 1) * sizeof *t.pieces);
        t.pieces[t.npieces++] = (piece){g.key, g.keylen, g.end, close.start};
        pos = close.end;
    }
    if (t.errors == 0)
        render(&t, from, len, root, out, 0);
    if (t.errors == 0 && t.nmarks)
        lay_out(&t, out);
    free(t.marks);
    free(t.pieces);
    free(t.closes);
    free(t.closed);
    expansion_free(&ex);
    return t.errors ? -1 : 0;
}

int ks_render(const char *name, const char *text, size_t len, const char *partials,
              const ks_tnode *root, ks_buf *out)
{
    return render_range(name, text, len, 0, partials, root, out);
}

int ks_render_with(const char *name, const char *text, size_t len, const char *driver,
                   const char *partials, const ks_tnode *root, ks_buf *out)
{
    ks_buf all = {0};
    ks_buf_put(&all, text, len);
    ks_buf_puts(&all, "\n");
    size_t from = all.len;
    ks_buf_puts(&all, driver);
    int rc = render_range(name, all.data, all.len, from, partials, root, out);
    free(all.data);
    return rc;
}

int ks_render_partials(const char *name, const char *text, size_t len, const char *partials,
                       void (*seen)(void *, const char *), void *ctx)
{
    expansion ex = {{0}, NULL, 0, NULL, 0, partials, seen, ctx};
    int rc = expand(&ex, name, text, len, 0);
    expansion_free(&ex);
    return rc;
}
