/*
 * redecl.c — a function declared again in another execution space: clang
 * refuses what nvcc merges.
 *
 * clang's CUDA mode makes __host__ and __device__ part of a function's
 * overloading, and refuses a __host__ __device__ declaration beside a
 * __host__ or __device__ one of the same signature ("__host__ __device__
 * function 'f' cannot overload __device__ function 'f'"), an error that no
 * flag turns off. nvcc parses the host side and the device side apart, and
 * a later declaration with another execution space is the same function to
 * it. Real headers do this with the C library's functions: CCCL (CUDA 13's
 * cuda/std headers, under -DNDEBUG) declares __assert_fail __host__
 * __device__ when it believes the compiler is nvcc, which kstub's predefined
 * macros say it is, while clang's CUDA wrapper defines a __device__ one and
 * glibc's <assert.h> a host one; a library that declares printf, malloc,
 * memcpy or sin __host__ __device__ meets clang's device declarations of
 * them the same way (nvcc's own headers declare them so).
 *
 * What nvcc still refuses stays an error: a __global__ function on either
 * side, return types that differ, and two definitions (one in a system
 * header aside: clang's wrapper defines its device forms, nvcc's headers
 * only declare them). The refusal leaves the later declaration invalid in
 * clang's AST, which can change a body (host code then finds the other
 * declaration), never a kernel's signature.
 *
 * Tested by tests/corpus/compat_hd_redeclarations.cu (check-real, check-abi)
 * and check-front's redeclaration cases.
 */
#include "front/redecl.h"
#include "front/cursor.h"

#include <stdlib.h>
#include <string.h>

enum { SPACE_HOST = 1, SPACE_DEVICE = 2, SPACE_GLOBAL = 4 };

static enum CXChildVisitResult space_attr(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    unsigned *space = data;
    switch (clang_getCursorKind(c)) {
    case CXCursor_CUDAHostAttr: *space |= SPACE_HOST; break;
    case CXCursor_CUDADeviceAttr: *space |= SPACE_DEVICE; break;
    case CXCursor_CUDAGlobalAttr: *space |= SPACE_GLOBAL; break;
    default: break;
    }
    return CXChildVisit_Continue;
}

/* The execution space as declared: none written is __host__. */
static unsigned space_of(CXCursor fn)
{
    unsigned space = 0;
    clang_visitChildren(fn, space_attr, &space);
    return space ? space : SPACE_HOST;
}

/* The function declared at loc (a diagnostic's place: the name), or a null cursor. */
static CXCursor function_at(CXTranslationUnit tu, CXSourceLocation loc)
{
    CXCursor c = clang_getCursor(tu, loc);
    switch (clang_getCursorKind(c)) {
    case CXCursor_FunctionDecl:
    case CXCursor_CXXMethod:
    case CXCursor_FunctionTemplate:
        return c;
    default:
        return clang_getNullCursor();
    }
}

int ks_redecl_nvcc_merges(CXTranslationUnit tu, CXDiagnostic d)
{
    if (clang_getDiagnosticSeverity(d) != CXDiagnostic_Error)
        return 0;
    char *msg = ks_take(clang_getDiagnosticSpelling(d));
    int overload = strstr(msg, " cannot overload ") != NULL;
    free(msg);
    if (!overload)
        return 0;
    CXCursor now = function_at(tu, clang_getDiagnosticLocation(d));
    CXCursor before = clang_getNullCursor();
    /* the previous declaration: the note clang attaches ("previous declaration is here") */
    CXDiagnosticSet notes = clang_getChildDiagnostics(d);
    for (unsigned i = 0, n = notes ? clang_getNumDiagnosticsInSet(notes) : 0; i < n; i++) {
        CXDiagnostic note = clang_getDiagnosticInSet(notes, i);
        CXCursor c = function_at(tu, clang_getDiagnosticLocation(note));
        clang_disposeDiagnostic(note);
        if (!clang_Cursor_isNull(c)) {
            before = c;
            break;
        }
    }
    if (clang_Cursor_isNull(now) || clang_Cursor_isNull(before))
        return 0;
    unsigned a = space_of(now), b = space_of(before);
    if (a == b || ((a | b) & SPACE_GLOBAL))
        return 0;
    char *na = ks_take(clang_getCursorSpelling(now)), *nb = ks_take(clang_getCursorSpelling(before));
    int same_name = strcmp(na, nb) == 0;
    free(na);
    free(nb);
    if (!same_name ||
        !clang_equalTypes(clang_getCanonicalType(clang_getCursorResultType(now)),
                          clang_getCanonicalType(clang_getCursorResultType(before))))
        return 0;
    if (clang_isCursorDefinition(now) && clang_isCursorDefinition(before) &&
        !clang_Location_isInSystemHeader(clang_getCursorLocation(before)))
        return 0;
    return 1;
}
