/*
 * image_entries.c — which kernels and variables an nvcc image defines,
 * and whether they are the input's. `--embed IMAGE` puts the image's bytes
 * in the stubs; an image built from another file (or an old build of this
 * one) would only fail at run time, at the first launch or accessor call,
 * with "named symbol not found" (or a size the accessors refuse). So before
 * writing anything, each kernel's and each typed variable's device symbol
 * is looked up among the image's, and a variable's size compared:
 *
 *   PTX     the names after each ".entry" directive; each module-scope
 *           ".global"/".const" declaration (".extern": declared only), its
 *           size the type's width times its array extents
 *   cubin   ELF64 function symbols that the CUDA ELF marks as entries
 *           (st_other bit 0x10; device functions lack it); object symbols
 *           (STT_OBJECT, or type 13 in a relocatable -rdc cubin), their
 *           st_size, undefined ones declared only
 *   fatbin  its PTX and cubin members, each as above
 *
 * The fatbin container, as nvcc 13 writes it (read from files it made, see
 * tests/generator/cli/check_cli.c): a 16-byte header (magic 0xBA55ED50, u16 version, u16
 * header size, u64 size of what follows), then members, each a header (u16
 * kind: 1 PTX, 2 ELF; u16 version; u32 header size; u64 payload size; at
 * 16 u32 compressed size; at 28 u32 architecture; at 40 u32 flags; at 56
 * u64 uncompressed size) and its payload. Flag 0x2000 marks an LZ4 block
 * (nvcc -compress-mode=speed), 0x8000 a zstd frame (the default for PTX,
 * and for everything with -compress-mode=size). LZ4 blocks are decoded
 * here; zstd through libzstd when the system has it (dlopen). A member
 * that cannot be read is reported as such: nothing is claimed about it.
 */
#include "image/image.h"
#include "base/util.h"
#include "image_kind.h"   /* the runtime's sniffing of image bytes */
#include "symbol.h"       /* the runtime's matching of internal-linkage symbols */

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#define FATBIN_LZ4 0x2000u
#define FATBIN_ZSTD 0x8000u
#define STO_CUDA_ENTRY 0x10    /* st_other of a kernel's symbol in a cubin */
#define STT_OBJECT 1
#define STT_CUDA_OBJECT 13     /* a variable's symbol type in an -rdc (relocatable) cubin */
#define STB_GLOBAL 1

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

static ks_image_member *add_member(ks_image_entries *e, char *what)
{
    e->members = ks_xrealloc(e->members, (e->nmembers + 1) * sizeof *e->members);
    ks_image_member *m = &e->members[e->nmembers++];
    memset(m, 0, sizeof *m);
    m->what = what;
    m->readable = 1;
    return m;
}

static void unreadable(ks_image_member *m, char *why)
{
    m->readable = 0;
    m->why = why;
}

/* Unreadable because the bytes are wrong, not because kstub lacks a way to
 * read them: the driver would fail on them too, at run time. */
static void corrupt(ks_image_member *m, char *why)
{
    unreadable(m, why);
    m->corrupt = 1;
}

static void add_entry(ks_image_member *m, const char *name, size_t len)
{
    m->entries = ks_xrealloc(m->entries, (m->nentries + 1) * sizeof *m->entries);
    m->params = ks_xrealloc(m->params, (m->nentries + 1) * sizeof *m->params);
    m->params[m->nentries] = (ks_image_params){-1, NULL, NULL, 0};
    char *s = ks_xmalloc(len + 1);
    memcpy(s, name, len);
    s[len] = '\0';
    m->entries[m->nentries++] = s;
}

static void add_var(ks_image_member *m, const char *name, size_t len, long long size, int defined)
{
    m->vars = ks_xrealloc(m->vars, (m->nvars + 1) * sizeof *m->vars);
    ks_image_var *v = &m->vars[m->nvars++];
    v->name = ks_xmalloc(len + 1);
    memcpy(v->name, name, len);
    v->name[len] = '\0';
    v->size = size;
    v->defined = defined;
}

/* ---- PTX ------------------------------------------------------------------------------------------ */

static int ptx_ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c == '%';
}

