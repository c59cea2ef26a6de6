/*
 * drift.c — `kstub check` (are the generated files on disk what kstub would
 * write now?) and `kstub diff` (what changed between two manifests, and does
 * it break existing callers?).
 *
 * Both compare two signature models kernel by kernel and report findings
 * the way compilers do (file:line:col: error|warning: …), as JSON, or as
 * GitHub workflow annotations. Their exit status is a bit field, like
 * abidiff's: 1 tool error, 2 usage error, 4 something changed, 8 a change
 * breaks existing callers (always with 4). See docs/build-and-ci.md.
 */
#include "model.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- findings ----------------------------------------------------------------------- */

typedef enum { SEV_NOTE, SEV_WARNING, SEV_ERROR } severity;

static const char *const severity_names[] = {"note", "warning", "error"};

typedef struct finding {
    severity sev;
    const char *kind;        /* stable identifier, e.g. "param_type_changed" */
    char *file;              /* NULL: none */
    unsigned line, col;      /* 0: unknown */
    char *kernel;            /* qualified name, or NULL */
    char *symbol;            /* device symbol, or NULL */
    char *message;
} finding;

typedef struct report {
    finding *v;
    size_t n;
    int breaking, changed;
    size_t cap;              /* allocated findings */
} report;

static void add(report *r, severity sev, const char *kind, const char *file, unsigned line,
                unsigned col, const ks_sig_kern *k, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void add(report *r, severity sev, const char *kind, const char *file, unsigned line,
                unsigned col, const ks_sig_kern *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = ks_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = ks_xrealloc(r->v, r->cap * sizeof *r->v);
    }
    finding *f = &r->v[r->n++];
    f->sev = sev;
    f->kind = kind;
    f->file = file ? ks_xstrdup(file) : NULL;
    f->line = line;
    f->col = col;
    f->kernel = k ? ks_xstrdup(k->name) : NULL;
    f->symbol = k && k->symbol ? ks_xstrdup(k->symbol) : NULL;
    f->message = msg;
    if (sev == SEV_ERROR)
        r->breaking = 1;
    if (sev != SEV_NOTE)
        r->changed = 1;
}

static void report_free(report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].file);
        free(r->v[i].kernel);
        free(r->v[i].symbol);
        free(r->v[i].message);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

int ks_format_parse(const char *s)
{
    if (strcmp(s, "text") == 0)
        return KS_FORMAT_TEXT;
    if (strcmp(s, "json") == 0)
        return KS_FORMAT_JSON;
    if (strcmp(s, "github") == 0)
        return KS_FORMAT_GITHUB;
    return -1;
}

/* Manifest strings (kernel names, paths) come from files anyone can write,
 * and CI logs treat a line that starts with "::" as a workflow command: no
 * control character or newline reaches the output raw. Text shows them as
 * C escapes (\n, \t, \x1b); a backslash stays as it is. */
static void put_control(FILE *out, unsigned char c)
{
    switch (c) {
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default: fprintf(out, "\\x%02x", c); break;
    }
}

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static void text_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (is_control((unsigned char)*s))
            put_control(out, (unsigned char)*s);
        else
            fputc(*s, out);
    }
}

/* GitHub's workflow-command escaping: data escapes %, CR, LF; properties
 * also ':' and ','. Other control characters as in text. */
static void gh_escape(FILE *out, const char *s, int property)
{
    for (; *s; s++) {
        switch (*s) {
        case '%': fputs("%25", out); break;
        case '\r': fputs("%0D", out); break;
        case '\n': fputs("%0A", out); break;
        case ':': fputs(property ? "%3A" : ":", out); break;
        case ',': fputs(property ? "%2C" : ",", out); break;
        default:
            if (is_control((unsigned char)*s))
                put_control(out, (unsigned char)*s);
            else
                fputc(*s, out);
            break;
        }
    }
}

static int exit_status(const report *r)
{
    return r->breaking ? KS_DRIFT_CHANGED | KS_DRIFT_BREAKING
                       : r->changed ? KS_DRIFT_CHANGED : KS_DRIFT_NONE;
}

