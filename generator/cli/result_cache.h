/*
 * result_cache.h — the result cache (result_cache.c): a run that generates
 * remembers its outputs and its diagnostics under a key of everything its
 * command line says, with a manifest of everything its parse asked the file
 * system; a later run with the same key whose files still answer the same
 * writes those outputs without parsing (ccache's direct mode).
 */
#ifndef KSTUB_RESULT_CACHE_H
#define KSTUB_RESULT_CACHE_H

#include "base/options.h"
#include "base/outputs.h"
#include "cli/depfile.h"

#include <stddef.h>
#include <time.h>

typedef struct ks_result {
    int dirfd;                 /* the cache directory; -1: the result cache is off */
    unsigned char key[32];
    char hex[65];
    struct timespec start;     /* the run's start, on the file system's clock */
    ks_output *outs;           /* a hit's outputs */
    size_t nouts;
    char *payload;             /* a hit's entry, which outs point into */
    char *cache_dir;           /* its path: names under it are the caches' own */
} ks_result;

/* Starts keeping what the run asks the file system (fileguard_seen.c)
 * when it is generating (not check, not --list): first thing, so that what
 * the templates and the compile database looked for is kept too. */
void ks_result_begin(ks_result *r, int generating);

/* Looks the run up. 1: a hit, whose diagnostics are replayed on stderr
 * and whose outputs are r->outs (write them as a miss would); 0: a miss
 * (or the cache is off: --no-cache, KSTUB_CACHE=0, KSTUB_RESULT_CACHE=0),
 * and the run goes on keeping its diagnostics. argv is the command line,
 * all of it in the key. */
int ks_result_lookup(ks_result *r, const ks_options *o, int argc, char **argv);

/* The parse and the rendering are over: nothing more is kept. */
void ks_result_generated(ks_result *r);

/* After a miss whose outputs were written with no error: stores them,
 * the diagnostics said, and the manifest (deps: the files the parse read,
 * the prelude's included). Best effort: a failure stores nothing. */
void ks_result_store(ks_result *r, const ks_output *outs, size_t n, const ks_deps *deps);

void ks_result_free(ks_result *r);

#endif /* KSTUB_RESULT_CACHE_H */
