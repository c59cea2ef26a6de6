/*
 * instances.c — template kernels that nvcc instantiates without an explicit
 * instantiation in the input: launched (or their address taken) from host
 * code, including host function templates' and class templates' members,
 * and explicitly instantiated in the project's headers.
 */
#include "front/walkctx.h"
#include "base/util.h"
#include "front/session_files.h"
#include "front/session.h"
#include "front/cursor.h"
#include "front/source.h"
#include "front/classinst.h"
#include "front/targs.h"
#include "base/instscan.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- template kernels instantiated by host code -------------------------------------------- */

static int is_bool_type(CXType t)
{
    return clang_getCanonicalType(t).kind == CXType_Bool;
}

/* The enumerator of enum type t whose value is v, qualified; NULL if none. */
typedef struct enum_find {
    long long value;
    CXCursor found;
} enum_find;

static enum CXChildVisitResult find_enumerator(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    enum_find *ef = data;
    if (clang_getCursorKind(c) == CXCursor_EnumConstantDecl &&
        clang_getEnumConstantDeclValue(c) == ef->value) {
        ef->found = c;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

/*
 * The functions and variables whose addresses a specialization's template
 * arguments are, in order, read from its mangled name (libclang does not
 * name them): each expr-primary "L_Z<name>…E" ("XadL_Z…EE" for "&f"), the
 * name "<n>id", "L<n>id" (static) or "N<n>id…E" (qualified). A function's
 * is written "f", a variable's "&v", as C++ takes them. Returns how many were
 * found (at most max); texts are malloc'd.
 */
static int address_args(const char *mangled, char **texts, int max)
{
    int n = 0;
    for (const char *p = strstr(mangled, "L_Z"); p && n < max; p = strstr(p, "L_Z")) {
        p += 3;
        int nested = *p == 'N';
        if (nested)
            p++;
        ks_buf b = {0};
        while (*p) {
            if (*p == 'L')
                p++;    /* clang's mark for internal linkage */
            if (!isdigit((unsigned char)*p))
                break;
            char *end;
            unsigned long len = strtoul(p, &end, 10);
            if (strlen(end) < len)
                break;
            if (b.len)
                ks_buf_puts(&b, "::");
            ks_buf_put(&b, end, len);
            p = end + len;
            if (!nested)
                break;
        }
        if (nested && *p == 'E')
            p++;
        char *name = ks_buf_take(&b);
        if (!*name) {
            free(name);
            continue;
        }
        texts[n++] = *p == 'E' ? ks_xasprintf("&%s", name) : ks_xstrdup(name);
        free(name);
    }
    return n;
}

/* The ParmDecl children of function template \p tmpl, in order. */
typedef struct parm_list {
    CXCursor v[64];
    int n;
} parm_list;

static enum CXChildVisitResult collect_parms(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    parm_list *pl = data;
    if (clang_getCursorKind(c) == CXCursor_ParmDecl && pl->n < 64)
        pl->v[pl->n++] = c;
    return CXChildVisit_Continue;
}

/*
 * The types template parameter pack \p i of \p spec expanded to, "float, int"
 * ("" for an empty pack), read from the specialization's parameters (libclang
 * does not list a pack's elements): the template's function parameter of
 * type "<Pack>..." stands for as many of the specialization's parameters, from
 * its place on, as the specialization has more than the template. NULL when
 * the pack is not expanded so (used in another type, or twice).
 */
static char *pack_text(CXCursor spec, CXCursor tmpl, int i)
{
    CXCursor param = ks_template_param(tmpl, (unsigned)i);
    if (clang_Cursor_isNull(param))
        return NULL;
    char *pack = ks_take(clang_getCursorSpelling(param));
    char *want = ks_xasprintf("%s...", pack);
    free(pack);
    parm_list pl;
    pl.n = 0;
    clang_visitChildren(tmpl, collect_parms, &pl);
    int at = -1, uses = 0;
    for (int j = 0; j < pl.n; j++) {
        char *t = ks_take(clang_getTypeSpelling(clang_getCursorType(pl.v[j])));
        if (strcmp(t, want) == 0) {
            at = j;
            uses++;
        }
        free(t);
    }
    free(want);
    int nspec = clang_Cursor_getNumArguments(spec);
    int len = nspec - (pl.n - 1);
    if (uses != 1 || pl.n == 64 || len < 0)
        return NULL;
    ks_buf b = {0};
    ks_buf_puts(&b, "");
    for (int k = 0; k < len; k++) {
        CXType t = clang_getCursorType(clang_Cursor_getArgument(spec, (unsigned)(at + k)));
        char *sp = ks_take(clang_getTypeSpelling(t));
        ks_buf_printf(&b, "%s%s", k ? ", " : "", sp);
        free(sp);
    }
    return ks_buf_take(&b);
}

/* A specialization's template arguments as an explicit instantiation would
 * write them: "float, 4", "true", "Op::Add", "matmul_naive", "&table". NULL
 * when an argument is of a kind kstub cannot spell (a pack, a template). */
char *ks__template_args_text(CXCursor spec, int *bad)
{
    int n = clang_Cursor_getNumTemplateArguments(spec);
    CXCursor tmpl = clang_getSpecializedCursorTemplate(spec);
    *bad = -1;
    if (n < 0 || clang_Cursor_isNull(tmpl))
        return NULL;
    char *addr[16];
    int naddr = 0, used = 0;
    {
        char *mangled = ks_take(clang_Cursor_getMangling(spec));
        naddr = address_args(mangled, addr, 16);
        free(mangled);
    }
    ks_buf b = {0};
    for (int i = 0; i < n; i++) {
        if (i)
            ks_buf_puts(&b, ", ");
        enum CXTemplateArgumentKind kind = clang_Cursor_getTemplateArgumentKind(spec, (unsigned)i);
        if (kind == CXTemplateArgumentKind_Declaration && used < naddr) {
            ks_buf_puts(&b, addr[used++]);
            continue;
        }
        char *elems = kind == CXTemplateArgumentKind_Pack ? pack_text(spec, tmpl, i) : NULL;
        if (elems) {
            if (!*elems && b.len >= 2) {
                b.len -= 2;     /* an empty pack: no ", " before it */
                b.data[b.len] = '\0';
            }
            ks_buf_puts(&b, elems);
            free(elems);
            continue;
        }
        if (kind == CXTemplateArgumentKind_Type) {
            char *t = ks_take(clang_getTypeSpelling(clang_Cursor_getTemplateArgumentType(spec, (unsigned)i)));
            ks_buf_puts(&b, t);
            free(t);
            continue;
        }
        if (kind != CXTemplateArgumentKind_Integral) {
            free(b.data);
            for (int a = 0; a < naddr; a++)
                free(addr[a]);
            *bad = i;
            return NULL;
        }
        CXCursor param = ks_template_param(tmpl, (unsigned)i);
        CXType pt = clang_getCursorType(param);   /* invalid for a null cursor */
        CXType canon = clang_getCanonicalType(pt);
        long long v = clang_Cursor_getTemplateArgumentValue(spec, (unsigned)i);
        if (!clang_Cursor_isNull(param) && is_bool_type(pt)) {
            ks_buf_puts(&b, v ? "true" : "false");
        } else if (!clang_Cursor_isNull(param) && canon.kind == CXType_Enum) {
            enum_find ef = {v, clang_getNullCursor()};
            clang_visitChildren(clang_getTypeDeclaration(canon), find_enumerator, &ef);
            if (clang_Cursor_isNull(ef.found)) {
                ks_buf_printf(&b, "%lld", v);
            } else {
                char *q = ks_qualified_name(ef.found);
                ks_buf_puts(&b, q);
                free(q);
            }
        } else if (canon.kind == CXType_UInt || canon.kind == CXType_ULong ||
                   canon.kind == CXType_ULongLong || canon.kind == CXType_UShort ||
                   canon.kind == CXType_UChar) {
            ks_buf_printf(&b, "%llu", clang_Cursor_getTemplateArgumentUnsignedValue(spec, (unsigned)i));
        } else {
            ks_buf_printf(&b, "%lld", v);
        }
    }
    for (int a = 0; a < naddr; a++)
        free(addr[a]);
    return ks_buf_take(&b);
}

static void note_host_used(walk_ctx *w, CXCursor tmpl)
{
    w->host_used = ks_xrealloc(w->host_used, (w->nhost_used + 1) * sizeof *w->host_used);
    w->host_used[w->nhost_used++] = ks_qualified_name(tmpl);
}


/* Whether clang instantiated the specialization ref: it has a definition.
 * A reference that is no odr-use instantiates nothing, and nvcc emits no
 * kernel for it: one in a discarded "if constexpr" branch, in an
 * unevaluated operand (decltype, sizeof, noexcept), or in the body of a
 * function template never instantiated. Without bodies (--skip-bodies) no
 * specialization has one, and every reference counts, as before. */
static int instantiated(const walk_ctx *w, CXCursor ref)
{
    if (w->s.opts->skip_bodies)
        return 1;
    CXCursor def = clang_getCursorDefinition(ref);
    return !clang_Cursor_isNull(def) && clang_isCursorDefinition(def);
}

/* A reference to a function: a kernel template's specialization becomes a
 * kernel; a host function template's specialization is followed into its
 * instantiated body, where its own launches are. */
void ks__handle_reference(walk_ctx *w, CXCursor ref)
{
    enum CXCursorKind rk = clang_getCursorKind(ref);
    if (rk != CXCursor_FunctionDecl && rk != CXCursor_CXXMethod)
        return;
    CXCursor tmpl = clang_getSpecializedCursorTemplate(ref);
    if (clang_Cursor_isNull(tmpl) || !instantiated(w, ref))
        return;
    char *symbol = ks_take(clang_Cursor_getMangling(ref));
    int again = !*symbol || ks__seen_symbol(w, symbol);
    free(symbol);
    if (again)
        return;
    if (!ks_cursor_is_kernel(ref)) {
        const file_class *fc = ks__classify(w, clang_getCursorLocation(tmpl));
        if (fc && fc->project)
            clang_visitChildren(ref, ks__find_launches, w);
        return;
    }
    const file_class *fc = ks__classify(w, clang_getCursorLocation(tmpl));
    if (!fc || !fc->kernels)
        return;
    note_host_used(w, tmpl);
    int bad;
    char *args = ks__template_args_text(ref, &bad);
    if (!args) {
        char *q = ks_qualified_name(ref);
        if (ks__skipped(w, q, NULL, ref)) {
            free(q);
            return;
        }
        char *mangled = ks_take(clang_Cursor_getMangling(ref));
        char *sym = ks__device_symbol(w, ref, mangled);
        free(mangled);
        char *why = ks_unspellable_argument(ref, bad);
        ks__walk_diag(w, ref, "error", "template kernel '%s' is instantiated by host code, but %s; "
                  "kstub names a stub after its template arguments and cannot name this one. "
                  "Launch an instance whose arguments are types, integers, bools or enumerators "
                  "(e.g. a tag type or an int in place of the function), or leave it out with "
                  "'// kstub:skip %s'", q, why, sym);
        free(why);
        free(sym);
        free(q);
        return;
    }
    w->current_args = args;
    ks__add_kernel(w, ref);
    w->current_args = NULL;
    free(args);
}

enum CXChildVisitResult ks__find_launches(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    walk_ctx *w = data;
    const file_class *fc = ks__classify(w, clang_getCursorLocation(c));
    if (fc && !fc->project)
        return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr)
        ks__handle_reference(w, clang_getCursorReferenced(c));
    return CXChildVisit_Recurse;
}

static int host_used(const walk_ctx *w, const char *qname)
{
    for (size_t i = 0; i < w->nhost_used; i++)
        if (strcmp(w->host_used[i], qname) == 0)
            return 1;
    return 0;
}

void ks__note_uninstantiated(walk_ctx *w)
{
    for (size_t t = 0; t < w->ntemplates; t++) {
        int used = host_used(w, w->templates[t]);
        for (size_t i = 0; i < w->ninst; i++)
            used |= w->inst_used_by[i] && strcmp(w->inst_used_by[i], w->templates[t]) == 0;
        if (!used) {
            const char *colon = strrchr(w->templates[t], ':');
            ks_note_at(w->s.opts->input, 0, 0, "template kernel '%s' is never explicitly "
                       "instantiated ('template __global__ void %s<...>(...);') nor launched "
                       "from host code kstub sees; skipped", w->templates[t],
                       colon ? colon + 1 : w->templates[t]);
        }
    }
}

void ks__probe_errors(walk_ctx *w)
{
    for (size_t i = 0; i < w->s.nprobe_errors; i++) {
        const ks_probe_error *pe = &w->s.probe_errors[i];
        const char *q = pe->probe < w->ninst && w->inst[pe->probe].qname ? w->inst[pe->probe].qname : "";
        const char *name = strrchr(q, ':') ? strrchr(q, ':') + 1 : q;
        int kernel = !*name;
        for (size_t t = 0; t < w->ntemplates && !kernel; t++) {
            const char *tn = strrchr(w->templates[t], ':') ? strrchr(w->templates[t], ':') + 1 : w->templates[t];
            kernel = strcmp(tn, name) == 0;
        }
        if (!kernel) {
            ks_prelude_debug("explicit instantiation of '%s', no template kernel's: %s", q, pe->msg);
            continue;
        }
        ks_diag_line(pe->msg);
        ks_count_error();
        ks_error_keep(pe->file && pe->file[0] ? pe->file : NULL, pe->file && pe->file[0] ? pe->line : 0, pe->col,
                      pe->what);
    }
}

/* ---- explicit instantiations in headers ------------------------------------------------------ */

/* The namespaces around a header's explicit instantiation, outermost first,
 * as "namespace a { namespace b { " and its closing " } }"; -1 when it does
 * not lie at namespace scope. */
static int namespaces_at(walk_ctx *w, CXFile file, size_t offset, ks_buf *open, ks_buf *close)
{
    CXCursor at = clang_getCursor(w->s.tu, ks_file_loc(w->s.tu, file, (unsigned)offset));
    char *names[64];
    int n = 0, ok = 1;
    for (CXCursor c = at; !clang_Cursor_isNull(c) && clang_getCursorKind(c) != CXCursor_TranslationUnit;
         c = clang_getCursorSemanticParent(c)) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_LinkageSpec)
            continue;
        if (k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl ||
            k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization ||
            k == CXCursor_CompoundStmt || n == 64) {
            ok = 0;
            break;
        }
        if (k != CXCursor_Namespace)
            continue;        /* the instantiation's own declaration or a name in it */
        names[n++] = ks_take(clang_getCursorSpelling(c));
    }
    for (int i = n - 1; i >= 0; i--) {
        if (ok) {
            ks_buf_printf(open, "namespace %s { ", names[i]);
            ks_buf_puts(close, " }");
        }
        free(names[i]);
    }
    return ok ? 0 : -1;
}

