/*
 * source_macros.c — the explicit instantiations a macro writes: each
 * top-level invocation the preprocessing record shows is expanded from the
 * tokens of the definition clang used there (see source.c's head comment),
 * and the result read by source_tokens.c.
 */
#include "front/source_int.h"
#include "base/instscan.h"
#include "base/util.h"
#include "front/cursor.h"
#include "front/source.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

/* The unit's record, read once per parse: every definition (each file's,
 * in the unit's order) and every top-level expansion with its file. Each
 * header ks_source_load reads takes its own expansions from it; reading
 * the whole record again per header cost a CUTLASS file (dozens of headers
 * with kernels, a record of hundreds of thousands of entries) about a
 * quarter of kstub's time (docs/performance.md, issue 38). Forgotten with
 * the unit (ks_source_forget_unit, from session.c before a reparse and
 * when the unit goes). */
typedef struct pp_any {
    CXCursor cursor;
    unsigned start, end;
    unsigned file;               /* index into pp_unit.files */
    size_t ndefs_before;
} pp_any;

typedef struct pp_unit {
    CXTranslationUnit tu;        /* NULL: nothing read */
    pp_def *defs;
    size_t ndefs, cdefs;
    pp_any *exps;
    size_t nexps, cexps;
    CXFile *files;               /* each distinct CXFile an expansion is in */
    size_t nfiles, cfiles;
} pp_unit;

static pp_unit unit;

/* The record of one file: the unit's definitions, the file's expansions. */
typedef struct pp_record {
    CXFile file;                 /* the file read */
    const pp_def *defs;
    size_t ndefs;
    pp_exp *exps;
    size_t nexps, cexps;
} pp_record;

static void forget_names(void);

void ks_source_forget_unit(void)
{
    forget_names();
    for (size_t i = 0; i < unit.ndefs; i++)
        free(unit.defs[i].name);
    free(unit.defs);
    free(unit.exps);
    free(unit.files);
    memset(&unit, 0, sizeof unit);
}

static unsigned file_index(CXFile f)
{
    /* expansions come in runs of one file: the last one first */
    for (size_t i = unit.nfiles; i-- > 0 && i + 8 >= unit.nfiles;)
        if (unit.files[i] == f)
            return (unsigned)i;
    for (size_t i = 0; i < unit.nfiles; i++)
        if (unit.files[i] == f)
            return (unsigned)i;
    if (unit.nfiles == unit.cfiles) {
        unit.cfiles = unit.cfiles ? unit.cfiles * 2 : 64;
        unit.files = ks_xrealloc(unit.files, unit.cfiles * sizeof *unit.files);
    }
    unit.files[unit.nfiles] = f;
    return (unsigned)unit.nfiles++;
}

static enum CXChildVisitResult collect_unit(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    (void)data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_MacroDefinition) {
        if (unit.ndefs == unit.cdefs) {
            unit.cdefs = unit.cdefs ? unit.cdefs * 2 : 64;
            unit.defs = ks_xrealloc(unit.defs, unit.cdefs * sizeof *unit.defs);
        }
        pp_def *d = &unit.defs[unit.ndefs++];
        d->cursor = c;
        d->name = ks_take(clang_getCursorSpelling(c));
        d->offset = ks__file_offset(clang_getCursorLocation(c), &d->file);
    } else if (k == CXCursor_MacroExpansion) {
        CXFile f;
        CXSourceRange ext = clang_getCursorExtent(c);
        unsigned start = ks__file_offset(clang_getRangeStart(ext), &f);
        if (!f)
            return CXChildVisit_Continue;
        if (unit.nexps == unit.cexps) {
            unit.cexps = unit.cexps ? unit.cexps * 2 : 256;
            unit.exps = ks_xrealloc(unit.exps, unit.cexps * sizeof *unit.exps);
        }
        pp_any *e = &unit.exps[unit.nexps++];
        e->cursor = c;
        e->start = start;
        e->end = ks__file_offset(clang_getRangeEnd(ext), NULL);
        e->file = file_index(f);
        e->ndefs_before = unit.ndefs;
    }
    return CXChildVisit_Continue;
}

