/*
 * image_params.c — each kernel entry's parameter layout as an nvcc image
 * states it, and its check against the input's (contract 1 at generation:
 * an image built from an older signature, `k(long long, int)` where the
 * source now says `k(int, int)`, is refused before anything is written,
 * not found only by the driver's load-time check on a GPU):
 *
 *   PTX     the ".entry NAME(...)" list: each ".param" with an optional
 *           ".align A" before its type, the type's width and "[N]" extents;
 *           offsets follow, each rounded up to the parameter's alignment
 *   cubin   the ".nv.info.NAME" section of each kernel: records of u8 format,
 *           u8 attribute, u16 value (format 4: the u16 is the size of the
 *           bytes that follow); EIATTR_KPARAM_INFO (0x17) holds u32 index,
 *           u16 ordinal, u16 offset, u32 whose bits 18..31 are the size in
 *           bytes; EIATTR_PARAM_CBANK_SIZE (0x19) the buffer's size, which
 *           says that a kernel without KPARAM_INFO takes no parameters
 *           (read from cubins nvcc 13 made; see tests/generator/emit). Only
 *           the count and the sizes are compared: the offsets are places in
 *           the constant bank, not in the launch's parameter buffer (a
 *           128-byte-aligned CUtensorMap after a pointer is at 32 in an sm_80
 *           cubin, at 112 in an sm_90 one, at 128 in the PTX and the ABI)
 *
 * A layout that cannot be read is left unknown (n = -1): nothing is claimed.
 */
#include "image/image.h"
#include "base/util.h"
#include "symbol.h"       /* the runtime's matching of internal-linkage symbols */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_PARAM_CBANK_SIZE 0x19
#define EIFMT_SVAL 4

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void param_add(ks_image_params *ps, long size, long offset)
{
    ps->size = ks_xrealloc(ps->size, (size_t)(ps->n + 1) * sizeof *ps->size);
    ps->offset = ks_xrealloc(ps->offset, (size_t)(ps->n + 1) * sizeof *ps->offset);
    ps->size[ps->n] = size;
    ps->offset[ps->n] = offset;
    ps->n++;
}

static void params_unknown(ks_image_params *ps)
{
    free(ps->size);
    free(ps->offset);
    ps->size = ps->offset = NULL;
    ps->n = -1;
    ps->offsets_known = 0;
}

/* ---- PTX ------------------------------------------------------------------------------------------ */

static int ident(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '%' || c == '.';
}

