/*
 * model.c — the typed signature model's builders and its free, and the
 * tables that name scalar and special types. Used by the front end, the
 * emitters and drift alike, so none of them depends on another for it.
 */
#include "model/model.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *c_name, *tag;
} scalars[KS_SCALAR_COUNT] = {
#define KS_SCALAR_ROW(id, c, tag) {c, tag},
    KS_SCALAR_LIST(KS_SCALAR_ROW)
#undef KS_SCALAR_ROW
};

static const char *const specials[KS_SPECIAL_COUNT] = {
    "ks_half", "ks_half2", "ks_bfloat16", "ks_bfloat162", "CUtensorMap",
};

const char *ks_scalar_c_name(ks_scalar s)
{
    return scalars[s].c_name;
}

const char *ks_scalar_tag(ks_scalar s)
{
    return scalars[s].tag;
}

const char *ks_special_c_name(ks_special s)
{
    return specials[s];
}

const char *ks_special_cuda_name(ks_special s)
{
    static const char *const cuda[KS_SPECIAL_COUNT] = {
        "__half", "__half2", "__nv_bfloat16", "__nv_bfloat162", NULL,
    };
    return cuda[s];
}

/* Appends one zeroed element to a growable array. */
static void *grow(void *array, size_t *n, size_t size)
{
    char *a = ks_xrealloc(array, (*n + 1) * size);
    memset(a + *n * size, 0, size);
    (*n)++;
    return a;
}

ks_kern *ks_model_add_kernel(ks_model *m)
{
    m->kernels = grow(m->kernels, &m->nkernels, sizeof *m->kernels);
    ks_kern *k = &m->kernels[m->nkernels - 1];
    k->max_threads = k->min_blocks = -1;
    return k;
}

ks_param *ks_kern_add_param(ks_kern *k)
{
    k->params = grow(k->params, &k->nparams, sizeof *k->params);
    return &k->params[k->nparams - 1];
}

ks_var *ks_model_add_var(ks_model *m)
{
    m->vars = grow(m->vars, &m->nvars, sizeof *m->vars);
    return &m->vars[m->nvars - 1];
}

void ks_var_free(ks_var *v)
{
    free(v->name);
    free(v->c_name);
    free(v->descriptor);
    free(v->symbol);
    free(v->spelled);
    free(v->file);
    ks_type_free(&v->type);
    memset(v, 0, sizeof *v);
}

const char *ks_space_name(ks_space s)
{
    static const char *const names[] = {"constant", "device", "managed"};
    return names[s];
}

size_t ks_model_def(ks_model *m, ks_def_kind kind, const char *qname, int *is_new)
{
    for (size_t i = 0; i < m->ndefs; i++)
        if (m->defs[i].kind == kind && strcmp(m->defs[i].qname, qname) == 0) {
            *is_new = 0;
            return i;
        }
    m->defs = grow(m->defs, &m->ndefs, sizeof *m->defs);
    ks_def *d = &m->defs[m->ndefs - 1];
    d->kind = kind;
    d->qname = ks_xstrdup(qname);
    *is_new = 1;
    return m->ndefs - 1;
}

static void add_once(size_t **order, size_t *n, size_t def)
{
    for (size_t i = 0; i < *n; i++)
        if ((*order)[i] == def)
            return;
    *order = ks_xrealloc(*order, (*n + 1) * sizeof **order);
    (*order)[(*n)++] = def;
}

void ks_model_declare(ks_model *m, size_t def)
{
    add_once(&m->decl_order, &m->ndecl_order, def);
}

void ks_model_define(ks_model *m, size_t def)
{
    add_once(&m->def_order, &m->ndef_order, def);
}

ks_field *ks_def_add_field(ks_def *d)
{
    d->fields = grow(d->fields, &d->nfields, sizeof *d->fields);
    return &d->fields[d->nfields - 1];
}

void ks_def_add_enumerator(ks_def *d, const char *name, long long value)
{
    d->enumerators = grow(d->enumerators, &d->nenumerators, sizeof *d->enumerators);
    d->enumerators[d->nenumerators - 1].name = ks_xstrdup(name);
    d->enumerators[d->nenumerators - 1].value = value;
}

void ks_type_add_ptr(ks_type *t, unsigned quals)
{
    t->ptr_quals = ks_xrealloc(t->ptr_quals, (t->nptrs + 1) * sizeof *t->ptr_quals);
    t->ptr_quals[t->nptrs++] = quals;
}