static int ptx_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The directive ".WORD" at p[i] (not inside a longer name: "ld.global" is
 * an instruction's suffix); its length, or 0. */
static size_t ptx_directive(const unsigned char *p, size_t n, size_t i, const char *word)
{
    size_t len = strlen(word);
    if (n - i <= len || memcmp(p + i, word, len) != 0 || (i > 0 && ptx_ident_char(p[i - 1])) ||
        ptx_ident_char(p[i + len]))
        return 0;
    return len;
}

/* The width in bytes of a PTX fundamental type (".u32", ".f16x2", ".b128"),
 * or 0 for another word. */
static long ptx_type_width(const unsigned char *t, size_t len)
{
    static const struct {
        const char *name;
        long width;
    } types[] = {
        {".b8", 1}, {".u8", 1}, {".s8", 1}, {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2},
        {".bf16", 2}, {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".f16x2", 4},
        {".bf16x2", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b128", 16},
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strlen(types[k].name) == len && memcmp(types[k].name, t, len) == 0)
            return types[k].width;
    return 0;
}

/* A variable declaration after its state space (".global" or ".const"),
 * from p[i]: ".align N", ".attribute(...)", ".v2"/".v4", the type, the name
 * and each "[N]" ("[]": the size is the initializer's, not read here). Adds
 * it to m; returns where it stopped (the initializer, if any, is left to the
 * caller's scan). */
static size_t ptx_variable(const unsigned char *p, size_t n, size_t i, int defined, ks_image_member *m)
{
    long long width = 0, vec = 1;
    int known = 1;
    for (;;) {
        while (i < n && ptx_space(p[i]))
            i++;
        if (i >= n || p[i] != '.')
            break;
        size_t start = i++;
        while (i < n && ptx_ident_char(p[i]))
            i++;
        size_t len = i - start;
        if (len == 6 && memcmp(p + start, ".align", 6) == 0) {
            while (i < n && (ptx_space(p[i]) || (p[i] >= '0' && p[i] <= '9')))
                i++;
        } else if (len == 10 && memcmp(p + start, ".attribute", 10) == 0) {
            while (i < n && p[i] != ')' && p[i] != ';' && p[i] != '\n')
                i++;
            if (i < n && p[i] == ')')
                i++;
        } else if (len == 3 && p[start + 1] == 'v' && (p[start + 2] == '2' || p[start + 2] == '4' ||
                                                       p[start + 2] == '8')) {
            vec = p[start + 2] - '0';
        } else if (ptx_type_width(p + start, len)) {
            width = ptx_type_width(p + start, len);
        } else {
            known = 0;   /* .texref, .samplerref, ... : opaque, no size to compare */
        }
    }
    size_t start = i;
    while (i < n && ptx_ident_char(p[i]))
        i++;
    if (i == start || (p[start] >= '0' && p[start] <= '9'))
        return i;
    size_t name_end = i;
    long long size = width && known ? width * vec : -1;
    for (;;) {
        while (i < n && ptx_space(p[i]))
            i++;
        if (i >= n || p[i] != '[')
            break;
        i++;
        long long extent = 0;
        int digits = 0;
        while (i < n && p[i] >= '0' && p[i] <= '9' && extent < (1LL << 40)) {
            extent = extent * 10 + (p[i++] - '0');
            digits++;
        }
        while (i < n && ptx_space(p[i]))
            i++;
        if (i >= n || p[i] != ']' || !digits || size < 0 || extent > (1LL << 40) / (size ? size : 1))
            size = -1;   /* "[]", or no number: the image does not say here */
        else
            size *= extent;
        while (i < n && p[i] != ']' && p[i] != ';' && p[i] != '\n')
            i++;
        if (i < n && p[i] == ']')
            i++;
    }
    add_var(m, (const char *)p + start, name_end - start, size, defined);
    return i;
}

/* Every ".entry NAME" and every module-scope (outside braces and
 * parentheses) ".global"/".const" variable, outside comments; text need not
 * end with a NUL. A variable after ".extern" is declared, not defined. */
static void ptx_entries(const unsigned char *p, size_t n, ks_image_member *m)
{
    size_t i = 0;
    long braces = 0, parens = 0;
    int external = 0;   /* the last directive was .extern (.visible/.weak between allowed) */
    while (i < n && p[i] != '\0') {
        size_t len;
        if (p[i] == '/' && i + 1 < n && p[i + 1] == '/') {
            while (i < n && p[i] != '\n')
                i++;
        } else if (p[i] == '/' && i + 1 < n && p[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(p[i] == '*' && p[i + 1] == '/'))
                i++;
            i += 2;
        } else if (p[i] == '"') {
            for (i++; i < n && p[i] != '"' && p[i] != '\n'; i++)
                ;
            i++;
        } else if (p[i] == '.' && n - i > 6 && memcmp(p + i, ".entry", 6) == 0 &&
                   (i == 0 || !ptx_ident_char(p[i - 1])) && ptx_space(p[i + 6])) {
            i += 6;
            while (i < n && ptx_space(p[i]))
                i++;
            size_t start = i;
            while (i < n && ptx_ident_char(p[i]))
                i++;
            if (i > start) {
                add_entry(m, (const char *)p + start, i - start);
                ks__ptx_params(p, n, i, &m->params[m->nentries - 1]);
            }
            external = 0;
        } else if (p[i] == '.' && braces == 0 && parens == 0 &&
                   ((len = ptx_directive(p, n, i, ".global")) || (len = ptx_directive(p, n, i, ".const")))) {
            i = ptx_variable(p, n, i + len, !external, m);
            external = 0;
        } else if (p[i] == '.' && (len = ptx_directive(p, n, i, ".extern"))) {
            external = 1;
            i += len;
        } else if (p[i] == '.' && ((len = ptx_directive(p, n, i, ".visible")) ||
                                   (len = ptx_directive(p, n, i, ".weak")))) {
            i += len;
        } else {
            if (p[i] == '{')
                braces++;
            else if (p[i] == '}' && braces > 0)
                braces--;
            else if (p[i] == '(')
                parens++;
            else if (p[i] == ')' && parens > 0)
                parens--;
            if (!ptx_space(p[i]))
                external = 0;
            i++;
        }
    }
}

/* ---- cubin (ELF64, little-endian) ------------------------------------------------------------------ */

static char *elf_read(const unsigned char *p, size_t n, ks_image_member *m);

/* Reads the entries into m, or marks m unreadable (a 32-bit or big-endian
 * ELF, which nvcc does not make) or corrupt (not an ELF file, or a table
 * that lies beyond the end). */
static void elf_entries(const unsigned char *p, size_t n, ks_image_member *m)
{
    char *why = elf_read(p, n, m);
    if (!why)
        ks__elf_params(p, n, m);
    if (why && (n < 64 || ks__image_kind(p, n) != KS__BYTES_CUBIN || (p[4] == 2 && p[5] == 1)))
        corrupt(m, why);
    else if (why)
        unreadable(m, why);
}

/* Returns NULL, or why the entries could not be read (malloc'd). */
static char *elf_read(const unsigned char *p, size_t n, ks_image_member *m)
{
    if (n < 64 || ks__image_kind(p, n) != KS__BYTES_CUBIN)
        return ks_xstrdup("not an ELF file");
    if (p[4] != 2 || p[5] != 1)
        return ks_xstrdup("not a 64-bit little-endian ELF file");
    uint64_t shoff = rd64(p + 0x28);
    uint16_t shentsize = rd16(p + 0x3A), shnum = rd16(p + 0x3C);
    if (shentsize < 64 || shoff > n || (uint64_t)shnum * shentsize > n - shoff)
        return ks_xstrdup("its section headers lie beyond its end (truncated?)");
    for (uint16_t s = 0; s < shnum; s++) {
        const unsigned char *sh = p + shoff + (uint64_t)s * shentsize;
        if (rd32(sh + 4) != 2)   /* SHT_SYMTAB */
            continue;
        uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20), entsize = rd64(sh + 0x38);
        uint32_t link = rd32(sh + 0x28);
        if (entsize < 24 || off > n || size > n - off || link >= shnum)
            return ks_xstrdup("its symbol table lies beyond its end (truncated?)");
        const unsigned char *st = p + shoff + (uint64_t)link * shentsize;
        uint64_t stroff = rd64(st + 0x18), strsize = rd64(st + 0x20);
        if (stroff > n || strsize > n - stroff)
            return ks_xstrdup("its string table lies beyond its end (truncated?)");
        const char *strtab = (const char *)p + stroff;
        for (uint64_t k = 0; k + entsize <= size; k += entsize) {
            const unsigned char *sym = p + off + k;
            uint32_t name = rd32(sym);
            unsigned char info = sym[4], other = sym[5];
            unsigned type = info & 0xF, bind = info >> 4;
            int entry = type == 2 && (other & STO_CUDA_ENTRY);   /* STT_FUNC, a kernel */
            int object = type == STT_OBJECT || type == STT_CUDA_OBJECT;
            if ((!entry && !object) || name >= strsize)
                continue;
            size_t len = strnlen(strtab + name, (size_t)(strsize - name));
            if (len == 0 || len >= strsize - name)
                continue;
            int defined = rd16(sym + 6) != 0;   /* st_shndx: SHN_UNDEF is 0 */
            if (entry)
                add_entry(m, strtab + name, len);
            else if (strtab[name] != '.' && (defined || bind == STB_GLOBAL))
                add_var(m, strtab + name, len, (long long)(rd64(sym + 16) & 0xFFFFFFFFFFFFull), defined);
            /* (a weak undefined one is the linker's: .nv.reservedSmem..., __UDT...) */
        }
    }
    return NULL;
}

/* ---- decompression -------------------------------------------------------------------------------- */

/* An LZ4 block (no frame) into exactly out_size bytes; -1 if malformed. */
static int lz4_block(const unsigned char *in, size_t n, unsigned char *out, size_t out_size)
{
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned token = in[i++];
        size_t lit = token >> 4;
        if (lit == 15) {
            unsigned char b;
            do {
                if (i >= n)
                    return -1;
                b = in[i++];
                lit += b;
            } while (b == 255);
        }
        if (lit > n - i || lit > out_size - o)
            return -1;
        memcpy(out + o, in + i, lit);
        i += lit;
        o += lit;
        if (i == n)
            break;   /* the last sequence has literals only */
        if (n - i < 2)
            return -1;
        size_t dist = (size_t)in[i] | (size_t)in[i + 1] << 8;
        i += 2;
        size_t len = token & 15;
        if (len == 15) {
            unsigned char b;
            do {
                if (i >= n)
                    return -1;
                b = in[i++];
                len += b;
            } while (b == 255);
        }
        len += 4;
        if (dist == 0 || dist > o || len > out_size - o)
            return -1;
        for (size_t k = 0; k < len; k++, o++)   /* overlapping copies repeat bytes */
            out[o] = out[o - dist];
    }
    return o == out_size ? 0 : -1;
}

