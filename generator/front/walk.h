/*
 * walk.h — the front end's door (walk.c): parse one .cu file into the
 * model. What lies behind it (libclang session, raw-text scanner, type
 * mapping) is the other front/ headers' (session.h, source.h, typemap.h,
 * one per file or small group). The front end names nothing for any
 * output language: naming.h's stage does, after it.
 */
#ifndef KSTUB_WALK_H
#define KSTUB_WALK_H

#include "model/model.h"
#include "base/options.h"

/* Parses opts->input and fills *model: kernels, parameters, types, layout,
 * "kstub:" directives; no generated names (naming.h). Reports every
 * diagnostic through the sink (util.h). Returns 0, or -1 after errors. */
int ks_parse(const ks_options *opts, ks_model *model);

/* The host trials' cache (cli/result_cache.c sets it; NULL: none). A
 * trial (front/typemap_host.c) is libclang's parse of the header path
 * alone with args, whose verdict is NULL (it compiles cleanly) or its
 * first failure (malloc'd): the hook returns that verdict, from the cache
 * or from trial(ctx), which it runs at most once. */
typedef char *(*ks_trial_fn)(void *ctx);
extern char *(*ks_host_trial_cached)(const ks_options *o, const char *path, const char *const *args, size_t nargs,
                                     ks_trial_fn trial, void *ctx);

#endif /* KSTUB_WALK_H */
