/*
 * drift.c — `kstub check` (are the generated files on disk what kstub would
 * write now?) and `kstub diff` (what changed between two manifests, and does
 * it break existing callers?).
 *
 * Both compare two manifests' signatures (manifest.c reads them) kernel by
 * kernel and hand their findings to report.c, which prints them the way
 * compilers do (file:line:col: error|warning: …), as JSON, or as GitHub
 * workflow annotations. Their exit status is a bit field, like
 * abidiff's: 1 tool error, 2 usage error, 4 something changed, 8 a change
 * breaks existing callers (always with 4). See docs/build-and-ci.md.
 */
#include "drift/drift.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drift/manifest.h"
#include "base/options.h"
#include "base/outputs.h"
#include "base/util.h"
#include "drift/report.h"
#include "drift/sigtable.h"

/* ---- comparing two models -------------------------------------------------------------------- */

typedef struct diff_ctx {
    ks_report *r;
    const char *old_file, *new_file;  /* what diagnostics name */
    const ks_sigs *old, *new;
    ks_sigtable names;      /* every kernel name: its symbols, counts (diff_models's) */
} diff_ctx;

/* "scale" or, when two kernels share the name (overloads), "scale [c_name]". */
static char *display_name(const diff_ctx *d, const ks_sig_kern *k)
{
    const ks_sigslot *s = ks_sigtable_slot(&d->names, k, 0);
    int shared = s && s->shared;
    return shared ? ks_xasprintf("%s [%s]", k->name, k->c_name) : ks_xstrdup(k->name);
}

static int names_are_permutation(const ks_sig_kern *a, const ks_sig_kern *b)
{
    if (a->nparams != b->nparams)
        return 0;
    int same_order = 1;
    for (size_t i = 0; i < a->nparams; i++) {
        int found = 0;
        for (size_t j = 0; j < b->nparams; j++)
            if (strcmp(a->params[i].name, b->params[j].name) == 0)
                found++;
        for (size_t j = 0; j < a->nparams; j++)
            if (j != i && strcmp(a->params[i].name, a->params[j].name) == 0)
                return 0;   /* duplicate names: cannot tell */
        if (found != 1)
            return 0;
        if (strcmp(a->params[i].name, b->params[i].name) != 0)
            same_order = 0;
    }
    return !same_order;
}

static char *param_list(const ks_sig_kern *k)
{
    ks_buf b = {0};
    ks_buf_puts(&b, "(");
    for (size_t i = 0; i < k->nparams; i++)
        ks_buf_printf(&b, "%s%s", i ? ", " : "", k->params[i].name);
    ks_buf_puts(&b, ")");
    return ks_buf_take(&b);
}

/* Same parameter (by position or by name) in both versions. */
static void diff_param(diff_ctx *d, const ks_sig_kern *kn, const char *kname, size_t io,
                       const ks_sig_param *po, size_t in, const ks_sig_param *pn)
{
    const char *f = d->new_file;
    unsigned line = kn->line, col = kn->col;
    (void)io;
    if (strcmp(po->name, pn->name) != 0)
        ks_report_add(d->r, KS_SEV_WARNING, "param_renamed", f, line, col, kn,
            "kernel %s, parameter %zu: renamed from '%s' to '%s'", kname, in + 1, po->name,
            pn->name);
    if (strcmp(po->c_type, pn->c_type) != 0) {
        ks_report_add(d->r, KS_SEV_ERROR, "param_type_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': type changed from '%s' to '%s'", kname, in + 1,
            pn->name, po->c_type, pn->c_type);
    } else if (po->size != pn->size) {
        ks_report_add(d->r, KS_SEV_ERROR, "param_size_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': size changed from %ld to %ld bytes", kname, in + 1,
            pn->name, po->size, pn->size);
    } else if (po->align != pn->align) {
        ks_report_add(d->r, KS_SEV_ERROR, "param_align_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': alignment changed from %ld to %ld bytes", kname,
            in + 1, pn->name, po->align, pn->align);
    }
}