typedef size_t (*zstd_decompress_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_is_error_fn)(size_t);

/* zstd from the system's libzstd, loaded once when a member needs it;
 * returns NULL, or why not (malloc'd), with *bad_data 0 when the reason is
 * kstub's (no libzstd), 1 when it is the data's. */
static char *zstd_frame(const unsigned char *in, size_t n, unsigned char *out, size_t out_size,
                        int *bad_data)
{
    *bad_data = 0;
    static void *lib;
    static zstd_decompress_fn decompress;
    static zstd_is_error_fn is_error;
    if (!lib) {
        lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            return ks_xstrdup("it is compressed with zstd and libzstd.so.1 cannot be loaded");
        void *d = dlsym(lib, "ZSTD_decompress"), *e = dlsym(lib, "ZSTD_isError");
        memcpy(&decompress, &d, sizeof d);   /* object to function pointer, -Wpedantic-clean */
        memcpy(&is_error, &e, sizeof e);
    }
    if (!decompress || !is_error)
        return ks_xstrdup("it is compressed with zstd and libzstd.so.1 lacks ZSTD_decompress");
    size_t got = decompress(out, out_size, in, n);
    *bad_data = 1;
    if (is_error(got) || got != out_size)
        return ks_xstrdup("its zstd data does not decompress to the size its header gives");
    return NULL;
}

