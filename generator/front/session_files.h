/*
 * session_files.h — what the front end tells a depfile (cli/depfile.c)
 * about a parse's files: the in-memory header it adds (compat.c), which is
 * no file, the files inside the precompiled prelude it used, which
 * clang_getInclusions does not list (session.c), and each file's first
 * byte (filetop.c). The front end's other
 * seams stay in their own headers, private to front/.
 */
#ifndef KSTUB_SESSION_FILES_H
#define KSTUB_SESSION_FILES_H

#include <clang-c/Index.h>
#include <stddef.h>

/* The in-memory header included before the input (-include), its path a
 * name no file has; the depfile leaves it out. */
#define KS_COMPAT_PATH "/__kstub__/nvcc_compat.h"

/* The files inside the precompiled prelude the parse of tu used, in the
 * order a parse without it lists them (right after the input):
 * clang_getInclusions does not look inside a PCH. Calls fn for each and
 * returns how many; 0 when tu used no prelude. */
size_t ks_session_prelude_files(CXTranslationUnit tu,
                                void (*fn)(const char *path, int is_system, void *data), void *data);

/* A file's first byte in tu, clang_getLocationForOffset(tu, f, 0), looked
 * up once per unit (filetop.c): the walk (walkctx.c, kernel.c) and the
 * depfile ask it of the same files, and each lookup looks through every
 * file of the unit. A call with another unit forgets the last one's. */
CXSourceLocation ks_file_top(CXTranslationUnit tu, CXFile f);
/* The same, given a location at in f: the first byte of at's inclusion of
 * f, found in constant time where libclang confirms it (filetop.c), else
 * ks_file_top's. */
CXSourceLocation ks_file_top_near(CXTranslationUnit tu, CXFile f, CXSourceLocation at);
/* clang_getLocationForOffset(tu, f, offset), from f's first byte where
 * libclang confirms the arithmetic (filetop.c). */
CXSourceLocation ks_file_loc(CXTranslationUnit tu, CXFile f, unsigned offset);
/* Forgets every answer: called before a unit is disposed (session.c), so
 * that none outlives it (a later unit may be allocated where it was). */
size_t ks_file_top_forget(void);

#endif /* KSTUB_SESSION_FILES_H */