static const char *result_word(int status)
{
    return status & KS_DRIFT_BREAKING ? "breaking"
           : status & KS_DRIFT_CHANGED ? "compatible" : "none";
}

/* command: "check" or "diff"; summary: the last line of text output;
 * fix: the command that regenerates, or NULL. */
static void print_report(const report *r, ks_format fmt, const char *command,
                         const char *summary, const char *fix, int status)
{
    FILE *out = stdout;
    if (fmt == KS_FORMAT_JSON) {
        json_t *list = json_array();
        for (size_t i = 0; i < r->n; i++) {
            const finding *f = &r->v[i];
            json_t *o = json_object();
            json_object_set_new(o, "severity", json_string(severity_names[f->sev]));
            json_object_set_new(o, "kind", json_string(f->kind));
            json_object_set_new(o, "file", f->file ? json_string(f->file) : json_null());
            json_object_set_new(o, "line", f->line ? json_integer(f->line) : json_null());
            json_object_set_new(o, "kernel", f->kernel ? json_string(f->kernel) : json_null());
            json_object_set_new(o, "symbol", f->symbol ? json_string(f->symbol) : json_null());
            json_object_set_new(o, "message", json_string(f->message));
            json_array_append_new(list, o);
        }
        json_t *root = json_pack("{s:s, s:s, s:i, s:o, s:o}", "command", command,
                                 "result", result_word(status), "exit_status", status,
                                 "findings", list, "fix", fix ? json_string(fix) : json_null());
        json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', out);
        json_decref(root);
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        const finding *f = &r->v[i];
        if (fmt == KS_FORMAT_GITHUB) {
            fprintf(out, "::%s ", f->sev == SEV_NOTE ? "notice" : severity_names[f->sev]);
            if (f->file) {
                fputs("file=", out);
                gh_escape(out, f->file, 1);
                if (f->line)
                    fprintf(out, ",line=%u", f->line);
                if (f->col)
                    fprintf(out, ",col=%u", f->col);
                fputs(",", out);
            }
            fprintf(out, "title=kstub %s::", command);
            gh_escape(out, f->message, 0);
            fputc('\n', out);
        } else {
            if (f->file) {
                text_escape(out, f->file);
                if (f->line)
                    fprintf(out, ":%u", f->line);
                if (f->line && f->col)
                    fprintf(out, ":%u", f->col);
            } else {
                fputs("kstub", out);
            }
            fprintf(out, ": %s: ", severity_names[f->sev]);
            text_escape(out, f->message);
            fputc('\n', out);
        }
    }
    if (fmt == KS_FORMAT_GITHUB) {
        if (fix && status) {
            fputs("::error title=kstub check::to fix, run: ", out);
            gh_escape(out, fix, 0);
            fputc('\n', out);
        }
        return;
    }
    text_escape(out, summary);
    fputc('\n', out);
    if (fix && status) {
        fputs("to fix, run:\n  ", out);
        text_escape(out, fix);
        fputc('\n', out);
    }
}

/* ---- reading a manifest -------------------------------------------------------------------- */

static char *str_field(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? ks_xstrdup(s) : NULL;
}

static const char *json_type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "a negative integer";
    case JSON_REAL: return "a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "something else";
}

/* A number field as a non-negative integer. A wrong type is an error
 * naming the field (read as 0 it would report a bogus "size changed to 0");
 * a missing field is one too unless optional (0 then: unknown). */
static int int_value(json_t *j, const char *key, int optional, long *v, const char *path,
                     const char *where)
{
    *v = 0;
    if (!j && optional)
        return 0;
    if (!j) {
        ks_error_at(path, 0, 0, "%s: \"%s\" is missing", where, key);
        return -1;
    }
    if (!json_is_integer(j) || json_integer_value(j) < 0 || json_integer_value(j) > INT_MAX) {
        ks_error_at(path, 0, 0, "%s: \"%s\" must be a non-negative integer, not %s", where,
                    key, json_is_integer(j) && json_integer_value(j) > 0 ? "one this large"
                                                                           : json_type_name(j));
        return -1;
    }
    *v = (long)json_integer_value(j);
    return 0;
}

