/*
 * emit.c — turns the typed model into the values the templates are filled
 * with (render.c renders them). Every line of generated C lives in
 * templates/; this file decides only what goes into the slots: names,
 * numbers, flags, and each type's parts (push_type: the base's name and tag,
 * qualifiers per pointer level, the stars on the name, array sizes), which
 * the templates spell. The manifest's "c_type" and the --list prototype
 * are the header template's named pieces too (ks_emit_spellings), so that
 * no C spelling lives here.
 */
#include "emit/emit.h"
#include "emit/emit_values.h"
#include "model/naming.h"
#include "emit/render.h"
#include "base/inputs.h"
#include "base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the values --------------------------------------------------------------------------------- */

static char *options_text(const ks_options *o)
{
    ks_buf b = {0};
    ks_buf_printf(&b, "-std=%s --arch %s", o->std, o->arch);
    for (size_t i = 0; i < o->ndefines; i++)
        ks_buf_printf(&b, " %s", o->defines[i]);
    if (o->embed)
        ks_buf_printf(&b, " --embed %s", ks_basename(o->embed));
    if (o->embed_source)
        ks_buf_puts(&b, " --embed-source");
    return ks_buf_take(&b);
}

/* The image as rows of 16 bytes, each byte's two hex digits: the template
 * writes the C around them. The 256 byte values are nodes of their own
 * ("byte_values"), which the rows refer to. */
static void image_rows(const ks_image_blob *img, ks_tnode *in)
{
    static const char hex[] = "0123456789abcdef";
    ks_tval *values = ks_tn_list(in, "byte_values");
    ks_tnode *byte[256];
    for (int b = 0; b < 256; b++) {
        byte[b] = ks_tn_push(values, in);
        ks_tn_set(byte[b], "hex", "%c%c", hex[b >> 4], hex[b & 15]);
    }
    ks_tval *rows = ks_tn_list(in, "rows");
    for (size_t i = 0; i < img->size; i += 16) {
        ks_tnode *rn = ks_tn_push(rows, in);
        ks_tval *bytes = ks_tn_list(rn, "bytes");
        for (size_t j = i; j < img->size && j < i + 16; j++)
            ks_tn_push_ref(bytes, byte[img->data[j]]);
    }
}

static void enum_values(const ks_model *m, const ks_def *d, ks_tnode *tn)
{
    ks_tn_set(tn, "underlying", "%s", ks_scalar_c_name(d->underlying));
    ks_tval *list = ks_tn_list(tn, "enumerators");
    for (size_t i = 0; i < d->nenumerators; i++) {
        ks_tnode *en = ks_tn_push(list, tn);
        ks_tn_set(en, "enumerator", "%s", d->enumerators[i].name);
        ks_tn_set(en, "macro", "%s", d->enumerators[i].c_name);
        if (d->is_signed)
            ks_tn_set(en, "value", "%lld", d->enumerators[i].value);
        else
            ks_tn_set(en, "value", "%llu", (unsigned long long)d->enumerators[i].value);
        ks_tn_flag(en, "unsigned", !d->is_signed);
    }
    (void)m;
}

/* A member of a mirror: padding of some bytes (naming.c's name), or a field. */
static void push_padding(ks_tval *members, const ks_tnode *tn, const char *name, long bytes)
{
    ks_tnode *mn = ks_tn_push(members, tn);
    ks_tn_flag(mn, "padding", 1);
    ks_tn_flag(mn, "field", 0);
    ks_tn_set(mn, "pad_name", "%s", name);
    ks_tn_set(mn, "bytes", "%ld", bytes);
}

