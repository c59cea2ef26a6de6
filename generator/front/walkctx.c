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

/* The class of the file a location lies in (where it is expanded: a kernel
 * a macro writes is the file's that invokes the macro); NULL for no file
 * (builtins). Whether a file is the input, a system header or the project's
 * is read at its first byte: a system header is one found where system
 * headers are (-isystem, the compiler's own folders), never one whose text
 * says so ("#pragma GCC system_header", a linemarker's flag 3), which nvcc
 * builds the kernels of all the same; the toolkit's folder and the compat
 * header are never the project's. */
const file_class *ks__classify(walk_ctx *w, CXSourceLocation loc)
{
    CXFile f;
    clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
    if (!f)
        return NULL;
    CXFileUniqueID id;
    int have_id = clang_getFileUniqueID(f, &id) == 0;
    for (size_t i = 0; i < w->nfiles; i++) {
        file_class *c = &w->files[i];
        if (have_id && c->have_id ? memcmp(&id, &c->id, sizeof id) == 0 : clang_File_isEqual(f, c->file))
            return c;
    }
    w->files = ks_xrealloc(w->files, (w->nfiles + 1) * sizeof *w->files);
    file_class *fc = &w->files[w->nfiles++];
    memset(fc, 0, sizeof *fc);
    fc->file = f;
    fc->id = id;
    fc->have_id = have_id;
    char *name = ks_take(clang_getFileName(f));
    char *real = realpath(name, NULL);
    CXSourceLocation top = clang_getLocationForOffset(w->s.tu, f, 0);
    int main_file = clang_Location_isFromMainFile(top);
    fc->main = main_file;
    fc->project = main_file || (!clang_Location_isInSystemHeader(top) &&
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

int ks__in_main(walk_ctx *w, CXSourceLocation loc)
{
    const file_class *fc = ks__classify(w, loc);
    return fc && fc->main;
}

int ks__is_main(walk_ctx *w, CXCursor c)
{
    return ks__in_main(w, clang_getCursorLocation(c));
}

/* A note, warning or error at a cursor, in the file it lies in (the input
 * or a header). */
void ks__walk_diag(walk_ctx *w, CXCursor c, const char *severity, const char *fmt, ...)
{
    unsigned line, col;
    ks_cursor_location(c, &line, &col);
    const file_class *fc = ks__classify(w, clang_getCursorLocation(c));
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(fc && !fc->main ? fc->name : w->s.opts->input, line, col, severity, fmt, ap);
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