static int int_field(json_t *o, const char *key, int optional, long *v, const char *path,
                     const char *where)
{
    return int_value(json_object_get(o, key), key, optional, v, path, where);
}

/* Reads manifest JSON (root) named path in messages into *m. */
static int manifest_from_json(json_t *root, const char *path, ks_sigs *m);

int ks_manifest_read(const char *path, ks_sigs *m)
{
    memset(m, 0, sizeof *m);
    json_error_t err;
    /* One read, then parse from memory: json_load_file reads a character
     * at a time, a fifth of the time on a 20 MB manifest. */
    size_t size;
    char *text = ks_read_file(path, &size);
    if (!text) {
        ks_error_at(path, 0, 0, "cannot read: %s", strerror(errno));
        return -1;
    }
    json_t *root = json_loadb(text, size, 0, &err);
    free(text);
    if (!root) {
        if (err.line > 0)
            ks_error_at(path, (unsigned)err.line, (unsigned)(err.column > 0 ? err.column : 1),
                        "%s", err.text);
        else
            ks_error_at(path, 0, 0, "%s", err.text);
        return -1;
    }
    return manifest_from_json(root, path, m);
}

int ks_manifest_parse(const char *text, const char *name, ks_sigs *m)
{
    memset(m, 0, sizeof *m);
    json_error_t err;
    json_t *root = json_loads(text, 0, &err);
    if (!root) {
        ks_error_at(name, (unsigned)(err.line > 0 ? err.line : 0), (unsigned)(err.column > 0 ? err.column : 1),
                    "%s", err.text);
        return -1;
    }
    return manifest_from_json(root, name, m);
}

static int manifest_from_json(json_t *root, const char *path, ks_sigs *m)
{

    json_t *format = json_object_get(root, "format");
    json_t *kernels = json_object_get(root, "kernels");
    if (!json_is_integer(format) || json_integer_value(format) != KSTUB_MANIFEST_FORMAT) {
        ks_error_at(path, 0, 0, "not a kstub manifest of format %d (\"format\" is %s)",
                    KSTUB_MANIFEST_FORMAT, format ? "different" : "missing");
        json_decref(root);
        return -1;
    }
    if (!json_is_array(kernels)) {
        ks_error_at(path, 0, 0, "\"kernels\" is missing or not an array");
        json_decref(root);
        return -1;
    }
    m->source = str_field(root, "source");
    if (!m->source)
        m->source = ks_xstrdup(ks_basename(path));
    size_t nk = json_array_size(kernels);
    m->kernels = ks_xmalloc((nk ? nk : 1) * sizeof *m->kernels);
    int bad = 0;
    for (size_t i = 0; i < nk && !bad; i++) {
        json_t *jk = json_array_get(kernels, i);
        ks_sig_kern *k = &m->kernels[m->nkernels];
        memset(k, 0, sizeof *k);
        k->name = str_field(jk, "name");
        k->c_name = str_field(jk, "c_name");
        k->symbol = str_field(jk, "symbol");
        char *where = ks_xasprintf("kernel #%zu", i + 1);
        long line, col;
        if (int_field(jk, "line", 1, &line, path, where) != 0 ||
            int_field(jk, "col", 1, &col, path, where) != 0)   /* col: 0 in older manifests */
            bad = 2;
        k->line = (unsigned)line;
        k->col = (unsigned)col;
        k->max_threads = k->min_blocks = -1;
        json_t *lb = json_object_get(jk, "launch_bounds");
        if (json_is_array(lb) && json_array_size(lb) >= 1 && json_array_size(lb) <= 2) {
            long max, mb;
            if (int_value(json_array_get(lb, 0), "launch_bounds[0]", 0, &max, path, where) ||
                int_value(json_array_get(lb, 1), "launch_bounds[1]", 1, &mb, path, where))
                bad = 2;
            k->max_threads = max;
            k->min_blocks = mb > 0 ? mb : -1;
        } else if (lb && !json_is_null(lb)) {
            ks_error_at(path, 0, 0, "%s: \"launch_bounds\" must be null or [max threads, min "
                        "blocks], not %s", where, json_type_name(lb));
            bad = 2;
        }
        json_t *params = json_object_get(jk, "params");
        size_t np = json_array_size(params);
        k->params = ks_xmalloc((np ? np : 1) * sizeof *k->params);
        for (size_t j = 0; j < np; j++) {
            json_t *jp = json_array_get(params, j);
            ks_sig_param *p = &k->params[k->nparams++];
            memset(p, 0, sizeof *p);
            p->name = str_field(jp, "name");
            p->type = str_field(jp, "type");
            p->c_type = str_field(jp, "c_type");
            char *pwhere = ks_xasprintf("%s, parameter %zu", where, j + 1);
            if (int_field(jp, "size", 0, &p->size, path, pwhere) != 0 ||
                int_field(jp, "align", 0, &p->align, path, pwhere) != 0 ||
                int_field(jp, "offset", 0, &p->offset, path, pwhere) != 0)
                bad = 2;
            free(pwhere);
            if (!p->name || !p->c_type)
                bad = bad ? bad : 1;
        }
        free(where);
        m->nkernels++;
        if (!k->name || !k->c_name || !k->symbol || !json_is_array(params))
            bad = bad ? bad : 1;
        if (bad == 1)
            ks_error_at(path, 0, 0, "kernel #%zu: a name, c_name, symbol or parameter field "
                        "is missing", i + 1);
    }
    json_decref(root);
    if (bad) {
        ks_sigs_free(m);
        return -1;
    }
    return 0;
}

