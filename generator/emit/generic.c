/*
 * generic.c — emit.c's values for one C name over a template's instances
 * (the "generics" list of templates/header.h.in).
 */
#include "emit/emit_values.h"
#include "model/naming.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/*
 * A function template with several explicit instances (fill_int, fill_u16
 * of fill<T>) gets one more C name, the template's own (fill): in C11 a
 * macro whose _Generic picks the instance from the argument types, in C++
 * an overload per instance. Which argument decides is a decision tree: at
 * each step the first parameter (a pointer first) whose type differs among
 * the instances still in question, a branch per type. Only where every
 * instance is told apart that way, the instances take as many parameters,
 * and the name is free; otherwise the header says why there is none.
 */

/* A parameter's type as _Generic compares it: no top-level restrict; alt
 * drops a const on the pointee (a pointer to const takes a pointer too). */
static char *generic_key(const ks_model *m, const ks_type *t, int alt)
{
    (void)m;
    ks_buf b = {0};
    unsigned quals = t->quals & ~(alt ? (unsigned)KS_QUAL_CONST : 0u);
    ks_buf_printf(&b, "%d/%u/", (int)t->base, quals);
    switch (t->base) {
    case KS_BASE_SCALAR: ks_buf_printf(&b, "%d", (int)t->scalar); break;
    case KS_BASE_RECORD:
    case KS_BASE_ENUM: ks_buf_printf(&b, "%zu", t->def); break;
    case KS_BASE_VECTOR: ks_buf_puts(&b, t->vector); break;
    case KS_BASE_SPECIAL: ks_buf_printf(&b, "%d", (int)t->special); break;
    case KS_BASE_VOID: break;
    }
    for (size_t i = 0; i < t->nptrs; i++)
        ks_buf_printf(&b, "*%u", t->ptr_quals[i] & ~(i + 1 == t->nptrs ? (unsigned)KS_QUAL_RESTRICT : 0u));
    return ks_buf_take(&b);
}

static int strict_alt_of(const ks_type *t)
{
    return t->nptrs == 1 && (t->quals & KS_QUAL_CONST) && (t->ptr_quals[0] & ~(unsigned)KS_QUAL_RESTRICT) == 0;
}

/* One token of a decision tree, every key set (a token reads only its own). */
static ks_tnode *generic_token(ks_tval *list, ks_tnode *owner, const char *kind)
{
    static const char *const kinds[] = {"open", "case", "leaf", "next", "close"};
    ks_tnode *tn = ks_tn_push(list, owner);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        ks_tn_flag(tn, kinds[i], strcmp(kinds[i], kind) == 0);
    if (strcmp(kind, "open") != 0)
        ks_tn_set(tn, "arg", "%s", "");
    if (strcmp(kind, "leaf") != 0)
        ks_tn_set(tn, "c_name", "%s", "");
    if (strcmp(kind, "case") != 0)
        ks_tn_list(tn, "case_type");
    return tn;
}

/* Appends the tree that tells the instances at idx[0..n) apart to list as
 * tokens (open, case, leaf, close); 0, or -1 when two cannot be told apart. */
