/*
 * redecl.h — clang's refusals of a function redeclared in another execution
 * space that nvcc accepts (redecl.c): the front end's diagnostics filter.
 */
#ifndef KSTUB_REDECL_H
#define KSTUB_REDECL_H

#include <clang-c/Index.h>

/* 1 when d, a diagnostic of tu, is clang's "cannot overload" refusal of a
 * function declared again with another execution space, which nvcc merges
 * into one function (a libc function redeclared __host__ __device__, say);
 * such a diagnostic is no error of the file's. 0 for every other one. */
int ks_redecl_nvcc_merges(CXTranslationUnit tu, CXDiagnostic d);

#endif /* KSTUB_REDECL_H */
