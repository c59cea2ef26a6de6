/*
 * probes.h — the references kstub writes after a file's explicit
 * instantiations (walk.c) and the errors libclang gives inside them: an
 * error there is kstub's reference failing (an instantiation of a member
 * function template, which no reference to a free function names), held
 * back per instantiation and reported by the walk only where the name is
 * a template kernel's (instances.c).
 */
#ifndef KSTUB_PROBES_H
#define KSTUB_PROBES_H

#include <clang-c/Index.h>
#include <stddef.h>

/* An error in kstub's reference to the Nth explicit instantiation. */
typedef struct ks_probe_error {
    size_t probe;
    char *msg;                 /* the diagnostic's line, as it would be printed */
    char *file, *what;         /* for ks_error_keep */
    unsigned line, col;
} ks_probe_error;

/* The reference holding loc in the input's text ([start, end) byte pairs
 * in probes, one per instantiation), or nprobes. */
size_t ks_probe_at(const size_t *probes, size_t nprobes, CXSourceLocation loc);
/* Keeps diagnostic d of reference probe, once per text: takes *msg and
 * *file (set to NULL). */
void ks_probe_keep(ks_probe_error **errs, size_t *n, size_t probe, CXDiagnostic d, char **msg, char **file,
                   unsigned line, unsigned col);
void ks_probe_errors_free(ks_probe_error **errs, size_t *n);

#endif /* KSTUB_PROBES_H */
