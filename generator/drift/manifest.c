/*
 * manifest.c — the signature manifest (--manifest FILE.json), written and
 * read: every kernel and parameter with its C type, size, alignment and
 * offset, in source order. kstub check and kstub diff (drift.c) read it back
 * as signatures; kstub --list --format=json prints the same document with
 * each stub's C prototype added. Its field names are written here only
 * (F_* below), are stable, and "format" changes when they do. Both
 * directions go through jansson.
 */
#include "emit/emit.h"
#include "drift/manifest.h"
#include "drift/sigtable.h"
#include "base/inputs.h"
#include "base/util.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the format's field names ------------------------------------------------------------------ */

#define F_FORMAT "format"
#define F_SOURCE "source"
#define F_KERNELS "kernels"
/* a kernel */
#define F_NAME "name"
#define F_C_NAME "c_name"
#define F_SYMBOL "symbol"
#define F_LINE "line"
#define F_COL "col"
#define F_BOUNDS "launch_bounds"
#define F_PARAMS "params"
#define F_PROTOTYPE "prototype"   /* --list only */
#define F_ENTRY_POINTS "entry_points" /* --list --all only: the _n and graph prototypes */
#define F_GENERICS "generics"     /* --list --all only: the templates' one C names */
/* a parameter (and F_NAME) */
#define F_TYPE "type"
#define F_C_TYPE "c_type"
#define F_SIZE "size"
#define F_ALIGN "align"
#define F_OFFSET "offset"
#define F_EXTENT "extent"
#define F_FIXED "fixed"
/* a device variable (and F_NAME, F_C_NAME, F_SYMBOL, F_LINE, F_COL, F_TYPE, F_SIZE, F_ALIGN) */
#define F_VARIABLES "variables"
#define F_SPACE "space"
#define F_DIMS "dims"
#define F_ELEM_SIZE "elem_size"

/* ---- writing ----------------------------------------------------------------------------------- */

/* c_type: the header's spelling of the parameter's type (emit.h). */
static json_t *param_json(const ks_param *p, const char *c_type)
{
    json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}",
                     F_NAME, p->c_name,
                     F_TYPE, p->spelled,
                     F_C_TYPE, c_type,
                     F_SIZE, (json_int_t)p->size,
                     F_ALIGN, (json_int_t)p->align,
                     F_OFFSET, (json_int_t)p->offset);
    if (p->extent)
        json_object_set_new(j, F_EXTENT, json_string(p->extent));
    /* An empty class (std::true_type, std::integral_constant<int, 4>): the
     * stub packs its byte, the caller passes nothing. */
    if (p->type.tag)
        json_object_set_new(j, F_FIXED, json_true());
    return j;
}

static json_t *kernel_json(const ks_kern *k, const ks_spellings *sp, size_t index, int with_prototype)
{
    json_t *params = json_array();
    for (size_t i = 0; i < k->nparams; i++)
        json_array_append_new(params, param_json(&k->params[i], sp->c_types[index][i]));
    json_t *bounds = json_null();
    if (k->max_threads > 0)
        bounds = json_pack("[I, I]", (json_int_t)k->max_threads,
                           (json_int_t)(k->min_blocks > 0 ? k->min_blocks : 0));
    json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:o}",
                          F_NAME, k->name,
                          F_C_NAME, k->c_name,
                          F_SYMBOL, k->symbol,
                          F_LINE, (json_int_t)k->line,
                          F_COL, (json_int_t)k->col,
                          F_BOUNDS, bounds,
                          F_PARAMS, params);
    if (with_prototype)
        json_object_set_new(j, F_PROTOTYPE, json_string(sp->prototypes[index]));
    if (with_prototype && sp->entry_points) {
        json_t *more = json_array();
        for (size_t i = 0; sp->entry_points[index][i]; i++)
            json_array_append_new(more, json_string(sp->entry_points[index][i]));
        json_object_set_new(j, F_ENTRY_POINTS, more);
    }
    return j;
}

