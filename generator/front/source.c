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
#include "front/source_int.h"
#include "base/instscan.h"
#include "base/util.h"
#include "front/cursor.h"
#include "front/source.h"
#include "front/session_files.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether token toks[i] is the first on its line, but for comments before
 * it (a line ends between it and the code before it, outside comments). */
static int starts_line(CXTranslationUnit tu, const CXToken *toks, unsigned i)
{
    for (unsigned j = i; j > 0; j--) {
        unsigned line, prev_line;
        clang_getSpellingLocation(clang_getTokenLocation(tu, toks[j]), NULL, &line, NULL, NULL);
        clang_getSpellingLocation(clang_getRangeEnd(clang_getTokenExtent(tu, toks[j - 1])), NULL, &prev_line,
                                  NULL, NULL);
        if (line > prev_line)
            return 1;
        if (clang_getTokenKind(toks[j - 1]) != CXToken_Comment)
            return 0;
    }
    return 1;
}

static int is_hash(CXTranslationUnit tu, CXToken t)
{
    if (clang_getTokenKind(t) != CXToken_Punctuation)
        return 0;
    char *sp = ks_take(clang_getTokenSpelling(tu, t));
    int yes = strcmp(sp, "#") == 0 || strcmp(sp, "%:") == 0;
    free(sp);
    return yes;
}

/* The cursors clang_annotateTokens gives the tokens: only those of each
 * '#' that starts a line (a preprocessing directive's, with its extent,
 * where one starts there; a null cursor for every other token). Each such
 * '#' is annotated with the tokens up to the next one, as a region of its
 * own: clang relexes a region from its first token to find the directives
 * in it, and annotating the whole file at once walks the whole unit's
 * cursors for it, which grew with the square of the explicit
 * instantiations. The regions do not overlap: linear in the tokens. */
static CXCursor *directive_cursors(CXTranslationUnit tu, CXToken *toks, unsigned n)
{
    CXCursor *ann = ks_xmalloc((n + 1) * sizeof *ann);
    for (unsigned i = 0; i < n; i++)
        ann[i] = clang_getNullCursor();
    unsigned *at = ks_xmalloc((n + 1) * sizeof *at), nat = 0;
    for (unsigned i = 0; i < n; i++)
        if (is_hash(tu, toks[i]) && starts_line(tu, toks, i))
            at[nat++] = i;
    for (unsigned k = 0; k < nat; k++) {
        unsigned from = at[k], to = k + 1 < nat ? at[k + 1] : n;
        clang_annotateTokens(tu, toks + from, to - from, ann + from);
        for (unsigned i = from + 1; i < to; i++)
            ann[i] = clang_getNullCursor();
    }
    free(at);
    return ann;
}

/* A token written across lines ("temp\\<newline>late") read as the lexer
 * reads it: its text with the splices removed, kept by src. */
