/*
 * depfile.h — make depfiles (depfile.c): the files a parse read, and the
 * rule gcc's -MD, -MMD, -MF, -MT, -MQ write.
 */
#ifndef KSTUB_DEPFILE_H
#define KSTUB_DEPFILE_H

#include <stddef.h>

/* The files a parse read: the input first, then every included file once,
 * in first-inclusion order. */
typedef struct ks_deps {
    char **files;
    unsigned char *is_system;  /* per file: a system header (clang's view) */
    size_t nfiles;
    int collected;             /* set by ks_deps_hook */
    int want_system;           /* is_system is read (-MMD): found for each file; else 0 */
} ks_deps;

/* A ks_options.tu_hook: data is a ks_deps *. */
void ks_deps_hook(void *tu, void *data);

void ks_deps_free(ks_deps *deps);
/* Adds a file the generator read besides the parse (the --embed image, user
 * templates); a file already listed is not added again. */
void ks_deps_add(ks_deps *deps, const char *path);

/* Make's spelling of a path in a rule: spaces, tabs, ':' and '#' escaped
 * with '\', '$' doubled (as gcc's -MQ and depfile prerequisites). A path
 * with a newline cannot be named in a rule: NULL, after an error. */
char *ks_make_quote(const char *path);

/* The depfile text: "TARGETS: input headers...", then an empty rule per
 * header (gcc's -MP) so a deleted header does not break make. targets are
 * written as given (already quoted). With skip_system, leaves out system
 * headers and files under any of system_dirs (gcc's -MMD). NULL, after an
 * error, when a target or a file cannot be written in make's syntax. */
char *ks_depfile_text(const ks_deps *deps, const char *const *targets, size_t ntargets,
                      int skip_system, const char *const *system_dirs, size_t nsystem_dirs);

#endif /* KSTUB_DEPFILE_H */