static json_t *var_json(const ks_var *v)
{
    json_t *dims = json_array();
    for (size_t i = 0; i < v->type.ndims; i++)
        json_array_append_new(dims, json_integer((json_int_t)v->type.dims[i]));
    return json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:i, s:i, s:i, s:o}",
                     F_NAME, v->name,
                     F_C_NAME, v->c_name,
                     F_SYMBOL, v->symbol,
                     F_LINE, (json_int_t)v->line,
                     F_COL, (json_int_t)v->col,
                     F_TYPE, v->spelled,
                     F_SPACE, ks_space_name(v->space),
                     F_SIZE, (json_int_t)v->size,
                     F_ALIGN, (json_int_t)v->align,
                     F_ELEM_SIZE, (json_int_t)v->elem_size,
                     F_DIMS, dims);
}

/* A variable's object, with its accessors' prototypes under --list --all. */
static json_t *var_listed(const ks_var *v, const ks_spellings *sp, size_t index, int with_prototype)
{
    json_t *j = var_json(v);
    if (j && with_prototype && sp->var_entry_points && index < sp->nvars) {
        json_t *more = json_array();
        for (size_t i = 0; sp->var_entry_points[index][i]; i++)
            json_array_append_new(more, json_string(sp->var_entry_points[index][i]));
        json_object_set_new(j, F_ENTRY_POINTS, more);
    }
    return j;
}