/* ---- comparing two models -------------------------------------------------------------------- */

typedef struct diff_ctx {
    report *r;
    const char *old_file, *new_file;  /* what diagnostics name */
    const ks_sigs *old, *new;
    json_t *symbols;   /* name -> its one symbol, or true when two differ; diff_models's */
} diff_ctx;

/* "scale" or, when two kernels share the name (overloads), "scale [c_name]". */
static char *display_name(const diff_ctx *d, const ks_sig_kern *k)
{
    int shared = json_is_true(json_object_get(d->symbols, k->name));
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
        add(d->r, SEV_WARNING, "param_renamed", f, line, col, kn,
            "kernel %s, parameter %zu: renamed from '%s' to '%s'", kname, in + 1, po->name,
            pn->name);
    if (strcmp(po->c_type, pn->c_type) != 0) {
        add(d->r, SEV_ERROR, "param_type_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': type changed from '%s' to '%s'", kname, in + 1,
            pn->name, po->c_type, pn->c_type);
    } else if (po->size != pn->size) {
        add(d->r, SEV_ERROR, "param_size_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': size changed from %ld to %ld bytes", kname, in + 1,
            pn->name, po->size, pn->size);
    } else if (po->align != pn->align) {
        add(d->r, SEV_ERROR, "param_align_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': alignment changed from %ld to %ld bytes", kname,
            in + 1, pn->name, po->align, pn->align);
    }
}

