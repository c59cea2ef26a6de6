/*
 * walkctx.c — the walk's context and what walk.c, kernel.c and instances.c
 * all ask of it: which file a location lies in and whether its kernels
 * count (--kernels-in), diagnostics at a cursor in the file it lies in, and
 * the specializations handled already. Below the three; it calls none.
 */
#include "walkctx.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- whose kernels ------------------------------------------------------------------------------ */

static int has_prefix_dir(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return dir[0] && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* path with "." parts and "dir/.." pairs taken out, lexically:
 * "a/../include/x.cuh" is "include/x.cuh". */
static char *tidy_path(const char *path)
{
    char *copy = ks_xstrdup(path), *save = NULL;
    char **parts = ks_xmalloc((strlen(path) / 2 + 2) * sizeof *parts);
    size_t n = 0;
    for (char *p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (strcmp(p, ".") == 0)
            continue;
        if (strcmp(p, "..") == 0 && n && strcmp(parts[n - 1], "..") != 0)
            n--;
        else
            parts[n++] = p;
    }
    ks_buf b = {0};
    if (path[0] == '/')
        ks_buf_puts(&b, "/");
    for (size_t i = 0; i < n; i++)
        ks_buf_printf(&b, "%s%s", i ? "/" : "", parts[i]);
    free(parts);
    free(copy);
    return b.len ? ks_buf_take(&b) : ks_xstrdup(path);
}

/* The class of the file a location lies in; NULL for no file (builtins). */
const file_class *ks__classify(walk_ctx *w, CXSourceLocation loc)
{
    CXFile f;
    clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
    if (!f)
        return NULL;
    for (size_t i = 0; i < w->nfiles; i++)
        if (clang_File_isEqual(f, w->files[i].file))
            return &w->files[i];
    w->files = ks_xrealloc(w->files, (w->nfiles + 1) * sizeof *w->files);
    file_class *fc = &w->files[w->nfiles++];
    memset(fc, 0, sizeof *fc);
    fc->file = f;
    char *name = ks_take(clang_getFileName(f));
    char *real = realpath(name, NULL);
    int main_file = clang_Location_isFromMainFile(loc);
    fc->project = main_file || (!clang_Location_isInSystemHeader(loc) &&
                                strcmp(name, KS_COMPAT_PATH) != 0 &&
                                !(real && w->cuda_real && has_prefix_dir(real, w->cuda_real)));
    int kernels_in = w->s.opts->kernels_in;
    if (main_file)
        fc->kernels = 1;
    else if (kernels_in == KS_KERNELS_PROJECT)
        fc->kernels = fc->project;
    else if (kernels_in == KS_KERNELS_NAMED)
        for (size_t i = 0; real && i < w->nnamed; i++)
            fc->kernels |= strcmp(real, w->named[i]) == 0;
    fc->name = tidy_path(name);
    free(real);
    free(name);
    return fc;
}

int ks__is_main(CXCursor c)
{
    return clang_Location_isFromMainFile(clang_getCursorLocation(c));
}

/* A note, warning or error at a cursor, in the file it lies in (the input
 * or a header). */
void ks__walk_diag(walk_ctx *w, CXCursor c, const char *severity, const char *fmt, ...)
{
    unsigned line, col;
    ks_cursor_location(c, &line, &col);
    const file_class *fc = ks__is_main(c) ? NULL : ks__classify(w, clang_getCursorLocation(c));
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(fc ? fc->name : w->s.opts->input, line, col, severity, fmt, ap);
    va_end(ap);
}

int ks__seen_symbol(walk_ctx *w, const char *symbol)
{
    for (size_t i = 0; i < w->nseen; i++)
        if (strcmp(w->seen[i], symbol) == 0)
            return 1;
    w->seen = ks_xrealloc(w->seen, (w->nseen + 1) * sizeof *w->seen);
    w->seen[w->nseen++] = ks_xstrdup(symbol);
    return 0;
}