static void diff_params(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn, const char *kname)
{
    const char *f = d->new_file;
    if (names_are_permutation(ko, kn)) {
        char *a = param_list(ko), *b = param_list(kn);
        ks_report_add(d->r, KS_SEV_ERROR, "params_reordered", f, kn->line, kn->col, kn,
            "kernel %s: parameters reordered from %s to %s", kname, a, b);
        free(a);
        free(b);
        return;
    }
    if (ko->nparams == kn->nparams) {
        for (size_t i = 0; i < kn->nparams; i++)
            diff_param(d, kn, kname, i, &ko->params[i], i, &kn->params[i]);
        return;
    }
    /* Count changed: match by name; what is left was added or removed. */
    for (size_t i = 0; i < ko->nparams; i++) {
        size_t j;
        for (j = 0; j < kn->nparams; j++)
            if (strcmp(ko->params[i].name, kn->params[j].name) == 0)
                break;
        if (j == kn->nparams)
            ks_report_add(d->r, KS_SEV_ERROR, "param_removed", f, kn->line, kn->col, kn,
                "kernel %s, parameter %zu '%s' (%s): removed", kname, i + 1,
                ko->params[i].name, ko->params[i].c_type);
        else
            diff_param(d, kn, kname, i, &ko->params[i], j, &kn->params[j]);
    }
    for (size_t j = 0; j < kn->nparams; j++) {
        size_t i;
        for (i = 0; i < ko->nparams; i++)
            if (strcmp(ko->params[i].name, kn->params[j].name) == 0)
                break;
        if (i == ko->nparams)
            ks_report_add(d->r, KS_SEV_ERROR, "param_added", f, kn->line, kn->col, kn,
                "kernel %s, parameter %zu '%s' (%s): added", kname, j + 1, kn->params[j].name,
                kn->params[j].c_type);
    }
}

static void diff_bounds(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn, const char *kname)
{
    const char *f = d->new_file;
    long o = ko->max_threads > 0 ? ko->max_threads : -1;
    long n = kn->max_threads > 0 ? kn->max_threads : -1;
    /* A lower maximum rejects block sizes callers use today; a higher one
     * (or none) accepts everything that worked. Minimum blocks per SM only
     * guides register allocation. */
    if (o != n) {
        int tighter = n > 0 && (o < 0 || n < o);
        char ob[32], nb[32];
        snprintf(ob, sizeof ob, o > 0 ? "%ld threads" : "none", o);
        snprintf(nb, sizeof nb, n > 0 ? "%ld threads" : "none", n);
        ks_report_add(d->r, tighter ? KS_SEV_ERROR : KS_SEV_WARNING,
            tighter ? "launch_bounds_tightened" : "launch_bounds_relaxed", f, kn->line, kn->col,
            kn, "kernel %s: __launch_bounds__ maximum block size %s from %s to %s", kname,
            tighter ? "tightened" : "relaxed", ob, nb);
    } else if (ko->min_blocks != kn->min_blocks && n > 0) {
        ks_report_add(d->r, KS_SEV_WARNING, "launch_bounds_min_blocks_changed", f, kn->line, kn->col, kn,
            "kernel %s: __launch_bounds__ minimum blocks per multiprocessor changed from %ld "
            "to %ld", kname, ko->min_blocks > 0 ? ko->min_blocks : 0,
            kn->min_blocks > 0 ? kn->min_blocks : 0);
    }
}

/* Nothing the comparisons below look at differs (most pairs, most of the
 * time): no finding, and no display name to build. */