static void diff_params(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn, const char *kname)
{
    const char *f = d->new_file;
    if (names_are_permutation(ko, kn)) {
        char *a = param_list(ko), *b = param_list(kn);
        add(d->r, SEV_ERROR, "params_reordered", f, kn->line, kn->col, kn,
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
            add(d->r, SEV_ERROR, "param_removed", f, kn->line, kn->col, kn,
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
            add(d->r, SEV_ERROR, "param_added", f, kn->line, kn->col, kn,
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
        add(d->r, tighter ? SEV_ERROR : SEV_WARNING,
            tighter ? "launch_bounds_tightened" : "launch_bounds_relaxed", f, kn->line, kn->col,
            kn, "kernel %s: __launch_bounds__ maximum block size %s from %s to %s", kname,
            tighter ? "tightened" : "relaxed", ob, nb);
    } else if (ko->min_blocks != kn->min_blocks && n > 0) {
        add(d->r, SEV_WARNING, "launch_bounds_min_blocks_changed", f, kn->line, kn->col, kn,
            "kernel %s: __launch_bounds__ minimum blocks per multiprocessor changed from %ld "
            "to %ld", kname, ko->min_blocks > 0 ? ko->min_blocks : 0,
            kn->min_blocks > 0 ? kn->min_blocks : 0);
    }
}

static void diff_kernel(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn)
{
    char *kname = display_name(d, kn);
    const char *f = d->new_file;
    if (strcmp(ko->symbol, kn->symbol) != 0)
        add(d->r, SEV_ERROR, "symbol_changed", f, kn->line, kn->col, kn,
            "kernel %s: device symbol changed from '%s' to '%s'", kname, ko->symbol, kn->symbol);
    if (strcmp(ko->c_name, kn->c_name) != 0)
        add(d->r, SEV_ERROR, "c_name_changed", f, kn->line, kn->col, kn,
            "kernel %s: C function renamed from '%s' to '%s'", kname, ko->c_name, kn->c_name);
    diff_params(d, ko, kn, kname);
    diff_bounds(d, ko, kn, kname);
    free(kname);
}

/* The hash key for a kernel's name and symbol: the name's length first, so
 * that no two pairs give the same key whatever characters they hold. */
static char *pair_key(const ks_sig_kern *k)
{
    return ks_xasprintf("%zu:%s%s", strlen(k->name), k->name, k->symbol);
}

/* Kernels pair up by qualified name and symbol (overloads share a name).
 * A kernel whose symbol changed (a C++ kernel's parameter type is part of
 * its mangled name) still pairs by name when exactly one kernel of that
 * name is left on each side, so the report says what changed inside it.
 * Lookups go through hash tables (jansson's objects), so a diff takes time
 * linear in the kernels: 100,000 kernels in a fraction of a second. */
static void diff_models(diff_ctx *d)
{
    const ks_sigs *o = d->old, *n = d->new;
    long *match = ks_xmalloc((o->nkernels + 1) * sizeof *match);  /* old -> new */
    long *owner = ks_xmalloc((n->nkernels + 1) * sizeof *owner);  /* new -> old */
    unsigned char *taken = ks_xmalloc(n->nkernels + 1);
    memset(taken, 0, n->nkernels + 1);

    /* name -> symbol, or true for a name with two symbols (display_name) */
    d->symbols = json_object();
    const ks_sigs *ms[2] = {o, n};
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < ms[m]->nkernels; i++) {
            const ks_sig_kern *k = &ms[m]->kernels[i];
            json_t *seen = json_object_get(d->symbols, k->name);
            if (!seen)
                json_object_set_new_nocheck(d->symbols, k->name, json_string_nocheck(k->symbol));
            else if (json_is_string(seen) && strcmp(json_string_value(seen), k->symbol) != 0)
                json_object_set_new_nocheck(d->symbols, k->name, json_true());
        }

    /* First, same name and symbol: the new kernels of each pair, in order. */
    json_t *by_pair = json_object();
    for (size_t j = 0; j < n->nkernels; j++) {
        char *key = pair_key(&n->kernels[j]);
        json_t *list = json_object_get(by_pair, key);
        if (!list) {
            list = json_array();
            json_object_set_new_nocheck(by_pair, key, list);
        }
        json_array_append_new(list, json_integer((json_int_t)j));
        free(key);
    }
    for (size_t i = 0; i < o->nkernels; i++) {
        char *key = pair_key(&o->kernels[i]);
        json_t *list = json_object_get(by_pair, key);
        match[i] = -1;
        if (json_array_size(list) > 0) {
            match[i] = (long)json_integer_value(json_array_get(list, 0));
            taken[match[i]] = 1;
            json_array_remove(list, 0);
        }
        free(key);
    }
    json_decref(by_pair);

    /* Then, by name alone where one kernel of the name is left on each side:
     * [unmatched old, unmatched new, the last unmatched new's index]. */
    json_t *by_name = json_object();
    for (int m = 0; m < 2; m++) {
        size_t count = m == 0 ? o->nkernels : n->nkernels;
        for (size_t i = 0; i < count; i++) {
            if (m == 0 ? match[i] >= 0 : taken[i])
                continue;
            const char *name = ms[m]->kernels[i].name;
            json_t *c = json_object_get(by_name, name);
            if (!c) {
                c = json_pack("[i, i, I]", 0, 0, (json_int_t)-1);
                json_object_set_new_nocheck(by_name, name, c);
            }
            json_array_set_new(c, (size_t)m, json_integer(json_integer_value(
                                                  json_array_get(c, (size_t)m)) + 1));
            if (m == 1)
                json_array_set_new(c, 2, json_integer((json_int_t)i));
        }
    }
    for (size_t i = 0; i < o->nkernels; i++) {
        if (match[i] >= 0)
            continue;
        json_t *c = json_object_get(by_name, o->kernels[i].name);
        if (json_integer_value(json_array_get(c, 0)) == 1 &&
            json_integer_value(json_array_get(c, 1)) == 1) {
            match[i] = (long)json_integer_value(json_array_get(c, 2));
            taken[match[i]] = 1;
        }
    }
    json_decref(by_name);
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
        add(d->r, SEV_ERROR, "kernel_removed", d->new_file, 0, 0, k,
            "kernel %s removed (it was at %s:%u)", kname, d->old_file, k->line);
        free(kname);
    }
    for (size_t j = 0; j < n->nkernels; j++) {
        const ks_sig_kern *kn = &n->kernels[j];
        if (owner[j] >= 0) {
            diff_kernel(d, &o->kernels[owner[j]], kn);
        } else {
            char *kname = display_name(d, kn);
            add(d->r, SEV_WARNING, "kernel_added", d->new_file, kn->line, kn->col, kn,
                "kernel %s added", kname);
            free(kname);
        }
    }
    free(match);
    free(owner);
    free(taken);
    json_decref(d->symbols);
    d->symbols = NULL;
}

static void count_summary(const report *r, ks_buf *b)
{
    size_t errors = 0, warnings = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].sev == SEV_ERROR)
            errors++;
        else if (r->v[i].sev == SEV_WARNING)
            warnings++;
    }
    ks_buf_printf(b, "%zu breaking change%s, %zu compatible change%s", errors,
                  errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
}