/* file's record, from the unit's (read now if it was not). */
static void record_of(pp_record *r, CXTranslationUnit tu, CXFile file)
{
    if (unit.tu != tu) {
        ks_source_forget_unit();
        unit.tu = tu;
        clang_visitChildren(clang_getTranslationUnitCursor(tu), collect_unit, NULL);
    }
    memset(r, 0, sizeof *r);
    r->file = file;
    r->defs = unit.defs;
    r->ndefs = unit.ndefs;
    unsigned char *same = ks_xmalloc(unit.nfiles + 1);
    for (size_t i = 0; i < unit.nfiles; i++)
        same[i] = (unsigned char)clang_File_isEqual(unit.files[i], file);
    for (size_t i = 0; i < unit.nexps; i++) {
        const pp_any *a = &unit.exps[i];
        if (!same[a->file])
            continue;
        if (r->nexps == r->cexps) {
            r->cexps = r->cexps ? r->cexps * 2 : 16;
            r->exps = ks_xrealloc(r->exps, r->cexps * sizeof *r->exps);
        }
        r->exps[r->nexps++] = (pp_exp){a->cursor, a->start, a->end, a->ndefs_before};
    }
    free(same);
}

static void record_free(pp_record *r)
{
    free(r->exps);
}

/* ---- names, indexed ---------------------------------------------------------------------------- */

/* The places (ascending) that one name has: the record's definitions of
 * it, or the offsets of the file's "#undef NAME". Every lookup is one hash
 * and a binary search, so a file of N macros and N invocations costs N
 * lookups, not N times N comparisons. */
typedef struct name_places {
    const char *name;
    size_t n;
    size_t *at;
    size_t count, cap;
} name_places;

typedef struct name_index {
    name_places *slots;
    size_t nslots;               /* a power of two, at least twice the names */
    size_t nnames;
} name_index;

static name_places *index_find(const name_index *ix, const char *s, size_t n)
{
    if (!ix->nslots)
        return NULL;
    for (size_t k = ks_hash_bytes(s, n) & (ix->nslots - 1);; k = (k + 1) & (ix->nslots - 1)) {
        name_places *p = &ix->slots[k];
        if (!p->name)
            return NULL;
        if (p->n == n && memcmp(p->name, s, n) == 0)
            return p;
    }
}

static void index_add(name_index *ix, const char *s, size_t n, size_t at)
{
    if (2 * (ix->nnames + 1) > ix->nslots) {
        name_index big = {NULL, ix->nslots ? 2 * ix->nslots : 64, 0};
        big.slots = ks_xmalloc(big.nslots * sizeof *big.slots);
        memset(big.slots, 0, big.nslots * sizeof *big.slots);
        for (size_t i = 0; i < ix->nslots; i++)
            if (ix->slots[i].name) {
                size_t k = ks_hash_bytes(ix->slots[i].name, ix->slots[i].n) & (big.nslots - 1);
                while (big.slots[k].name)
                    k = (k + 1) & (big.nslots - 1);
                big.slots[k] = ix->slots[i];
            }
        free(ix->slots);
        big.nnames = ix->nnames;
        *ix = big;
    }
    name_places *p = index_find(ix, s, n);
    if (!p) {
        size_t k = ks_hash_bytes(s, n) & (ix->nslots - 1);
        while (ix->slots[k].name)
            k = (k + 1) & (ix->nslots - 1);
        p = &ix->slots[k];
        p->name = s;
        p->n = n;
        ix->nnames++;
    }
    if (p->count == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 2;
        p->at = ks_xrealloc(p->at, p->cap * sizeof *p->at);
    }
    p->at[p->count++] = at;
}

static void index_free(name_index *ix)
{
    for (size_t i = 0; i < ix->nslots; i++)
        free(ix->slots[i].at);
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}

/* The unit's definitions by name, indexed once per unit (record_of read them). */
static name_index unit_index;
static int unit_indexed;

static const name_index *unit_names(void)
{
    if (!unit_indexed) {
        unit_indexed = 1;
        for (size_t d = 0; d < unit.ndefs; d++)
            index_add(&unit_index, unit.defs[d].name, strlen(unit.defs[d].name), d);
    }
    return &unit_index;
}

static void forget_names(void)
{
    index_free(&unit_index);
    unit_indexed = 0;
}

