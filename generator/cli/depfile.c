/*
 * depfile.c — make depfiles for the generated stubs (-MD, -MMD, -MF, -MT,
 * -MQ): the input and every file it includes, as libclang saw them, with an
 * empty rule per header (gcc's -MP) so that deleting a header does not stop
 * make with "No rule to make target".
 *
 * The list comes from clang_getInclusions on the translation unit ks_parse
 * already holds (through ks_options.tu_hook), so no second parse. The same
 * walk remembers each file as an input of the run (inputs.h), depfile or
 * not, so that no output can replace a header the parse read. A header's
 * same-time copy that libclang took for it (#pragma once by contents)
 * comes last.
 */
#include "cli/depfile.h"
#include "base/inputs.h"
#include "front/fileguard.h"
#include "front/session_files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_file(ks_deps *d, const char *path, int is_system)
{
    for (size_t i = 0; i < d->nfiles; i++)
        if (strcmp(d->files[i], path) == 0)
            return;
    d->files = ks_xrealloc(d->files, (d->nfiles + 1) * sizeof *d->files);
    d->is_system = ks_xrealloc(d->is_system, d->nfiles + 1);
    d->files[d->nfiles] = ks_xstrdup(path);
    d->is_system[d->nfiles] = (unsigned char)is_system;
    d->nfiles++;
}

void ks_deps_add(ks_deps *d, const char *path)
{
    add_file(d, path, 0);
}

typedef struct visit_ctx {
    CXTranslationUnit tu;
    ks_deps *deps;
} visit_ctx;

static void add_prelude_file(const char *path, int is_system, void *data)
{
    add_file(data, path, is_system);
    ks_inputs_note_path(path);
}

static void add_copy(const char *path, void *data)
{
    add_file(data, path, 0);
    ks_inputs_note_path(path);
}

static void visit_inclusion(CXFile file, CXSourceLocation *stack, unsigned depth,
                            CXClientData data)
{
    (void)stack;
    visit_ctx *v = data;
    CXString name = clang_getFileName(file);
    const char *path = clang_getCString(name);
    /* The main file comes first with depth 0; clang's own preamble
     * buffers have no real path, nor have kstub's in-memory headers
     * (the compat header, the -D/-U latedefs.c moves after the wrapper). */
    if (path && *path && path[0] != '<' && strncmp(path, "/__kstub__/", 11) != 0) {
        /* Only -MMD reads it: finding a file's first byte can cost a look
         * through all the unit's files (filetop.c). */
        int sys = v->deps->want_system && depth > 0 &&
                  clang_Location_isInSystemHeader(ks_file_top(v->tu, file));
        add_file(v->deps, path, sys);
        /* Remembered by the identity libclang read, whatever name an
         * output goes by (inputs.h): no output may replace it. */
        CXFileUniqueID id;
        if (clang_getFileUniqueID(file, &id) == 0 && (id.data[0] || id.data[1]))
            ks_inputs_note(path, (dev_t)id.data[0], (ino_t)id.data[1]);
        else
            ks_inputs_note_path(path);
        /* The headers inside a precompiled prelude are not inclusions of
         * this translation unit; they come right after the main file, where
         * a parse without the PCH lists them, so the depfile is the same. */
        if (depth == 0)
            ks_session_prelude_files(v->tu, add_prelude_file, v->deps);
    }
    clang_disposeString(name);
}

void ks_deps_hook(void *tu, void *data)
{
    ks_deps *d = data;
    visit_ctx v = {(CXTranslationUnit)tu, d};
    clang_getInclusions(v.tu, visit_inclusion, &v);
    /* A same-time copy of a header read before, which libclang took for
     * that one (front/fileguard_copies.c): read all the same, and another
     * file once edited. */
    ks_fileguard_each_copy(add_copy, d);
    d->collected = 1;
}

void ks_deps_free(ks_deps *d)
{
    for (size_t i = 0; i < d->nfiles; i++)
        free(d->files[i]);
    free(d->files);
    free(d->is_system);
    memset(d, 0, sizeof *d);
}

/* As gcc's mkdeps.c: a run of backslashes before a blank is doubled, the
 * blank escaped; '$' is make's own escape; '#' would start a comment. A ':'
 * is escaped the same way as a blank (GNU make reads "a\\:b" as "a:b" in
 * targets and prerequisites alike; unescaped, it ends the target list, or
 * turns the rule into a static pattern rule). A newline cannot be written in
 * a make rule at all: NULL, after an error. */
char *ks_make_quote(const char *path)
{
    if (strpbrk(path, "\n\r")) {
        ks_error_at(NULL, 0, 0, "cannot write a depfile: make cannot name a path with a "
                    "newline ('%.*s...')", (int)strcspn(path, "\n\r"), path);
        return NULL;
    }
    ks_buf b = {0};
    ks_buf_put(&b, "", 0);
    for (const char *p = path; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == ':' || *p == '#') {
            for (const char *q = p; q > path && q[-1] == '\\'; q--)
                ks_buf_puts(&b, "\\");
            ks_buf_puts(&b, "\\");
        } else if (*p == '$') {
            ks_buf_puts(&b, "$");
        }
        ks_buf_put(&b, p, 1);
    }
    return ks_buf_take(&b);
}

static int under_dir(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '/' || dir[n - 1] == '/');
}

char *ks_depfile_text(const ks_deps *d, const char *const *targets, size_t ntargets,
                      int skip_system, const char *const *system_dirs, size_t nsystem_dirs)
{
    for (size_t t = 0; t < ntargets; t++)
        if (!targets[t] || strpbrk(targets[t], "\n\r")) {
            if (targets[t])
                ks_error_at(NULL, 0, 0, "cannot write a depfile: make cannot name a target "
                            "with a newline");
            return NULL;
        }
    ks_buf b = {0};
    unsigned char *keep = ks_xmalloc(d->nfiles + 1);
    for (size_t i = 0; i < d->nfiles; i++) {
        keep[i] = 1;
        if (i > 0 && skip_system) {
            if (d->is_system[i])
                keep[i] = 0;
            for (size_t s = 0; s < nsystem_dirs; s++)
                if (under_dir(d->files[i], system_dirs[s]))
                    keep[i] = 0;
        }
    }
    for (size_t t = 0; t < ntargets; t++)
        ks_buf_printf(&b, "%s%s", t ? " " : "", targets[t]);
    ks_buf_puts(&b, ":");
    for (size_t i = 0; i < d->nfiles; i++) {
        if (!keep[i])
            continue;
        char *q = ks_make_quote(d->files[i]);
        if (!q) {
            free(keep);
            free(ks_buf_take(&b));
            return NULL;
        }
        ks_buf_printf(&b, " \\\n  %s", q);
        free(q);
    }
    ks_buf_puts(&b, "\n");
    /* gcc's -MP: the input itself gets no empty rule. */
    for (size_t i = 1; i < d->nfiles; i++) {
        if (!keep[i])
            continue;
        char *q = ks_make_quote(d->files[i]);   /* quoted once already above */
        ks_buf_printf(&b, "\n%s:\n", q);
        free(q);
    }
    free(keep);
    return ks_buf_take(&b);
}