static char *document(const ks_options *opts, const ks_model *m, const ks_spellings *sp,
                      int with_prototype)
{
    json_t *kernels = json_array();
    for (size_t i = 0; i < m->nkernels; i++)
        json_array_append_new(kernels, kernel_json(&m->kernels[i], sp, i, with_prototype));
    json_t *root = json_pack("{s:i, s:s, s:o}", F_FORMAT, KSTUB_MANIFEST_FORMAT,
                             F_SOURCE, ks_basename(opts->input), F_KERNELS, kernels);
    /* Only when there are any: a file without device variables keeps the
     * manifest it had before they were listed. */
    if (m->nvars) {
        json_t *vars = json_array();
        for (size_t i = 0; i < m->nvars; i++)
            json_array_append_new(vars, var_listed(&m->vars[i], sp, i, with_prototype));
        json_object_set_new(root, F_VARIABLES, vars);
    }
    if (with_prototype && sp->generics) {
        json_t *g = json_array();
        for (size_t i = 0; sp->generics[i]; i++)
            json_array_append_new(g, json_string(sp->generics[i]));
        json_object_set_new(root, F_GENERICS, g);
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    json_decref(root);
    if (!text)
        return NULL;
    char *r = ks_xasprintf("%s\n", text);
    free(text);
    return r;
}

char *ks_manifest_json(const ks_options *opts, const ks_model *m, const ks_spellings *sp)
{
    return document(opts, m, sp, 0);
}

char *ks_list_json(const ks_options *opts, const ks_model *m, const ks_spellings *sp)
{
    return document(opts, m, sp, 1);
}

/* ---- reading ----------------------------------------------------------------------------------- */

/* A string field's value (a copy), or NULL when missing or not a string. */
static char *str_value(const json_t *j)
{
    return json_is_string(j) ? ks_xstrdup(json_string_value(j)) : NULL;
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

/* Where a field is, for messages: "kernel #3" or "kernel #3, parameter 2"
 * (param 0: the kernel's own field). Built only when a message needs it. */
typedef struct where {
    size_t kernel, param;
} where;

static const char *where_text(where w, char *buf, size_t size)
{
    if (w.param)
        snprintf(buf, size, "kernel #%zu, parameter %zu", w.kernel, w.param);
    else
        snprintf(buf, size, "kernel #%zu", w.kernel);
    return buf;
}

/* A number field as a non-negative integer. A wrong type is an error
 * naming the field (read as 0 it would report a bogus "size changed to 0");
 * a missing field is one too unless optional (0 then: unknown). */
static int int_value(const json_t *j, const char *key, int optional, long *v, const char *path,
                     where w)
{
    char buf[64];
    *v = 0;
    if (!j && optional)
        return 0;
    if (!j) {
        ks_error_at(path, 0, 0, "%s: \"%s\" is missing", where_text(w, buf, sizeof buf), key);
        return -1;
    }
    json_int_t i = json_is_integer(j) ? json_integer_value(j) : -1;
    if (i < 0 || i > INT_MAX) {
        ks_error_at(path, 0, 0, "%s: \"%s\" must be a non-negative integer, not %s",
                    where_text(w, buf, sizeof buf), key,
                    json_is_integer(j) && i > 0 ? "one this large" : json_type_name(j));
        return -1;
    }
    *v = (long)i;
    return 0;
}

/* "launch_bounds": null, or [max threads] or [max threads, min blocks]. */
static int bounds_value(const json_t *lb, ks_sig_kern *k, const char *path, where w)
{
    k->max_threads = k->min_blocks = -1;
    size_t n = json_is_array(lb) ? json_array_size(lb) : 0;
    if (n >= 1 && n <= 2) {
        long max = 0, mb = 0;
        int rc = int_value(json_array_get(lb, 0), F_BOUNDS "[0]", 0, &max, path, w) ||
                 int_value(json_array_get(lb, 1), F_BOUNDS "[1]", 1, &mb, path, w);
        k->max_threads = max;
        k->min_blocks = mb > 0 ? mb : -1;
        return rc ? -1 : 0;
    }
    if (lb && !json_is_null(lb)) {
        char buf[64];
        ks_error_at(path, 0, 0, "%s: \"" F_BOUNDS "\" must be null or [max threads, min "
                    "blocks], not %s", where_text(w, buf, sizeof buf), json_type_name(lb));
        return -1;
    }
    return 0;
}

/* A field present with another type than the one expected (a string,
 * an array, an object): an error naming both, not "missing". Returns 0
 * when absent or of the type, -1 after the error. */
static int type_check(const json_t *j, const char *key, json_type want, const char *path, where w)
{
    if (!j || json_typeof(j) == want)
        return 0;
    char buf[64];
    ks_error_at(path, 0, 0, "%s: \"%s\" must be %s, not %s", where_text(w, buf, sizeof buf), key,
                want == JSON_STRING ? "a string" : want == JSON_ARRAY ? "an array" : "an object",
                json_type_name(j));
    return -1;
}

/* One parameter. Returns 0, 1 (a name or type missing), 2 (error printed). */
static int param_value(const json_t *jp, ks_sig_param *p, const char *path, where w)
{
    memset(p, 0, sizeof *p);
    if (!json_is_object(jp)) {
        char buf[64];
        ks_error_at(path, 0, 0, "%s must be an object, not %s", where_text(w, buf, sizeof buf),
                    json_type_name(jp));
        return 2;
    }
    if (type_check(json_object_get(jp, F_NAME), F_NAME, JSON_STRING, path, w) ||
        type_check(json_object_get(jp, F_TYPE), F_TYPE, JSON_STRING, path, w) ||
        type_check(json_object_get(jp, F_C_TYPE), F_C_TYPE, JSON_STRING, path, w))
        return 2;
    p->name = str_value(json_object_get(jp, F_NAME));
    p->type = str_value(json_object_get(jp, F_TYPE));
    p->c_type = str_value(json_object_get(jp, F_C_TYPE));
    if (int_value(json_object_get(jp, F_SIZE), F_SIZE, 0, &p->size, path, w) != 0 ||
        int_value(json_object_get(jp, F_ALIGN), F_ALIGN, 0, &p->align, path, w) != 0 ||
        int_value(json_object_get(jp, F_OFFSET), F_OFFSET, 0, &p->offset, path, w) != 0)
        return 2;
    return !p->name || !p->c_type;
}

/* One kernel (index i, from 0). Returns 0, 1 (a field missing), 2 (error printed). */
static int kernel_value(const json_t *jk, size_t i, ks_sig_kern *k, const char *path)
{
    where w = {i + 1, 0};
    int bad = 0;
    memset(k, 0, sizeof *k);
    if (!json_is_object(jk)) {
        ks_error_at(path, 0, 0, "kernel #%zu must be an object, not %s", i + 1, json_type_name(jk));
        return 2;
    }
    if (type_check(json_object_get(jk, F_NAME), F_NAME, JSON_STRING, path, w) ||
        type_check(json_object_get(jk, F_C_NAME), F_C_NAME, JSON_STRING, path, w) ||
        type_check(json_object_get(jk, F_SYMBOL), F_SYMBOL, JSON_STRING, path, w) ||
        type_check(json_object_get(jk, F_PARAMS), F_PARAMS, JSON_ARRAY, path, w))
        return 2;
    k->name = str_value(json_object_get(jk, F_NAME));
    k->c_name = str_value(json_object_get(jk, F_C_NAME));
    k->symbol = str_value(json_object_get(jk, F_SYMBOL));
    long line = 0, col = 0;
    if (int_value(json_object_get(jk, F_LINE), F_LINE, 1, &line, path, w) != 0 ||
        int_value(json_object_get(jk, F_COL), F_COL, 1, &col, path, w) != 0)  /* col: 0 in older manifests */
        bad = 2;
    k->line = (unsigned)line;
    k->col = (unsigned)col;
    if (bounds_value(json_object_get(jk, F_BOUNDS), k, path, w) != 0)
        bad = 2;
    const json_t *params = json_object_get(jk, F_PARAMS);
    size_t np = json_is_array(params) ? json_array_size(params) : 0;
    k->params = ks_xmalloc((np ? np : 1) * sizeof *k->params);
    for (size_t j = 0; j < np; j++) {
        int r = param_value(json_array_get(params, j), &k->params[k->nparams++], path,
                            (where){i + 1, j + 1});
        bad = bad > r ? bad : r;
    }
    if (!k->name || !k->c_name || !k->symbol || !json_is_array(params))
        bad = bad ? bad : 1;
    if (bad == 1)
        ks_error_at(path, 0, 0, "kernel #%zu: a " F_NAME ", " F_C_NAME ", " F_SYMBOL
                    " or parameter field is missing", i + 1);
    return bad;
}

/* One device variable (index i, from 0). Returns 0, or -1 after an error. */
static int var_value(const json_t *jv, size_t i, ks_sig_var *v, const char *path)
{
    where w = {i + 1, 0};
    memset(v, 0, sizeof *v);
    if (!json_is_object(jv)) {
        ks_error_at(path, 0, 0, "variable #%zu must be an object, not %s", i + 1, json_type_name(jv));
        return -1;
    }
    static const char *const strings[] = {F_NAME, F_C_NAME, F_SYMBOL, F_TYPE, F_SPACE};
    for (size_t f = 0; f < sizeof strings / sizeof *strings; f++) {
        const json_t *j = json_object_get(jv, strings[f]);
        if (j && !json_is_string(j)) {
            ks_error_at(path, 0, 0, "variable #%zu: \"%s\" must be a string, not %s", i + 1,
                        strings[f], json_type_name(j));
            return -1;
        }
    }
    const json_t *jd = json_object_get(jv, F_DIMS);
    if (jd && !json_is_array(jd)) {
        ks_error_at(path, 0, 0, "variable #%zu: \"" F_DIMS "\" must be an array, not %s", i + 1,
                    json_type_name(jd));
        return -1;
    }
    v->name = str_value(json_object_get(jv, F_NAME));
    v->c_name = str_value(json_object_get(jv, F_C_NAME));
    v->symbol = str_value(json_object_get(jv, F_SYMBOL));
    v->type = str_value(json_object_get(jv, F_TYPE));
    v->space = str_value(json_object_get(jv, F_SPACE));
    long line = 0, col = 0;
    if (int_value(json_object_get(jv, F_LINE), F_LINE, 1, &line, path, w) != 0 ||
        int_value(json_object_get(jv, F_COL), F_COL, 1, &col, path, w) != 0 ||
        int_value(json_object_get(jv, F_SIZE), F_SIZE, 0, &v->size, path, w) != 0 ||
        int_value(json_object_get(jv, F_ALIGN), F_ALIGN, 0, &v->align, path, w) != 0 ||
        int_value(json_object_get(jv, F_ELEM_SIZE), F_ELEM_SIZE, 1, &v->elem_size, path, w) != 0)
        return -1;
    v->line = (unsigned)line;
    v->col = (unsigned)col;
    const json_t *dims = json_object_get(jv, F_DIMS);
    ks_buf b = {0};
    size_t nd = json_is_array(dims) ? json_array_size(dims) : 0;
    for (size_t j = 0; j < nd; j++) {
        const json_t *d = json_array_get(dims, j);
        if (!json_is_integer(d) || json_integer_value(d) < 0) {
            ks_error_at(path, 0, 0, "variable #%zu: \"" F_DIMS "\" must list non-negative integers", i + 1);
            free(b.data);
            return -1;
        }
        ks_buf_printf(&b, "[%lld]", (long long)json_integer_value(d));
    }
    v->dims = b.len ? ks_buf_take(&b) : ks_xstrdup("");
    if (!v->name || !v->c_name || !v->symbol || !v->type || !v->space || !json_is_array(dims)) {
        ks_error_at(path, 0, 0, "variable #%zu: a " F_NAME ", " F_C_NAME ", " F_SYMBOL ", " F_TYPE
                    ", " F_SPACE " or " F_DIMS " field is missing", i + 1);
        return -1;
    }
    return 0;
}

static int vars_from_json(const json_t *root, const char *path, ks_sigs *m)
{
    const json_t *vars = json_object_get(root, F_VARIABLES);
    if (!vars)
        return 0;                  /* none, or a manifest from before variables were listed */
    if (!json_is_array(vars)) {
        ks_error_at(path, 0, 0, "\"" F_VARIABLES "\" must be an array, not %s", json_type_name(vars));
        return -1;
    }
    size_t nv = json_array_size(vars);
    m->vars = ks_xmalloc((nv ? nv : 1) * sizeof *m->vars);
    for (size_t i = 0; i < nv; i++)
        if (var_value(json_array_get(vars, i), i, &m->vars[m->nvars++], path) != 0)
            return -1;
    for (size_t i = 0; i < m->nvars; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->vars[i].name, m->vars[j].name) == 0) {
                ks_error_at(path, 0, 0, "variable #%zu repeats #%zu ('%s'): a manifest lists each "
                            "variable once", i + 1, j + 1, m->vars[i].name);
                return -1;
            }
    return 0;
}

/* A kernel is its name and device symbol (what diff pairs on): a manifest
 * that lists one twice is malformed, not a kernel added. Reports each
 * repeat with the entry it repeats; returns their count. */
static int find_duplicate_kernels(const ks_sigs *m, const char *path)
{
    ks_sigtable t;
    ks_sigtable_init(&t, m->nkernels, 1);
    int dups = 0;
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_sigslot *s = ks_sigtable_slot(&t, &m->kernels[i], 1);
        if (s->k == &m->kernels[i]) {
            s->idx = (long)i;
            continue;
        }
        ks_error_at(path, 0, 0, "kernel #%zu repeats kernel #%ld ('%s', symbol '%s'): a "
                    "manifest lists each kernel once", i + 1, s->idx + 1, m->kernels[i].name,
                    m->kernels[i].symbol);
        dups++;
    }
    ks_sigtable_free(&t);
    return dups;
}

