/*
 * walk.c — the front end's walk: finds every kernel of the input (plain
 * definitions, and explicit instantiations of template kernels) and hands
 * each to kernel.c, which fills the model; instances.c follows the
 * instantiations nvcc makes from host code and headers; walkctx.c holds
 * the context they share (whose kernels count). Here: the visit, "kstub:"
 * directives and ks_parse(), which runs the whole front end (naming.c
 * names the model after it, for a target).
 *
 * libclang shows no cursor for an explicit instantiation
 * ("template __global__ void k<float, 4>(float *, int);"). So source.c finds
 * them in the parse's tokens and preprocessing record, a reference to each
 * specialization is written into the source in memory right after it
 * ("typedef decltype(&::ns::k<float, 4>) kstub_iN;"), and the parse again
 * of that text (only when there is one) leads each reference to a
 * declaration with concrete parameter types and the device compiler's
 * mangled name.
 *
 * A template kernel launched from host code (k<float, 4><<<g, b>>>(...), or
 * its address taken) is instantiated there, and nvcc emits it: every
 * reference to a kernel template's specialization in the project's files is
 * such a declaration too, and host function templates' instantiations are
 * followed into their bodies. Each gets a stub named as an explicit
 * instantiation of the same arguments would be. The members of a class
 * template instantiated explicitly ("template class Runner<float>;") are
 * followed the same way, through references classinst.c writes.
 *
 * Which files' kernels get stubs is --kernels-in's: the input; the
 * project's own headers (not system or toolkit headers: the default); or
 * headers named on the command line. A kernel from a header included by
 * several .cu files would otherwise give each of their stubs the same C
 * functions: see naming.c for how header kernels are named.
 */
#include "base/inputs.h"
#include "base/util.h"
#include "base/options.h"
#include "model/model.h"
#include "front/walk.h"
#include "front/session.h"
#include "front/cursor.h"
#include "front/source.h"
#include "front/extent.h"
#include "front/classinst.h"
#include "front/walkctx.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the walk --------------------------------------------------------------------------------- */

/* A function with a body. With --skip-bodies libclang drops the bodies and
 * no longer calls such a function a definition, so look at what follows the
 * declarator in the text: '{' (a body) or ';' (a declaration). */
static int is_definition(walk_ctx *w, CXCursor fn)
{
    if (clang_isCursorDefinition(fn))
        return 1;
    if (!w->s.opts->skip_bodies)
        return 0;
    CXFile f;
    unsigned off;
    clang_getExpansionLocation(clang_getRangeEnd(clang_getCursorExtent(fn)), &f, NULL, NULL, &off);
    return f && ks_source_body_follows(w->s.tu, f, off);
}


static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data)
{
    walk_ctx *w = data;
    if (ks__oneparse_hidden(w, c, parent))
        return CXChildVisit_Continue;
    ks__oneparse_fire(w, c, 0);
    const file_class *fc = ks__classify(w, clang_getCursorLocation(c));
    if (!fc || !fc->project)
        return CXChildVisit_Continue;
    switch (clang_getCursorKind(c)) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
        return CXChildVisit_Recurse;
    case CXCursor_FunctionDecl:
        /* A template's specialization (shown here by some parses, e.g. with
         * a precompiled prelude) is named from its template arguments, once,
         * as the launches' are. */
        if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c)))
            ks__handle_reference(w, c);
        /* Only definitions: a declaration alone puts nothing in the image. */
        else if (fc->kernels && is_definition(w, c) && ks_cursor_is_kernel(c))
            ks__add_kernel(w, c);
        break;
    case CXCursor_VarDecl:
        if (fc->kernels)
            ks__add_variable(w, c);
        break;
    case CXCursor_UnexposedDecl:
        if (fc->kernels)
            ks__note_variable_template(w, c);
        break;
    case CXCursor_TypedefDecl:
        if (fc->main)
            ks__handle_instantiation(w, c);
        break;
    case CXCursor_FunctionTemplate:
        if (fc->kernels && ks_cursor_is_kernel(c)) {
            w->templates = ks_xrealloc(w->templates, (w->ntemplates + 1) * sizeof *w->templates);
            w->templates[w->ntemplates++] = ks_qualified_name(c);
        }
        break;
    default:
        break;
    }
    return CXChildVisit_Continue;
}

