/*
 * walkctx.c — the walk's context and what walk.c, kernel.c and instances.c
 * all ask of it: which file a location lies in and whether its kernels
 * count (--kernels-in), diagnostics at a cursor in the file it lies in, and
 * the specializations handled already. Below the three; it calls none.
 */
#include "front/walkctx.h"
#include "base/util.h"
#include "front/session_files.h"
#include "front/cursor.h"

#include <ctype.h>
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

/* ---- hash indexes (files by identity, symbols seen): linear in the files and symbols --------- */

/* Grows a table of slots (1 + index, 0 free) to hold one more than n,
 * rehashing with key(i). */
static void grow_slots(size_t **slots, size_t *nslots, size_t n, size_t (*key)(const walk_ctx *, size_t),
                       const walk_ctx *w)
{
    if ((n + 1) * 2 <= *nslots)
        return;
    size_t cap = *nslots ? *nslots * 2 : 64;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    free(*slots);
    *slots = ks_xmalloc(cap * sizeof **slots);
    memset(*slots, 0, cap * sizeof **slots);
    *nslots = cap;
    for (size_t i = 0; i < n; i++) {
        size_t h = key(w, i);
        if (h == (size_t)-1)
            continue;
        for (h &= cap - 1; (*slots)[h]; h = (h + 1) & (cap - 1))
            ;
        (*slots)[h] = i + 1;
    }
}

static size_t file_key(const walk_ctx *w, size_t i)
{
    const file_class *c = &w->files[i];
    size_t h = ks_hash_bytes(&c->id, sizeof c->id);
    return c->have_id ? (h == (size_t)-1 ? 0 : h) : (size_t)-1;
}

static void index_file(walk_ctx *w, size_t i)
{
    grow_slots(&w->file_slots, &w->nfile_slots, i, file_key, w);
    size_t mask = w->nfile_slots - 1, h;
    for (h = file_key(w, i) & mask; w->file_slots[h]; h = (h + 1) & mask)
        ;
    w->file_slots[h] = i + 1;
}

static size_t seen_key(const walk_ctx *w, size_t i)
{
    size_t h = ks_hash_bytes(w->seen[i], strlen(w->seen[i]));
    return h == (size_t)-1 ? 0 : h;
}

/* Whether file f, where loc lies, is a system header by the folder it was
 * found in: read at its first byte, before any "#pragma GCC system_header"
 * or linemarker of its text (CCCL's headers all have the pragma). Only a
 * location clang calls a system header's is looked at again; its first
 * byte comes from loc where libclang confirms the arithmetic (filetop.c),
 * since a look through all the unit's files for each of a CUTLASS file's
 * 3,000 system headers cost 0.8 s of CPU; a file of a precompiled prelude
 * whose first byte cannot be found keeps loc's answer. */
static int in_system_folder(walk_ctx *w, CXFile f, CXSourceLocation loc)
{
    if (!clang_Location_isInSystemHeader(loc))
        return 0;
    CXSourceLocation top = ks_file_top_near(w->s.tu, f, loc);
    CXFile tf;
    clang_getExpansionLocation(top, &tf, NULL, NULL, NULL);
    return tf && clang_File_isEqual(tf, f) ? clang_Location_isInSystemHeader(top) : 1;
}

/* The class of the file a location lies in (where it is expanded: a kernel
 * a macro writes is the file's that invokes the macro); NULL for no file
 * (builtins). Whether a file is the input, a system header or the project's
 * is read at its first byte: a system header is one found where system
 * headers are (-isystem, the compiler's own folders), never one whose text
 * says so ("#pragma GCC system_header", a linemarker's flag 3), which nvcc
 * builds the kernels of all the same; the toolkit's folder and the compat
 * header are never the project's. */