static void record_values(const ks_model *m, const ks_def *d, ks_tnode *tn)
{
    ks_tn_flag(tn, "union", d->kind == KS_DEF_UNION);
    ks_tn_flag(tn, "packed", d->packed);
    ks_tval *members = ks_tn_list(tn, "members");
    ks_tval *fields = ks_tn_list(tn, "fields");
    ks_gap *gaps = ks_xmalloc((d->nfields + 1) * sizeof *gaps);
    size_t ngaps = ks_def_gaps(d, gaps), g = 0;
    for (size_t i = 0; i < d->nfields; i++) {
        const ks_field *f = &d->fields[i];
        for (; g < ngaps && gaps[g].before == i; g++)
            push_padding(members, tn, d->pad_names[g], gaps[g].size);
        ks_tnode *mn = ks_tn_push(members, tn);
        ks_tn_flag(mn, "padding", 0);
        ks_tn_flag(mn, "field", 1);
        ks_tn_set(mn, "field_name", "%s", f->c_name);
        ks_tn_set(mn, "offset", "%ld", f->offset);
        ks__push_type(mn, "field_type", m, &f->type, 0, f->type.quals, 0);
        ks_tnode *fn = ks_tn_push(fields, tn);
        ks_tn_set(fn, "field_name", "%s", f->c_name);
        ks_tn_set(fn, "offset", "%ld", f->offset);
        ks_tn_set(fn, "assert_id", "%s", f->assert_id);
        ks__push_type(fn, "field_type", m, &f->type, 0, f->type.quals, 0);
    }
    for (; g < ngaps; g++)
        push_padding(members, tn, d->pad_names[g], gaps[g].size);
    free(gaps);
}

/* The application's own type: its layout checked, not mirrored. Named
 * fields only (offsetof cannot name an anonymous member). */
static void header_type_values(const ks_model *m, const ks_def *d, ks_tnode *tn)
{
    ks_tn_flag(tn, "union", d->kind == KS_DEF_UNION);
    ks_tn_flag(tn, "tagged", !d->c_typedef);
    ks_tval *fields = ks_tn_list(tn, "fields");
    for (size_t i = 0; i < d->nfields; i++) {
        const ks_field *f = &d->fields[i];
        if (!f->name)
            continue;
        ks_tnode *fn = ks_tn_push(fields, tn);
        ks_tn_set(fn, "field_name", "%s", f->name);
        ks_tn_set(fn, "offset", "%ld", f->offset);
        ks_tn_set(fn, "assert_id", "%s", f->own_assert_id);
        ks__push_type(fn, "field_type", m, &f->type, 0, f->type.quals, 0);
    }
}

/* The application's header as the generated header includes it: relative
 * to the folder the generated header is written to, so that #include "…"
 * finds it from there whatever the consumer's -I. */
static char *include_path(const ks_options *o, const char *file)
{
    char **from, **to;
    size_t nfrom = ks_path_parts(o->outbase ? o->outbase : o->input, &from);
    size_t nto = ks_path_parts(file, &to);
    if (nfrom)
        free(from[--nfrom]);                   /* the outputs' stem: its folder remains */
    size_t same = 0;
    while (same < nfrom && same + 1 < nto && strcmp(from[same], to[same]) == 0)
        same++;
    ks_buf b = {0};
    for (size_t i = same; i < nfrom; i++)
        ks_buf_puts(&b, "../");
    for (size_t i = same; i < nto; i++)
        ks_buf_printf(&b, "%s%s", to[i], i + 1 < nto ? "/" : "");
    ks_path_parts_free(from, nfrom);
    ks_path_parts_free(to, nto);
    return ks_buf_take(&b);
}

/* A function type a parameter points to: its return type ("result") and
 * its parameters' types ("fn_params", each with "first"), which the
 * template spells as a typedef of the function type. */
static void function_values(const ks_model *m, const ks_def *d, ks_tnode *tn)
{
    ks__push_type(tn, "result", m, &d->fields[0].type, 0, d->fields[0].type.quals, 0);
    ks_tval *ps = ks_tn_list(tn, "fn_params");
    for (size_t i = 1; i < d->nfields; i++) {
        ks_tnode *pn = ks_tn_push(ps, tn);
        ks_tn_flag(pn, "first", i == 1);
        ks__push_type(pn, "fn_param", m, &d->fields[i].type, 0, d->fields[i].type.quals, 0);
    }
    if (d->fn_typedef)
        ks_tn_set(tn, "fn_typedef", "%s", d->fn_typedef);
    else
        ks_tn_list(tn, "fn_typedef");
}

