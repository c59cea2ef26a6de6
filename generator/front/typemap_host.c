/*
 * typemap_host.c — whether the application's header that defines a
 * parameter's type can be included by the generated header (issue 39 #19):
 * libclang compiles the header alone, once as host C11 and once as host
 * C++17, under -Wall -Wextra -Wpedantic, with the input's own -I/-D and the
 * toolkit's include directory. A header that fails (C++ only, CUDA code,
 * not self-contained, a warning a -Werror build would stop at) has its
 * types mirrored for that language instead, and one note says which
 * header and why. Each trial's verdict comes through ks_host_trial_cached
 * when the cli set it (the host trials' cache, cli/result_cache.c). Below
 * typemap_leaves.c (ks__tm_note_origin calls it).
 */
#include "front/typemap_int.h"
#include "base/util.h"
#include "front/cursor.h"
#include "front/walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *(*ks_host_trial_cached)(const ks_options *o, const char *path, const char *const *args, size_t nargs,
                              ks_trial_fn trial, void *ctx);

typedef struct trial {
    const ks_session *s;
    const char *path;
    const char **args;
    size_t n;
} trial;

/* The first diagnostic a -Werror build of the trial's header would stop
 * at, as "file:line:col: text" (malloc'd), or NULL when it compiles
 * cleanly. Errors count anywhere; warnings only outside system headers,
 * where compilers report none either. */
static char *run_trial(void *data)
{
    const trial *t = data;
    const char *path = t->path;
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = clang_parseTranslationUnit2(t->s->index, path, t->args, (int)t->n, NULL, 0,
                                                      CXTranslationUnit_None, &tu);
    char *why = NULL;
    if (ec != CXError_Success || !tu) {
        why = ks_xasprintf("%s: libclang could not parse it", path);
    } else {
        unsigned nd = clang_getNumDiagnostics(tu);
        for (unsigned i = 0; i < nd && !why; i++) {
            CXDiagnostic d = clang_getDiagnostic(tu, i);
            enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
            CXSourceLocation loc = clang_getDiagnosticLocation(d);
            if (sev >= CXDiagnostic_Error || (sev == CXDiagnostic_Warning && !clang_Location_isInSystemHeader(loc))) {
                CXFile f;
                unsigned line, col;
                clang_getSpellingLocation(loc, &f, &line, &col, NULL);
                char *file = f ? ks_take(clang_getFileName(f)) : ks_xstrdup(path);
                char *text = ks_take(clang_getDiagnosticSpelling(d));
                why = ks_xasprintf("%s:%u:%u: %s", strncmp(file, "./", 2) == 0 ? file + 2 : file, line, col, text);
                free(file);
                free(text);
            }
            clang_disposeDiagnostic(d);
        }
        clang_disposeTranslationUnit(tu);
    }
    return why;
}

/* The trial of path as host C11 (cxx 0) or C++17 (1): its verdict, from
 * the host trials' cache when one answers (cli/result_cache.c). */
static char *first_failure(const ks_session *s, const char *path, int cxx)
{
    size_t cap = 16 + 2 * s->nuser;
    const char **args = ks_xmalloc(cap * sizeof *args);
    size_t n = 0;
    char *cuda_inc = ks_xasprintf("%s/include", s->opts->cuda_path);
    args[n++] = "-x";
    args[n++] = cxx ? "c++" : "c";
    args[n++] = cxx ? "-std=c++17" : "-std=c11";
    args[n++] = "-Wall";
    args[n++] = "-Wextra";
    args[n++] = "-Wpedantic";
    /* The header is the main file here, not an included one: what gcc
     * and clang say of a header only. */
    args[n++] = "-Wno-pragma-once-outside-header";
    args[n++] = "-Wno-unused-const-variable";
    args[n++] = "-Wno-unused-macros";
    args[n++] = "-ferror-limit=1";
    /* -I, not -isystem: callers name the toolkit's headers as their own,
     * and -Wpedantic finds fault with some (curand_mtgp32_kernel.h). */
    args[n++] = "-I";
    args[n++] = cuda_inc;
    for (size_t i = s->nargs - s->nuser; i < s->nargs; i++)
        args[n++] = s->args[i];
    trial t = {s, path, args, n};
    char *why = ks_host_trial_cached ? ks_host_trial_cached(s->opts, path, args, n, run_trial, &t) : run_trial(&t);
    free(cuda_inc);
    free(args);
    return why;
}

void ks__tm_host_trial(tm_ctx *c, ks_def *d, int want_c, int want_cxx)
{
    /* Another type of the same header was tried already in a language:
     * that verdict. */
    for (size_t i = 0; i < c->m->ndefs && (want_c || want_cxx); i++) {
        const ks_def *o = &c->m->defs[i];
        if (o == d || !o->file || strcmp(o->file, d->file) != 0)
            continue;
        if (want_c && o->host_c_tried) {
            d->host_c_tried = 1;
            d->host_c_fails = o->host_c_fails;
            want_c = 0;
        }
        if (want_cxx && o->host_cxx_tried) {
            d->host_cxx_tried = 1;
            d->host_cxx_fails = o->host_cxx_fails;
            want_cxx = 0;
        }
    }
    if (!want_c && !want_cxx)
        return;
    char *c_why = want_c ? first_failure(c->s, d->file, 0) : NULL;
    char *cxx_why = want_cxx ? first_failure(c->s, d->file, 1) : NULL;
    if (want_c) {
        d->host_c_tried = 1;
        d->host_c_fails = c_why != NULL;
    }
    if (want_cxx) {
        d->host_cxx_tried = 1;
        d->host_cxx_fails = cxx_why != NULL;
    }
    if (c_why || cxx_why) {
        const char *langs = c_why && cxx_why ? "C and C++" : c_why ? "C" : "C++";
        if (c_why && cxx_why && strcmp(c_why, cxx_why) == 0)
            ks_note_at(d->file, 0, 0, "the generated header mirrors this header's types for %s callers "
                       "instead of including it (compiled alone as C11 and as C++17: %s)", langs, c_why);
        else
            ks_note_at(d->file, 0, 0, "the generated header mirrors this header's types for %s callers "
                       "instead of including it (compiled alone %s%s%s%s%s)", langs,
                       c_why ? "as C11: " : "", c_why ? c_why : "", c_why && cxx_why ? "; " : "",
                       cxx_why ? "as C++17: " : "", cxx_why ? cxx_why : "");
    }
    free(c_why);
    free(cxx_why);
}