/* ---- directives ---------------------------------------------------------------------------------- */

/* "kstub:name KERNEL = C_NAME" becomes a rename for naming.c; "kstub:skip
 * KERNEL" drops a kernel (by qualified name or symbol) during the walk. */
static void read_directives(walk_ctx *w, const ks_source *src)
{
    ks_directive *d;
    size_t n = ks_source_directives(src, &d);
    const char *input = w->s.opts->input;
    ks_model *m = w->model;
    w->skips = ks_xmalloc((n + 1) * sizeof *w->skips);
    w->skip_hits = ks_xmalloc((n + 1) * sizeof *w->skip_hits);
    w->mirrors = ks_xmalloc((n + 1) * sizeof *w->mirrors);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(d[i].word, "name") == 0) {
            char *eq = strrchr(d[i].rest, '=');
            if (!eq) {
                ks_error_at(input, d[i].line, d[i].col, "expected 'kstub:name KERNEL = C_NAME'");
                continue;
            }
            *eq = '\0';
            char *who = d[i].rest, *to = eq + 1;
            for (char *e = who + strlen(who); e > who && isspace((unsigned char)e[-1]);)
                *--e = '\0';
            while (isspace((unsigned char)*to))
                to++;
            m->renames = ks_xrealloc(m->renames, (m->nrenames + 1) * sizeof *m->renames);
            ks_rename *r = &m->renames[m->nrenames++];
            memset(r, 0, sizeof *r);
            r->kernel = ks_xstrdup(who);
            r->c_name = ks_xstrdup(to);
            r->line = d[i].line;
            r->col = d[i].col;
        } else if (strcmp(d[i].word, "skip") == 0) {
            w->skips[w->nskips] = d[i];
            w->skip_hits[w->nskips++] = 0;
            d[i].word = d[i].rest = NULL;          /* moved */
        } else if (strcmp(d[i].word, "mirror") == 0) {
            w->mirrors[w->nmirrors++] = d[i];
            d[i].word = d[i].rest = NULL;          /* moved */
        } else if (strcmp(d[i].word, "extent") == 0) {
            /* extent.c reads these once the kernels are known */
        } else {
            ks_error_at(input, d[i].line, d[i].col, "unknown directive 'kstub:%s' (kstub:name, "
                        "kstub:skip, kstub:mirror, kstub:extent)", d[i].word);
        }
    }
    ks_directive_free(d, n);
}

/* "kstub:mirror TYPE": the generated header mirrors TYPE (its qualified
 * name) even when it could include the application's header for it. */
static void apply_mirrors(walk_ctx *w)
{
    ks_model *m = w->model;
    for (size_t i = 0; i < w->nmirrors; i++) {
        int hit = 0;
        for (size_t j = 0; j < m->ndefs; j++)
            if (!m->defs[j].member && strcmp(m->defs[j].qname, w->mirrors[i].rest) == 0)
                hit = m->defs[j].mirror = 1;
        if (!hit)
            ks_error_at(w->s.opts->input, w->mirrors[i].line, w->mirrors[i].col, "kstub:mirror '%s' "
                        "names no type a kernel takes (give the qualified name, as 'ns::Params')",
                        w->mirrors[i].rest);
    }
}

static void check_skips(walk_ctx *w)
{
    for (size_t i = 0; i < w->nskips; i++)
        if (!w->skip_hits[i])
            ks_error_at(w->s.opts->input, w->skips[i].line, w->skips[i].col, "kstub:skip '%s' "
                        "matches no kernel or device variable (give the qualified name as in the "
                        "manifest, or the symbol)", w->skips[i].rest);
}

/* ---- entry point ------------------------------------------------------------------------------------ */

/* Each explicit instantiation gets " typedef decltype(static_cast<RET
 * (*)(PARAMS)>(&NAME<ARGS>)) kstub_iN;" right after its ';' (a token
 * boundary of active code: clang's tokens say where), in the same scope
 * and on the same line (so no line or earlier column moves). The cast
 * picks the right overload; RET is the return type as written (a host
 * function template returning int is instantiated the same way). */
