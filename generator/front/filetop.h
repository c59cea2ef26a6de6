/*
 * filetop.h — a file's first byte in a translation unit, looked up once
 * (filetop.c): clang_getLocationForOffset(tu, file, 0) looks through every
 * file of the unit each time, and the walk (walkctx.c, kernel.c) and the
 * depfile (cli/depfile.c) ask it of the same files.
 */
#ifndef KSTUB_FILETOP_H
#define KSTUB_FILETOP_H

#include <clang-c/Index.h>

/* clang_getLocationForOffset(tu, f, 0), the same answer, remembered for
 * the unit tu (a call with another unit forgets the last one's). */
CXSourceLocation ks_file_top(CXTranslationUnit tu, CXFile f);

/* Forgets every answer: called before a unit is disposed (session.c), so
 * that none outlives it (a later unit may be allocated where it was). */
void ks_file_top_forget(void);

#endif /* KSTUB_FILETOP_H */
