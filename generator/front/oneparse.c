/*
 * oneparse.c — explicit instantiations of function templates read from the
 * first parse, where that is shown to give what the parse again with
 * references written in (walk.c's inject_instantiations) gives.
 *
 * libclang shows no cursor for "template __global__ void k<float>(float *);".
 * But clang hands the specialization it defines over as a top-level
 * declaration right when it reads the instantiation: after the input's
 * top-level declarations that end before it, before the first that ends
 * after it. A unit parsed with the declarations handed over listed
 * (ks_session.local_decls, clang_createIndex's first argument: only a file
 * whose text may hold an instantiation, ks__oneparse_hint) shows them in
 * that order. So each instantiation is matched to the specializations in its
 * gap between two of the input's declarations, in order. The match stands
 * only when it is exact in every gap (the last may end with specializations
 * that host code's launches made), each pair agrees on the template's name,
 * the template arguments as written and the number of parameters, no two
 * templates of one name are instantiated, and the reference would lead
 * nowhere else (arguments that are types and integers; no '(' '<' '&' in
 * what is written). Otherwise (a template defined after its instantiation,
 * a header's instantiations or declarations after the input's first
 * instantiation, a class template's instantiation or specialization, bodies
 * skipped, a lambda in the body) the file is parsed again as before.
 *
 * The walk then passes over what only that list shows
 * (ks__oneparse_hidden) and does, at each instantiation's place, what the
 * reference written there would have made it do (ks__oneparse_fire).
 */
#include "front/walkctx.h"
#include "base/util.h"
#include "front/cursor.h"
#include "front/source.h"

#include <stdlib.h>
#include <string.h>

/* ---- the guess ----------------------------------------------------------------------------- */

static int ident_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Comments skipped ("template kernel" in one is no instantiation); a
 * string or an #if'd-out line may still say yes. */
int ks__oneparse_hint(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        if (p + 1 < end && p[0] == '/' && p[1] == '/') {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
        } else if (p + 1 < end && p[0] == '/' && p[1] == '*') {
            const char *close = memmem(p + 2, (size_t)(end - p - 2), "*/", 2);
            p = close ? close + 2 : end;
        } else if (ident_char(*p)) {
            const char *q = p;
            while (q < end && ident_char(*q))
                q++;
            if (q - p == 8 && memcmp(p, "template", 8) == 0) {
                while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
                    q++;
                if (q < end && *q != '<')
                    return 1;
            }
            p = q;
        } else {
            p++;
        }
    }
    return 0;
}

/* ---- the list of declarations handed over -------------------------------------------------- */

/* An instantiated function (or member): its location is its template's, or
 * that of the template's definition (declared first, defined later); an
 * explicit specialization has its own. */
static int is_instantiation(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_FunctionDecl && k != CXCursor_CXXMethod)
        return 0;
    CXCursor t = clang_getSpecializedCursorTemplate(c);
    if (clang_Cursor_isNull(t))
        return 0;
    CXSourceLocation at = clang_getCursorLocation(c);
    if (clang_equalLocations(at, clang_getCursorLocation(t)))
        return 1;
    CXCursor def = clang_getCursorDefinition(t);
    return !clang_Cursor_isNull(def) && clang_equalLocations(at, clang_getCursorLocation(def));
}

static int is_class_specialization(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    return (k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl) &&
           !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c));
}

int ks__oneparse_hidden(walk_ctx *w, CXCursor c, CXCursor parent)
{
    return w->s.local_decls && clang_getCursorKind(parent) == CXCursor_TranslationUnit && is_instantiation(c);
}

/* Offset in the input where cursor c starts; -1 when it starts elsewhere. */
static long main_offset(CXSourceLocation loc)
{
    if (!clang_Location_isFromMainFile(loc))
        return -1;
    unsigned off;
    clang_getExpansionLocation(loc, NULL, NULL, NULL, &off);
    return off;
}

typedef struct item {
    CXCursor spec;               /* a specialization, or a null cursor */
    size_t gap;                  /* how many of the input's declarations came before */
} item;

typedef struct listing {
    item *spec;                  /* the specializations, in order */
    size_t nspec;
    unsigned *ends;              /* end offset of each of the input's declarations, in order */
    size_t nends;
    size_t last_other;           /* the gap of another file's last declaration, + 1 (0: none) */
    int bad;
} listing;