/* ---- kstub diff ------------------------------------------------------------------------------- */

static void diff_usage(FILE *f)
{
    fputs("usage: kstub diff [--format=text|json|github] [--source PATH] OLD.json NEW.json\n"
          "\n"
          "Compares two kstub manifests and classifies every change: breaking for\n"
          "existing callers (error) or compatible (warning).\n"
          "\n"
          "  --format=F       text (file:line:col: error: ..., the default), json, or github\n"
          "                   (workflow annotations)\n"
          "  --source PATH    the .cu path to name in diagnostics (default: the manifest's\n"
          "                   \"source\", a file name without directories)\n"
          "\n"
          "exit status: 0 no change, 4 compatible changes only, 12 breaking changes,\n"
          "             1 error (unreadable or invalid manifest), 2 usage error\n",
          f);
}

int ks_diff_main(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    const char *source = NULL, *v = NULL;
    int nfiles = 0, fmt = KS_FORMAT_TEXT, m;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            diff_usage(stdout);
            return 0;
        } else if ((m = ks_option(argc, argv, &i, "--format", &v)) != 0) {
            if (m < 0)
                return KS_DRIFT_USAGE;
            if ((fmt = ks_format_parse(v)) < 0) {
                ks_error_at(NULL, 0, 0, "--format takes text, json or github, not '%s'", v);
                return KS_DRIFT_USAGE;
            }
        } else if ((m = ks_option(argc, argv, &i, "--source", &v)) != 0) {
            if (m < 0)
                return KS_DRIFT_USAGE;      /* "--source" without a value */
            source = v;
        } else if (a[0] == '-' && a[1]) {
            ks_error_at(NULL, 0, 0, "kstub diff: unknown option '%s'", a);
            diff_usage(stderr);
            return KS_DRIFT_USAGE;
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            ks_error_at(NULL, 0, 0, "kstub diff takes two manifests, not more");
            return KS_DRIFT_USAGE;
        }
    }
    if (nfiles != 2) {
        diff_usage(stderr);
        return KS_DRIFT_USAGE;
    }
    ks_sigs old, new;
    if (ks_manifest_read(files[0], &old) != 0)
        return KS_DRIFT_ERROR;
    if (ks_manifest_read(files[1], &new) != 0) {
        ks_sigs_free(&old);
        return KS_DRIFT_ERROR;
    }
    report r = {0};
    const char *new_file = source ? source : new.source;
    const char *old_file = source ? source : old.source;
    diff_ctx d = {&r, old_file, new_file, &old, &new, NULL};
    diff_models(&d);
    ks_buf sum = {0};
    ks_buf_printf(&sum, "kstub diff: ");
    if (r.changed)
        count_summary(&r, &sum);
    else
        ks_buf_puts(&sum, "no change");
    int rc = exit_status(&r);
    print_report(&r, (ks_format)fmt, "diff", sum.data, NULL, rc);
    free(sum.data);
    report_free(&r);
    ks_sigs_free(&old);
    ks_sigs_free(&new);
    return rc;
}

