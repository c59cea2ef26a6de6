/*
 * targs.c — a template kernel's template arguments as the walk reads them
 * to name its stub: the template parameter an argument binds, and, for an
 * argument kstub cannot spell, the words that say which one and why.
 */
#include "base/util.h"
#include "front/cursor.h"
#include "front/targs.h"

#include <stdlib.h>

typedef struct nth_param {
    unsigned want, at;
    CXCursor found;
} nth_param;

static enum CXChildVisitResult find_nth_param(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    nth_param *np = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter ||
        k == CXCursor_TemplateTemplateParameter) {
        if (np->at++ == np->want) {
            np->found = c;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Continue;
}

CXCursor ks_template_param(CXCursor tmpl, unsigned i)
{
    nth_param np = {i, 0, clang_getNullCursor()};
    clang_visitChildren(tmpl, find_nth_param, &np);
    return np.found;
}

char *ks_unspellable_argument(CXCursor spec, int i)
{
    if (i < 0)
        return ks_xstrdup("libclang cannot list its template arguments (a parameter pack?)");
    CXCursor param = ks_template_param(clang_getSpecializedCursorTemplate(spec), (unsigned)i);
    char *name = clang_Cursor_isNull(param) ? ks_xstrdup("") : ks_take(clang_getCursorSpelling(param));
    char *type = clang_Cursor_isNull(param) ? ks_xstrdup("")
                                            : ks_take(clang_getTypeSpelling(clang_getCursorType(param)));
    const char *what;
    switch (clang_Cursor_getTemplateArgumentKind(spec, (unsigned)i)) {
    case CXTemplateArgumentKind_Declaration:
        what = "the address of a function or variable (a device function pointer, say), which "
               "has no C spelling that names the stub";
        break;
    case CXTemplateArgumentKind_NullPtr:
        what = "a null pointer constant";
        break;
    case CXTemplateArgumentKind_Template:
    case CXTemplateArgumentKind_TemplateExpansion:
        what = "a template (a template template parameter), which C has no counterpart for";
        break;
    case CXTemplateArgumentKind_Pack:
        what = "a parameter pack";
        break;
    case CXTemplateArgumentKind_Expression:
        what = "an expression kstub cannot evaluate";
        break;
    default:
        what = "of a kind libclang does not describe (a floating-point or class-type value?)";
        break;
    }
    char *why = *name ? ks_xasprintf("its template argument %d (parameter '%s', of type '%s') is %s",
                                     i + 1, name, type, what)
                      : ks_xasprintf("its template argument %d is %s", i + 1, what);
    free(name);
    free(type);
    return why;
}