static enum CXChildVisitResult collect(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    listing *l = data;
    if (clang_isPreprocessing(clang_getCursorKind(c)))
        return CXChildVisit_Continue;
    if (is_instantiation(c)) {
        l->spec = ks_xrealloc(l->spec, (l->nspec + 1) * sizeof *l->spec);
        l->spec[l->nspec].spec = c;
        l->spec[l->nspec++].gap = l->nends;
        return CXChildVisit_Continue;
    }
    if (is_class_specialization(c)) {
        l->bad = 1;
        return CXChildVisit_Break;
    }
    CXSourceRange r = clang_getCursorExtent(c);
    long start = main_offset(clang_getRangeStart(r)), end = main_offset(clang_getRangeEnd(r));
    if (start < 0 || end < 0) {
        if (!clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
            l->last_other = l->nends + 1;
        return CXChildVisit_Continue;
    }
    if (l->nends && (unsigned)end < l->ends[l->nends - 1]) {
        l->bad = 1;                  /* not in the order of the text */
        return CXChildVisit_Break;
    }
    l->ends = ks_xrealloc(l->ends, (l->nends + 1) * sizeof *l->ends);
    l->ends[l->nends++] = (unsigned)end;
    return CXChildVisit_Continue;
}

static const char *last_name(const char *qname)
{
    const char *p = strrchr(qname, ':');
    p = p ? p + 1 : qname;
    while (*p == ' ')
        p++;
    return p;
}

/* Parameters written in an instantiation: "" and "void" are none. */
static int count_params(const char *params)
{
    const char *p = params;
    while (*p == ' ')
        p++;
    if (!*p || strcmp(p, "void") == 0)
        return 0;
    int n = 1;
    for (; *p; p++)
        n += *p == ',';
    return n;
}

/* What the reference written after it would name: nothing but the
 * specialization (no function named in its arguments or types). */
static int plainly_written(const ks_explicit_inst *in)
{
    return !strpbrk(in->args, "(<&") && !strpbrk(in->params, "(<") && !strpbrk(in->ret, "(<");
}

/* Whether specialization s is the one instantiation in defines. */
static int agrees(CXCursor s, const ks_explicit_inst *in)
{
    int n = clang_Cursor_getNumTemplateArguments(s);
    if (n < 0 || clang_Cursor_getNumArguments(s) != count_params(in->params))
        return 0;
    for (int i = 0; i < n; i++) {
        enum CXTemplateArgumentKind k = clang_Cursor_getTemplateArgumentKind(s, (unsigned)i);
        if (k != CXTemplateArgumentKind_Type && k != CXTemplateArgumentKind_Integral)
            return 0;
    }
    CXCursor t = clang_getSpecializedCursorTemplate(s);
    char *name = ks_take(clang_getCursorSpelling(t));
    int bad;
    char *args = ks__template_args_text(s, &bad);
    int ok = strcmp(name, last_name(in->qname)) == 0 && args && strcmp(args, in->args) == 0;
    free(name);
    free(args);
    return ok;
}

typedef struct named_tmpl {
    char *name;
    CXCursor tmpl;               /* canonical */
} named_tmpl;

static int named_cmp(const void *a, const void *b)
{
    return strcmp(((const named_tmpl *)a)->name, ((const named_tmpl *)b)->name);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* No two templates of one name among the specializations of a name an
 * instantiation names (overloads: the order alone would tell them apart).
 * Sorted by name, so that thousands of instantiations cost n log n. */
static int names_unique(const listing *l, const walk_ctx *w)
{
    const char **inst = ks_xmalloc((w->ninst + 1) * sizeof *inst);
    for (size_t k = 0; k < w->ninst; k++)
        inst[k] = last_name(w->inst[k].qname);
    qsort(inst, w->ninst, sizeof *inst, str_cmp);
    named_tmpl *t = ks_xmalloc((l->nspec + 1) * sizeof *t);
    size_t n = 0;
    for (size_t i = 0; i < l->nspec; i++) {
        t[n].tmpl = clang_getCanonicalCursor(clang_getSpecializedCursorTemplate(l->spec[i].spec));
        t[n].name = ks_take(clang_getCursorSpelling(t[n].tmpl));
        if (bsearch(&t[n].name, inst, w->ninst, sizeof *inst, str_cmp))
            n++;
        else
            free(t[n].name);
    }
    qsort(t, n, sizeof *t, named_cmp);
    int ok = 1;
    for (size_t i = 1; i < n && ok; i++)
        ok = strcmp(t[i].name, t[i - 1].name) != 0 || clang_equalCursors(t[i].tmpl, t[i - 1].tmpl);
    for (size_t i = 0; i < n; i++)
        free(t[i].name);
    free(t);
    free(inst);
    return ok;
}

int ks__oneparse_match(walk_ctx *w)
{
    if (!w->s.local_decls || !w->ninst || w->ncls || w->s.opts->skip_bodies)
        return 0;
    for (size_t i = 0; i < w->ninst; i++)
        if (!plainly_written(&w->inst[i]))
            return 0;
    listing l;
    memset(&l, 0, sizeof l);
    clang_visitChildren(clang_getTranslationUnitCursor(w->s.tu), collect, &l);
    CXCursor *spec = ks_xmalloc(w->ninst * sizeof *spec);
    int ok = !l.bad && names_unique(&l, w);
    /* the first ninst specializations, one to one and in order, each in its
     * instantiation's gap; any after them in the last (host code's launches) */
    if (l.nspec < w->ninst)
        ok = 0;
    for (size_t i = 0; ok && i < w->ninst; i++) {
        size_t gap = 0;
        while (gap < l.nends && l.ends[gap] <= w->inst[i].start)
            gap++;
        /* a header's declarations after it: its instantiations could be among them */
        ok = l.last_other <= gap && l.spec[i].gap == gap && agrees(l.spec[i].spec, &w->inst[i]);
        spec[i] = l.spec[i].spec;
    }
    for (size_t j = w->ninst; ok && j < l.nspec; j++)
        ok = l.spec[j].gap == l.nends;
    free(l.spec);
    free(l.ends);
    if (!ok) {
        free(spec);
        return 0;
    }
    w->inst_spec = spec;
    w->nspec = w->ninst;
    return 1;
}

/* ---- the walk at each instantiation's place ------------------------------------------------ */

void ks__oneparse_fire(walk_ctx *w, CXCursor c, int launches)
{
    if (!w->inst_spec)
        return;
    long at = -1;
    if (!clang_Cursor_isNull(c)) {
        if (clang_isPreprocessing(clang_getCursorKind(c)))
            return;                  /* the visit shows them before the declarations */
        at = main_offset(clang_getRangeStart(clang_getCursorExtent(c)));
        if (at < 0)
            return;
    }
    size_t *n = &w->fired[launches];
    while (*n < w->nspec && (at < 0 || w->inst[*n].end <= (size_t)at)) {
        size_t i = (*n)++;
        if (launches)
            ks__handle_reference(w, w->inst_spec[i]);
        else
            ks__instantiated(w, i, w->inst_spec[i]);
    }
}