static void type_values(const ks_options *o, const ks_model *m, ks_tnode *root)
{
    /* Each header once, in the order the types were met: the defined ones,
     * then those only pointed to. */
    ks_tval *headers = ks_tn_list(root, "app_headers");
    size_t nall = m->ndef_order + m->ndecl_order, nfiles = 0;
    const char **files = ks_xmalloc((nall + 1) * sizeof *files);
    for (size_t i = 0; i < nall; i++) {
        size_t di = i < m->ndef_order ? m->def_order[i] : m->decl_order[i - m->ndef_order];
        const ks_def *d = &m->defs[di];
        if (d->in_member || !ks_def_uses_header(m, di))
            continue;
        int seen = 0;
        for (size_t j = 0; j < nfiles && !seen; j++)
            seen = strcmp(files[j], d->file) == 0;
        if (seen)
            continue;
        files[nfiles++] = d->file;
        ks_tnode *hn = ks_tn_push(headers, root);
        ks_tn_take(hn, "path", include_path(o, d->file));
    }
    free(files);
    ks_tval *cxx_headers = ks_tn_list(root, "cxx_headers");
    for (size_t i = 0; i < m->ndef_order; i++) {
        const ks_def *d = &m->defs[m->def_order[i]];
        int seen = !ks__cxx_own(m, m->def_order[i]);
        for (size_t j = 0; j < i && !seen; j++)
            seen = ks__cxx_own(m, m->def_order[j]) && strcmp(m->defs[m->def_order[j]].file, d->file) == 0;
        if (!seen)
            ks_tn_take(ks_tn_push(cxx_headers, root), "path", include_path(o, d->file));
    }
    /* g++ warns of each struct in a header holding a type of an anonymous
     * namespace (the stubs' _args): the header says it expects them. */
    int anonymous = 0;
    for (size_t i = 0; i < m->ndef_order; i++)
        anonymous |= ks__cxx_own(m, m->def_order[i]) && m->defs[m->def_order[i]].anon_namespace;
    ks_tn_flag(root, "cxx_anonymous", anonymous);
    ks_tval *types = ks_tn_list(root, "types");
    for (size_t i = 0; i < m->ndef_order; i++) {
        const ks_def *d = &m->defs[m->def_order[i]];
        int from_header = ks_def_uses_header(m, m->def_order[i]);
        if (from_header && d->in_member)
            continue;                          /* inside its owner's header */
        ks_tnode *tn = ks_tn_push(types, root);
        ks_tn_flag(tn, "from_header", from_header);
        ks_tn_set(tn, "type_name", "%s", d->c_name);
        /* an anonymous record is known by its C name */
        ks_tn_set(tn, "qname", "%s", d->in_member ? d->c_name : d->qname);
        ks_tn_set(tn, "size", "%ld", d->size);
        ks_tn_set(tn, "align", "%ld", d->align);
        ks_tn_flag(tn, "enum", d->kind == KS_DEF_ENUM);
        ks_tn_flag(tn, "record", d->kind == KS_DEF_STRUCT || d->kind == KS_DEF_UNION);
        ks_tn_flag(tn, "array", d->kind == KS_DEF_ARRAY);
        ks_tn_flag(tn, "function", d->kind == KS_DEF_FUNCTION);
        if (d->kind == KS_DEF_ARRAY) {
            ks__push_type(tn, "elem", m, &d->fields[0].type, 0, 0, 0);
            continue;
        }
        if (d->kind == KS_DEF_FUNCTION) {
            function_values(m, d, tn);
            continue;
        }
        if (from_header) {
            ks_tn_set(tn, "file", "%s", d->file);
            header_type_values(m, d, tn);
        } else if (d->kind == KS_DEF_ENUM) {
            enum_values(m, d, tn);
        } else {
            record_values(m, d, tn);
        }
        /* C++ callers: the application's own record or enum, its layout asserted. */
        int own = ks__cxx_own(m, m->def_order[i]);
        ks_tn_flag(tn, "cxx_own", own);
        ks_tn_set(tn, "cxx_name", "%s", d->cxx_name ? d->cxx_name : "");
        ks_tn_set(tn, "cxx_file", "%s", own ? d->file : "");
        ks_tval *own_fields = ks_tn_list(tn, "own_fields");
        for (size_t f = 0; own && f < d->nfields; f++) {
            if (!d->fields[f].name)
                continue;
            ks_tnode *fn = ks_tn_push(own_fields, tn);
            ks_tn_set(fn, "field_name", "%s", d->fields[f].name);
            ks_tn_set(fn, "offset", "%ld", d->fields[f].offset);
        }
    }
    ks_tval *decls = ks_tn_list(root, "forward_decls");
    for (size_t i = 0; i < m->ndecl_order; i++) {
        const ks_def *d = &m->defs[m->decl_order[i]];
        /* The application's header declares it, and under a typedef name
         * ("typedef struct { ... } Dimensions;") a tag declaration would
         * name another type in C and clash with the typedef in C++. */
        if ((d->c_typedef && ks_def_uses_header(m, m->decl_order[i])) || ks__cxx_own(m, m->decl_order[i]))
            continue;                          /* (C++: a typedef of the application's own) */
        ks_tnode *dn = ks_tn_push(decls, root);
        ks_tn_set(dn, "name", "%s", d->c_name);
        ks_tn_flag(dn, "union", d->kind == KS_DEF_UNION);
    }
}