file_class *ks__classify(walk_ctx *w, CXSourceLocation loc)
{
    CXFile f;
    clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
    if (!f)
        return NULL;
    CXFileUniqueID id;
    int have_id = clang_getFileUniqueID(f, &id) == 0;
    size_t h = 0, mask = w->nfile_slots - 1;
    if (have_id && w->nfile_slots) {
        h = ks_hash_bytes(&id, sizeof id);
        for (h = (h == (size_t)-1 ? 0 : h) & mask; w->file_slots[h]; h = (h + 1) & mask) {
            file_class *c = &w->files[w->file_slots[h] - 1];
            if (memcmp(&id, &c->id, sizeof id) == 0)
                return c;
        }
    } else if (!have_id) {
        for (size_t i = 0; i < w->nfiles; i++)
            if (!w->files[i].have_id && clang_File_isEqual(f, w->files[i].file))
                return &w->files[i];
    }
    w->files = ks_xrealloc(w->files, (w->nfiles + 1) * sizeof *w->files);
    file_class *fc = &w->files[w->nfiles++];
    memset(fc, 0, sizeof *fc);
    fc->file = f;
    if (have_id)
        fc->id = id;
    fc->have_id = have_id;
    char *name = ks_take(clang_getFileName(f));
    char *real = realpath(name, NULL);
    CXFile main = clang_getFile(w->s.tu, w->s.opts->input);
    int main_file = main && clang_File_isEqual(main, f);
    fc->main = main_file;
    fc->project = main_file || (!in_system_folder(w, f, loc) && strcmp(name, KS_COMPAT_PATH) != 0 &&
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
    if (have_id)
        index_file(w, w->nfiles - 1);
    return &w->files[w->nfiles - 1];
}

void ks__forget_files(walk_ctx *w)
{
    for (size_t i = 0; i < w->nfiles; i++)
        free(w->files[i].name);
    w->nfiles = 0;
    free(w->file_slots);
    w->file_slots = NULL;
    w->nfile_slots = 0;
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
    size_t h = ks_hash_bytes(symbol, strlen(symbol));
    h = h == (size_t)-1 ? 0 : h;
    if (w->nseen_slots)
        for (size_t i = h & (w->nseen_slots - 1); w->seen_slots[i]; i = (i + 1) & (w->nseen_slots - 1))
            if (strcmp(w->seen[w->seen_slots[i] - 1], symbol) == 0)
                return 1;
    w->seen = ks_xrealloc(w->seen, (w->nseen + 1) * sizeof *w->seen);
    w->seen[w->nseen++] = ks_xstrdup(symbol);
    grow_slots(&w->seen_slots, &w->nseen_slots, w->nseen - 1, seen_key, w);
    size_t mask = w->nseen_slots - 1, i;
    for (i = h & mask; w->seen_slots[i]; i = (i + 1) & mask)
        ;
    w->seen_slots[i] = w->nseen;
    return 0;
}

/* A device entity's own name (not its namespaces' or template arguments')
 * may hold only basic characters: nvcc refuses any other, which a UTF-8
 * byte or a \u escape in the source spells. Reports nvcc's reason, with the
 * name escaped as nvcc writes it ("k\u00e9"); returns -1 then, else 0. */
int ks__basic_name(walk_ctx *w, CXCursor c, const char *what)
{
    char *id = ks_take(clang_getCursorSpelling(c));
    int ok = 1;
    for (const char *p = id; *p && ok; p++)
        ok = !((unsigned char)*p & 0x80);
    if (!ok) {
        ks_buf b = {0};
        for (const unsigned char *p = (const unsigned char *)id; *p;) {
            unsigned cp = *p, n = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : cp >= 0xC0 ? 1 : 0;
            if (cp >= 0x80)
                cp &= 0x3Fu >> n;
            p++;
            for (; n && (*p & 0xC0) == 0x80; n--)
                cp = (cp << 6) | (*p++ & 0x3Fu);
            if (cp < 0x80)
                ks_buf_printf(&b, "%c", (char)cp);
            else
                ks_buf_printf(&b, cp > 0xFFFF ? "\\U%08x" : "\\u%04x", cp);
        }
        ks__walk_diag(w, c, "error", "%s '%s': Universal character is not allowed in device entity "
                      "name, as nvcc says; name it with basic characters only", what, b.data);
        free(b.data);
    }
    free(id);
    return ok ? 0 : -1;
}

/* One UTF-8 code point at *p (advanced past it). */
static unsigned next_code_point(const unsigned char **p, const unsigned char *end)
{
    unsigned cp = **p, n = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : cp >= 0xC0 ? 1 : 0;
    if (cp >= 0x80)
        cp &= 0x3Fu >> n;
    (*p)++;
    for (; n && *p < end && (**p & 0xC0) == 0x80; n--)
        cp = (cp << 6) | (*(*p)++ & 0x3Fu);
    return cp;
}

char *ks__nvcc_ucn_names(const char *mangled)
{
    ks_buf b = {0};
    for (const char *p = mangled; *p;) {
        if (isdigit((unsigned char)*p) && (p == mangled || !isdigit((unsigned char)p[-1]))) {
            char *q;
            unsigned long n = strtoul(p, &q, 10);
            int high = 0;
            for (size_t i = 0; n && strlen(q) >= n && i < n && !high; i++)
                high = (unsigned char)q[i] >= 0x80;
            if (high) {
                ks_buf name = {0};
                const unsigned char *u = (const unsigned char *)q, *end = u + n;
                while (u < end) {
                    unsigned cp = next_code_point(&u, end);
                    if (cp < 0x80)
                        ks_buf_printf(&name, "%c", (char)cp);
                    else
                        ks_buf_printf(&name, cp > 0xFFFF ? "_U%08x" : "_u%04x", cp);
                }
                ks_buf_printf(&b, "%zu%s", name.len, name.data);
                free(name.data);
                p = q + n;
                continue;
            }
        }
        ks_buf_put(&b, p, 1);
        p++;
    }
    return ks_buf_take(&b);
}