static enum CXChildVisitResult visit_injected(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (!ks__is_main(data, c))
        return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec)
        return CXChildVisit_Recurse;
    if (k == CXCursor_TypedefDecl) {
        walk_ctx *w = data;
        CXCursor member = ks_classinst_member(c, w->ncls);
        if (clang_Cursor_isNull(member))
            ks__handle_instantiation(w, c);
        else
            ks__handle_reference(w, member);
    }
    return CXChildVisit_Continue;
}

/* Whether a -D of the command line may write an explicit instantiation
 * (kstub's own -Ds write none). */
static int defines_may_instantiate(const ks_options *o)
{
    for (size_t i = 0; i < o->ndefines; i++) {
        const char *eq = strchr(o->defines[i], '=');
        if (strncmp(o->defines[i], "-D", 2) == 0 && eq && ks_text_may_instantiate(eq + 1, strlen(eq + 1)))
            return 1;
    }
    return 0;
}

/* Whether a macro definition's text may write an explicit instantiation
 * when expanded (with the macros it expands in turn: so one is enough). */
static int definition_may_instantiate(walk_ctx *w, CXCursor c)
{
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile f1, f2;
    unsigned o1, o2;
    clang_getSpellingLocation(clang_getRangeStart(r), &f1, NULL, NULL, &o1);
    clang_getSpellingLocation(clang_getRangeEnd(r), &f2, NULL, NULL, &o2);
    if (!f1)                         /* the command line's: -D NAME=VALUE */
        return defines_may_instantiate(w->s.opts);
    /* the record lists a file's definitions together: one file's text
     * kept (libclang finds a file's text by a search through the unit) */
    if (!w->def_file || !clang_File_isEqual(f1, w->def_file)) {
        w->def_file = f1;
        w->def_text = clang_getFileContents(w->s.tu, f1, &w->def_size);
    }
    const char *text = w->def_text;
    size_t size = w->def_size;
    if (!text || !clang_File_isEqual(f1, f2) || o2 < o1 || o2 > size)
        return 1;
    /* the extent ends at the last token's start: take the line's rest */
    size_t end = o2;
    while (end < size && text[end] != '\n')
        end++;
    return ks_text_may_instantiate(text + o1, end - o1);
}

