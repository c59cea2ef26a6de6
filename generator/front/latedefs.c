/*
 * latedefs.c — the input's -D/-U that break headers it never asked for.
 *
 * nvcc's device pass includes cuda_runtime.h before the input; clang's
 * __clang_cuda_runtime_wrapper.h includes more (cuda.h, whose parameters
 * are named N, __clang_cuda_texture_intrinsics.h's template <int N>,
 * curand_mtgp32_kernel.h), so -DN=10, which nvcc takes, breaks clang's
 * parse in a header the file never includes. The session parses first
 * with the -D/-U on the command line, as nvcc does (a -D that shapes the
 * CUDA headers, CUDA_API_PER_THREAD_DEFAULT_STREAM, reaches them); only
 * when errors lie in such headers, at an expansion of one of the user's
 * macros, is that macro moved after the wrapper, into an -include'd
 * header of its own (session.c parses again, with a note). The macros
 * found are clang's: the identifier at each error's expansion location.
 */
#include "front/latedefs.h"

#include "base/util.h"
#include "front/cursor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct asked {
    CXFile main;
    CXFile *files;             /* files the input includes, directly or not, entered or not */
    size_t n;
    CXFile *entered;           /* those entered from the input's own #include chain */
    size_t nentered;
} asked;

static int in_list(CXFile *v, size_t n, CXFile f)
{
    for (size_t i = 0; i < n; i++)
        if (clang_File_isEqual(f, v[i]))
            return 1;
    return 0;
}

static void add(CXFile **v, size_t *n, CXFile f)
{
    *v = ks_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = f;
}

/* The input's own #include directives, entered or not: a header the
 * wrapper included first (cuda.h) is still one the input asked for. */
static enum CXVisitorResult direct_include(void *data, CXCursor c, CXSourceRange r)
{
    (void)r;
    asked *a = data;
    CXFile f = clang_getIncludedFile(c);
    if (f)
        add(&a->files, &a->n, f);
    return CXVisit_Continue;
}

/* A file entered from the input, or from a header it asked for. */
static void collect_asked(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    asked *a = data;
    int from_main = 0, from_asked = 0;
    for (unsigned i = 0; i < depth; i++) {
        CXFile f = NULL;
        clang_getExpansionLocation(stack[i], &f, NULL, NULL, NULL);
        from_main |= f && (clang_File_isEqual(f, a->main) || in_list(a->entered, a->nentered, f));
        from_asked |= f && in_list(a->files, a->n, f);
    }
    if (from_main)
        add(&a->entered, &a->nentered, file);
    if (from_main || from_asked)
        add(&a->files, &a->n, file);
}

/* The name a define names: "-DN=10" → "N" (length in *len). */
static const char *define_name(const char *d, size_t *len)
{
    const char *name = d + 2;
    *len = strcspn(name, "=(");
    return name;
}

/* The identifier starting at loc, or NULL. */
static char *identifier_at(CXTranslationUnit tu, CXFile f, unsigned off)
{
    CXSourceRange r = clang_getRange(clang_getLocationForOffset(tu, f, off),
                                     clang_getLocationForOffset(tu, f, off + 1));
    CXToken *toks = NULL;
    unsigned nt = 0;
    clang_tokenize(tu, r, &toks, &nt);
    char *name = NULL;
    if (nt > 0 && clang_getTokenKind(toks[0]) == CXToken_Identifier)
        name = ks_take(clang_getTokenSpelling(tu, toks[0]));
    if (toks)
        clang_disposeTokens(tu, toks, nt);
    return name;
}

int ks_latedefs_find(CXTranslationUnit tu, const char *input, const char *const *defines, size_t n,
                     unsigned char *move, char *where, size_t wlen)
{
    memset(move, 0, n);
    where[0] = '\0';
    if (n == 0)
        return 0;
    asked a = {clang_getFile(tu, input), NULL, 0, NULL, 0};
    if (!a.main)
        return 0;
    clang_findIncludesInFile(tu, a.main, (CXCursorAndRangeVisitor){&a, direct_include});
    clang_getInclusions(tu, collect_asked, &a);
    int outside = 0, found = 0, inside = 0;
    for (unsigned i = 0, nd = clang_getNumDiagnostics(tu); i < nd; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            CXFile f = NULL;
            unsigned line, col, off;
            clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, &line, &col, &off);
            char *fname = f ? ks_take(clang_getFileName(f)) : NULL;
            /* kstub's own in-memory headers are asked for by kstub */
            if (f && (clang_File_isEqual(f, a.main) || in_list(a.entered, a.nentered, f)))
                ;                       /* the input's own error */
            else if (f && in_list(a.files, a.n, f))
                inside = 1;             /* one the wrapper included first: gone once moved */
            else if (f && fname[0] != '\0' && strncmp(fname, "/__kstub__/", 11) != 0) {
                outside = 1;
                if (!where[0])
                    snprintf(where, wlen, "%s:%u:%u", fname, line, col);
                char *id = identifier_at(tu, f, off);
                for (size_t j = 0; id && j < n; j++) {
                    size_t len;
                    const char *name = define_name(defines[j], &len);
                    if (strlen(id) == len && strncmp(id, name, len) == 0) {
                        move[j] = 1;
                        found = 1;
                    }
                }
                free(id);
            }
            free(fname);
        }
        clang_disposeDiagnostic(d);
    }
    free(a.files);
    free(a.entered);
    /* An error in a header the input includes but the wrapper entered
     * first is nvcc's too (-DN=10 and an #include <cuda.h> of its own):
     * the parse stands as it is. */
    if (inside)
        outside = found = 0;
    if (outside && !found)
        memset(move, 1, n);
    /* every -D/-U of a moved name moves, in its order */
    for (size_t j = 0; j < n; j++) {
        size_t lj, lk;
        const char *nj = define_name(defines[j], &lj);
        for (size_t k = 0; move[j] && k < n; k++) {
            const char *nk = define_name(defines[k], &lk);
            if (lj == lk && strncmp(nj, nk, lj) == 0)
                move[k] = 1;
        }
    }
    return outside;
}

char *ks_latedefs_text(const char *const *defines, size_t n, const unsigned char *move)
{
    ks_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (!move[i])
            continue;
        size_t len;
        const char *name = define_name(defines[i], &len);
        if (defines[i][1] == 'U') {
            ks_buf_printf(&b, "#undef %.*s\n", (int)len, name);
        } else {
            const char *rest = name + len;
            if (*rest == '(') {                    /* F(x)=body */
                const char *eq = strchr(rest, '=');
                size_t plen = eq ? (size_t)(eq - rest) : strlen(rest);
                ks_buf_printf(&b, "#define %.*s%.*s %s\n", (int)len, name, (int)plen, rest, eq ? eq + 1 : "1");
            } else {
                ks_buf_printf(&b, "#define %.*s %s\n", (int)len, name, *rest == '=' ? rest + 1 : "1");
            }
        }
    }
    return ks_buf_take(&b);
}