/* A C++ caller that includes cuda_fp16.h / cuda_bf16.h may pass CUDA's own
 * half types where the stub takes libkstub's layout-equal ones: which
 * headers a kernel's overload needs, and each parameter's CUDA spelling. */
static int cuda_values(const ks_model *m, const ks_kern *k, ks_tnode *kn)
{
    int fp16 = 0, bf16 = 0, enums = 0;
    for (size_t j = 0; j < k->nparams; j++) {
        const ks_type *t = &k->params[j].type;
        enums |= ks__cxx_enum(m, t);
        if (t->base != KS_BASE_SPECIAL || !ks_special_cuda_name(t->special))
            continue;
        if (t->special == KS_SPECIAL_HALF || t->special == KS_SPECIAL_HALF2)
            fp16 = 1;
        else
            bf16 = 1;
    }
    ks_tn_flag(kn, "cuda_overload", fp16 || bf16 || enums);
    ks_tn_flag(kn, "cuda_fp16", fp16);
    ks_tn_flag(kn, "cuda_bf16", bf16);
    ks_tn_flag(kn, "cuda_fp16_and_bf16", fp16 && bf16);
    ks_tn_flag(kn, "cuda_none", !fp16 && !bf16);
    return fp16 || bf16 || enums;
}

static void cuda_param_values(const ks_model *m, const ks_param *p, ks_tnode *pn)
{
    const ks_type *t = &p->type;
    int cuda = (t->base == KS_BASE_SPECIAL && ks_special_cuda_name(t->special)) || ks__cxx_enum(m, t);
    ks_tn_flag(pn, "cuda", cuda);
    if (cuda)
        ks__push_type(pn, "cxx", m, t, KS_QUAL_RESTRICT, t->quals, 1);
    else
        ks_tn_list(pn, "cxx");
}

