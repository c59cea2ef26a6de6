/*
 * latedefs.h — the input's -D/-U kept out of the headers clang's CUDA
 * wrapper reads and nvcc's implicit cuda_runtime.h does not (latedefs.c).
 */
#ifndef KSTUB_LATEDEFS_H
#define KSTUB_LATEDEFS_H

#include <clang-c/Index.h>
#include <stddef.h>

/* The in-memory header that defines the moved macros, -include'd after the
 * wrapper (a name no file has). */
#define KS_LATEDEFS_PATH "/__kstub__/user_defines.h"

/* Whether tu's errors lie in headers the input never included (only
 * the wrapper did), where one of defines[] (each "-DNAME[=V]" or "-UNAME")
 * is expanded (an error in a header the input includes that the wrapper
 * entered first, cuda.h, is nvcc's too: the parse then stands as it is). Marks those in move[] (all of them when the errors lie there but
 * none is found at their places) and writes the first such place
 * ("cuda.h:11278:77") into where. 1 when some are to move, else 0. */
int ks_latedefs_find(CXTranslationUnit tu, const char *input, const char *const *defines, size_t n,
                     unsigned char *move, char *where, size_t wlen);

/* The header text of the marked defines, in their order (#define/#undef). */
char *ks_latedefs_text(const char *const *defines, size_t n, const unsigned char *move);

#endif /* KSTUB_LATEDEFS_H */