/* ---- fatbin --------------------------------------------------------------------------------------- */

static void fatbin_member(const unsigned char *h, uint32_t hsize, const unsigned char *payload,
                          uint64_t psize, unsigned index, ks_image_entries *e)
{
    uint16_t kind = rd16(h);
    if (kind != FATBIN_KIND_PTX && kind != FATBIN_KIND_ELF)
        return;   /* another kind of code (LTO IR, ...): no entries to read */
    uint32_t arch = hsize >= 32 ? rd32(h + 28) : 0;
    uint32_t flags = hsize >= 44 ? rd32(h + 40) : 0;
    ks_image_member *m = add_member(
        e, ks_xasprintf("member %u (%s_%u %s)", index, kind == FATBIN_KIND_PTX ? "compute" : "sm",
                        (unsigned)arch, kind == FATBIN_KIND_PTX ? "PTX" : "cubin"));
    const unsigned char *code = payload;
    size_t code_size = (size_t)psize;
    unsigned char *inflated = NULL;
    if (flags & (FATBIN_LZ4 | FATBIN_ZSTD)) {
        uint32_t csize = rd32(h + 16);
        uint64_t usize = hsize >= 64 ? rd64(h + 56) : 0;
        if (hsize >= 64 && (csize == 0 || csize > psize || usize == 0)) {
            corrupt(m, ks_xasprintf("its header gives a compressed size of %u bytes in a "
                                    "payload of %llu, and %llu bytes uncompressed", (unsigned)csize,
                                    (unsigned long long)psize, (unsigned long long)usize));
            return;
        }
        if (hsize < 64 || usize > (64u << 20)) {
            unreadable(m, ks_xstrdup("it is compressed and its header does not give the sizes"));
            return;
        }
        inflated = ks_xmalloc((size_t)usize);
        char *why = NULL;
        int bad_data = 1;
        if (flags & FATBIN_ZSTD)
            why = zstd_frame(payload, csize, inflated, (size_t)usize, &bad_data);
        else if (lz4_block(payload, csize, inflated, (size_t)usize) != 0)
            why = ks_xstrdup("its LZ4 data is malformed");
        if (why) {
            if (bad_data)
                corrupt(m, why);
            else
                unreadable(m, why);
            free(inflated);
            return;
        }
        code = inflated;
        code_size = (size_t)usize;
    }
    if (kind == FATBIN_KIND_PTX)
        ptx_entries(code, code_size, m);
    else
        elf_entries(code, code_size, m);
    free(inflated);
}