static int same_signature(const ks_sig_kern *ko, const ks_sig_kern *kn)
{
    if (ko->nparams != kn->nparams || ko->max_threads != kn->max_threads ||
        ko->min_blocks != kn->min_blocks || strcmp(ko->symbol, kn->symbol) != 0 ||
        strcmp(ko->c_name, kn->c_name) != 0)
        return 0;
    for (size_t i = 0; i < ko->nparams; i++) {
        const ks_sig_param *po = &ko->params[i], *pn = &kn->params[i];
        if (po->size != pn->size || po->align != pn->align || strcmp(po->name, pn->name) != 0 ||
            strcmp(po->c_type, pn->c_type) != 0)
            return 0;
    }
    return 1;
}

static void diff_kernel(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn)
{
    if (same_signature(ko, kn))
        return;
    char *kname = display_name(d, kn);
    const char *f = d->new_file;
    if (strcmp(ko->c_name, kn->c_name) != 0)
        ks_report_add(d->r, KS_SEV_ERROR, "c_name_changed", f, kn->line, kn->col, kn,
            "kernel %s: C function renamed from '%s' to '%s'", kname, ko->c_name, kn->c_name);
    size_t before = d->r->n;
    diff_params(d, ko, kn, kname);
    /* A C++ kernel's parameter types are part of its mangled symbol: a
     * parameter change already says why it changed (one change, one error). */
    int params_changed = 0;
    for (size_t i = before; i < d->r->n; i++)
        params_changed |= d->r->v[i].sev == KS_SEV_ERROR;
    if (strcmp(ko->symbol, kn->symbol) != 0 && !params_changed)
        ks_report_add(d->r, KS_SEV_ERROR, "symbol_changed", f, kn->line, kn->col, kn,
            "kernel %s: device symbol changed from '%s' to '%s'", kname, ko->symbol, kn->symbol);
    diff_bounds(d, ko, kn, kname);
    free(kname);
}

static void diff_vars(diff_ctx *d);

/* Kernels pair up by qualified name and symbol (overloads share a name).
 * A kernel whose symbol changed (a C++ kernel's parameter type is part of
 * its mangled name) still pairs by name when exactly one kernel of that
 * name is left on each side, so the report says what changed inside it.
 * Lookups go through hash tables, so a diff takes time linear in the
 * kernels. */
