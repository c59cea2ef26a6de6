/*
 * variable.c — one namespace-scope device variable into the model (walk.c
 * finds it): a __constant__, __device__ or __managed__ definition in a file
 * whose kernels count (--kernels-in), its type through typemap.c, its
 * layout and the symbol nvcc gives it. What kstub cannot give accessors it
 * says why, in a note, and leaves out:
 *
 *   __shared__ at namespace scope   one copy per block: no host can reach it
 *   extern without a definition     the definition (-rdc) may be in another image
 *   internal linkage in a namespace nvcc names it per compilation
 *                                   (_ZN32_INTERNAL_<hash>_...), no stable symbol
 *   internal linkage under --rdc    nvcc prefixes it per compilation
 *                                   (__nv_static_<n>__<hash>_...), the same
 *   an array of unknown bound, an unnamed struct type (typemap.c)
 *
 * A static or const variable at global scope keeps its plain name in a
 * whole-program image (nvcc 13: "static __device__ int s" is ".global .u32
 * s"), so it gets accessors; under -rdc nvcc prefixes it (__nv_static_...):
 * with --rdc it gets a note instead, and without, an -rdc image is refused
 * by --embed naming the prefixed symbol (image_entries.c) or reported by
 * the load as a missing symbol. nvcc 13 keeps a const variable no
 * kernel reads (whole-program, -rdc and NVRTC alike); one a compiler folds
 * away leaves no symbol, which --embed or the load reports the same way.
 * A variable template has no cursor kind of its own (libclang shows an
 * unexposed declaration): ks__note_variable_template says it gets none,
 * each instantiation being a variable whose symbol kstub cannot know.
 */
#include "front/walkctx.h"
#include "base/util.h"
#include "model/model.h"
#include "front/cursor.h"
#include "front/typemap.h"

#include <stdlib.h>
#include <string.h>

typedef struct var_attrs {
    int constant, device, shared, managed;
} var_attrs;

/* Whether the declaration says __managed__: clang's CUDA mode ignores the
 * attribute (it is HIP's), leaving no cursor, so its tokens tell, up to the
 * declarator's name. */
static int declared_managed(walk_ctx *w, CXCursor var)
{
    CXToken *toks;
    unsigned n;
    ks_cursor_tokens(&w->s, var, &toks, &n);
    char *name = ks_take(clang_getCursorSpelling(var));
    int hit = 0;
    for (unsigned i = 0; i < n && !hit; i++) {
        char *t = ks_take(clang_getTokenSpelling(w->s.tu, toks[i]));
        int stop = strcmp(t, name) == 0 || strcmp(t, "=") == 0;
        hit = !stop && (strcmp(t, "__managed__") == 0 || strcmp(t, "managed") == 0);
        free(t);
        if (stop)
            break;
    }
    free(name);
    clang_disposeTokens(w->s.tu, toks, n);
    return hit;
}

static enum CXChildVisitResult find_attrs(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    var_attrs *a = data;
    switch (clang_getCursorKind(c)) {
    case CXCursor_CUDAConstantAttr: a->constant = 1; break;
    case CXCursor_CUDADeviceAttr: a->device = 1; break;
    case CXCursor_CUDASharedAttr: a->shared = 1; break;
    default: break;
    }
    return CXChildVisit_Continue;
}

/* Whether the cursor lies in a named namespace (not the global one). */
static int in_namespace(CXCursor c)
{
    for (CXCursor p = clang_getCursorSemanticParent(c); !clang_Cursor_isNull(p) &&
                                                         clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p))
        if (clang_getCursorKind(p) == CXCursor_Namespace)
            return 1;
    return 0;
}

/* The symbol nvcc gives a variable: clang's mangling, except that an
 * internal-linkage variable at global scope keeps its plain name ("_ZL5s_val"
 * is "s_val" in nvcc's PTX), as an external one at global scope does. */
static char *var_symbol(CXCursor c, int internal)
{
    char *raw = ks_take(clang_Cursor_getMangling(c));
    char *m = ks__nvcc_ucn_names(raw);
    free(raw);
    if (internal && strncmp(m, "_ZL", 3) == 0) {
        char *end;
        unsigned long len = strtoul(m + 3, &end, 10);
        if (len && strlen(end) >= len) {
            char *plain = ks_xstrdup(end);
            plain[len] = '\0';
            free(m);
            return plain;
        }
    }
    if (!*m) {
        free(m);
        return ks_take(clang_getCursorSpelling(c));
    }
    return m;
}

/* libclang shows a variable template as an unexposed declaration whose
 * children are the pattern's attributes: a device one gets a note. */