/* Every fatbin in the bytes (nvlink can put several back to back). */
static void fatbin_entries(const unsigned char *p, size_t n, ks_image_entries *e)
{
    size_t off = 0;
    unsigned index = 0;
    if (n < 16) {
        ks_image_member *m = add_member(e, ks_xstrdup("the fatbin"));
        corrupt(m, ks_xasprintf("it has %zu bytes, fewer than its 16-byte header", n));
        return;
    }
    while (n - off >= 16 && ks__image_kind(p + off, n - off) == KS__BYTES_FATBIN) {
        uint16_t hsize = rd16(p + off + 6);
        uint64_t body = rd64(p + off + 8);
        if (hsize < 16 || hsize > n - off || body > n - off - hsize) {
            ks_image_member *m = add_member(e, ks_xasprintf("the fatbin at byte %zu", off));
            corrupt(m, ks_xasprintf("its header gives %llu bytes after a %u-byte header, and the "
                                    "file has %zu (cut short, or not a fatbin?)",
                                    (unsigned long long)body, (unsigned)hsize, n - off));
            return;
        }
        size_t q = off + hsize, end = off + hsize + (size_t)body;
        while (end - q >= 16) {
            uint32_t mh = rd32(p + q + 4);
            uint64_t psize = rd64(p + q + 8);
            if (mh < 16 || mh > end - q || psize > end - q - mh) {
                ks_image_member *m = add_member(e, ks_xasprintf("member %u", index + 1));
                corrupt(m, ks_xasprintf("its header gives a size beyond the end of the fatbin "
                                        "(member at byte %zu)", q));
                return;
            }
            fatbin_member(p + q, mh, p + q + mh, psize, ++index, e);
            q += mh + (size_t)psize;
        }
        if (q != end) {
            ks_image_member *m = add_member(e, ks_xasprintf("the fatbin at byte %zu", off));
            corrupt(m, ks_xasprintf("%zu bytes at its end are no member", end - q));
            return;
        }
        off = end;
        /* fatbins are 8-byte aligned when concatenated */
        while (off < n && off % 8 != 0 && p[off] == 0)
            off++;
    }
}

void ks_image_entries_read(const unsigned char *data, size_t size, ks_image_entries *out)
{
    memset(out, 0, sizeof *out);
    /* The runtime's sniffing (image_kind.h), so both tell images apart alike. */
    ks__bytes_kind kind = ks__image_kind(data, size);
    if (kind == KS__BYTES_FATBIN) {
        fatbin_entries(data, size, out);
    } else if (kind == KS__BYTES_CUBIN) {
        elf_entries(data, size, add_member(out, ks_xstrdup("cubin")));
    } else {
        ptx_entries(data, size, add_member(out, ks_xstrdup("PTX")));
    }
}

