/*
 * manifest.c — the signature manifest (--manifest FILE.json): every kernel
 * and parameter with its C type, size, alignment and offset, in source
 * order. The drift check and other tools read it; its field names are stable
 * and "format" changes when they do. kstub --list --format=json prints the
 * same document with each stub's C prototype added.
 */
#include "cli.h"
#include "emit.h"
#include "util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* c_type: the header's spelling of the parameter's type (emit.h). */
static json_t *param_json(const ks_param *p, const char *c_type)
{
    json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}",
                     "name", p->c_name,
                     "type", p->spelled,
                     "c_type", c_type,
                     "size", (json_int_t)p->size,
                     "align", (json_int_t)p->align,
                     "offset", (json_int_t)p->offset);
    if (p->extent)
        json_object_set_new(j, "extent", json_string(p->extent));
    /* An empty class (std::true_type, std::integral_constant<int, 4>): the
     * stub packs its byte, the caller passes nothing. */
    if (p->type.tag)
        json_object_set_new(j, "fixed", json_true());
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
                          "name", k->name,
                          "c_name", k->c_name,
                          "symbol", k->symbol,
                          "line", (json_int_t)k->line,
                          "col", (json_int_t)k->col,
                          "launch_bounds", bounds,
                          "params", params);
    if (with_prototype)
        json_object_set_new(j, "prototype", json_string(sp->prototypes[index]));
    return j;
}

static char *document(const ks_options *opts, const ks_model *m, const ks_spellings *sp,
                      int with_prototype)
{
    json_t *kernels = json_array();
    for (size_t i = 0; i < m->nkernels; i++)
        json_array_append_new(kernels, kernel_json(&m->kernels[i], sp, i, with_prototype));
    json_t *root = json_pack("{s:i, s:s, s:o}", "format", KSTUB_MANIFEST_FORMAT,
                             "source", ks_basename(opts->input), "kernels", kernels);
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