/* Kernels ordered by C name, then by their place in the manifest. */
static int by_c_name(const void *a, const void *b)
{
    const ks_sig_kern *x = *(const ks_sig_kern *const *)a, *y = *(const ks_sig_kern *const *)b;
    int c = strcmp(x->c_name, y->c_name);
    return c ? c : (x > y) - (x < y);
}

/* A C name is one function of the generated header: two kernels that are
 * not the same kernel (another name or symbol; a repeat is reported above)
 * with one C name are a manifest the generator never writes, not a kernel
 * added. Reports each with the first kernel of that C name; returns their
 * count. Sorting keeps it n log n. */
static int find_shared_c_names(const ks_sigs *m, const char *path)
{
    if (m->nkernels < 2)
        return 0;
    const ks_sig_kern **order = ks_xmalloc(m->nkernels * sizeof *order);
    for (size_t i = 0; i < m->nkernels; i++)
        order[i] = &m->kernels[i];
    qsort(order, m->nkernels, sizeof *order, by_c_name);
    int shared = 0;
    for (size_t r = 0; r < m->nkernels;) {
        const ks_sig_kern *a = order[r];
        size_t e = r + 1;
        for (; e < m->nkernels && strcmp(order[e]->c_name, a->c_name) == 0; e++) {
            const ks_sig_kern *b = order[e];
            if (strcmp(a->name, b->name) == 0 && strcmp(a->symbol, b->symbol) == 0)
                continue;
            ks_error_at(path, 0, 0, "kernel #%zu ('%s', symbol '%s') has the C name '%s' of kernel "
                        "#%zu ('%s', symbol '%s'): a manifest gives each kernel its own C name",
                        (size_t)(b - m->kernels) + 1, b->name, b->symbol, b->c_name,
                        (size_t)(a - m->kernels) + 1, a->name, a->symbol);
            shared++;
        }
        r = e;
    }
    free(order);
    return shared;
}