static void diff_models(diff_ctx *d)
{
    const ks_sigs *o = d->old, *n = d->new;
    long *match = ks_xmalloc((o->nkernels + 1) * sizeof *match);  /* old -> new */
    long *owner = ks_xmalloc((n->nkernels + 1) * sizeof *owner);  /* new -> old */
    long *next = ks_xmalloc((n->nkernels + 1) * sizeof *next);    /* new -> the next new of its pair */
    unsigned char *taken = ks_xmalloc(n->nkernels + 1);
    memset(taken, 0, n->nkernels + 1);

    /* Every name, and whether two kernels of one side have it (overloads:
     * display_name). A C++ kernel whose symbol changed between the sides
     * is one kernel, not two. */
    ks_sigtable_init(&d->names, o->nkernels + n->nkernels, 0);
    const ks_sigs *ms[2] = {o, n};
    for (int m = 0; m < 2; m++) {
        ks_sigtable side;
        ks_sigtable_init(&side, ms[m]->nkernels, 0);
        for (size_t i = 0; i < ms[m]->nkernels; i++) {
            const ks_sig_kern *k = &ms[m]->kernels[i];
            ks_sigslot *all = ks_sigtable_slot(&d->names, k, 1);
            if (strcmp(ks_sigtable_slot(&side, k, 1)->k->symbol, k->symbol) != 0)
                all->shared = 1;
        }
        ks_sigtable_free(&side);
    }

    /* First, same name and symbol: the new kernels of each pair, in order. */
    ks_sigtable pairs;
    ks_sigtable_init(&pairs, n->nkernels, 1);
    for (size_t j = n->nkernels; j-- > 0;) {
        ks_sigslot *s = ks_sigtable_slot(&pairs, &n->kernels[j], 1);
        next[j] = s->idx;
        s->idx = (long)j;
    }
    for (size_t i = 0; i < o->nkernels; i++) {
        ks_sigslot *s = ks_sigtable_slot(&pairs, &o->kernels[i], 0);
        match[i] = -1;
        if (s && s->idx >= 0) {
            match[i] = s->idx;
            taken[match[i]] = 1;
            s->idx = next[s->idx];
        }
    }
    ks_sigtable_free(&pairs);

    /* Then, by name alone where one kernel of the name is left on each side. */
    for (size_t j = 0; j < n->nkernels; j++)
        if (!taken[j]) {
            ks_sigslot *s = ks_sigtable_slot(&d->names, &n->kernels[j], 0);
            s->n_new++;
            s->idx = (long)j;
        }
    for (size_t i = 0; i < o->nkernels; i++)
        if (match[i] < 0)
            ks_sigtable_slot(&d->names, &o->kernels[i], 0)->n_old++;
    for (size_t i = 0; i < o->nkernels; i++) {
        if (match[i] >= 0)
            continue;
        ks_sigslot *s = ks_sigtable_slot(&d->names, &o->kernels[i], 0);
        if (s->n_old == 1 && s->n_new == 1) {
            match[i] = s->idx;
            taken[match[i]] = 1;
        }
    }
    for (size_t j = 0; j < n->nkernels; j++)
        owner[j] = -1;
    for (size_t i = 0; i < o->nkernels; i++)
        if (match[i] >= 0)
            owner[match[i]] = (long)i;
    /* Report in the new file's order, removed kernels first. */
    for (size_t i = 0; i < o->nkernels; i++) {
        if (match[i] >= 0)
            continue;
        const ks_sig_kern *k = &o->kernels[i];
        char *kname = display_name(d, k);
        ks_report_add(d->r, KS_SEV_ERROR, "kernel_removed", d->new_file, 0, 0, k,
            "kernel %s removed (it was at %s:%u)", kname, d->old_file, k->line);
        free(kname);
    }
    for (size_t j = 0; j < n->nkernels; j++) {
        const ks_sig_kern *kn = &n->kernels[j];
        if (owner[j] >= 0) {
            diff_kernel(d, &o->kernels[owner[j]], kn);
        } else {
            char *kname = display_name(d, kn);
            ks_report_add(d->r, KS_SEV_WARNING, "kernel_added", d->new_file, kn->line, kn->col, kn,
                "kernel %s added", kname);
            free(kname);
        }
    }
    free(match);
    free(owner);
    free(next);
    free(taken);
    ks_sigtable_free(&d->names);
    diff_vars(d);
}

/* Device variables pair up by qualified name. A changed type, size,
 * alignment, memory space, extent, symbol or C name breaks callers (their
 * accessors' types or the bytes they copy change); a removed one does too;
 * an added one is compatible. */
