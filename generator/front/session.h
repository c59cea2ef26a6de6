/*
 * session.h — one libclang translation unit (session.c): the input parsed
 * device-side, with the precompiled prelude when there is one.
 */
#ifndef KSTUB_SESSION_H
#define KSTUB_SESSION_H

#include "base/options.h"
#include "front/prelude/prelude.h"
#include "front/probes.h"

#include <clang-c/Index.h>
#include <stddef.h>

typedef struct ks_session {
    const ks_options *opts;
    CXIndex index;
    CXTranslationUnit tu;
    const char **args;
    size_t nargs;
    char **owned;
    size_t nowned;
    size_t nuser;              /* the last nuser args: the input's own -I DIR, -D, -U */
    ks_prelude prelude;        /* used by this parse when prelude.fd >= 0 */
    int local_decls;           /* set before opening: the unit's cursor lists the declarations
                                  the parse handed over, in that order, the specializations
                                  instantiated included (walk.c reads explicit instantiations
                                  from them), not the translation unit's own */
    int quiet;                 /* set before opening: a parse again of what a parse before
                                  reported (errors in bodies not reported twice) */
    char *late;                /* the input's -D/-U moved after the CUDA wrapper (latedefs.c), or NULL */
    const size_t *probes;      /* set before parsing a text kstub wrote references into: [start,
                                  end) byte pairs of the input's text, one per explicit
                                  instantiation (walk.c); an error there is kstub's probe
                                  failing (an instantiation of a member function template),
                                  kept in probe_errors, not reported */
    size_t nprobes;
    ks_probe_error *probe_errors;
    size_t nprobe_errors;
} ks_session;

/* Parses opts->input device-side, as nvcc's device pass sees it; text, when
 * not NULL, replaces the file's contents (same line numbers). Reports every
 * error diagnostic. Returns 0, or -1 after reporting. */
int ks_session_open(ks_session *s, const ks_options *opts, const char *text, size_t len);
/* Parses again with text as the input's contents; -1 after reporting errors. */
int ks_session_reparse(ks_session *s, const char *text, size_t len);
/* The same, where the text differs from the parse's only by what kstub
 * added: the errors in function bodies the parse reported as warnings are
 * not reported again. */
int ks_session_reparse_quiet(ks_session *s, const char *text, size_t len);
void ks_session_close(ks_session *s);

#endif /* KSTUB_SESSION_H */
