/*
 * prelude_open.c — which prelude a file is parsed with (pch.c keeps the
 * entries): the base prelude; a layer of its leading includes on the base
 * when another input starts with them too (prelude_seen.c); and, when the
 * input's own -I/-D/-U reach into it, a variant keyed by those options — a
 * layer on the base's variant when exactly the same options reach into
 * the base's headers (-DNDEBUG and <assert.h>: every layer of a project
 * built with -DNDEBUG then shares one variant of the CUDA headers), else a
 * whole prelude (what they change may be in the base's headers).
 */
#include "base/util.h"
#include "base/options.h"
#include "front/prelude/prelude.h"
#include "front/prelude/prelude_int.h"
#include "front/prelude/prelude_seen.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front/prelude/cachecmd.h"

/* p's base turned into its variant for the input's options rel (p's own
 * relevant ones), when exactly those reach into the base's headers too:
 * found or built, open. 0, or -1 (p->base is then unusable). */
static int variant_base(ks_prelude *p, const char *const *args, size_t nbase, const char *const *rel, size_t nrel)
{
    ks_prelude *base = p->base;
    const char *why = NULL;
    char *names = ks__prelude_read_names(base, &why);
    if (!names)
        return -1;
    const char **brel = ks_xmalloc((nrel + 1) * sizeof *brel);
    size_t nb = ks__prelude_relevant_args(base, names, rel, nrel, brel);
    free(names);
    int same = nb == nrel;
    for (size_t i = 0; same && i < nrel; i++)
        same = brel[i] == rel[i];
    free(brel);
    if (!same)
        return -1;
    if (base->fd >= 0)
        close(base->fd);
    base->fd = -1;
    ks__prelude_free_files(base);
    const char **vargs = ks_xmalloc((nbase + nrel + 1) * sizeof *vargs);
    memcpy(vargs, args, nbase * sizeof *vargs);
    memcpy(vargs + nbase, rel, nrel * sizeof *vargs);
    ks__prelude_key(base, args, nbase, "");
    ks__prelude_variant_key(base, rel, nrel);
    int rc = ks__prelude_acquire(base, vargs, nbase + nrel, "");
    free(vargs);
    return rc;
}

int ks_prelude_open(ks_prelude *p, const ks_options *opts, const char *const *args, size_t nargs,
                    size_t nuser, char **leading, size_t nleading)
{
    memset(p, 0, sizeof *p);
    p->fd = p->dirfd = -1;
    p->inst_file = -1;
    p->leading = leading;
    p->nleading = nleading;
    char why_dir[2 * PATH_MAX + 512];
    p->dirfd = ks_cache_dir_open(opts->cache_dir, opts->no_cache, why_dir, sizeof why_dir);
    if (p->dirfd < 0) {
        ks_prelude_debug("not used: %s", why_dir);
        return -1;
    }
    char *text = ks__prelude_text(leading, nleading);
    size_t nbase = nuser <= nargs ? nargs - nuser : nargs;
    ks__prelude_key(p, args, nbase, text);
    if (nleading > 0 && !ks_prelude_layer_pays(p->dirfd, p->key, opts->input)) {
        /* No other input starts with these: a layer would cost more than
         * it saves; they are parsed as the file's own (prelude_seen.c). */
        ks_prelude_debug("no layer: no other input starts with these %zu leading include%s", nleading,
                         nleading == 1 ? "" : "s");
        ks_prelude_names_free(leading, nleading);
        p->leading = leading = NULL;
        p->nleading = nleading = 0;
        free(text);
        text = ks__prelude_text(NULL, 0);
        ks__prelude_key(p, args, nbase, text);
    }
    int rc;
    if (nleading > 0 && ks__prelude_pin_dir(p->dirfd) == 0) {
        /* A layer on the base prelude, built or found first. */
        ks_prelude *base = ks_xmalloc(sizeof *base);
        memset(base, 0, sizeof *base);
        base->fd = -1;
        base->inst_file = -1;
        base->dirfd = p->dirfd;
        ks__prelude_key(base, args, nbase, "");
        p->base = base;
        if (ks__prelude_acquire(base, args, nbase, "") == 0)
            ks__prelude_layer_key(p, KS__PRELUDE_BASE_DIR_FD);
        else
            ks__prelude_drop_base(p);
    }
    rc = ks__prelude_acquire(p, args, nbase, text);
    char *names = NULL;
    if (rc == 0 && nbase < nargs) {
        const char *why = NULL;
        names = ks__prelude_read_names(p, &why);
        if (!names)
            ks_prelude_debug("the prelude's names cannot be read (%s): every -I/-D/-U shapes it", why);
    }
    const char **bargs = ks_xmalloc((nargs + 1) * sizeof *bargs);
    memcpy(bargs, args, nbase * sizeof *bargs);
    size_t nrel = rc == 0 ? ks__prelude_relevant_args(p, names, args + nbase, nargs - nbase, bargs + nbase) : 0;
    for (size_t i = nbase; i < nbase + nrel; i++)
        if (strcmp(bargs[i], "-I") != 0)
            ks_prelude_debug("'%s%s' can change the prelude: it shapes one of its own",
                             i > nbase && strcmp(bargs[i - 1], "-I") == 0 ? "-I " : "", bargs[i]);
    free(names);
    if (rc == 0 && nrel > 0) {
        /* The input's own options reach into the prelude: its own entry.
         * A layer whose options are exactly those that reach into its
         * base's headers is a layer on the base built with them (its
         * variant: the usual case, -DNDEBUG and <assert.h>); else a whole
         * prelude (the options may reach into the base's headers). */
        close(p->fd);
        p->fd = -1;
        ks__prelude_free_files(p);
        rc = -1;
        if (p->base && variant_base(p, args, nbase, bargs + nbase, nrel) == 0) {
            ks__prelude_key(p, args, nbase, text);
            ks__prelude_variant_key(p, bargs + nbase, nrel);
            ks__prelude_layer_key(p, KS__PRELUDE_BASE_DIR_FD);
            rc = ks__prelude_acquire(p, bargs, nbase + nrel, text);
            if (rc != 0) {
                ks__prelude_free_files(p);
                ks_prelude_debug("no layer on the base's variant: a whole prelude instead");
            }
        }
        if (rc != 0) {
            ks__prelude_drop_base(p);
            ks__prelude_key(p, args, nbase, text);
            ks__prelude_variant_key(p, bargs + nbase, nrel);
            rc = ks__prelude_acquire(p, bargs, nbase + nrel, text);
        }
    }
    free(text);
    if (rc != 0) {
        free(bargs);
        return -1;
    }
    p->bargs = bargs;
    p->nbargs = nbase + nrel;
    p->pch_arg = ks_xasprintf("/proc/self/fd/%d", p->fd);
    return 0;
}
