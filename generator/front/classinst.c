/*
 * classinst.c — the members of explicitly instantiated class templates.
 *
 * "template class Runner<float>;" instantiates every member function of
 * Runner<float>, and nvcc emits each kernel instance those members launch.
 * libclang shows neither the instantiation nor the members it made (its
 * visitor stops at an explicit instantiation's template arguments). So the
 * walk injects "typedef Runner<float> kstub_cN;" right after each one
 * (walk.c), this file reads the class template's member functions through
 * that typedef and writes one reference per member to append to the input
 * ("typedef decltype(&::ns::kstub_c0::run) kstub_m0_1;"), and after the
 * reparse each reference leads to the instantiated member, whose body the
 * walk follows as it follows a host function template's.
 *
 * Only what a reference outside the class can name is referenced: public,
 * not deleted, not overloaded member functions (constructors and
 * destructors have no address). Private members are reached through the
 * public ones that call them, member templates through the members that
 * use them. A member left out whose body launches a kernel template gets a
 * note at the instantiation saying why and what to write instead.
 */
#include "base/util.h"
#include "front/session.h"
#include "front/cursor.h"
#include "front/source.h"
#include "front/classinst.h"

#include <stdlib.h>
#include <string.h>

/* "::ns::kstub_c0" for a typedef at namespace scope; unnamed namespaces
 * are left out (their names are visible in the enclosing one). */
static char *absolute_name(CXCursor c)
{
    char *name = ks_take(clang_getCursorSpelling(c));
    for (CXCursor p = clang_getCursorSemanticParent(c);
         !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        char *part = ks_take(clang_getCursorSpelling(p));
        if (clang_getCursorKind(p) != CXCursor_LinkageSpec && *part) {
            char *joined = ks_xasprintf("%s::%s", part, name);
            free(name);
            name = joined;
        }
        free(part);
    }
    char *abs = ks_xasprintf("::%s", name);
    free(name);
    return abs;
}

/* Whether a (dependent) member body refers to a kernel: k<T><<<...>>>(...)
 * is an overloaded reference until the class is instantiated. */
static enum CXChildVisitResult find_kernel_ref(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_DeclRefExpr) {
        if (ks_cursor_is_kernel(clang_getCursorReferenced(c))) {
            *(int *)data = 1;
            return CXChildVisit_Break;
        }
    } else if (k == CXCursor_OverloadedDeclRef) {
        for (unsigned i = 0; i < clang_getNumOverloadedDecls(c); i++)
            if (ks_cursor_is_kernel(clang_getOverloadedDecl(c, i))) {
                *(int *)data = 1;
                return CXChildVisit_Break;
            }
    }
    return CXChildVisit_Recurse;
}

static int launches_kernel(CXCursor member)
{
    int found = 0;
    clang_visitChildren(member, find_kernel_ref, &found);
    return found;
}

typedef struct members {
    CXCursor *all;               /* the template's member functions */
    size_t n;
} members;

static enum CXChildVisitResult collect_member(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    members *m = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate || k == CXCursor_Constructor ||
        k == CXCursor_Destructor || k == CXCursor_ConversionFunction) {
        m->all = ks_xrealloc(m->all, (m->n + 1) * sizeof *m->all);
        m->all[m->n++] = c;
    }
    return CXChildVisit_Continue;
}

/* Why member c of the template cannot be referenced from outside, or NULL. */
static const char *unreachable(const members *m, CXCursor c, const char *name)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_Constructor || k == CXCursor_Destructor)
        return "a constructor or destructor has no address to refer to";
    if (clang_getCXXAccessSpecifier(c) != CX_CXXPublic)
        return "it is not public (kstub follows it only from a public member that calls it)";
    if (clang_CXXMethod_isDeleted(c))
        return "it is deleted";
    for (size_t i = 0; i < m->n; i++) {
        if (clang_equalCursors(m->all[i], c))
            continue;
        char *other = ks_take(clang_getCursorSpelling(m->all[i]));
        int same = strcmp(other, name) == 0;
        free(other);
        if (same)
            return "it is overloaded, and a reference cannot say which one";
    }
    return NULL;
}

/* Whether a member before the i-th has its name (an overload noted once). */
static int named_before(const members *m, size_t i, const char *name)
{
    int found = 0;
    for (size_t j = 0; j < i && !found; j++) {
        char *other = ks_take(clang_getCursorSpelling(m->all[j]));
        found = strcmp(other, name) == 0;
        free(other);
    }
    return found;
}

typedef struct refs {
    const ks_session *s;
    const ks_source *src;
    const ks_class_inst *cls;
    size_t ncls;
    ks_buf text;
} refs;