static int generic_tree(const ks_model *m, const ks_kern *const *inst, const size_t *idx, size_t n,
                        const int *differs, int *decided, ks_tnode *owner, ks_tval *list, unsigned depth)
{
    const ks_kern *k0 = inst[idx[0]];
    if (n == 1) {
        /* One instance left: the other pointers the instances type apart
         * must have its types too (nested, one test each), as its macro
         * form would insist; scalars convert as in a call of the instance. */
        size_t p = 0;
        while (p < k0->nparams && !(differs[p] && !decided[p] && k0->params[p].type.nptrs > 0))
            p++;
        if (p == k0->nparams) {
            ks_tnode *tn = generic_token(list, owner, "leaf");
            ks_tn_set(tn, "c_name", "%s", k0->c_name);
            return 0;
        }
        const ks_type *t = &k0->params[p].type;
        ks_tnode *open = generic_token(list, owner, "open");
        ks_tn_set(open, "arg", "%s", k0->params[p].c_name);
        ks_tn_set(open, "pick_index", "%zu", p + 1);
        decided[p] = 1;
        int rc = 0;
        for (int v = 0; v <= strict_alt_of(t) && rc == 0; v++) {
            ks__push_type(generic_token(list, owner, "case"), "case_type", m, t, KS_QUAL_RESTRICT,
                      v ? t->quals & ~(unsigned)KS_QUAL_CONST : t->quals, 0);
            rc = generic_tree(m, inst, idx, n, differs, decided, owner, list, depth + 1);
            generic_token(list, owner, "next");
        }
        decided[p] = 0;
        ks_tn_set(generic_token(list, owner, "close"), "pick_index", "%zu", p + 1);
        return rc;
    }
    if (depth > 64)
        return -1;
    /* The parameter that decides: the first that differs, a pointer first. */
    size_t at = k0->nparams;
    for (int want_ptr = 1; want_ptr >= 0 && at == k0->nparams; want_ptr--)
        for (size_t j = 0; j < k0->nparams && at == k0->nparams; j++) {
            if ((k0->params[j].type.nptrs > 0) != want_ptr || k0->params[j].type.tag)
                continue;
            char *a = generic_key(m, &k0->params[j].type, 0);
            for (size_t i = 1; i < n && at == k0->nparams; i++) {
                char *b = generic_key(m, &inst[idx[i]]->params[j].type, 0);
                if (strcmp(a, b) != 0)
                    at = j;
                free(b);
            }
            free(a);
        }
    if (at == k0->nparams)
        return -1;
    ks_tnode *open = generic_token(list, owner, "open");
    ks_tn_set(open, "arg", "%s", k0->params[at].c_name);
    ks_tn_set(open, "pick_index", "%zu", at + 1);
    /* Branches in the instances' order; a pointer to const also takes the
     * pointer without it, unless another branch has that type. */
    char **keys = ks_xmalloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = generic_key(m, &inst[idx[i]]->params[at].type, 0);
    size_t *sub = ks_xmalloc(n * sizeof *sub);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(keys[i], keys[j]) == 0;
        if (seen)
            continue;
        size_t ns = 0;
        for (size_t j = i; j < n; j++)
            if (strcmp(keys[i], keys[j]) == 0)
                sub[ns++] = idx[j];
        const ks_type *t = &inst[idx[i]]->params[at].type;
        int alt = strict_alt_of(t);
        if (alt) {
            char *ak = generic_key(m, t, 1);
            for (size_t j = 0; j < n && alt; j++)
                alt = strcmp(ak, keys[j]) != 0;
            for (size_t j = 0; j < i && alt; j++)   /* an earlier branch's alternative */
                if (strict_alt_of(&inst[idx[j]]->params[at].type)) {
                    char *bk = generic_key(m, &inst[idx[j]]->params[at].type, 1);
                    alt = strcmp(ak, bk) != 0;
                    free(bk);
                }
            free(ak);
        }
        /* The branch, and again for the pointer without const (the same subtree). */
        for (int v = 0; v <= alt && rc == 0; v++) {
            ks_tnode *cn = generic_token(list, owner, "case");
            ks__push_type(cn, "case_type", m, t, KS_QUAL_RESTRICT, v ? t->quals & ~(unsigned)KS_QUAL_CONST : t->quals,
                      0);
            decided[at] = 1;
            rc = generic_tree(m, inst, sub, ns, differs, decided, owner, list, depth + 1);
            decided[at] = 0;
            generic_token(list, owner, "next");
        }
    }
    ks_tn_set(generic_token(list, owner, "close"), "pick_index", "%zu", at + 1);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    free(sub);
    return rc;
}

/* The parameters a stub takes: an empty class by value (a tag such as
 * std::bool_constant<B>) is the instance's own, packed by its stub, so
 * neither the macro nor the C++ overloads take it (issue 31 #6). */
static size_t stub_params(const ks_kern *k)
{
    size_t n = 0;
    for (size_t p = 0; p < k->nparams; p++)
        n += !k->params[p].type.tag;
    return n;
}

/* Whether all n instances give parameter p the same type. */
static int generic_shared(const ks_model *m, const ks_kern *const *inst, size_t n, size_t p)
{
    int shared = 1;
    char *a = generic_key(m, &inst[0]->params[p].type, 0);
    for (size_t j = 1; j < n && shared; j++) {
        char *b = generic_key(m, &inst[j]->params[p].type, 0);
        shared = strcmp(a, b) == 0;
        free(b);
    }
    free(a);
    return shared;
}

/* Why a template gets no C name of its own, or NULL when it gets one. */
static const char *generic_refusal(const ks_model *m, const ks_kern *const *inst, size_t n,
                                   const char *name)
{
    if (n < 2)
        return "one instance, nothing to choose";
    for (size_t i = 1; i < n; i++)
        if (inst[i]->nparams != inst[0]->nparams || stub_params(inst[i]) != stub_params(inst[0]))
            return "the instances take different numbers of parameters";
    for (size_t i = 1; i < n; i++)   /* a tag where another instance takes an argument */
        for (size_t p = 0; p < inst[0]->nparams; p++)
            if (inst[i]->params[p].type.tag != inst[0]->params[p].type.tag)
                return "the instances take different numbers of parameters";
    if (!ks_name_is_free(m, name))
        return "the name is taken by another generated or reserved name";
    return NULL;
}