void ks_image_entries_free(ks_image_entries *e)
{
    for (size_t i = 0; i < e->nmembers; i++) {
        ks_image_member *m = &e->members[i];
        for (size_t k = 0; k < m->nentries; k++) {
            free(m->entries[k]);
            free(m->params[k].size);
            free(m->params[k].offset);
        }
        free(m->entries);
        free(m->params);
        for (size_t k = 0; k < m->nvars; k++)
            free(m->vars[k].name);
        free(m->vars);
        free(m->what);
        free(m->why);
    }
    free(e->members);
    memset(e, 0, sizeof *e);
}

/* ---- the check --------------------------------------------------------------------------------------- */

/* How many of \p m's entries \p symbol names (a pattern for a kernel with
 * internal linkage may match more than one: common/symbol.h); the first in *first. */
static size_t member_has(const ks_image_member *m, const char *symbol, const char **first)
{
    size_t n = 0;
    for (size_t k = 0; k < m->nentries; k++)
        if (ks__symbol_match(symbol, m->entries[k], 0)) {
            if (n++ == 0)
                *first = m->entries[k];
            else
                first[1] = m->entries[k];
        }
    return n;
}

/* The name of \p m's entry or variable k (vars: variables). */
static const char *listed(const ks_image_member *m, int vars, size_t k)
{
    return vars ? m->vars[k].name : m->entries[k];
}

static size_t nlisted(const ks_image_member *m, int vars)
{
    return vars ? m->nvars : m->nentries;
}

/* "a, b, c" (each name once, at most 8, then "and N more"): the kernels, or
 * with \p vars the variables defined (nvcc's own, "$str", left out). */
static char *entry_list(const ks_image_entries *e, int vars)
{
    ks_buf b = {0};
    size_t shown = 0, total = 0;
    for (size_t i = 0; i < e->nmembers; i++)
        for (size_t k = 0; k < nlisted(&e->members[i], vars); k++) {
            const char *name = listed(&e->members[i], vars, k);
            if (vars && (!e->members[i].vars[k].defined || name[0] == '$'))
                continue;
            int seen = 0;
            for (size_t j = 0; j <= i && !seen; j++)
                for (size_t l = 0; l < (j == i ? k : nlisted(&e->members[j], vars)) && !seen; l++)
                    seen = strcmp(listed(&e->members[j], vars, l), name) == 0;
            if (seen)
                continue;
            total++;
            if (shown < 8) {
                ks_buf_printf(&b, "%s'%s'", shown ? ", " : "", name);
                shown++;
            }
        }
    if (total == 0)
        ks_buf_puts(&b, vars ? "no variables" : "no kernels");
    else if (total > shown)
        ks_buf_printf(&b, " and %zu more", total - shown);
    return ks_buf_take(&b);
}

/* What an image says of one variable across its readable members. */
typedef struct var_seen {
    size_t defined;            /* members that define it */
    size_t declared;           /* members that only declare it (extern) */
    const ks_image_var *sized; /* a definition whose size differs from the type's */
    const char *sized_in;      /* ... in this member */
    const char *prefixed;      /* an -rdc name for it ("__nv_static_..._NAME") */
    ks_buf missing;            /* the members that do not define it */
} var_seen;

static void var_look(const ks_image_entries *e, const ks_var *v, var_seen *out)
{
    memset(out, 0, sizeof *out);
    char *rdc = ks_xasprintf("{static:0_}%s", v->symbol);
    for (size_t j = 0; j < e->nmembers; j++) {
        const ks_image_member *m = &e->members[j];
        if (!m->readable)
            continue;
        int defined = 0, declared = 0;
        for (size_t k = 0; k < m->nvars; k++) {
            const ks_image_var *iv = &m->vars[k];
            if (strcmp(iv->name, v->symbol) != 0) {
                /* any file's prefix: the name the image has is what matters */
                if (!out->prefixed && iv->defined && ks__symbol_match(rdc, iv->name, 1) &&
                    strcmp(iv->name, v->symbol) != 0)
                    out->prefixed = iv->name;
                continue;
            }
            if (!iv->defined) {
                declared = 1;
                continue;
            }
            defined = 1;
            if (iv->size >= 0 && iv->size != v->size && !out->sized) {
                out->sized = iv;
                out->sized_in = m->what;
            }
        }
        if (defined)
            out->defined++;
        else if (declared)
            out->declared++;
        if (!defined)
            ks_buf_printf(&out->missing, "%s%s", out->missing.len ? ", " : "", m->what);
    }
    free(rdc);
}

/* Checks each variable kstub gives accessors against the image (see
 * ks_image_check); missing or mis-sized ones into *absent (kstub check).
 * Returns 0, or -1 after errors. */