static char *inject_instantiations(const char *text, size_t size, const ks_explicit_inst *in, size_t n,
                                   const ks_class_inst *cls, size_t ncls, size_t *probes)
{
    ks_buf out = {0};
    size_t copied = 0;
    for (size_t i = 0, c = 0; i < n || c < ncls;) {
        if (c < ncls && (i == n || cls[c].end < in[i].end)) {
            ks_buf_put(&out, text + copied, cls[c].end - copied);
            char *alias = ks_classinst_inject(&cls[c], c);
            ks_buf_puts(&out, alias);
            free(alias);
            copied = cls[c++].end;
            continue;
        }
        ks_buf_put(&out, text + copied, in[i].end - copied);
        probes[2 * i] = out.len;
        ks_buf_printf(&out, " typedef decltype(static_cast<%s (*)(%s)>(&%s<%s>)) kstub_i%zu;",
                      in[i].ret, in[i].params, in[i].qname, in[i].args, i);
        probes[2 * i + 1] = out.len;
        copied = in[i++].end;
    }
    ks_buf_put(&out, text + copied, size - copied);
    return ks_buf_take(&out);
}

/* The search for launches, which passes each explicit instantiation's
 * place as the reference written there would (oneparse.c). */
static enum CXChildVisitResult find_launches(CXCursor c, CXCursor parent, CXClientData data)
{
    walk_ctx *w = data;
    if (ks__oneparse_hidden(w, c, parent))
        return CXChildVisit_Continue;
    ks__oneparse_fire(w, c, 1);
    return ks__find_launches(c, parent, data);
}

/* Everything the walk holds besides the model, freed once. */
static void walk_ctx_free(walk_ctx *w)
{
    ks_session_close(&w->s);
    free(w->probes);
    for (size_t i = 0; i < w->nfiles; i++)
        free(w->files[i].name);
    free(w->files);
    for (size_t i = 0; i < w->nseen; i++)
        free(w->seen[i]);
    free(w->seen);
    free(w->seen_slots);
    free(w->file_slots);
    for (size_t i = 0; i < w->nhost_used; i++)
        free(w->host_used[i]);
    free(w->host_used);
    for (size_t i = 0; i < w->nnamed; i++)
        free(w->named[i]);
    free(w->named);
    free(w->cuda_real);
    for (size_t i = 0; i < w->ntemplates; i++)
        free(w->templates[i]);
    free(w->templates);
    for (size_t i = 0; i < w->ninst; i++)
        free(w->inst_used_by[i]);
    free(w->inst_used_by);
    free(w->inst_spec);
    ks_explicit_inst_free(w->inst, w->ninst);
    ks_class_inst_free(w->cls, w->ncls);
    for (size_t i = 0; i < w->nlbs; i++) {
        free(w->lbs[i].symbol);
        free(w->lbs[i].ns);
        free(w->lbs[i].max_expr);
        free(w->lbs[i].min_expr);
    }
    free(w->lbs);
    ks_directive_free(w->skips, w->nskips);
    ks_directive_free(w->mirrors, w->nmirrors);
    free(w->skip_hits);
}

/* The --kernels-in headers, resolved. */
static void resolve_named(walk_ctx *w, const ks_options *opts)
{
    w->named = ks_xmalloc((opts->nkernel_headers + 1) * sizeof *w->named);
    for (size_t i = 0; i < opts->nkernel_headers; i++) {
        char *real = realpath(opts->kernel_headers[i], NULL);
        if (!real)
            ks_error_at(opts->kernel_headers[i], 0, 0, "--kernels-in: cannot open: %s",
                        strerror(errno));
        else
            w->named[w->nnamed++] = real;
    }
}

/* The walk over a clean parse: kernels, instantiations, bounds, directives. */
static void walk_unit(walk_ctx *w, const ks_source *src, const char *base, int errors_before)
{
    CXCursor root = clang_getTranslationUnitCursor(w->s.tu);
    clang_visitChildren(root, visit, w);
    ks__oneparse_fire(w, clang_getNullCursor(), 0);
    clang_visitChildren(root, find_launches, w);
    ks__oneparse_fire(w, clang_getNullCursor(), 1);
    ks__check_headers_used(w);
    if (ks_error_count() == errors_before) {
        char *members = ks_classinst_references(&w->s, src, w->cls, w->ncls);
        ks__header_instantiations(w, base, strlen(base), members);
        free(members);
    }
    ks__probe_errors(w);
    ks__note_uninstantiated(w);
    if (w->nlbs && ks_error_count() == errors_before)
        ks__resolve_bounds(w, base, strlen(base));
    check_skips(w);
    apply_mirrors(w);
    ks_extents_apply(w->s.opts->input, src, w->model);
}