void ks__generic_values(const ks_model *m, ks_tnode *root)
{
    ks_tval *generics = ks_tn_list(root, "generics");
    int any = 0;
    for (size_t i = 0; i < m->nkernels; i++) {
        const ks_kern *k = &m->kernels[i];
        int first = k->base_name != NULL;
        for (size_t j = 0; j < i && first; j++)
            first = !(m->kernels[j].base_name && strcmp(m->kernels[j].base_name, k->base_name) == 0 &&
                      m->kernels[j].tu_prefixed == k->tu_prefixed);
        if (!first)
            continue;
        const ks_kern **inst = ks_xmalloc(m->nkernels * sizeof *inst);
        size_t n = 0;
        for (size_t j = i; j < m->nkernels; j++)
            if (m->kernels[j].base_name && strcmp(m->kernels[j].base_name, k->base_name) == 0 &&
                m->kernels[j].tu_prefixed == k->tu_prefixed)
                inst[n++] = &m->kernels[j];
        const char *name = k->generic_name;
        ks_tnode *gn = ks_tn_push(generics, root);
        ks_tn_set(gn, "generic", "%s", name);
        ks_tn_set(gn, "template", "%s", k->base_name);
        ks_tn_set(gn, "launch", "%s", k->launch_name);
        ks_tval *instances = ks_tn_list(gn, "instances");
        for (size_t j = 0; j < n; j++) {
            ks_tnode *in = ks_tn_push(instances, gn);
            ks_tn_set(in, "c_name", "%s", inst[j]->c_name);
            ks_tn_set(in, "signature", "%s", inst[j]->signature);
            ks_tn_set(in, "launch", "%s", inst[j]->launch_name);
            ks_tn_flag(in, "first", j == 0);
            ks_tval *ps = ks_tn_list(in, "params");
            int firstp = 1;
            for (size_t p = 0; p < inst[j]->nparams; p++) {
                if (inst[j]->params[p].type.tag)
                    continue;
                ks_tnode *pn = ks_tn_push(ps, in);
                ks_tn_flag(pn, "first", firstp);
                firstp = 0;
                ks_tn_set(pn, "name", "%s", inst[j]->params[p].c_name);
                ks__push_type(pn, "param_type", m, &inst[j]->params[p].type, 0, inst[j]->params[p].type.quals, 0);
            }
        }
        const char *why = generic_refusal(m, inst, n, name);
        ks_tval *pick = ks_tn_list(gn, "pick");
        if (why == NULL) {
            size_t *idx = ks_xmalloc(n * sizeof *idx);
            int *differs = ks_xmalloc((k->nparams + 1) * sizeof *differs);
            int *decided = ks_xmalloc((k->nparams + 1) * sizeof *decided);
            for (size_t j = 0; j < n; j++)
                idx[j] = j;
            for (size_t p = 0; p < k->nparams; p++)
                differs[p] = !k->params[p].type.tag && !generic_shared(m, inst, n, p), decided[p] = 0;
            if (generic_tree(m, inst, idx, n, differs, decided, gn, pick, 0) != 0)
                why = "two instances take the same parameter types (they differ in template arguments only)";
            free(idx);
            free(differs);
            free(decided);
        }
        /* The macro's arguments, the first instance's names: a parameter all
         * instances type alike is checked as that instance's stub checks it. */
        ks_tval *args = ks_tn_list(gn, "args");
        for (size_t p = 0; why == NULL && p < k->nparams; p++) {
            const ks_param *kp = &inst[0]->params[p];
            if (kp->type.tag)
                continue;
            ks_tnode *an = ks_tn_push(args, gn);
            ks_tn_set(an, "name", "%s", kp->c_name);
            ks_tn_set(an, "c_name", "%s", name);
            ks_tn_flag(an, "shared", generic_shared(m, inst, n, p));
            ks_tn_set(an, "pick_index", "%zu", p + 1);   /* its tests' (the tree's) */
            ks__strict_values(m, kp, an);
            ks__check_values(m, kp, an);
        }
        ks_tn_set(gn, "argc", "%zu", stub_params(k) + 1);
        ks_tn_flag(gn, "ok", why == NULL);
        ks_tn_set(gn, "why", "%s", why ? why : "");
        any |= why == NULL;
        free(inst);
    }
    ks_tn_flag(root, "has_generics", any);
}

