/*
 * leading.c — the input's leading "#include <name>" lines, which the
 * prelude cache precompiles (pch.c must know them before the file is
 * parsed), read from clang's own tokens.
 *
 * Where a comment ends, where a line ends (a lone CR ends one, a backslash
 * or a "*\"-newline-"/" does not) and what a directive holds are the
 * lexer's to say, not a hand-written scan's (DESIGN.md contract 12; issue
 * 41 #1: a scan that took "// c<CR>#pragma pack(push, 1)" for one comment
 * built the prelude without the pragma). So the start of the text is
 * parsed alone, with no include path (SingleFileParse: nothing is opened),
 * and clang_tokenize gives its raw tokens, comments included; the
 * directives are read from them and the bytes between them. Anything the
 * reading does not know for sure ends the list, and what follows is parsed
 * as the file's own as before (slower, never wrong):
 *
 *   - between directives only comments and blanks (line breaks too);
 *   - in a directive, '#' (not "%:"), "include" spelled out, '<', a name
 *     of letters, digits and "_.+-/" (no two slashes, no slash-star), '>', each token
 *     written in one piece, only comments and spaces or tabs between them;
 *   - after '>', comments and spaces or tabs, then a line break (CR or LF)
 *     outside any comment, or the end of the text;
 *   - no "??" before the end of the directive (a trigraph's reading depends
 *     on -std; none is read either way), and no NUL byte.
 *
 * The text is read in a window of 4 KiB at first, doubled while the list
 * runs to (or stops within 512 bytes of, or in a comment open at) the
 * window's end (a long licence comment), so a file is never tokenized whole. Tokens wholly before the
 * window's end are those of the whole text; a directive is taken only when
 * its line break lies inside.
 */
#include "base/util.h"
#include "front/prelude/prelude_int.h"

#include <stdlib.h>
#include <string.h>

#define KS__LEADING_WINDOW 4096
#define KS__LEADING_MARGIN 512      /* longer than any directive the list takes but a comment's */

typedef struct tok {
    unsigned start, end;
    int comment;
} tok;

typedef struct directive {
    size_t hash, name, name_len;
} directive;

/* The window's raw tokens, in order: 0, or -1 when libclang gives none. */
static int tokens(const char *t, size_t w, tok **out, size_t *nout)
{
    static const char *const args[] = {"-x", "c++", "-std=c++17", "-nostdinc", "-nostdinc++", "-w"};
    const char *path = "kstub-leading-includes.cpp";
    struct CXUnsavedFile u = {path, t, (unsigned long)w};
    CXIndex index = clang_createIndex(0, 0);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = clang_parseTranslationUnit2(index, path, args, (int)(sizeof args / sizeof *args), &u,
                                                      1, CXTranslationUnit_SingleFileParse |
                                                          CXTranslationUnit_Incomplete |
                                                          CXTranslationUnit_SkipFunctionBodies, &tu);
    int rc = -1;
    *out = NULL;
    *nout = 0;
    CXFile file = tu ? clang_getFile(tu, path) : NULL;
    if (ec == CXError_Success && file) {
        CXToken *ct;
        unsigned n;
        clang_tokenize(tu, clang_getRange(clang_getLocationForOffset(tu, file, 0),
                                          clang_getLocationForOffset(tu, file, (unsigned)w)), &ct, &n);
        tok *v = ks_xmalloc((n + 1) * sizeof *v);
        for (unsigned i = 0; i < n; i++) {
            CXSourceRange r = clang_getTokenExtent(tu, ct[i]);
            unsigned s, e;
            clang_getSpellingLocation(clang_getRangeStart(r), NULL, NULL, NULL, &s);
            clang_getSpellingLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &e);
            v[i] = (tok){s, e, clang_getTokenKind(ct[i]) == CXToken_Comment};
        }
        if (n)
            clang_disposeTokens(tu, ct, n);
        *out = v;
        *nout = n;
        rc = 0;
    }
    if (tu)
        clang_disposeTranslationUnit(tu);
    clang_disposeIndex(index);
    return rc;
}

