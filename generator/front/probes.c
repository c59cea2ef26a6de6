/*
 * probes.c — errors inside kstub's references to explicit instantiations
 * (probes.h).
 */
#include "front/probes.h"
#include "base/util.h"
#include "front/cursor.h"

#include <stdlib.h>
#include <string.h>

size_t ks_probe_at(const size_t *probes, size_t nprobes, CXSourceLocation loc)
{
    if (!nprobes || !clang_Location_isFromMainFile(loc))
        return nprobes;
    unsigned off = 0;
    clang_getSpellingLocation(loc, NULL, NULL, NULL, &off);
    for (size_t i = 0; i < nprobes; i++)
        if (off >= probes[2 * i] && off < probes[2 * i + 1])
            return i;
    return nprobes;
}

void ks_probe_keep(ks_probe_error **errs, size_t *n, size_t probe, CXDiagnostic d, char **msg, char **file,
                   unsigned line, unsigned col)
{
    for (size_t j = 0; j < *n; j++)
        if ((*errs)[j].probe == probe && strcmp((*errs)[j].msg, *msg) == 0)
            return;                            /* a parse again says it again */
    *errs = ks_xrealloc(*errs, (*n + 1) * sizeof **errs);
    (*errs)[(*n)++] = (ks_probe_error){probe, *msg, *file, ks_take(clang_getDiagnosticSpelling(d)), line, col};
    *msg = NULL;
    *file = NULL;
}

void ks_probe_errors_free(ks_probe_error **errs, size_t *n)
{
    for (size_t i = 0; i < *n; i++) {
        free((*errs)[i].msg);
        free((*errs)[i].file);
        free((*errs)[i].what);
    }
    free(*errs);
    *errs = NULL;
    *n = 0;
}