static void reference_members(refs *r, CXCursor alias, size_t idx)
{
    const ks_class_inst *ci = &r->cls[idx];
    unsigned line, col;
    ks_source_position(r->src, ci->start, &line, &col);
    CXType t = clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(alias));
    CXCursor spec = clang_getTypeDeclaration(t);
    CXCursor tmpl = clang_getSpecializedCursorTemplate(spec);
    if (clang_Cursor_isNull(tmpl)) {
        ks_note_at(r->s->opts->input, line, col, "'%s<%s>' is no class template's instance kstub "
                   "can read; launches in its members get no stubs", ci->qname, ci->args);
        return;
    }
    members m = {NULL, 0};
    clang_visitChildren(tmpl, collect_member, &m);
    char *abs = absolute_name(alias);
    for (size_t i = 0; i < m.n; i++) {
        char *name = ks_take(clang_getCursorSpelling(m.all[i]));
        char *angle = strchr(name, '<');       /* a constructor is spelled "R<T>" */
        if (angle && strncmp(name, "operator", 8) != 0)
            *angle = '\0';
        /* A member template is instantiated only where something uses it,
         * and that use is followed: nothing to refer to, nothing missed. */
        const char *why = clang_getCursorKind(m.all[i]) == CXCursor_FunctionTemplate
                              ? "" : unreachable(&m, m.all[i], name);
        if (why && !*why)
            ;
        else if (!why)
            ks_buf_printf(&r->text, "typedef decltype(&%s::%s) %s%zu_%zu;\n", abs, name,
                          KS_CLASSINST_MEMBER, idx, i);
        else if (clang_getCXXAccessSpecifier(m.all[i]) == CX_CXXPublic && launches_kernel(m.all[i]) &&
                 !named_before(&m, i, name))
            ks_note_at(r->s->opts->input, line, col, "'%s<%s>::%s' launches a kernel template, but "
                       "kstub cannot follow it (%s): its instances get stubs when a public, "
                       "non-overloaded member calls it, or when instantiated explicitly "
                       "('template __global__ void K<...>(...);')", ci->qname, ci->args, name, why);
        free(name);
    }
    free(abs);
    free(m.all);
}

static enum CXChildVisitResult visit_aliases(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (!clang_Location_isFromMainFile(clang_getCursorLocation(c)))
        return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec)
        return CXChildVisit_Recurse;
    if (k != CXCursor_TypedefDecl)
        return CXChildVisit_Continue;
    refs *r = data;
    char *alias = ks_take(clang_getCursorSpelling(c));
    size_t idx;
    if (ks_classinst_alias_index(alias, KS_CLASSINST_ALIAS, r->ncls, &idx))
        reference_members(r, c, idx);
    free(alias);
    return CXChildVisit_Continue;
}

int ks_classinst_alias_index(const char *alias, const char *prefix, size_t n, size_t *idx)
{
    size_t len = strlen(prefix);
    if (strncmp(alias, prefix, len) != 0 || alias[len] < '0' || alias[len] > '9')
        return 0;
    char *end;
    unsigned long v = strtoul(alias + len, &end, 10);
    if ((*end != '\0' && *end != '_') || v >= n)
        return 0;
    *idx = (size_t)v;
    return 1;
}

char *ks_classinst_inject(const ks_class_inst *in, size_t idx)
{
    return ks_xasprintf(" typedef %s<%s> %s%zu;", in->qname, in->args, KS_CLASSINST_ALIAS, idx);
}

static enum CXChildVisitResult find_member_ref(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        enum CXCursorKind k = clang_getCursorKind(r);
        if (k == CXCursor_CXXMethod || k == CXCursor_ConversionFunction) {
            *(CXCursor *)data = r;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

CXCursor ks_classinst_member(CXCursor alias, size_t ncls)
{
    CXCursor found = clang_getNullCursor();
    char *name = ks_take(clang_getCursorSpelling(alias));
    size_t idx;
    if (ks_classinst_alias_index(name, KS_CLASSINST_MEMBER, ncls, &idx))
        clang_visitChildren(alias, find_member_ref, &found);
    free(name);
    return found;
}

char *ks_classinst_references(const ks_session *s, const ks_source *src, const ks_class_inst *cls,
                              size_t n)
{
    if (n == 0)
        return NULL;
    refs r = {s, src, cls, n, {0}};
    clang_visitChildren(clang_getTranslationUnitCursor(s->tu), visit_aliases, &r);
    if (!r.text.len) {
        free(r.text.data);
        return NULL;
    }
    return ks_buf_take(&r.text);
}