static int check_variables(const char *image_path, const ks_image_entries *e, size_t unread,
                           const ks_options *opts, const ks_model *m, ks_buf *absent, size_t *nabsent,
                           int stale)
{
    int rc = 0;
    char *list = NULL;
    for (size_t i = 0; i < m->nvars; i++) {
        const ks_var *v = &m->vars[i];
        const char *file = v->file ? v->file : opts->input;
        var_seen s;
        var_look(e, v, &s);
        if (s.sized && stale) {
            ks_buf_printf(absent, "%svariable '%s' (%lld bytes in the image, %ld in the source)",
                          (*nabsent)++ ? ", " : "", v->name, s.sized->size, v->size);
        } else if (s.sized) {
            ks_error_at(file, v->line, v->col, "variable '%s' (symbol '%s') has %lld bytes in %s "
                        "of the image '%s', but its type %s has %ld: was the image built before "
                        "the variable's type changed, or from another file? Rebuild the image",
                        v->name, v->symbol, s.sized->size, s.sized_in, image_path, v->spelled,
                        v->size);
            rc = -1;
        } else if (s.defined == 0 && unread > 0) {
            ks_warning_at(file, v->line, v->col, "variable '%s' (symbol '%s') is in none of the "
                          "members of '%s' that kstub can read", v->name, v->symbol, image_path);
        } else if (s.defined == 0 && stale) {
            ks_buf_printf(absent, "%svariable '%s' (symbol '%s')", (*nabsent)++ ? ", " : "",
                          v->name, v->symbol);
        } else if (s.defined == 0 && s.prefixed) {
            ks_error_at(file, v->line, v->col, "variable '%s' is in the image '%s' only as '%s': "
                        "the image was built with -rdc=true, which gives a variable of internal "
                        "linkage (static, or const and not extern) a prefix that differs per "
                        "compilation, so no accessor can know its symbol; build the image "
                        "without -rdc=true, give the variable external linkage (%s), or leave it "
                        "out: pass --rdc as the image was built, or write '// kstub:skip %s'",
                        v->name, image_path, s.prefixed,
                        v->is_const ? "declare it 'extern const'" : "drop 'static'", v->name);
            rc = -1;
        } else if (s.defined == 0 && s.declared) {
            ks_error_at(file, v->line, v->col, "variable '%s' (symbol '%s') is only declared "
                        "(extern) in the image '%s', not defined: the image was built from a "
                        "file that uses the variable (-rdc), not from this one, which defines "
                        "it; embed an image built from this file, or leave the variable out with "
                        "'// kstub:skip %s'", v->name, v->symbol, image_path, v->name);
            rc = -1;
        } else if (s.defined == 0) {
            if (!list)
                list = entry_list(e, 1);
            ks_error_at(file, v->line, v->col, "variable '%s' (symbol '%s') is not in the image "
                        "'%s', which defines %s: %sthe image was built from another file, or "
                        "before the variable was added; rebuild the image from this file, or leave "
                        "the variable out with '// kstub:skip %s'", v->name, v->symbol, image_path,
                        list, v->is_const ? "it is const, and a compiler may fold a const variable "
                        "into its uses and leave no symbol; or " : "", v->name);
            rc = -1;
        } else if (s.missing.len) {
            ks_warning_at(file, v->line, v->col, "variable '%s' (symbol '%s') is not in %s of "
                          "'%s': its accessors fail where the driver picks that code",
                          v->name, v->symbol, s.missing.data, image_path);
        }
        free(ks_buf_take(&s.missing));
    }
    free(list);
    return rc;
}