static void unsplice(ks_source *src, ks_rtok *t)
{
    size_t n;
    char *u = ks_unspliced(t->s, t->n, &n);
    if (!u)
        return;
    src->spliced = ks_xrealloc(src->spliced, (src->nspliced + 1) * sizeof *src->spliced);
    src->spliced[src->nspliced++] = u;
    t->s = u;
    t->n = n;
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
    CXSourceRange whole = clang_getRange(ks_file_loc(tu, file, 0), ks_file_loc(tu, file, (unsigned)size));
    clang_tokenize(tu, whole, &toks, &n);
    CXCursor *ann = directive_cursors(tu, toks, n);

    /* inactive code: skipped ranges; directives: the extent of each */
    size_t nspans = 0, cspans = 0;
    span *spans = NULL;
    CXSourceRangeList *skipped = clang_getSkippedRanges(tu, file);
    for (unsigned i = 0; skipped && i < skipped->count; i++) {
        span s = {ks__file_offset(clang_getRangeStart(skipped->ranges[i]), NULL),
                  ks__file_offset(clang_getRangeEnd(skipped->ranges[i]), NULL)};
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
        t.start = ks__file_offset(clang_getRangeStart(e), NULL);
        t.end = ks__file_offset(clang_getRangeEnd(e), NULL);
        if (t.end > size || t.start > t.end)
            continue;
        t.s = src->text + t.start;
        t.n = t.end - t.start;
        t.kind = (unsigned char)clang_getTokenKind(toks[i]);
        if (t.kind != CXToken_Comment && memchr(t.s, '\\', t.n))
            unsplice(src, &t);
        t.space = t.start > prev_end;
        prev_end = (unsigned)t.end;
        if (t.kind == CXToken_Comment) {
            ks__tok_push(&src->comments, &src->ncomments, &ccom, t);
            continue;
        }
        if (clang_getCursorKind(ann[i]) == CXCursor_PreprocessingDirective &&
            t.kind == CXToken_Punctuation && (ks__tok_spelled(&t, "#") || ks__tok_spelled(&t, "%:"))) {
            CXSourceRange de = clang_getCursorExtent(ann[i]);
            span s = {ks__file_offset(clang_getRangeStart(de), NULL), ks__file_offset(clang_getRangeEnd(de), NULL)};
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
                        u.start = ks__file_offset(clang_getRangeStart(ne), NULL);
                        u.end = ks__file_offset(clang_getRangeEnd(ne), NULL);
                        if (u.end <= size && u.start <= u.end) {
                            u.s = src->text + u.start;
                            u.n = u.end - u.start;
                            ks__tok_push(&src->undefs, &src->nundefs, &cund, u);
                        }
                    }
                    free(w);
                }
            }
        }
        ks__tok_push(&all, &nall, &call, t);
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
            ks__tok_push(&src->toks, &src->ntoks, &ctok, all[i]);
    free(all);
    free(spans);
    for (size_t i = 0; i < src->ntoks; i++)
        src->toks[i].space = i == 0 || src->toks[i].start > src->toks[i - 1].end;

    /* the macros the file's code invokes, and what they write */
    unsigned char *skip = ks_xmalloc(src->ntoks + 1);
    memset(skip, 0, src->ntoks + 1);
    size_t nwritten = 0, nmacro = 0;
    ks_explicit_inst *written = NULL, *expanded = NULL;
    ks__macro_instantiations(tu, file, src, skip, &expanded, &nmacro);
    ks__find_instantiations(src->toks, src->ntoks, skip, 0, &written, &nwritten);
    free(skip);
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
    for (size_t i = 0; i < src->nspliced; i++)
        free(src->spliced[i]);
    free(src->spliced);
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
        if (!ks__tok_spelled(&t[i], "template") || (i > 0 && ks__tok_spelled(&t[i - 1], "extern")) ||
            !(ks__tok_spelled(&t[i + 1], "class") || ks__tok_spelled(&t[i + 1], "struct")))
            continue;
        size_t k = i + 2, name_start = k;
        if (ks__tok_spelled(&t[k], "::"))
            k++;
        while (k + 2 < nt && ks__tok_is_word(&t[k]) && ks__tok_spelled(&t[k + 1], "::"))
            k += 2;
        if (k + 1 >= nt || !ks__tok_is_word(&t[k]) || ks__tok_punct(&t[k + 1]) != '<')
            continue;
        size_t end = k + 1;
        while (end < nt && ks__tok_punct(&t[end]) != ';' && ks__tok_punct(&t[end]) != '{')
            end++;
        int half;
        size_t close = end < nt ? ks__tok_matching(t, k + 1, end, &half) : end;
        if (end >= nt || ks__tok_punct(&t[end]) != ';' || close + 1 != end)
            continue;
        *out = ks_xrealloc(*out, (count + 1) * sizeof **out);
        ks_class_inst *in = &(*out)[count++];
        in->qname = ks__tokens_text(t, name_start, k + 1);
        ks_buf a = {0};
        ks__tokens_put(&a, t, k + 2, close);
        ks_buf_puts(&a, half == 2 ? ">>" : half ? ">" : "");
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
        clang_tokenize(tu, clang_getRange(ks_file_loc(tu, file, from),
                                          ks_file_loc(tu, file, to)), &toks, &n);
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
            next = ks__file_offset(clang_getTokenLocation(tu, toks[upto]), NULL);
        clang_disposeTokens(tu, toks, n);
        if (found >= 0)
            return found;
        from = next;                   /* the same place with a larger window, when one token filled it */
    }
    return 0;
}