static int manifest_from_json(const json_t *root, const char *path, ks_sigs *m)
{
    const json_t *format = json_object_get(root, F_FORMAT);
    const json_t *kernels = json_object_get(root, F_KERNELS);
    if (!json_is_integer(format) || json_integer_value(format) != KSTUB_MANIFEST_FORMAT) {
        /* the value found, as JSON, cut at 64 bytes */
        char *found = format ? json_dumps(format, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        if (found && strlen(found) > 64)
            strcpy(found + 61, "...");
        ks_error_at(path, 0, 0, "not a kstub manifest of format %d (\"" F_FORMAT "\" is %s)",
                    KSTUB_MANIFEST_FORMAT, found ? found : "missing");
        free(found);
        return -1;
    }
    if (!json_is_array(kernels)) {
        if (kernels)
            ks_error_at(path, 0, 0, "\"" F_KERNELS "\" must be an array, not %s",
                        json_type_name(kernels));
        else
            ks_error_at(path, 0, 0, "\"" F_KERNELS "\" is missing");
        return -1;
    }
    m->source = str_value(json_object_get(root, F_SOURCE));
    if (!m->source)
        m->source = ks_xstrdup(ks_basename(path));
    size_t nk = json_array_size(kernels);
    m->kernels = ks_xmalloc((nk ? nk : 1) * sizeof *m->kernels);
    int bad = 0;
    for (size_t i = 0; i < nk && !bad; i++)
        bad = kernel_value(json_array_get(kernels, i), i, &m->kernels[m->nkernels++], path);
    if (bad || find_duplicate_kernels(m, path) + find_shared_c_names(m, path) > 0 ||
        vars_from_json(root, path, m) != 0) {
        ks_sigs_free(m);
        return -1;
    }
    return 0;
}

/* Parses text[0..size) named path in messages into *m. jansson checks the
 * text against RFC 8259 (UTF-8, escapes, surrogate pairs, no \u0000, a
 * bounded depth); an object that repeats a key ("size": 4, "size": 8) is
 * refused, never read as its last value. */
static int manifest_from_text(const char *text, size_t size, const char *path, ks_sigs *m)
{
    json_error_t err;
    json_t *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        ks_error_at(path, err.line > 0 ? (unsigned)err.line : 1,
                    err.column > 0 ? (unsigned)err.column : 1, "invalid JSON: %s", err.text);
        return -1;
    }
    int rc = manifest_from_json(root, path, m);
    json_decref(root);
    return rc;
}

int ks_manifest_read(const char *path, ks_sigs *m)
{
    memset(m, 0, sizeof *m);
    size_t size;
    char *text = ks_read_file(path, &size);
    if (!text) {
        ks_error_at(path, 0, 0, "cannot read: %s", ks_file_error());
        return -1;
    }
    int rc = manifest_from_text(text, size, path, m);
    free(text);
    return rc;
}

int ks_manifest_parse(const char *text, const char *name, ks_sigs *m)
{
    memset(m, 0, sizeof *m);
    return manifest_from_text(text, strlen(text), name, m);
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
    for (size_t i = 0; i < m->nvars; i++) {
        ks_sig_var *v = &m->vars[i];
        free(v->name);
        free(v->c_name);
        free(v->symbol);
        free(v->type);
        free(v->space);
        free(v->dims);
    }
    free(m->vars);
    free(m->source);
    memset(m, 0, sizeof *m);
}