static int hblank(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* Past blanks (line breaks too when nl) and comment tokens from *p, with
 * *k the next token; stops at the first other byte. */
static void skip(const char *t, size_t w, const tok *v, size_t n, size_t *p, size_t *k, int nl)
{
    for (;;) {
        while (*p < w && (hblank(t[*p]) || (nl && (t[*p] == '\n' || t[*p] == '\r'))))
            (*p)++;
        if (*k < n && v[*k].comment && v[*k].start == *p) {
            *p = v[*k].end;
            (*k)++;
            continue;
        }
        return;
    }
}

/* The next token is one of "text" (spelled in one piece) starting at *p:
 * taken (1), or not (0). */
static int take(const char *t, const tok *v, size_t n, size_t *p, size_t *k, const char *text)
{
    size_t len = strlen(text);
    if (*k >= n || v[*k].comment || v[*k].start != *p || v[*k].end - v[*k].start != len ||
        memcmp(t + *p, text, len) != 0)
        return 0;
    *p = v[*k].end;
    (*k)++;
    return 1;
}

static int name_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '+' || c == '-' || c == '/';
}

/* The directives of the window t[0..w): how many went into d (room for
 * w / 8 + 1); *more when the list ran to the window's end, which is not
 * the text's (full is 0), so a larger window may hold more. */
static size_t scan(const char *t, size_t w, int full, int (*allowed)(const char *, size_t), directive *d,
                   int *more)
{
    *more = 0;
    tok *v;
    size_t n, nd = 0;
    if (tokens(t, w, &v, &n) != 0)
        return 0;
    size_t p = 0, k = 0;
    for (;;) {
        skip(t, w, v, n, &p, &k, 1);
        if (p >= w) {
            *more = !full;
            break;
        }
        size_t hash = p;
        if (!take(t, v, n, &p, &k, "#"))
            break;
        skip(t, w, v, n, &p, &k, 0);
        if (!take(t, v, n, &p, &k, "include"))
            break;
        skip(t, w, v, n, &p, &k, 0);
        if (!take(t, v, n, &p, &k, "<"))
            break;
        size_t name = p;
        while (p < w && name_byte(t[p]) && !(t[p] == '/' && p + 1 < w && (t[p + 1] == '/' || t[p + 1] == '*')))
            p++;
        size_t name_len = p - name;
        if (p >= w) {
            *more = !full;
            break;
        }
        if (t[p] != '>' || name_len == 0 || !allowed(t + name, name_len))
            break;
        while (k < n && v[k].start < p)              /* the name's tokens */
            k++;
        if (!take(t, v, n, &p, &k, ">"))
            break;
        skip(t, w, v, n, &p, &k, 0);
        if (p < w && t[p] != '\n' && t[p] != '\r')
            break;                                   /* more on the line, or a backslash */
        if (p >= w && !full) {
            *more = 1;
            break;
        }
        d[nd++] = (directive){hash, name, name_len};
    }
    /* Stopped near the window's end: a token there may be cut short
     * ("#inclu"), so a larger window reads it again. */
    if (!full && (p + KS__LEADING_MARGIN >= w || k >= n))   /* k >= n: an unclosed comment at the end */
        *more = 1;
    free(v);
    return nd;
}

size_t ks__leading_includes(const char *t, size_t len, int (*allowed)(const char *name, size_t n),
                                  char ***names, char *blanked)
{
    *names = NULL;
    /* No "??" and no NUL is read: the text ends before the first. */
    size_t end = 0;
    while (end < len && t[end] != '\0' && !(t[end] == '?' && end + 1 < len && t[end + 1] == '?'))
        end++;
    /* A file that starts with neither a directive nor a comment has none:
     * no parse for it. */
    size_t first = 0;
    while (first < end && (hblank(t[first]) || t[first] == '\n' || t[first] == '\r'))
        first++;
    if (first >= end || (t[first] != '#' && t[first] != '/'))
        return 0;
    directive *d = NULL;
    size_t nd = 0;
    for (size_t window = KS__LEADING_WINDOW;; window *= 2) {
        size_t w = window < end ? window : end;
        free(d);
        d = ks_xmalloc((w / 8 + 2) * sizeof *d);
        int more;
        nd = scan(t, w, w == len, allowed, d, &more);
        if (!more || w == end)
            break;
    }
    if (nd)
        *names = ks_xmalloc(nd * sizeof **names);
    for (size_t i = 0; i < nd; i++) {
        (*names)[i] = ks_xasprintf("%.*s", (int)d[i].name_len, t + d[i].name);
        /* '#' to '>': the directive, not what follows it; a comment inside
         * it may hold a line break, which stays */
        for (size_t k = d[i].hash; blanked && k <= d[i].name + d[i].name_len; k++)
            if (blanked[k] != '\n' && blanked[k] != '\r')
                blanked[k] = ' ';
    }
    free(d);
    return nd;
}