void ks__note_variable_template(walk_ctx *w, CXCursor decl)
{
    var_attrs a = {0, 0, 0, 0};
    clang_visitChildren(decl, find_attrs, &a);
    if (!a.constant && !a.device && !a.shared)
        return;
    char *name = ks_qualified_name(decl);
    ks__walk_diag(w, decl, "note", "'%s' is a device variable template: each instantiation is a "
                  "variable of its own, whose symbol kstub cannot know; no accessors", name);
    free(name);
}

void ks__add_variable(walk_ctx *w, CXCursor c)
{
    var_attrs a = {0, 0, 0, 0};
    clang_visitChildren(c, find_attrs, &a);
    if (!a.constant && !a.shared)
        a.managed = declared_managed(w, c);
    if (!a.constant && !a.device && !a.shared && !a.managed)
        return;                                  /* a host variable */
    char *name = ks_qualified_name(c);
    char *symbol = NULL;
    if (ks__basic_name(w, c, "variable") != 0)
        goto out;
    if (a.shared) {
        ks__walk_diag(w, c, "note", "variable '%s' is __shared__ at namespace scope: each block has "
                      "its own, which no host call can reach; no accessors", name);
        goto out;
    }
    int definition = clang_isCursorDefinition(c);
    if (!definition) {
        CXCursor def = clang_getCursorDefinition(c);
        if (clang_Cursor_isNull(def))
            ks__walk_diag(w, c, "note", "variable '%s' is declared extern and not defined in this "
                          "file: its definition (-rdc) may be in another image, where kstub cannot "
                          "prove its type; give it accessors in the file that defines it", name);
        goto out;                                /* the definition gets them */
    }
    enum CXLinkageKind linkage = clang_getCursorLinkage(c);
    int internal = linkage == CXLinkage_Internal || linkage == CXLinkage_UniqueExternal;
    if (internal && in_namespace(c)) {
        ks__walk_diag(w, c, "note", "variable '%s' has internal linkage in a namespace (static, "
                      "const, or an anonymous namespace): nvcc names it per compilation "
                      "(_ZN<n>_INTERNAL_<hash>...), so no symbol can be known before the image is "
                      "built; no accessors (give it external linkage to have them)", name);
        goto out;
    }
    if (internal && w->s.opts->rdc) {
        ks__walk_diag(w, c, "note", "variable '%s' has internal linkage (static, or const and not "
                      "extern): with --rdc (nvcc -rdc=true) nvcc prefixes its symbol per compilation "
                      "(__nv_static_<n>__<hash>_<file>_<hash>_%s), which no accessor can know; no "
                      "accessors (give it external linkage to have them)", name, name);
        goto out;
    }
    symbol = var_symbol(c, internal);
    if (ks__skipped_variable(w, name, symbol, c))
        goto out;
    CXType t = clang_getCursorType(c);
    ks_var v;
    memset(&v, 0, sizeof v);
    char *why = NULL;
    if (ks_typemap_variable(&w->s, w->model, t, name, &v.type, &why) != 0) {
        ks__walk_diag(w, c, "note", "variable '%s': %s; no accessors (or leave it out with "
                      "'// kstub:skip %s')", name, why, name);
        free(why);
        goto out;
    }
    long size = clang_Type_getSizeOf(t), align = clang_Type_getAlignOf(t);
    CXType e = clang_getCanonicalType(t);
    while (e.kind == CXType_ConstantArray)
        e = clang_getCanonicalType(clang_getArrayElementType(e));
    long esize = clang_Type_getSizeOf(e);
    if (size <= 0 || align <= 0 || esize <= 0) {
        ks__walk_diag(w, c, "note", "variable '%s': its size or alignment cannot be computed "
                      "(libclang layout error %ld); no accessors", name, size <= 0 ? size : align);
        ks_type_free(&v.type);
        goto out;
    }
    v.name = name;
    name = NULL;
    v.symbol = symbol;
    symbol = NULL;
    v.spelled = ks_take(clang_getTypeSpelling(t));
    v.space = a.managed ? KS_SPACE_MANAGED : a.constant ? KS_SPACE_CONSTANT : KS_SPACE_DEVICE;
    v.size = size;
    v.align = align;
    v.elem_size = esize;
    v.count = size / esize;
    v.is_const = clang_isConstQualifiedType(e) || clang_isConstQualifiedType(t);
    v.type.quals &= ~(unsigned)(KS_QUAL_CONST | KS_QUAL_VOLATILE);
    ks_cursor_location(c, &v.line, &v.col);
    if (!ks__is_main(w, c)) {
        const file_class *fc = ks__classify(w, clang_getCursorLocation(c));
        v.file = fc ? ks_xstrdup(fc->name) : NULL;
        v.tu_prefixed = w->s.opts->kernels_in == KS_KERNELS_PROJECT;
    }
    *ks_model_add_var(w->model) = v;
out:
    free(symbol);
    free(name);
}