static void diff_vars(diff_ctx *d)
{
    const ks_sigs *o = d->old, *n = d->new;
    const char *f = d->new_file;
    unsigned char *seen = ks_xmalloc(n->nvars + 1);
    memset(seen, 0, n->nvars + 1);
    for (size_t i = 0; i < o->nvars; i++) {
        const ks_sig_var *vo = &o->vars[i], *vn = NULL;
        for (size_t j = 0; j < n->nvars && !vn; j++)
            if (!seen[j] && strcmp(n->vars[j].name, vo->name) == 0) {
                vn = &n->vars[j];
                seen[j] = 1;
            }
        ks_sig_kern who = {.name = vo->name, .symbol = vn ? vn->symbol : vo->symbol};
        if (!vn) {
            ks_report_add(d->r, KS_SEV_ERROR, "variable_removed", f, 0, 0, &who,
                "variable %s removed (it was at %s:%u)", vo->name, d->old_file, vo->line);
            continue;
        }
        if (strcmp(vo->type, vn->type) != 0 || strcmp(vo->dims, vn->dims) != 0)
            ks_report_add(d->r, KS_SEV_ERROR, "variable_type_changed", f, vn->line, vn->col, &who,
                "variable %s: type changed from '%s' to '%s'", vn->name, vo->type, vn->type);
        if (vo->size != vn->size || vo->align != vn->align)
            ks_report_add(d->r, KS_SEV_ERROR, "variable_size_changed", f, vn->line, vn->col, &who,
                "variable %s: %ld bytes %ld-aligned, was %ld bytes %ld-aligned", vn->name, vn->size,
                vn->align, vo->size, vo->align);
        if (strcmp(vo->space, vn->space) != 0)
            ks_report_add(d->r, KS_SEV_ERROR, "variable_space_changed", f, vn->line, vn->col, &who,
                "variable %s: memory space changed from __%s__ to __%s__", vn->name, vo->space,
                vn->space);
        if (strcmp(vo->symbol, vn->symbol) != 0)
            ks_report_add(d->r, KS_SEV_ERROR, "variable_symbol_changed", f, vn->line, vn->col, &who,
                "variable %s: device symbol changed from '%s' to '%s'", vn->name, vo->symbol,
                vn->symbol);
        if (strcmp(vo->c_name, vn->c_name) != 0)
            ks_report_add(d->r, KS_SEV_ERROR, "variable_c_name_changed", f, vn->line, vn->col, &who,
                "variable %s: accessors renamed from '%s_*' to '%s_*'", vn->name, vo->c_name,
                vn->c_name);
    }
    for (size_t j = 0; j < n->nvars; j++) {
        if (seen[j])
            continue;
        const ks_sig_var *vn = &n->vars[j];
        ks_sig_kern who = {.name = vn->name, .symbol = vn->symbol};
        ks_report_add(d->r, KS_SEV_WARNING, "variable_added", f, vn->line, vn->col, &who,
            "variable %s added", vn->name);
    }
    free(seen);
}

/* ---- kstub diff ------------------------------------------------------------------------------- */

int ks_diff_run(const char *old_path, const char *new_path, const char *source, ks_format fmt)
{
    ks_sigs old, new;
    if (ks_manifest_read(old_path, &old) != 0)
        return KS_DRIFT_ERROR;
    if (ks_manifest_read(new_path, &new) != 0) {
        ks_sigs_free(&old);
        return KS_DRIFT_ERROR;
    }
    ks_report r = {0};
    const char *new_file = source ? source : new.source;
    const char *old_file = source ? source : old.source;
    diff_ctx d = {&r, old_file, new_file, &old, &new, {0}};
    diff_models(&d);
    ks_buf sum = {0};
    ks_buf_printf(&sum, "kstub diff: ");
    if (r.changed)
        ks_report_count(&r, &sum);
    else
        ks_buf_puts(&sum, "no change");
    int rc = ks_report_status(&r);
    ks_report_print(&r, fmt, "diff", sum.data, NULL, rc);
    free(sum.data);
    ks_report_free(&r);
    ks_sigs_free(&old);
    ks_sigs_free(&new);
    return rc;
}


/* ---- kstub check ------------------------------------------------------------------------------ */

/* What is at an output's path that could not be read as a file, asked of
 * stat (never opened: a FIFO would block the check, a device would feed it
 * forever): NULL when nothing is there, else its kind, or the error. */
static const char *not_a_file(const char *path, char *buf, size_t size)
{
    struct stat st, lst;
    if (lstat(path, &lst) != 0 && errno == ENOENT)
        return NULL;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
            return "a symbolic link to nothing";
        snprintf(buf, size, "unreadable (%s)", strerror(errno));
        return buf;
    }
    const char *kind = S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISDIR(st.st_mode) ? "a directory"
                       : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISREG(st.st_mode) ? "a file that cannot be read"
                                             : "not a regular file";
    snprintf(buf, size, "%s%s", kind, S_ISLNK(lst.st_mode) ? " (through a symbolic link)" : "");
    return buf;
}