/* How many of p's places are below limit (they ascend). */
static size_t places_below(const name_places *p, size_t limit)
{
    size_t lo = 0, hi = p->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->at[mid] < limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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
    mdef **by_def;               /* the tokenized definition of each of the record's, or NULL */
    const name_index *names;     /* the record's definitions by name (the unit's) */
    name_index undefs;           /* the file's #undef lines by name */
    char **owned;                /* spellings made here (stringified, pasted, definitions') */
    size_t nowned, cowned;
    size_t spent;                /* tokens made for this invocation */
    size_t ndefs_before;         /* of the invocation being expanded */
    unsigned at;                 /* its offset */
    const mdef *active[KS_MACRO_DEPTH + 1];
} expander;

static const char *own(expander *x, char *s)
{
    if (x->nowned == x->cowned) {
        x->cowned = x->cowned ? 2 * x->cowned : 64;
        x->owned = ks_xrealloc(x->owned, x->cowned * sizeof *x->owned);
    }
    x->owned[x->nowned++] = s;
    return s;
}

static const mdef *tokenized(expander *x, size_t def)
{
    if (x->by_def[def])
        return x->by_def[def];
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
        unsigned s = ks__file_offset(clang_getRangeStart(e), NULL), end = ks__file_offset(clang_getRangeEnd(e), NULL);
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
        size_t un;
        char *u = memchr(t.s, '\\', t.n) ? ks_unspliced(t.s, t.n, &un) : NULL;
        if (u) {
            t.s = own(x, u);
            t.n = un;
        }
        if (j == 0)
            continue;                              /* the name */
        if (j == 1 && !t.space && ks__tok_punct(&t) == '(') {
            m.function_like = 1;
            i = 2;                                 /* in the parameters */
            continue;
        }
        if (i == 2) {
            if (ks__tok_punct(&t) == ')')
                i = 3;
            else if (ks__tok_spelled(&t, "...")) {
                m.variadic = 1;                    /* "NAME..." names the rest NAME */
                if (!params.n || params.t[params.n - 1].kind == CXToken_Punctuation) {
                    t.s = "__VA_ARGS__";
                    t.n = 11;
                    t.kind = CXToken_Identifier;
                    ks__tok_push(&params.t, &params.n, &pcap, t);
                }
            } else {
                ks__tok_push(&params.t, &params.n, &pcap, t);
            }
            continue;
        }
        ks__tok_push(&body.t, &body.n, &cap, t);
    }
    clang_disposeTokens(x->tu, toks, n);
    /* parameters: the names, commas dropped */
    m.params = ks_xmalloc((params.n + 1) * sizeof *m.params);
    for (size_t p = 0; p < params.n; p++)
        if (ks__tok_is_word(&params.t[p]))
            m.params[m.nparams++] = params.t[p];
    free(params.t);
    if (body.n)
        body.t[0].space = 0;
    m.body = body.t;
    m.nbody = body.n;
    x->defs = ks_xrealloc(x->defs, (x->ndefs + 1) * sizeof *x->defs);
    x->defs[x->ndefs] = ks_xmalloc(sizeof m);
    *x->defs[x->ndefs] = m;
    x->by_def[def] = x->defs[x->ndefs];
    return x->defs[x->ndefs++];
}

/* The definition of name live where the invocation being expanded stands:
 * the record's last before it, unless an #undef of the file read lies
 * between them. */
static const mdef *lookup(expander *x, const ks_rtok *name)
{
    if (name->kind != CXToken_Identifier)
        return NULL;
    const name_places *defs = index_find(x->names, name->s, name->n);
    size_t below = defs ? places_below(defs, x->ndefs_before) : 0;
    if (below == 0)
        return NULL;
    size_t d = defs->at[below - 1];
    const pp_def *pd = &x->r->defs[d];
    if (clang_File_isEqual(pd->file, x->r->file)) {
        /* an #undef of the name after the definition, before the invocation */
        const name_places *u = index_find(&x->undefs, name->s, name->n);
        if (u && places_below(u, x->at) > places_below(u, (size_t)pd->offset + 1))
            return NULL;
    }
    return tokenized(x, d);
}

static void tl_push(expander *x, tlist *l, ks_rtok t)
{
    x->spent++;
    ks__tok_push(&l->t, &l->n, &l->cap, t);
}

static void rescan(expander *x, const ks_rtok *in, size_t n, tlist *out, int depth);