static void kernel_values(const ks_model *m, const ks_kern *k, ks_tnode *kn)
{
    ks_tn_set(kn, "name", "%s", k->name);
    ks_tn_set(kn, "c_name", "%s", k->c_name);
    ks_tn_set(kn, "descriptor", "%s", k->descriptor);
    ks_tn_set(kn, "symbol", "%s", k->symbol);
    ks_tn_set(kn, "line", "%u", k->line);
    ks_tn_set(kn, "signature", "%s", k->signature);
    /* "packed": every parameter, as the kernel takes them (descriptor,
     * packing); "params": those the caller passes, an empty class's byte
     * (type.tag) being packed by the stub itself (ks__tag_byte). */
    size_t nargs = 0;
    for (size_t j = 0; j < k->nparams; j++)
        nargs += !k->params[j].type.tag;
    ks_tn_set(kn, "nparams", "%zu", k->nparams);
    /* How many arguments the macro forms take (launch or n_items and stream first). */
    ks_tn_set(kn, "argc", "%zu", nargs + 1);
    ks_tn_set(kn, "argc_n", "%zu", nargs + 2);
    ks_tn_flag(kn, "has_packed", k->nparams > 0);
    ks_tn_flag(kn, "has_params", nargs > 0);
    /* <c_name>_n launches with no dynamic shared memory: not for a kernel that needs some. */
    ks_tn_flag(kn, "has_n", !k->dynamic_shared);
    ks_tn_set(kn, "max_threads", "%ld", k->max_threads > 0 ? k->max_threads : 0);
    ks_tn_set(kn, "min_blocks", "%ld", k->min_blocks > 0 ? k->min_blocks : 0);
    ks_tn_flag(kn, "has_launch_bounds", k->max_threads > 0);

    /* The stubs' own parameters: the kernel's names stepping aside (naming.c);
     * the templates declare them and line the names up ({{>}}…{{<}}). */
    ks_tn_set(kn, "launch", "%s", k->launch_name);
    ks_tn_set(kn, "n_items", "%s", k->n_items_name);
    ks_tn_set(kn, "stream", "%s", k->stream_name);
    ks_tval *params = ks_tn_list(kn, "params");
    ks_tval *packed = ks_tn_list(kn, "packed");
    size_t arg = 0;
    for (size_t j = 0; j < k->nparams; j++) {
        const ks_param *p = &k->params[j];
        ks_tnode *qn = ks_tn_push(packed, kn);
        ks_tn_set(qn, "name", "%s", p->c_name);
        ks_tn_set(qn, "type", "%s", p->spelled);
        ks_tn_set(qn, "size", "%ld", p->size);
        ks_tn_set(qn, "align", "%ld", p->align);
        ks_tn_set(qn, "offset", "%ld", p->offset);
        ks_tn_flag(qn, "first", j == 0);
        ks_tn_flag(qn, "tag", p->type.tag);
        ks_tn_set(qn, "index", "%zu", j);
        ks__push_type(qn, "param_type", m, &p->type, 0, p->type.quals, 0);
        ks__check_values(m, p, qn);
        if (p->type.tag)
            continue;
        ks_tnode *pn = ks_tn_push(params, kn);
        ks_tn_set(pn, "name", "%s", p->c_name);
        ks_tn_set(pn, "type", "%s", p->spelled);
        ks__push_type(pn, "param_type", m, &p->type, 0, p->type.quals, 0);
        ks_tn_set(pn, "size", "%ld", p->size);
        ks_tn_set(pn, "align", "%ld", p->align);
        ks_tn_set(pn, "offset", "%ld", p->offset);
        ks_tn_set(pn, "index", "%zu", arg);
        ks_tn_flag(pn, "first", arg++ == 0);
        ks__strict_values(m, p, pn);
        cuda_param_values(m, p, pn);
        ks__check_values(m, p, pn);
    }
}

/* A device variable's values: its element type as the accessors take it
 * (elem; src: a pointer to const elements; dst: a pointer to elements;
 * addr: a pointer to that), and what its descriptor records. */