void ks_type_add_dim(ks_type *t, long long n)
{
    t->dims = ks_xrealloc(t->dims, (t->ndims + 1) * sizeof *t->dims);
    t->dims[t->ndims++] = n;
}

void ks_type_copy(ks_type *dst, const ks_type *src)
{
    *dst = *src;
    dst->vector = src->vector ? ks_xstrdup(src->vector) : NULL;
    dst->ptr_quals = NULL;
    dst->dims = NULL;
    dst->nptrs = dst->ndims = 0;
    for (size_t i = 0; i < src->nptrs; i++)
        ks_type_add_ptr(dst, src->ptr_quals[i]);
    for (size_t i = 0; i < src->ndims; i++)
        ks_type_add_dim(dst, src->dims[i]);
}

void ks_type_free(ks_type *t)
{
    free(t->vector);
    free(t->ptr_quals);
    free(t->dims);
    memset(t, 0, sizeof *t);
}

void ks_kern_free(ks_kern *k)
{
    for (size_t j = 0; j < k->nparams; j++) {
        free(k->params[j].name);
        free(k->params[j].c_name);
        free(k->params[j].spelled);
        free(k->params[j].extent);
        free(k->params[j].extent_ops);
        ks_type_free(&k->params[j].type);
    }
    free(k->params);
    free(k->name);
    free(k->base_name);
    free(k->generic_name);
    free(k->template_args);
    free(k->c_name);
    free(k->descriptor);
    free(k->symbol);
    free(k->signature);
    free(k->file);
    free(k->launch_name);
    free(k->stream_name);
    free(k->n_items_name);
    memset(k, 0, sizeof *k);
}

void ks_model_free(ks_model *m)
{
    for (size_t i = 0; i < m->nkernels; i++)
        ks_kern_free(&m->kernels[i]);
    for (size_t i = 0; i < m->nvars; i++)
        ks_var_free(&m->vars[i]);
    free(m->vars);
    for (size_t i = 0; i < m->ndefs; i++) {
        ks_def *d = &m->defs[i];
        for (size_t j = 0; j < d->nfields; j++) {
            free(d->fields[j].name);
            free(d->fields[j].from);
            free(d->fields[j].c_name);
            free(d->fields[j].assert_id);
            free(d->fields[j].own_assert_id);
            ks_type_free(&d->fields[j].type);
        }
        for (size_t j = 0; j < d->nenumerators; j++) {
            free(d->enumerators[j].name);
            free(d->enumerators[j].c_name);
        }
        free(d->fields);
        free(d->enumerators);
        free(d->qname);
        free(d->template_args);
        free(d->template_name);
        free(d->fn_typedef);
        free(d->file);
        free(d->leaf);
        for (size_t j = 0; j < d->nscopes; j++)
            free(d->scopes[j]);
        free(d->scopes);
        free(d->scope_inline);
        free(d->member);
        free(d->c_name);
        free(d->cxx_name);
        for (size_t j = 0; j < d->npad_names; j++)
            free(d->pad_names[j]);
        free(d->pad_names);
    }
    for (size_t i = 0; i < m->nrenames; i++) {
        free(m->renames[i].kernel);
        free(m->renames[i].c_name);
    }
    free(m->renames);
    free(m->defs);
    free(m->decl_order);
    free(m->def_order);
    free(m->kernels);
    free(m->source);
    free(m->prefix);
    free(m->header);
    free(m->guard);
    free(m->image);
    memset(m, 0, sizeof *m);
}

size_t ks_def_gaps(const ks_def *d, ks_gap *gaps)
{
    int is_union = d->kind == KS_DEF_UNION;
    long cur = 0;
    size_t n = 0;
    for (size_t i = 0; i < d->nfields; i++) {
        const ks_field *f = &d->fields[i];
        if (!is_union && f->offset > cur)
            gaps[n++] = (ks_gap){i, f->offset - cur, 0};
        if (f->offset + f->size > cur)
            cur = f->offset + f->size;
    }
    if (cur == 0 && d->size > 0)                   /* empty: one byte in C++, none in C */
        gaps[n++] = (ks_gap){d->nfields, d->size, 1};
    else if (!is_union && d->size > cur && (cur + d->align - 1) / d->align * d->align != d->size)
        gaps[n++] = (ks_gap){d->nfields, d->size - cur, 0};
    return n;
}