int ks_check_run(const ks_check_input *in, int *status)
{
    *status = KS_DRIFT_ERROR;
    ks_report r = {0};
    int stale = 0;
    size_t *state = ks_xmalloc((in->noutputs + 1) * sizeof *state);
    enum { UP_TO_DATE, MISSING, DIFFERS, NOT_A_FILE };
    for (size_t i = 0; i < in->noutputs; i++) {
        size_t size;
        char *disk = ks_peek_file(in->outputs[i].path, &size);
        char what[160];
        if (!disk)
            state[i] = not_a_file(in->outputs[i].path, what, sizeof what) ? NOT_A_FILE : MISSING;
        else if (size != strlen(in->outputs[i].text) || memcmp(disk, in->outputs[i].text, size))
            state[i] = DIFFERS;
        else
            state[i] = UP_TO_DATE;
        if (state[i] != UP_TO_DATE)
            stale = 1;
        free(disk);
    }

    /* The per-kernel report needs the old signatures: the on-disk
     * manifest. Without one, the report names files only. */
    int have_old = 0;
    ks_sigs old;
    if (stale && in->manifest) {
        /* access, not open: a FIFO there must not stop the check (the
         * read below refuses it without waiting). */
        if (access(in->manifest, F_OK) == 0) {
            /* A manifest that cannot be read is a tool error (1), not a
             * change (4): the comparison cannot be made. */
            if (ks_manifest_read(in->manifest, &old) != 0) {
                free(state);
                return -1;
            }
            have_old = 1;
        }
    }
    size_t before = r.n;
    if (have_old) {
        ks_sigs fresh;
        if (ks_manifest_parse(in->fresh_manifest, in->source, &fresh) == 0) {
            diff_ctx d = {&r, in->source, in->source, &old, &fresh, {0}};
            diff_models(&d);
            ks_sigs_free(&fresh);
        }
        ks_sigs_free(&old);
    }
    int kernels_changed = r.n > before, kernels_breaking = r.breaking;
    for (size_t i = 0; i < in->noutputs; i++) {
        char what[160];
        if (state[i] == MISSING)
            ks_report_add(&r, KS_SEV_ERROR, "file_missing", in->outputs[i].path, 0, 0, NULL,
                "missing; kstub has not generated it");
        else if (state[i] == NOT_A_FILE)
            ks_report_add(&r, KS_SEV_ERROR, "file_not_regular", in->outputs[i].path, 0, 0, NULL,
                "is %s, not the file kstub generates; remove it and run kstub",
                not_a_file(in->outputs[i].path, what, sizeof what));
        else if (state[i] == DIFFERS)
            ks_report_add(&r, KS_SEV_ERROR, "file_out_of_date", in->outputs[i].path, 0, 0, NULL,
                "out of date: differs from what kstub generates from %s%s", in->source,
                kernels_changed ? ""
                : have_old ? " (no kernel signature changed: options, templates or "
                             "the kstub version differ)"
                           : "");
    }
    if (in->image_stale)
        ks_report_add(&r, KS_SEV_NOTE, "image_stale", in->image, 0, 0, NULL, "%s",
                      in->image_stale);
    ks_buf sum = {0};
    if (stale)
        ks_buf_printf(&sum, "kstub check: generated files for %s are out of date", in->source);
    else
        ks_buf_printf(&sum, "kstub check: generated files for %s are up to date", in->source);
    /* A stale file is a change even when every kernel kept its signature. */
    int rc = stale ? KS_DRIFT_CHANGED | (kernels_breaking ? KS_DRIFT_BREAKING : 0)
                   : KS_DRIFT_NONE;
    ks_report_print(&r, in->format, "check", sum.data, in->fix_command, rc);
    free(sum.data);
    free(state);
    ks_report_free(&r);
    *status = rc;
    return 0;
}
