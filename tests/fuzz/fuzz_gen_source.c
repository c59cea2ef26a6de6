/*
 * fuzz_gen_source.c — libFuzzer target for generator/source.c, differential
 * against libclang. The input is parsed as the generator parses (C++, the
 * detailed preprocessing record; one file, its #includes not entered) and
 * read by ks_source_load (tokens, skipped ranges, directives, the
 * preprocessing record, macro expansion: every offset it gives must lie in
 * the file, every explicit instantiation must start and end in active code
 * at token boundaries). The one hand-written scan of raw text left, the
 * leading "#include <name>" lines the prelude cache precompiles, must agree
 * with clang: each line it reports is the next inclusion directive clang's
 * preprocessing record holds, with the same name, in active code, with no
 * other token of clang's before it. On an exact-size copy of the input (no
 * terminator), so ASan sees any read one byte too far. An input whose
 * macros may grow past 2^20 tokens is skipped, not parsed (macro_bound.h:
 * libclang's growth, not kstub's, issue 41 #20).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "front/prelude/prelude_int.h"
#include "front/cursor.h"
#include "front/source.h"
#include "macro_bound.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int any_name(const char *name, size_t n)
{
    return n > 0 && name[0] != 'x';   /* a stop now and then */
}

typedef struct incl {
    CXCursor c[64];
    unsigned n;
} incl;

static enum CXChildVisitResult collect_inclusions(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    incl *in = data;
    if (clang_getCursorKind(c) == CXCursor_InclusionDirective &&
        clang_Location_isFromMainFile(clang_getCursorLocation(c)) && in->n < 64)
        in->c[in->n++] = c;
    return CXChildVisit_Continue;
}

static unsigned offset_of(CXSourceLocation loc)
{
    unsigned off = 0;
    clang_getSpellingLocation(loc, NULL, NULL, NULL, &off);
    return off;
}

static void fail(const char *what, size_t i)
{
    fprintf(stderr, "fuzz_gen_source: %s (%zu)\n", what, i);
    abort();
}

/* A token boundary of active code: an explicit instantiation starts at one
 * token and ends at another's end. */
static int starts_token(const ks_source *src, size_t off)
{
    for (size_t i = 0; i < src->ntoks; i++)
        if (src->toks[i].start == off)
            return 1;
    return 0;
}

static int ends_token(const ks_source *src, size_t off)
{
    for (size_t i = 0; i < src->ntoks; i++)
        if (src->toks[i].end == off)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static CXIndex index;
    if (!index)
        index = clang_createIndex(0, 0);
    if (size > 16384 || macro_bound((const char *)data, size) > (double)(1 << 20))
        return 0;
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    static const char *const args[] = {"-x", "c++", "-std=c++17", "-nostdinc", "-w", "-ferror-limit=0"};
    struct CXUnsavedFile unsaved = {"fuzz.cu", text, (unsigned long)size};
    CXTranslationUnit tu = NULL;
    if (clang_parseTranslationUnit2(index, "fuzz.cu", args, 6, &unsaved, 1,
                                    CXTranslationUnit_DetailedPreprocessingRecord |
                                        CXTranslationUnit_KeepGoing | CXTranslationUnit_SingleFileParse,
                                    &tu) != CXError_Success || !tu) {
        free(text);
        return 0;
    }
    CXFile file = clang_getFile(tu, "fuzz.cu");
    ks_source src;
    if (file && ks_source_load(&src, tu, file) == 0) {
        for (size_t i = 0; i < src.ntoks; i++)
            if (src.toks[i].start > src.toks[i].end || src.toks[i].end > src.size)
                fail("token outside the file", i);
        for (size_t i = 0; i < src.ncomments; i++)
            if (src.comments[i].start > src.comments[i].end || src.comments[i].end > src.size)
                fail("comment outside the file", i);
        ks_explicit_inst *in = NULL;
        size_t n = ks_source_instantiations(&src, &in);
        for (size_t i = 0; i < n; i++)
            if (in[i].start >= in[i].end || in[i].end > src.size || !starts_token(&src, in[i].start) ||
                !ends_token(&src, in[i].end))
                fail("instantiation not at token boundaries of active code", i);
        ks_explicit_inst_free(in, n);
        ks_class_inst *ci = NULL;
        n = ks_source_class_instantiations(&src, &ci);
        for (size_t i = 0; i < n; i++)
            if (ci[i].start > ci[i].end || ci[i].end > src.size || !ends_token(&src, ci[i].end))
                fail("class instantiation not at token boundaries of active code", i);
        ks_class_inst_free(ci, n);
        ks_directive *d = NULL;
        n = ks_source_directives(&src, &d);
        ks_directive_free(d, n);
        unsigned line, col;
        ks_source_position(&src, src.size, &line, &col);
        for (size_t i = 0; i < src.ntoks && i < 16; i++)
            (void)ks_source_body_follows(tu, file, (unsigned)src.toks[i].end);
        (void)ks_source_body_follows(tu, file, (unsigned)src.size);

        /* the leading #include lines, by hand and by clang */
        char **names = NULL;
        char *blanked = malloc(size + 1);
        memcpy(blanked, text, size);        /* text has no NUL after it */
        size_t nn = ks__leading_includes(text, size, any_name, &names, blanked);
        /* the text the parse with a prelude reads: every line where it was */
        for (size_t k = 0; k < size; k++)
            if ((text[k] == '\n') != (blanked[k] == '\n') || (blanked[k] != text[k] && blanked[k] != ' '))
                fail("blanking moved a line or wrote more than blanks", k);
        free(blanked);
        incl inc = {{{0}}, 0};
        clang_visitChildren(clang_getTranslationUnitCursor(tu), collect_inclusions, &inc);
        CXToken *toks;
        unsigned nt;
        clang_tokenize(tu, clang_getRange(clang_getLocationForOffset(tu, file, 0),
                                          clang_getLocationForOffset(tu, file, (unsigned)size)), &toks, &nt);
        unsigned t = 0;
        for (size_t i = 0; i < nn; i++) {
            if (i >= inc.n)
                fail("a leading include clang does not see", i);
            char *name = ks_take(clang_getCursorSpelling(inc.c[i]));
            if (strcmp(name, names[i]) != 0)
                fail("a leading include's name is not clang's", i);
            free(name);
            CXSourceRange r = clang_getCursorExtent(inc.c[i]);
            unsigned start = offset_of(clang_getRangeStart(r)), end = offset_of(clang_getRangeEnd(r));
            /* every token of clang's before it is a comment or its '#' */
            for (; t < nt; t++) {
                unsigned o = offset_of(clang_getTokenLocation(tu, toks[t]));
                if (o >= end)
                    break;
                if (o >= start || clang_getTokenKind(toks[t]) == CXToken_Comment)
                    continue;
                char *p = ks_take(clang_getTokenSpelling(tu, toks[t]));
                int hash = strcmp(p, "#") == 0 || strcmp(p, "%:") == 0;
                free(p);
                if (!hash)
                    fail("a token before a leading include", i);
            }
            free(names[i]);
        }
        free(names);
        clang_disposeTokens(tu, toks, nt);
        CXSourceRangeList *skipped = clang_getSkippedRanges(tu, file);
        if (skipped && nn && skipped->count &&
            offset_of(clang_getRangeStart(skipped->ranges[0])) <
                offset_of(clang_getRangeEnd(clang_getCursorExtent(inc.c[nn - 1]))))
            fail("a leading include in inactive code", nn);
        if (skipped)
            clang_disposeSourceRangeList(skipped);
        ks_source_free(&src);
    }
    clang_disposeTranslationUnit(tu);
    free(text);
    return 0;
}