static int space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static long width_of(const unsigned char *t, size_t len)
{
    static const struct { const char *name; long width; } types[] = {
        {".b8", 1}, {".u8", 1}, {".s8", 1}, {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2},
        {".bf16", 2}, {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".f16x2", 4},
        {".bf16x2", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b128", 16},
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strlen(types[k].name) == len && memcmp(types[k].name, t, len) == 0)
            return types[k].width;
    return 0;
}

static long number(const unsigned char *p, size_t n, size_t *i)
{
    long v = 0;
    int any = 0;
    while (*i < n && space(p[*i]))
        (*i)++;
    while (*i < n && p[*i] >= '0' && p[*i] <= '9' && v < 1L << 40) {
        v = v * 10 + (p[*i] - '0');
        (*i)++;
        any = 1;
    }
    return any ? v : -1;
}

/* One ".param ..." from p[i] (after ".param"), up to ',' or ')'. Returns
 * where it stopped, or n when it cannot be read (*size -1). */
static size_t ptx_param(const unsigned char *p, size_t n, size_t i, long *size, long *align)
{
    long width = 0, extent = 1, al = 0;
    *size = -1;
    for (;;) {
        while (i < n && space(p[i]))
            i++;
        if (i >= n)
            return n;
        if (p[i] == ',' || p[i] == ')')
            break;
        if (p[i] == '[') {
            i++;
            long e = number(p, n, &i);
            while (i < n && space(p[i]))
                i++;
            if (e < 0 || i >= n || p[i] != ']' || (e > 0 && extent > (1L << 40) / e))
                return n;
            extent *= e;
            i++;
            continue;
        }
        size_t start = i++;   /* ".word" or a name: PTX names hold no '.' */
        while (i < n && ident(p[i]) && p[i] != '.')
            i++;
        if (i == start)
            return n;
        size_t len = i - start;
        if (len == 6 && memcmp(p + start, ".align", 6) == 0) {
            long a = number(p, n, &i);
            if (a <= 0)
                return n;
            if (!width)
                al = a;   /* after the type (".ptr .global .align 1"): the pointee's */
        } else if (!width && width_of(p + start, len)) {
            width = width_of(p + start, len);
        }
        /* .ptr, state spaces and the name need nothing */
    }
    if (!width)
        return n;
    *size = width * extent;
    *align = al ? al : width;
    return i;
}

void ks__ptx_params(const unsigned char *p, size_t n, size_t i, ks_image_params *ps)
{
    params_unknown(ps);
    while (i < n && space(p[i]))
        i++;
    if (i >= n || p[i] != '(')
        return;
    i++;
    ps->n = 0;
    ps->offsets_known = 1;
    long offset = 0;
    for (;;) {
        while (i < n && space(p[i]))
            i++;
        if (i < n && p[i] == ')')
            return;
        if (n - i < 6 || memcmp(p + i, ".param", 6) != 0) {
            params_unknown(ps);
            return;
        }
        long size, align;
        i = ptx_param(p, n, i + 6, &size, &align);
        if (i >= n || size < 0 || size > 1L << 40 || align > 1L << 20 || offset > 1L << 40) {
            params_unknown(ps);
            return;
        }
        offset = (offset + align - 1) / align * align;
        param_add(ps, size, offset);
        offset += size;
        if (p[i] == ',')
            i++;
    }
}

/* ---- cubin ---------------------------------------------------------------------------------------- */

/* One .nv.info.NAME section's records into the entry's layout. */
static void nv_info(const unsigned char *s, uint64_t size, ks_image_params *ps)
{
    long count = 0, cbank = -1;
    long *sizes = NULL, *offsets = NULL;
    uint64_t at = 0;
    int bad = 0;
    while (at + 4 <= size && !bad) {
        unsigned fmt = s[at], attr = s[at + 1];
        uint16_t v = rd16(s + at + 2);
        const unsigned char *val = s + at + 4;
        at += 4;
        if (fmt == EIFMT_SVAL) {
            if (v > size - at) {
                bad = 1;
                break;
            }
            at += v;
        }
        if (attr == EIATTR_PARAM_CBANK_SIZE && fmt != EIFMT_SVAL)
            cbank = v;
        if (attr != EIATTR_KPARAM_INFO || fmt != EIFMT_SVAL || v < 12)
            continue;
        long ordinal = rd16(val + 4), off = rd16(val + 6), sz = (long)(rd32(val + 8) >> 18);
        if (ordinal >= 4096) {
            bad = 1;
            break;
        }
        if (ordinal >= count) {
            sizes = ks_xrealloc(sizes, (size_t)(ordinal + 1) * sizeof *sizes);
            offsets = ks_xrealloc(offsets, (size_t)(ordinal + 1) * sizeof *offsets);
            for (long k = count; k <= ordinal; k++)
                sizes[k] = -1;
            count = ordinal + 1;
        }
        sizes[ordinal] = sz;
        offsets[ordinal] = off;
    }
    for (long k = 0; k < count && !bad; k++)
        bad = sizes[k] < 0;
    params_unknown(ps);
    if (!bad && (count > 0 || cbank == 0)) {
        ps->n = 0;
        for (long k = 0; k < count; k++)
            param_add(ps, sizes[k], offsets[k]);
    }
    free(sizes);
    free(offsets);
}

/* The member's entries in name order (indices), so that 50,000 kernels
 * are found by bsearch, not by a scan each. */
static const ks_image_member *sorting;

static int by_name(const void *a, const void *b)
{
    return strcmp(sorting->entries[*(const size_t *)a], sorting->entries[*(const size_t *)b]);
}

static size_t *entries_sorted(const ks_image_member *m)
{
    size_t *idx = ks_xmalloc((m->nentries ? m->nentries : 1) * sizeof *idx);
    for (size_t k = 0; k < m->nentries; k++)
        idx[k] = k;
    sorting = m;
    qsort(idx, m->nentries, sizeof *idx, by_name);
    return idx;
}

/* The entry named exactly name, or m->nentries. */
static size_t entry_named(const ks_image_member *m, const size_t *idx, const char *name)
{
    size_t lo = 0, hi = m->nentries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, m->entries[idx[mid]]);
        if (c == 0)
            return idx[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return m->nentries;
}

void ks__elf_params(const unsigned char *p, size_t n, ks_image_member *m)
{
    if (n < 64)
        return;
    uint64_t shoff = rd64(p + 0x28);
    uint16_t shentsize = rd16(p + 0x3A), shnum = rd16(p + 0x3C), shstrndx = rd16(p + 0x3E);
    if (shentsize < 64 || shoff > n || (uint64_t)shnum * shentsize > n - shoff || shstrndx >= shnum)
        return;
    const unsigned char *strsh = p + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t stroff = rd64(strsh + 0x18), strsize = rd64(strsh + 0x20);
    if (stroff > n || strsize > n - stroff)
        return;
    const char *names = (const char *)p + stroff;
    size_t *idx = entries_sorted(m);
    for (uint16_t s = 0; s < shnum; s++) {
        const unsigned char *sh = p + shoff + (uint64_t)s * shentsize;
        uint32_t name = rd32(sh);
        uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
        if (name >= strsize || off > n || size > n - off)
            continue;
        size_t len = strnlen(names + name, (size_t)(strsize - name));
        if (len >= strsize - name || len <= 9 || memcmp(names + name, ".nv.info.", 9) != 0)
            continue;
        size_t k = entry_named(m, idx, names + name + 9);   /* NUL-ended: len < strsize - name */
        if (k < m->nentries)
            nv_info(p + off, size, &m->params[k]);
    }
    free(idx);
}

/* ---- the check ------------------------------------------------------------------------------------ */

static long params_end(const ks_kern *k)
{
    long end = 0;
    for (size_t j = 0; j < k->nparams; j++)
        if (k->params[j].offset + k->params[j].size > end)
            end = k->params[j].offset + k->params[j].size;
    return end;
}

/* The first difference between k's parameters and the image's, as text
 * (malloc'd), or NULL when they agree. */
static char *differs(const ks_kern *k, const ks_image_params *ps)
{
    if (ps->n != (long)k->nparams) {
        long end = ps->n > 0 ? ps->offset[ps->n - 1] + ps->size[ps->n - 1] : 0;
        char bytes[48] = "";
        if (ps->offsets_known)
            snprintf(bytes, sizeof bytes, " (%ld bytes)", end);
        return ks_xasprintf("kernel '%s' takes %zu parameter%s (%ld bytes) in the source but "
                            "%ld%s in", k->name, k->nparams, k->nparams == 1 ? "" : "s",
                            params_end(k), ps->n, bytes);
    }
    for (size_t j = 0; j < k->nparams; j++) {
        const ks_param *q = &k->params[j];
        if (q->size == ps->size[j] && (!ps->offsets_known || q->offset == ps->offset[j]))
            continue;
        char *who = q->name ? ks_xasprintf("'%s'", q->name) : ks_xasprintf("#%zu", j + 1);
        char *s = ps->offsets_known
                  ? ks_xasprintf("kernel '%s' parameter %s is %ld bytes at offset %ld in the "
                                 "source but %ld bytes at offset %ld in", k->name, who, q->size,
                                 q->offset, ps->size[j], ps->offset[j])
                  : ks_xasprintf("kernel '%s' parameter %s is %ld bytes in the source but %ld "
                                 "bytes in", k->name, who, q->size, ps->size[j]);
        free(who);
        return s;
    }
    return NULL;
}

int ks__image_check_params(const char *image_path, const ks_image_entries *e, const ks_options *opts,
                           const ks_model *m, ks_buf *stale)
{
    int rc = 0;
    size_t **idx = ks_xmalloc((e->nmembers ? e->nmembers : 1) * sizeof *idx);
    for (size_t j = 0; j < e->nmembers; j++)
        idx[j] = entries_sorted(&e->members[j]);
    for (size_t i = 0; i < m->nkernels; i++) {
        const ks_kern *k = &m->kernels[i];
        int pattern = ks__symbol_is_pattern(k->symbol);
        for (size_t j = 0; j < e->nmembers; j++) {
            const ks_image_member *mb = &e->members[j];
            size_t hit = mb->readable && !pattern ? entry_named(mb, idx[j], k->symbol) : mb->nentries;
            for (size_t x = 0; mb->readable && pattern && x < mb->nentries && hit == mb->nentries; x++)
                if (ks__symbol_match(k->symbol, mb->entries[x], 0))
                    hit = x;
            if (hit == mb->nentries || mb->params[hit].n < 0)
                continue;
            char *d = differs(k, &mb->params[hit]);
            if (!d)
                continue;
            if (stale) {
                ks_buf_printf(stale, "%s%s %s", stale->len ? "; " : "", d, mb->what);
            } else {
                ks_error_at(opts->input, k->line, k->col, "%s %s of '%s': the image was built "
                            "from another version of the kernel (or another file); rebuild it",
                            d, mb->what, image_path);
                rc = -1;
            }
            free(d);
            break;   /* one report a kernel */
        }
    }
    for (size_t j = 0; j < e->nmembers; j++)
        free(idx[j]);
    free(idx);
    return rc;
}