static void var_values(const ks_model *m, const ks_var *v, ks_tnode *vn)
{
    static const char *const spaces[] = {"CONSTANT", "DEVICE", "MANAGED"};
    ks_tn_set(vn, "name", "%s", v->name);
    ks_tn_set(vn, "c_name", "%s", v->c_name);
    ks_tn_set(vn, "descriptor", "%s", v->descriptor);
    ks_tn_set(vn, "symbol", "%s", v->symbol);
    ks_tn_set(vn, "type", "%s", v->spelled);
    ks_tn_set(vn, "space", "%s", spaces[v->space]);
    ks_tn_set(vn, "space_word", "%s", ks_space_name(v->space));
    ks_tn_set(vn, "size", "%ld", v->size);
    ks_tn_set(vn, "elem_size", "%ld", v->elem_size);
    ks_tn_set(vn, "count", "%lld", v->count);
    ks_tn_set(vn, "line", "%u", v->line);
    ks_tn_flag(vn, "is_array", v->type.ndims > 0);
    ks_tn_flag(vn, "is_const", v->is_const);
    ks_type elem = v->type;
    elem.ndims = 0;
    elem.dims = NULL;
    ks__push_type(vn, "elem", m, &elem, 0, elem.quals, 0);
    ks_tn_flag(vn, "converts", ks__value_converts(m, &elem));
    /* The same with one more pointer level: the const goes on what it points to. */
    ks_type ptr;
    ks_type_copy(&ptr, &elem);
    ks_type_add_ptr(&ptr, 0);
    ks__push_type(vn, "dst", m, &ptr, 0, ptr.quals, 0);
    unsigned base_quals = ptr.quals;
    if (ptr.nptrs > 1)
        ptr.ptr_quals[ptr.nptrs - 2] |= KS_QUAL_CONST;
    else
        base_quals |= KS_QUAL_CONST;
    ks__push_type(vn, "src", m, &ptr, 0, base_quals, 0);
    if (ptr.nptrs > 1)
        ptr.ptr_quals[ptr.nptrs - 2] &= ~(unsigned)KS_QUAL_CONST;
    ks_type_add_ptr(&ptr, 0);
    ks__push_type(vn, "addr", m, &ptr, 0, ptr.quals, 0);
    ks_type_free(&ptr);
}

static ks_tnode *build_values(const ks_options *o, const ks_model *m, const ks_image_blob *img)
{
    ks_tnode *root = ks_tn_new(NULL);
    ks_tn_set(root, "source", "%s", ks_basename(o->input));
    ks_tn_set(root, "header", "%s", m->header);
    ks_tn_set(root, "guard", "%s", m->guard);
    ks_tn_set(root, "prefix", "%s", m->prefix);
    /* The outputs' own stem (OUTBASE's file name as an identifier), without
     * the folders prefix mirrors: what a target names a module after its file. */
    ks_tn_take(root, "output_stem", ks_identifier_stem(o->outbase ? o->outbase : o->input));
    ks_tn_set(root, "image_symbol", "%s", m->image);
    ks_tn_take(root, "options", options_text(o));
    ks_tn_flag(root, "vector_types", m->needs_vector_types);
    ks_tn_flag(root, "cuda_h", m->needs_cuda_h);
    type_values(o, m, root);
    int tags = 0;
    for (size_t i = 0; i < m->nkernels; i++)
        for (size_t j = 0; j < m->kernels[i].nparams; j++)
            tags |= m->kernels[i].params[j].type.tag;
    ks_tn_flag(root, "has_tags", tags);
    ks_tval *kernels = ks_tn_list(root, "kernels");
    int cuda = 0;
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_tnode *kn = ks_tn_push(kernels, root);
        kernel_values(m, &m->kernels[i], kn);
        cuda |= cuda_values(m, &m->kernels[i], kn);
    }
    ks_tn_flag(root, "cuda_overloads", cuda);
    ks_tval *vars = ks_tn_list(root, "variables");
    for (size_t i = 0; i < m->nvars; i++)
        var_values(m, &m->vars[i], ks_tn_push(vars, root));
    ks_tn_flag(root, "has_variables", m->nvars > 0);
    ks__generic_values(m, root);
    ks_tval *enums = ks_tn_list(root, "cxx_enums");
    for (size_t i = 0; i < m->ndef_order; i++) {
        const ks_def *d = &m->defs[m->def_order[i]];
        ks_type t = {.base = KS_BASE_ENUM, .def = m->def_order[i]};
        if (!ks__cxx_enum(m, &t))
            continue;
        ks_tnode *en = ks_tn_push(enums, root);
        ks_tn_set(en, "type_name", "%s", d->c_name);
        ks_tn_set(en, "qname", "%s", d->qname);
        ks_tn_set(en, "leaf", "%s", d->leaf);
        ks_tn_set(en, "underlying", "%s", ks_scalar_c_name(d->underlying));
        ks_tval *scopes = ks_tn_list(en, "scopes");
        for (size_t j = 0; j < d->nscopes; j++) {
            ks_tnode *sn = ks_tn_push(scopes, en);
            ks_tn_set(sn, "scope", "%s", d->scopes[j]);
            ks_tn_flag(sn, "inline", d->scope_inline[j]);
        }
    }
    ks_tval *image = ks_tn_list(root, "image");
    if (img) {
        ks_tnode *in = ks_tn_push(image, root);
        ks_tn_set(in, "kind", "%s", img->kind);
        ks_tn_set(in, "name", "%s", img->name);
        ks_tn_set(in, "size", "%zu", img->size);
        image_rows(img, in);
    }
    return root;
}