/* The arguments of the invocation whose '(' is in[open]: split at the
 * commas outside inner parentheses. Returns the index of its ')', or n
 * when it is not closed or in[open] is no '(' (the tokens of hostile text
 * may not be the ones the record's extent promised: nothing is assumed). */
static size_t split_args(const ks_rtok *in, size_t n, size_t open, size_t **bounds, size_t *nargs)
{
    int depth = 0;
    size_t cap = 0;
    *bounds = NULL;
    *nargs = 0;
    if (open >= n || ks__tok_punct(&in[open]) != '(')
        return n;
    for (size_t j = open; j < n; j++) {
        char c = ks__tok_punct(&in[j]);
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
        if (t->kind == CXToken_Punctuation && ks__tok_spelled(t, "##")) {
            paste = body.n > 0;
            continue;
        }
        int next_paste = i + 1 < m->nbody && ks__tok_spelled(&m->body[i + 1], "##");
        size_t mark = body.n;
        long p;
        if (m->function_like && t->kind == CXToken_Punctuation && (ks__tok_spelled(t, "#") || ks__tok_spelled(t, "%:")) &&
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
        size_t close = i + 1 < n && ks__tok_punct(&in[i + 1]) == '(' ? split_args(in, n, i + 1, &bounds, &nargs) : n;
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
        /* which of the record's definitions it is: one of its name's */
        size_t d = (size_t)-1;
        char *dname = ks_take(clang_getCursorSpelling(def));
        const name_places *p = index_find(x->names, dname, strlen(dname));
        free(dname);
        for (size_t k = p ? places_below(p, pe->ndefs_before) : 0; k-- > 0;)
            if (clang_equalCursors(r->defs[p->at[k]].cursor, def)) {
                d = p->at[k];
                break;
            }
        if (d == (size_t)-1)
            continue;
        /* the invocation's tokens, as the file has them (in file order) */
        size_t first = 0, hi = nall;
        while (first < hi) {
            size_t mid = first + (hi - first) / 2;
            if (all[mid].start < pe->start)
                first = mid + 1;
            else
                hi = mid;
        }
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
        if (last < nall && ks__tok_punct(&all[last]) == ';' && (res.n == 0 || ks__tok_punct(&res.t[res.n - 1]) != ';')) {
            ks_rtok semi = all[last];
            end = semi.end;
            semi.space = 0;
            ks__tok_push(&res.t, &res.n, &res.cap, semi);
        }
        ks_explicit_inst *found = NULL;
        size_t nfound = 0;
        ks__find_instantiations(res.t, res.n, NULL, 1, &found, &nfound);
        for (size_t f = 0; f < nfound; f++) {
            found[f].start = pe->start;
            found[f].end = end;
            ks__add_inst(out, count, &found[f]);
        }
        free(found);
        free(res.t);
    }
    (void)src;
}

void ks__macro_instantiations(CXTranslationUnit tu, CXFile file, const ks_source *src, unsigned char *skip,
                              ks_explicit_inst **out, size_t *count)
{
    pp_record r;
    record_of(&r, tu, file);
    for (size_t e = 0, i = 0; e < r.nexps; e++) {
        while (i < src->ntoks && src->toks[i].start < r.exps[e].start)
            i++;
        for (size_t j = i; j < src->ntoks && src->toks[j].end <= r.exps[e].end; j++)
            skip[j] = 1;
    }
    if (r.nexps) {
        expander x;
        memset(&x, 0, sizeof x);
        x.tu = tu;
        x.r = &r;
        x.src = src;
        x.by_def = ks_xmalloc((r.ndefs + 1) * sizeof *x.by_def);
        memset(x.by_def, 0, (r.ndefs + 1) * sizeof *x.by_def);
        x.names = unit_names();
        for (size_t u = 0; u < src->nundefs; u++)    /* in file order */
            index_add(&x.undefs, src->undefs[u].s, src->undefs[u].n, src->undefs[u].start);
        macro_instantiations(&x, &r, src, src->toks, src->ntoks, out, count);
        for (size_t i = 0; i < x.ndefs; i++) {
            free(x.defs[i]->params);
            free(x.defs[i]->body);
            free(x.defs[i]);
        }
        free(x.defs);
        free(x.by_def);
        index_free(&x.undefs);
        for (size_t i = 0; i < x.nowned; i++)
            free(x.owned[i]);
        free(x.owned);
    }
    record_free(&r);
}