/* Marks each file a macro is expanded in (the preprocessing record's
 * expansions are the unit's top-level cursors), and whether any macro
 * the unit defines may write an explicit instantiation. */
static enum CXChildVisitResult mark_expansions(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    walk_ctx *w = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_MacroExpansion) {
        file_class *fc = ks__classify(w, clang_getCursorLocation(c));
        if (fc)
            fc->expands = 1;
    } else if (k == CXCursor_MacroDefinition && !w->macro_instantiates) {
        w->macro_instantiates = definition_may_instantiate(w, c);
    }
    return CXChildVisit_Continue;
}

/* Whether a header may hold an explicit instantiation: clang's text of it
 * has a "template" that may begin one, or a macro is expanded in it while
 * some macro of the unit may write one (a prelude with a header that may
 * is never used: pch.c's first_instantiating). Reading a header's tokens
 * and macros (ks_source_load) looks through the whole unit, so a project
 * of thousands of headers with kernels reads only those that may. */
static int may_instantiate(walk_ctx *w, const file_class *fc)
{
    size_t size = 0;
    const char *text = clang_getFileContents(w->s.tu, fc->file, &size);
    return !text || ks_text_may_instantiate(text, size) || (fc->expands && w->macro_instantiates);
}

/* Explicit instantiations written in the headers whose kernels count: the
 * input's are referenced in place (inject_instantiations), a header's from
 * the end of the input, in the namespaces it was written in, read after one
 * reparse, with members (classinst.c's references to the members of the
 * input's class instantiations, or NULL). Returns 0, or -1 after the reparse
 * reported errors. */