/* The template of the target's output i: its text, and its path for
 * messages (both malloc'd). 0, or -1 after an error. */
static int read_template(const ks_target *target, size_t i, char **path, char **text, size_t *len)
{
    *path = ks_target_template_path(target, i);
    *text = ks_read_file(*path, len);
    if (!*text) {
        ks_error_at(*path, 0, 0, "cannot read template: %s", ks_file_error());
        free(*path);
        *path = NULL;
        return -1;
    }
    return 0;
}

int ks_emit(const ks_target *target, size_t output, const ks_options *o, const ks_model *m,
            const ks_image_blob *img, char **result)
{
    char *path, *text;
    size_t len;
    *result = NULL;
    if (read_template(target, output, &path, &text, &len) != 0)
        return -1;
    ks_tnode *root = build_values(o, m, img);
    ks_buf out = {0};
    int rc = ks_render(path, text, len, o->builtin_template_dir, root, &out);
    ks_tn_free(root);
    free(text);
    free(path);
    if (rc != 0) {
        free(out.data);
        return -1;
    }
    *result = ks_buf_take(&out);
    return 0;
}

/* ---- spellings for the manifest and --list -------------------------------------------------- */

/* Each kernel's prototype, then each of its parameters' c_type, a line
 * each; the header's pieces do the spelling. A spelling holds no newline
 * (the pieces are one line; names and types are identifiers and words). */
static const char spellings_driver[] =
    "{{#kernels}}{{prototype}}\n{{#packed}}{{manifest_c_type}}\n{{/packed}}{{/kernels}}";

static char *next_line(char **at)
{
    char *line = *at, *nl = strchr(line, '\n');
    if (!nl)
        return NULL;
    *nl = '\0';
    *at = nl + 1;
    return ks_xstrdup(line);
}

/* Renders driver with the header template's pieces over the model's
 * values; *path is the template's (malloc'd, for messages). 0, or -1 after
 * errors (*path NULL when the template could not be read). */
static int render_pieces(const ks_target *target, const ks_options *o, const ks_model *m,
                         const char *driver, char **path, ks_buf *out)
{
    char *text;
    size_t len;
    if (read_template(target, 0, path, &text, &len) != 0)
        return -1;
    ks_tnode *root = build_values(o, m, NULL);
    int rc = ks_render_with(*path, text, len, driver, o->builtin_template_dir, root, out);
    ks_tn_free(root);
    free(text);
    return rc;
}

int ks_emit_spellings(const ks_target *target, const ks_options *o, const ks_model *m,
                      ks_spellings *sp)
{
    memset(sp, 0, sizeof *sp);
    char *path;
    ks_buf out = {0};
    int rc = render_pieces(target, o, m, spellings_driver, &path, &out);
    if (!path)
        return -1;
    if (rc == 0) {
        ks_buf_put(&out, "", 0);
        sp->nkernels = m->nkernels;
        sp->prototypes = ks_xmalloc((m->nkernels + 1) * sizeof *sp->prototypes);
        sp->c_types = ks_xmalloc((m->nkernels + 1) * sizeof *sp->c_types);
        memset(sp->prototypes, 0, (m->nkernels + 1) * sizeof *sp->prototypes);
        memset(sp->c_types, 0, (m->nkernels + 1) * sizeof *sp->c_types);
        char *at = out.data;
        for (size_t i = 0; rc == 0 && i < m->nkernels; i++) {
            const ks_kern *k = &m->kernels[i];
            sp->c_types[i] = ks_xmalloc((k->nparams + 1) * sizeof *sp->c_types[i]);
            memset(sp->c_types[i], 0, (k->nparams + 1) * sizeof *sp->c_types[i]);
            sp->prototypes[i] = next_line(&at);
            for (size_t j = 0; sp->prototypes[i] && j < k->nparams; j++)
                if (!(sp->c_types[i][j] = next_line(&at)))
                    break;
            if (!sp->prototypes[i] || (k->nparams && !sp->c_types[i][k->nparams - 1]))
                rc = -1;
        }
        if (rc != 0 || *at)
            ks_error_at(path, 0, 0, "the pieces 'prototype' and 'manifest_c_type' must each "
                        "spell one line");
        rc = rc != 0 || *at ? -1 : 0;
    }
    free(out.data);
    free(path);
    if (rc != 0)
        ks_spellings_free(sp);
    return rc;
}