int ks_image_check(const char *image_path, const ks_image_blob *image,
                           const ks_options *opts, const ks_model *m, char **stale)
{
    ks_buf absent = {0};
    size_t nabsent = 0;
    ks_image_entries e;
    size_t size = image->size;
    if (strcmp(image->kind, "PTX") == 0 && size > 0)
        size--;   /* the NUL ks_image_read added */
    ks_image_entries_read(image->data, size, &e);
    size_t readable = 0, unread = 0, broken = 0;
    for (size_t i = 0; i < e.nmembers; i++)
        if (e.members[i].corrupt) {
            ks_error_at(image_path, 0, 0, "corrupt image: %s: %s; not embedded",
                        e.members[i].what, e.members[i].why);
            broken++;
        }
    if (broken) {
        ks_image_entries_free(&e);
        return -1;
    }
    for (size_t i = 0; i < e.nmembers; i++) {
        if (e.members[i].readable) {
            readable++;
        } else {
            unread++;
            ks_warning_at(image_path, 0, 0, "cannot read the kernel and variable names in %s: %s; "
                          "the input's kernels and variables are not checked against it",
                          e.members[i].what, e.members[i].why);
        }
    }
    if (readable == 0) {
        if (unread == 0)
            ks_warning_at(image_path, 0, 0, "holds no PTX or cubin whose kernel and variable names "
                          "kstub can read; the input's kernels and variables are not checked against it");
        ks_image_entries_free(&e);
        return 0;
    }
    int rc = 0;
    char *list = NULL;
    for (size_t i = 0; i < m->nkernels; i++) {
        const ks_kern *k = &m->kernels[i];
        ks_buf missing = {0};
        size_t found = 0;
        for (size_t j = 0; j < e.nmembers; j++) {
            if (!e.members[j].readable)
                continue;
            const char *hits[2] = {NULL, NULL};
            size_t n = member_has(&e.members[j], k->symbol, hits);
            if (n > 1) {
                ks_error_at(opts->input, k->line, k->col, "kernel '%s' (symbol '%s') matches both '%s' "
                            "and '%s' in %s of '%s' (internal linkage, matched without the part that "
                            "differs per compilation): build the image from files of different names",
                            k->name, k->symbol, hits[0], hits[1], e.members[j].what, image_path);
                rc = -1;
            }
            if (n > 0)
                found++;
            else
                ks_buf_printf(&missing, "%s%s", missing.len ? ", " : "", e.members[j].what);
        }
        if (found == 0 && unread > 0) {
            ks_warning_at(opts->input, k->line, k->col, "kernel '%s' (symbol '%s') is in none of "
                          "the members of '%s' that kstub can read", k->name, k->symbol, image_path);
        } else if (found == 0 && stale) {
            ks_buf_printf(&absent, "%s'%s' (symbol '%s')", nabsent++ ? ", " : "", k->name, k->symbol);
        } else if (found == 0) {
            if (!list)
                list = entry_list(&e, 0);
            ks_error_at(opts->input, k->line, k->col, "kernel '%s' (symbol '%s') is not in the "
                        "image '%s', which defines %s; was the image built from another file, "
                        "or before the kernel changed?", k->name, k->symbol, image_path, list);
            rc = -1;
        } else if (missing.len) {
            ks_warning_at(opts->input, k->line, k->col, "kernel '%s' (symbol '%s') is not in "
                          "%s of '%s': launching it where the driver picks that code fails",
                          k->name, k->symbol, missing.data, image_path);
        }
        free(ks_buf_take(&missing));
    }
    free(list);
    ks_buf pdiff = {0};
    if (ks__image_check_params(image_path, &e, opts, m, stale ? &pdiff : NULL) != 0)
        rc = -1;
    ks_buf vabsent = {0};
    size_t nvabsent = 0;
    if (check_variables(image_path, &e, unread, opts, m, &vabsent, &nvabsent, stale != NULL) != 0)
        rc = -1;
    ks_image_entries_free(&e);
    if (nabsent && nvabsent)
        *stale = ks_xasprintf("the image does not define kernel%s %s, nor, as the source "
                              "does, %s: it was built before the source changed (or from another file); rebuild it "
                              "before regenerating", nabsent == 1 ? "" : "s", absent.data,
                              vabsent.data);
    else if (nabsent)
        *stale = ks_xasprintf("the image does not define kernel%s %s: it was built before the "
                              "kernel%s changed (or from another file); rebuild it before "
                              "regenerating", nabsent == 1 ? "" : "s", absent.data,
                              nabsent == 1 ? "" : "s");
    else if (nvabsent)
        *stale = ks_xasprintf("the image does not define, as the source does, %s: it was "
                              "built before the source changed (or from another file); rebuild "
                              "it before regenerating", vabsent.data);
    if (pdiff.len) {
        char *prev = *stale;
        *stale = ks_xasprintf("%s%sthe image's parameters differ from the source's: %s: it was "
                              "built before the kernel changed; rebuild it before regenerating",
                              prev ? prev : "", prev ? "; " : "", pdiff.data);
        free(prev);
    }
    free(ks_buf_take(&pdiff));
    free(ks_buf_take(&absent));
    free(ks_buf_take(&vabsent));
    return rc;
}