int ks__header_instantiations(walk_ctx *w, const char *base, size_t base_len, const char *members)
{
    ks_buf add = {0};
    if (members)
        ks_buf_puts(&add, members);
    size_t before = w->ninst, nfiles = w->nfiles;
    int any = 0;
    w->macro_instantiates = 0;
    w->def_file = NULL;
    for (size_t f = 0; f < nfiles; f++)
        any |= w->files[f].kernels && !w->files[f].main;
    if (any)
        clang_visitChildren(clang_getTranslationUnitCursor(w->s.tu), mark_expansions, w);
    size_t headers = 0, read = 0;
    for (size_t f = 0; f < nfiles; f++) {
        file_class fc = w->files[f];
        if (!fc.kernels || fc.main)
            continue;
        headers++;
        if (!may_instantiate(w, &fc))
            continue;
        read++;
        ks_source hs;
        if (ks_source_load(&hs, w->s.tu, fc.file) != 0)
            continue;
        ks_explicit_inst *hi;
        size_t n = ks_source_instantiations(&hs, &hi);
        for (size_t j = 0; j < n; j++) {
            ks_buf open = {0}, close = {0};
            if (namespaces_at(w, fc.file, hi[j].end - 1, &open, &close) != 0) {
                unsigned line, col;
                ks_source_position(&hs, hi[j].end - 1, &line, &col);
                ks_note_at(fc.name, line, col, "explicit instantiation of '%s<%s>' is not at namespace "
                           "scope; kstub does not follow it", hi[j].qname, hi[j].args);
            } else {
                w->probes = ks_xrealloc(w->probes, (2 * w->ninst + 3) * sizeof *w->probes);
                w->probes[2 * w->ninst] = base_len + 1 + add.len;     /* the reparse's text: base, '\n', add */
                ks_buf_printf(&add, "%stypedef decltype(static_cast<%s (*)(%s)>(&%s<%s>)) "
                              "kstub_i%zu;%s\n", open.data ? open.data : "", hi[j].ret, hi[j].params,
                              hi[j].qname, hi[j].args, w->ninst, close.data ? close.data : "");
                w->probes[2 * w->ninst + 1] = base_len + 1 + add.len;
                w->inst = ks_xrealloc(w->inst, (w->ninst + 1) * sizeof *w->inst);
                w->inst_used_by = ks_xrealloc(w->inst_used_by, (w->ninst + 1) * sizeof *w->inst_used_by);
                w->inst[w->ninst] = hi[j];
                memset(&hi[j], 0, sizeof hi[j]);
                w->inst_used_by[w->ninst++] = NULL;
            }
            free(open.data);
            free(close.data);
        }
        ks_explicit_inst_free(hi, n);
        ks_source_free(&hs);
    }
    if (headers)
        ks_prelude_debug("explicit instantiations: %zu of %zu headers may write one, read", read, headers);
    if (w->ninst == before && !members) {
        free(add.data);
        return 0;
    }
    ks_buf src = {0};
    ks_buf_put(&src, base, base_len);
    ks_buf_puts(&src, "\n");
    ks_buf_put(&src, add.data, add.len);
    free(add.data);
    /* CXFile handles do not outlive a reparse. */
    ks__forget_files(w);
    w->s.probes = w->probes;
    w->s.nprobes = w->ninst;
    int rc = ks_session_reparse(&w->s, src.data, src.len);
    free(src.data);
    if (rc != 0) {
        ks_note_at(w->s.opts->input, 0, 0, "while reading the explicit instantiations of its headers "
                   "and class templates");
        return -1;
    }
    clang_visitChildren(clang_getTranslationUnitCursor(w->s.tu), visit_injected, w);
    return 0;
}