/* ---- kstub check ------------------------------------------------------------------------------ */

int ks_check_run(const ks_check_input *in)
{
    report r = {0};
    int stale = 0;
    size_t *state = ks_xmalloc((in->noutputs + 1) * sizeof *state);
    enum { UP_TO_DATE, MISSING, DIFFERS };
    for (size_t i = 0; i < in->noutputs; i++) {
        size_t size;
        char *disk = ks_read_file(in->outputs[i].path, &size);
        if (!disk)
            state[i] = MISSING;
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
        FILE *probe = fopen(in->manifest, "rb");
        if (probe) {
            fclose(probe);
            /* A manifest that cannot be read is a tool error (1), not a
             * change (4): the comparison cannot be made. */
            if (ks_manifest_read(in->manifest, &old) != 0) {
                free(state);
                return KS_DRIFT_ERROR;
            }
            have_old = 1;
        }
    }
    size_t before = r.n;
    if (have_old) {
        ks_sigs fresh;
        if (ks_manifest_parse(in->fresh_manifest, in->source, &fresh) == 0) {
            diff_ctx d = {&r, in->source, in->source, &old, &fresh, NULL};
            diff_models(&d);
            ks_sigs_free(&fresh);
        }
        ks_sigs_free(&old);
    }
    int kernels_changed = r.n > before, kernels_breaking = r.breaking;
    for (size_t i = 0; i < in->noutputs; i++) {
        if (state[i] == MISSING)
            add(&r, SEV_ERROR, "file_missing", in->outputs[i].path, 0, 0, NULL,
                "missing; kstub has not generated it");
        else if (state[i] == DIFFERS)
            add(&r, SEV_ERROR, "file_out_of_date", in->outputs[i].path, 0, 0, NULL,
                "out of date: differs from what kstub generates from %s%s", in->source,
                kernels_changed ? ""
                : have_old ? " (no kernel signature changed: options, templates or "
                             "the kstub version differ)"
                           : "");
    }
    ks_buf sum = {0};
    if (stale)
        ks_buf_printf(&sum, "kstub check: generated files for %s are out of date", in->source);
    else
        ks_buf_printf(&sum, "kstub check: generated files for %s are up to date", in->source);
    /* A stale file is a change even when every kernel kept its signature. */
    int rc = stale ? KS_DRIFT_CHANGED | (kernels_breaking ? KS_DRIFT_BREAKING : 0)
                   : KS_DRIFT_NONE;
    print_report(&r, in->format, "check", sum.data, in->fix_command, rc);
    free(sum.data);
    free(state);
    report_free(&r);
    return rc;
}

void ks_sigs_free(ks_sigs *m)
{
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_sig_kern *k = &m->kernels[i];
        for (size_t j = 0; j < k->nparams; j++) {
            free(k->params[j].name);
            free(k->params[j].type);
            free(k->params[j].c_type);
        }
        free(k->params);
        free(k->name);
        free(k->c_name);
        free(k->symbol);
    }
    free(m->kernels);
    free(m->source);
    memset(m, 0, sizeof *m);
}
