/*
 * prelude.h — the precompiled prelude (front/prelude/): what every parse
 * starts with, found, verified, built and kept in the cache directory by
 * pch.c; the session (front/session.c) opens and closes it. The folder's
 * door: its helpers' seams are prelude_int.h's.
 */
#ifndef KSTUB_PRELUDE_H
#define KSTUB_PRELUDE_H

#include "base/options.h"

#include <stddef.h>

/* The precompiled prelude (pch.c): what every file's parse starts with, the
 * CUDA device prelude clang includes implicitly, kstub's compat header and
 * the input's own leading toolkit includes, precompiled once per
 * configuration and kept in the cache directory. */
typedef struct ks_prelude {
    int fd;                    /* the verified PCH, open while the TU lives; -1: none */
    char *pch_arg;             /* "/proc/self/fd/N": clang reads exactly what was verified */
    char **files;              /* the files it was built from, in inclusion order */
    unsigned char *is_system;  /* per file: a system header */
    size_t nfiles;
    char **leading;            /* the input's leading includes it holds ("cuda_fp16.h") */
    size_t nleading;
    int dirfd;                 /* the cache directory, or -1 */
    unsigned char key[32];     /* SHA-256 of everything that shapes the prelude */
    int built;                 /* built by this process (a cold run) */
    const char **bargs;        /* the arguments it was built with: the parse's less the input's own
                                * -I/-D/-U that cannot change it (pch.c) */
    size_t nbargs;
    char *pch_name;            /* the PCH's file name in the cache directory, once open */
    struct ks_prelude *base;   /* a layer's base (the prelude without leading includes), whose
                                * PCH the layer's chains on; NULL for a whole prelude */
    long inst_file;            /* the first of files whose text may write an explicit
                                * instantiation (instscan.c), or -1: the entry is not used then */
} ks_prelude;

#define KS_PRELUDE_PATH "/__kstub__/prelude.cu"
/* The input's leading "#include <name>" lines (only blank lines and comments
 * before and between them) whose headers may be precompiled with the
 * prelude: toolkit and standard headers. Returns how many; *names
 * malloc'd (free with ks_prelude_names_free). blanked: NULL, or a copy of
 * text in which those directives become blanks (what the parse with the
 * prelude reads instead of the file). */
size_t ks_prelude_leading(const char *text, size_t len, char ***names, char *blanked);
void ks_prelude_names_free(char **names, size_t n);
/* Finds, verifies and opens the prelude for this configuration (args: the
 * parse's arguments, the compat -include among them; the last nuser of them
 * the input's own -I DIR pairs, -D and -U, of which only those that can
 * change the prelude shape it), building it when it is missing, stale or
 * unusable. 0 with p->fd open, or -1: parse without it (why under
 * KSTUB_DEBUG_PCH=1). */
int ks_prelude_open(ks_prelude *p, const ks_options *opts, const char *const *args, size_t nargs,
                    size_t nuser, char **leading, size_t nleading);
/* The entry p used turned out unusable (libclang refused it): removes it
 * and builds it again, with the arguments it was built with, for the next run. */
void ks_prelude_rebuild(ks_prelude *p, const ks_options *opts);
void ks_prelude_close(ks_prelude *p);

/* A line on stderr under KSTUB_DEBUG_PCH=1: what the cache did and why. */
void ks_prelude_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* KSTUB_PRELUDE_H */