void ks_spellings_free(ks_spellings *sp)
{
    for (size_t i = 0; i < sp->nkernels; i++) {
        for (size_t j = 0; sp->c_types && sp->c_types[i] && sp->c_types[i][j]; j++)
            free(sp->c_types[i][j]);
        if (sp->c_types)
            free(sp->c_types[i]);
        if (sp->prototypes)
            free(sp->prototypes[i]);
        for (size_t j = 0; sp->entry_points && sp->entry_points[i] && sp->entry_points[i][j]; j++)
            free(sp->entry_points[i][j]);
        if (sp->entry_points)
            free(sp->entry_points[i]);
    }
    for (size_t i = 0; sp->var_entry_points && i < sp->nvars; i++) {
        for (size_t j = 0; sp->var_entry_points[i][j]; j++)
            free(sp->var_entry_points[i][j]);
        free(sp->var_entry_points[i]);
    }
    free(sp->var_entry_points);
    for (size_t j = 0; sp->generics && sp->generics[j]; j++)
        free(sp->generics[j]);
    free(sp->generics);
    free(sp->entry_points);
    free(sp->c_types);
    free(sp->prototypes);
    memset(sp, 0, sizeof *sp);
}

/* Each kernel's other entry points, a line each, then a line holding a
 * form feed; then a line per template's one name and a form feed; then
 * each typed device variable's accessors and a form feed. */
static const char entry_points_driver[] =
    "{{#kernels}}{{#has_n}}{{n_prototype}}\n{{/has_n}}{{node_prototype}}\n{{node_set_prototype}}\n"
    "{{nodes_set_prototype}}\n\f\n{{/kernels}}{{#generics}}{{generic_line}}\n{{/generics}}\f\n"
    "{{#variables}}{{var_prototypes}}\n\f\n{{/variables}}";

/* The lines up to one holding only a form feed (or the end), NULL-ended. */
static char **lines_until_ff(char **at)
{
    size_t n = 0, cap = 8;
    char **v = ks_xmalloc(cap * sizeof *v);
    char *line;
    while (**at && (line = next_line(at)) != NULL) {
        if (strcmp(line, "\f") == 0) {
            free(line);
            break;
        }
        if (n + 2 > cap)
            v = ks_xrealloc(v, (cap *= 2) * sizeof *v);
        v[n++] = line;
    }
    v[n] = NULL;
    return v;
}

int ks_emit_entry_points(const ks_target *target, const ks_options *o, const ks_model *m,
                         ks_spellings *sp)
{
    char *path;
    ks_buf out = {0};
    int rc = render_pieces(target, o, m, entry_points_driver, &path, &out);
    free(path);
    if (rc == 0) {
        ks_buf_put(&out, "", 0);
        char *at = out.data;
        sp->entry_points = ks_xmalloc((sp->nkernels + 1) * sizeof *sp->entry_points);
        for (size_t i = 0; i < sp->nkernels; i++)
            sp->entry_points[i] = lines_until_ff(&at);
        sp->entry_points[sp->nkernels] = NULL;
        sp->generics = lines_until_ff(&at);
        sp->nvars = m->nvars;
        sp->var_entry_points = ks_xmalloc((m->nvars + 1) * sizeof *sp->var_entry_points);
        for (size_t i = 0; i < m->nvars; i++)
            sp->var_entry_points[i] = lines_until_ff(&at);
        sp->var_entry_points[m->nvars] = NULL;
    }
    free(out.data);
    return rc;
}