/* A header named with --kernels-in that the input never includes is a
 * mistake worth an error: its kernels would silently get no stubs. */
void ks__check_headers_used(walk_ctx *w)
{
    for (size_t i = 0; i < w->nnamed; i++) {
        int found = 0;
        for (size_t f = 0; f < w->nfiles && !found; f++) {
            char *name = ks_take(clang_getFileName(w->files[f].file));
            char *real = realpath(name, NULL);
            found = real && strcmp(real, w->named[i]) == 0;
            free(real);
            free(name);
        }
        if (!found)
            ks_error_at(w->s.opts->input, 0, 0, "--kernels-in '%s': the input does not include "
                        "it (or declares nothing in it)", w->named[i]);
    }
}

/* ---- explicit instantiations ----------------------------------------------------------------- */

static enum CXChildVisitResult find_decl_ref(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        if (clang_getCursorKind(r) == CXCursor_FunctionDecl) {
            *(CXCursor *)data = r;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

/* A "kstub_iN" typedef injected after the Nth explicit instantiation leads to
 * the specialization: a kernel of its own, when the template is one. */
void ks__handle_instantiation(walk_ctx *w, CXCursor typedef_cursor)
{
    char *alias = ks_take(clang_getCursorSpelling(typedef_cursor));
    static const char prefix[] = "kstub_i";
    size_t idx = (size_t)-1;
    if (strncmp(alias, prefix, sizeof prefix - 1) == 0 && isdigit((unsigned char)alias[sizeof prefix - 1])) {
        char *end;
        unsigned long v = strtoul(alias + sizeof prefix - 1, &end, 10);
        if (*end == '\0')
            idx = (size_t)v;
    }
    free(alias);
    if (idx >= w->ninst)
        return;
    CXCursor fn = clang_getNullCursor();
    clang_visitChildren(typedef_cursor, find_decl_ref, &fn);
    ks__instantiated(w, idx, fn);
}

/* The specialization \p fn the Nth explicit instantiation defines: a kernel
 * of its own, when the template is one. */
void ks__instantiated(walk_ctx *w, size_t idx, CXCursor fn)
{
    if (clang_Cursor_isNull(fn) || clang_getCursorKind(fn) != CXCursor_FunctionDecl || !ks_cursor_is_kernel(fn))
        return;                      /* an instantiation of some other function template */
    free(w->inst_used_by[idx]);
    w->inst_used_by[idx] = ks_qualified_name(fn);
    char *symbol = ks_take(clang_Cursor_getMangling(fn));
    int again = ks__seen_symbol(w, symbol);
    free(symbol);
    if (again)
        return;
    /* "k<>" or "k", its arguments deduced: named after the ones deduced */
    if (!w->inst[idx].args[0]) {
        int bad;
        char *args = ks__template_args_text(fn, &bad);
        if (args && args[0]) {
            free(w->inst[idx].args);
            w->inst[idx].args = args;
        } else {
            free(args);
        }
    }
    w->current_args = w->inst[idx].args;
    ks__add_kernel(w, fn);
    w->current_args = NULL;
}