int ks_parse(const ks_options *opts, ks_model *model)
{
    int errors_before = ks_error_count();
    walk_ctx w;
    memset(&w, 0, sizeof w);
    w.model = model;
    memset(model, 0, sizeof *model);
    model->source = ks_xstrdup(opts->input);

    size_t text_size = 0;
    char *text = ks_read_file(opts->input, &text_size);
    if (!text) {
        ks_error_at(opts->input, 0, 0, "cannot open: %s", ks_file_error());
        return -1;
    }
    w.s.local_decls = !opts->skip_bodies && ks__oneparse_hint(text, text_size);
    w.s.opts = opts;
    w.cuda_real = opts->cuda_path ? realpath(opts->cuda_path, NULL) : NULL;
    if (opts->kernels_in == KS_KERNELS_NAMED)
        resolve_named(&w, opts);
    /* The parse says what is code: its tokens, skipped ranges and
     * preprocessing record give the directives and the explicit
     * instantiations; only a file with some is parsed again, with the
     * references written in. */
    ks_source src;
    memset(&src, 0, sizeof src);
    char *injected = NULL, *again = NULL;   /* again: libclang may read it until the end */
    if (ks_error_count() == errors_before && ks_session_open(&w.s, opts, NULL, 0) == 0) {
        CXFile main = clang_getFile(w.s.tu, opts->input);
        if (!main || ks_source_load(&src, w.s.tu, main) != 0)
            ks_error_at(opts->input, 0, 0, "libclang shows no text for the file");
        else
            read_directives(&w, &src);
    }
    if (ks_error_count() == errors_before) {
        w.ninst = ks_source_instantiations(&src, &w.inst);
        w.inst_used_by = ks_xmalloc((w.ninst + 1) * sizeof *w.inst_used_by);
        memset(w.inst_used_by, 0, (w.ninst + 1) * sizeof *w.inst_used_by);
        w.ncls = ks_source_class_instantiations(&src, &w.cls);
        w.probes = ks_xmalloc((2 * w.ninst + 1) * sizeof *w.probes);
        memset(w.probes, 0, (2 * w.ninst + 1) * sizeof *w.probes);
        if (w.ninst || w.ncls)
            injected = inject_instantiations(src.text, src.size, w.inst, w.ninst, w.cls, w.ncls, w.probes);
        if (ks__oneparse_match(&w)) {
            ks_prelude_debug("explicit instantiations: read from the first parse");
        } else if (w.s.local_decls) {
            /* the walk reads a unit that lists its own declarations */
            ks_prelude_debug("explicit instantiations: %s", injected ? "parse again with references "
                             "written in" : "none; parse again as the walk reads");
            ks_session_close(&w.s);
            w.s.quiet = 1;
            w.s.probes = w.probes;
            w.s.nprobes = injected ? w.ninst : 0;
            /* from the file's text: the parse's has its leading includes
             * blanked (the prelude holds them), at the same offsets */
            if (injected && text_size == src.size)
                again = inject_instantiations(text, text_size, w.inst, w.ninst, w.cls, w.ncls, w.probes);
            if ((injected && !again) ||
                ks_session_open(&w.s, opts, again, again ? strlen(again) : 0) != 0)
                if (ks_error_count() == errors_before)
                    ks_error_at(opts->input, 0, 0, "libclang could not parse the file again");
        } else if (injected) {
            ks_prelude_debug("explicit instantiations: parse again with references written in");
            w.s.probes = w.probes;
            w.s.nprobes = w.ninst;
            ks_session_reparse_quiet(&w.s, injected, strlen(injected));
        }
    }
    if (ks_error_count() == errors_before) {
        walk_unit(&w, &src, injected ? injected : src.text, errors_before);
        /* e.g. the depfile writer, which reads the inclusions */
        if (ks_error_count() == errors_before && opts->tu_hook)
            opts->tu_hook(w.s.tu, opts->tu_hook_data);
    }
    walk_ctx_free(&w);
    ks_source_free(&src);
    free(injected);
    free(again);
    free(text);
    return ks_error_count() == errors_before ? 0 : -1;
}
