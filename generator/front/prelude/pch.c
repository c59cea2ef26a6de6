/*
 * pch.c — the precompiled prelude cache. Parsing a .cu file device-side
 * spends most of its time in the same place for every file: the CUDA
 * prelude clang includes implicitly (__clang_cuda_runtime_wrapper.h and what
 * it pulls in), kstub's compat header, and the toolkit headers files start
 * with (cuda_fp16.h, cooperative_groups.h). kstub precompiles that prelude
 * once per configuration with libclang (an empty main file parsed with the
 * same arguments as an incomplete translation unit, then
 * clang_saveTranslationUnit) and parses each file with -include-pch. A
 * file's own -I, -D and -U shape the prelude only where they can change it
 * (see "what the input's own -I, -D and -U can change" below), so the
 * files of a project whose directories each have their own share one.
 *
 * The cache follows the runtime's NVRTC cache (runtime/cache.c) and shares
 * its code (common/cache_entry.c, linked into both): the same directory
 * rule, a directory only the user can change, opened once and checked by
 * descriptor, entries of the same layout opened relative to it with
 * O_NOFOLLOW, written to a temporary file and renamed. One configuration is
 * two files:
 *
 *     KEY.prelude        "KSTUBPC1" key[32] length[8] SHA-256(payload)[32] payload
 *     KEY.SUM.pch        the PCH itself, as libclang wrote it
 *     KEY.names          "KSTUBPN1" key[32] length[8] SHA-256(names)[32] names: every name
 *                        its files could hold, and the headers they ask __has_include for
 *
 * KEY is the hex SHA-256 of everything that shapes the prelude (the
 * libclang version and library file, every parse argument but the input's
 * own -I/-D/-U: the toolkit path and version, the architecture, -std,
 * -isystem, -fgpu-rdc, the compat flags; the compat header's bytes; the
 * leading includes); a prelude that the input's own arguments can change
 * is keyed by that key and those arguments. The
 * payload names the PCH, its size and its 64-bit checksum, and lists the
 * files the prelude was built from (for depfiles: clang_getInclusions does
 * not look inside a PCH). Before use the entry is checked (magic, key,
 * length, SHA-256), then the PCH (a regular file of this user, writable by
 * nobody else, the recorded size, the recorded checksum over every byte) by
 * descriptor; libclang then reads that same descriptor through
 * /proc/self/fd, so what it loads is what was checked. libclang checks the
 * rest itself: its own version and the AST format, the target and language
 * options, the macros, and the size and time of every header inside; a PCH
 * it refuses makes the session parse without it and rebuild the entry
 * (ks_prelude_rebuild). Concurrent builders (make -j on a cold cache) take
 * an flock on KEY.lock: one builds, the others wait and use its entry.
 *
 * The cache is an optimisation: any failure to read, check, build or write
 * it means a parse without it, never an error. KSTUB_DEBUG_PCH=1 says what
 * happened on stderr. Which entry a file uses (the base, a layer, a
 * variant for its own options) is prelude_open.c's choice.
 */
#include "base/util.h"
#include "base/options.h"
#include "front/session_files.h"
#include "front/fileguard.h"
#include "front/prelude/prelude.h"
#include "front/prelude/prelude_int.h"
#include "front/compat.h"
#include "front/redecl.h"
#include "base/instscan.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_entry.h"
#include "front/prelude/cachecmd.h"
#include "sha256.h"
#include "front/prelude/prelude_seen.h"

#define KS__PRELUDE_MAGIC "KSTUBPC1"
#define KS__NAMES_MAGIC "KSTUBPN1"
#define KS__PRELUDE_MAX_META ((size_t)4 << 20)
#define KS__NAMES_MAX ((size_t)64 << 20)
#define KS__LOCK_WAIT_S 300          /* a cold PCH build takes 1-3 s, more under make -j */

/* ---- diagnostics for KSTUB_DEBUG_PCH -------------------------------------------------------- */

void ks_prelude_debug(const char *fmt, ...)
{
    const char *d = getenv("KSTUB_DEBUG_PCH");
    if (!d || strcmp(d, "1") != 0)
        return;
    /* Paths and the directory's reason come in the message: escaped as every
     * diagnostic is (ks_escape_controls), so that a newline in a cache
     * directory's name starts no line of its own. */
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    char *e = ks_escape_controls(msg);
    fprintf(stderr, "kstub: prelude cache: %s\n", e);
    free(e);
    free(msg);
}

/* ---- the checksum of a PCH's bytes ------------------------------------------------------------ */

/*
 * Four lanes of 64 bits, each word folded in with a multiply, a rotate and
 * a multiply, every step a bijection of the lane: a change to any one word
 * always changes the result. It guards against corruption (a crash, a full
 * disk, bit rot, a copied or truncated file), as the runtime's SHA-256 of
 * its entries does; what keeps others out is the directory. It runs at
 * memory speed (a 10 MiB PCH in a few ms), where SHA-256 took 0.1 s, as
 * long as the whole parse it saves time for.
 */
static uint64_t fold(uint64_t h, uint64_t w)
{
    h ^= w * 0x9e3779b97f4a7c15ull;
    h = (h << 29) | (h >> 35);
    return h * 0xbf58476d1ce4e5b9ull;
}

/* The little-endian 64-bit word at p: one load (the byte-by-byte form
 * made the checksum 3.5 times slower, 7 ms of a 12 MB prelude). */
static uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

unsigned long long ks__prelude_checksum(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                        0x082efa98ec4e6c89ull};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++)
            lane[l] = fold(lane[l], load64(p + i + 8 * l));
    unsigned char tail[32] = {0};
    memcpy(tail, p + i, n - i);
    for (int l = 0; l < 4; l++)
        lane[l] = fold(lane[l], load64(tail + 8 * l));
    uint64_t h = (uint64_t)n;
    for (int l = 0; l < 4; l++)
        h = fold(h, lane[l]);
    h ^= h >> 31;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 29;
    return h;
}

char *ks__prelude_text(char **leading, size_t n)
{
    ks_buf b = {0};
    ks_buf_puts(&b, "");
    for (size_t i = 0; i < n; i++)
        ks_buf_printf(&b, "#include <%s>\n", leading[i]);
    return ks_buf_take(&b);
}

/* ---- entries ------------------------------------------------------------------------------------- */

static void entry_name(const ks_prelude *p, char *out, size_t cap, const char *suffix)
{
    char hex[65];
    ks__sha256_hex(p->key, hex);
    snprintf(out, cap, "%s%s", hex, suffix);
}

void ks__prelude_free_files(ks_prelude *p)
{
    for (size_t i = 0; i < p->nfiles; i++)
        free(p->files[i]);
    free(p->files);
    free(p->is_system);
    p->files = NULL;
    p->is_system = NULL;
    p->nfiles = 0;
}

/* The open PCH fd checked against its recorded size and checksum: 0, or -1. */
static int check_pch(int fd, const struct stat *sb, unsigned long long size, unsigned long long sum,
                     const char **why)
{
    if (sb->st_uid != geteuid() || (sb->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        *why = "the PCH is not this user's alone";
        return -1;
    }
    if ((unsigned long long)sb->st_size != size || size < 4) {
        *why = "the PCH has the wrong size";
        return -1;
    }
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        *why = "the PCH cannot be read";
        return -1;
    }
    int ok = memcmp(m, "CPCH", 4) == 0 && ks__prelude_checksum(m, (size_t)size) == sum;
    munmap(m, (size_t)size);
    if (!ok)
        *why = "the PCH's bytes do not match their checksum";
    return ok ? 0 : -1;
}

/* The PCH name an entry's payload gives, or NULL. */
static char *payload_pch_name(const ks_prelude *p, const char *payload)
{
    char hex[65], name[256];
    ks__sha256_hex(p->key, hex);
    if (sscanf(payload, "pch %255s\n", name) != 1 || strncmp(name, hex, 64) != 0 ||
        name[64] != '.' || strchr(name, '/') || strlen(name) != 64 + 1 + 16 + 4 ||
        strcmp(name + 81, ".pch") != 0)
        return NULL;
    return ks_xstrdup(name);
}

/* The verified entry's payload (NUL-terminated), or NULL with *why. */
static char *read_meta(const ks_prelude *p, const char **why)
{
    char name[96];
    size_t n;
    entry_name(p, name, sizeof name, ".prelude");
    return ks__entry_read(p->dirfd, name, KS__PRELUDE_MAGIC, p->key, KS__PRELUDE_MAX_META, &n, why);
}

/* What the entry records of a header the prelude read, and checks before
 * use: size, modification and change times, inode. libclang checks the
 * size and time of the headers inside a PCH, but not of system headers (the
 * toolkit's, by default), and a header edited with its old time kept is
 * still a change of ctime. Stamped right after the parse; an edit in
 * between the parse and the stamp is the one it cannot see. */
static int file_stamp(const char *path, char *out, size_t cap)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    snprintf(out, cap, "%lld %lld.%09ld %lld.%09ld %llu", (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
             sb.st_mtim.tv_nsec, (long long)sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec, (unsigned long long)sb.st_ino);
    return 0;
}

/* The first of p's files its entry stamps: a layer's base stamps and
 * checks its own (looked up first, in the same run). */
static size_t first_stamped(const ks_prelude *p)
{
    return p->base ? p->base->nfiles : 0;
}

/* Every header the entry lists is as it was stamped: 0, or -1 with *why. */
static int check_stamps(const ks_prelude *p, const char *payload, const char **why)
{
    size_t checked = first_stamped(p);
    for (const char *line = strchr(payload, '\n'); line; line = strchr(line + 1, '\n')) {
        if (line[1] != 's' || line[2] != ' ')
            continue;
        char *end;
        unsigned long long idx = strtoull(line + 3, &end, 10);
        const char *nl = strchr(end, '\n');
        char want[160], now[160];
        size_t n = nl ? (size_t)(nl - end) : strlen(end);
        if (idx != checked || end[0] != ' ' || n - 1 >= sizeof want) {
            *why = "the entry's header stamps are malformed";
            return -1;
        }
        memcpy(want, end + 1, n - 1);
        want[n - 1] = '\0';
        if (file_stamp(p->files[idx], now, sizeof now) != 0 || strcmp(want, now) != 0) {
            ks_prelude_debug("'%s' changed since the prelude was built", p->files[idx]);
            *why = "a header the prelude read has changed (size, time or inode)";
            return -1;
        }
        checked++;
    }
    if (checked != p->nfiles) {
        *why = "the entry's header stamps are malformed";
        return -1;
    }
    return 0;
}

/* The entry's search line is what the search directories of args hold
 * now (ks__prelude_search_sig; the payload's "h" lines are its probes): 0,
 * or -1 with *why. */
static int check_search(const ks_prelude *p, const char *payload, const char *const *args, size_t nargs,
                        const char **why)
{
    char now[65];
    ks__prelude_search_sig(p, payload, args, nargs, now);
    const char *at = strstr(payload, "\nsearch ");
    if (!at || strncmp(at + 8, now, 64) != 0 || at[72] != '\n') {
        *why = "a search directory's headers have changed (one appeared, vanished or moved)";
        return -1;
    }
    return 0;
}

/* A hit: the entry and its PCH verified, the PCH open in p->fd. */
static int lookup(ks_prelude *p, const char *const *args, size_t nargs, const char **why)
{
    char *payload = read_meta(p, why);
    if (!payload)
        return -1;
    char *name = payload_pch_name(p, payload);
    unsigned long long size = 0, sum = 0;
    const char *s = strstr(payload, "\nsize ");
    const char *c = strstr(payload, "\nsum ");
    if (!name || !s || !c || sscanf(s, "\nsize %llu", &size) != 1 || sscanf(c, "\nsum %16llx", &sum) != 1) {
        *why = "the entry's payload is malformed";
        free(name);
        free(payload);
        return -1;
    }
    if (ks__prelude_check_base(p, payload, why) != 0) {
        free(name);
        free(payload);
        return -1;
    }
    struct stat sb;
    int fd = ks__open_regular(p->dirfd, name, 1, &sb);
    if (fd < 0 || check_pch(fd, &sb, size, sum, why) != 0) {
        if (fd < 0)
            *why = "the entry's PCH is missing or not a regular file";
        else
            close(fd);
        free(name);
        free(payload);
        return -1;
    }
    free(p->pch_name);
    p->pch_name = name;
    ks__prelude_free_files(p);
    for (char *line = strchr(payload, '\n'); line; line = strchr(line + 1, '\n'))
        if (line[1] == 'f' && line[2] == ' ' && (line[3] == '0' || line[3] == '1') && line[4] == ' ') {
            char *end = strchr(line + 5, '\n');
            if (end)
                *end = '\0';
            ks__prelude_add_file(p, line + 5, line[3] == '1');
            if (!end)
                break;
            *end = '\n';
        }
    const char *inst = strstr(payload, "\ninst ");
    if (!inst || sscanf(inst, "\ninst %ld", &p->inst_file) != 1 || p->inst_file < -2 ||
        p->inst_file >= (long)p->nfiles) {
        *why = "the entry predates the scan of its headers for explicit instantiations";
        ks__prelude_free_files(p);
        close(fd);
        free(payload);
        return -1;
    }
    if (check_stamps(p, payload, why) != 0 || check_search(p, payload, args, nargs, why) != 0) {
        ks__prelude_free_files(p);
        close(fd);
        free(payload);
        return -1;
    }
    free(payload);
    p->fd = fd;
    return 0;
}

/* ---- building ------------------------------------------------------------------------------------ */

/* A temporary name beside the key's entry (cache_entry.c's form). */
static void unique_tmp(const ks_prelude *p, char *out, size_t cap, const char *suffix)
{
    char hex[65];
    ks__sha256_hex(p->key, hex);
    ks__entry_tmp_name(hex, suffix, out, cap);
}

/* The payload's PCH name of the entry now in place, or NULL. */
static char *current_pch_name(const ks_prelude *p)
{
    const char *why;
    char *payload = read_meta(p, &why);
    char *name = payload ? payload_pch_name(p, payload) : NULL;
    free(payload);
    return name;
}

/* The first of the prelude's files whose text may write an explicit
 * instantiation, or -1 (-2: one could not be read). A macro the prelude
 * defines is out of the walk's reach (the unit's cursors list the
 * preprocessing record of its own text only, and clang records no
 * expansion of a macro whose definition it did not record), so an
 * instantiation written through one would be missed: such an entry is
 * never used (ks__prelude_acquire). Toolkit and standard headers have none
 * (CUDA 13.0's 2,765 and libstdc++ 12's); a project header that shadows
 * one (-I dir holding its own cuda_fp16.h) may. */
static long first_instantiating(const ks_prelude *p)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        size_t size = 0;
        char *text = ks_peek_file(p->files[i], &size);
        int may = !text || ks_text_may_instantiate(text, size);
        free(text);
        if (may)
            return text ? (long)i : -2;
    }
    return -1;
}

static int write_meta(ks_prelude *p, const char *pch_name, unsigned long long size, unsigned long long sum,
                      const char *const *args, size_t nargs)
{
    ks_buf b = {0};
    ks_buf_printf(&b, "pch %s\nsize %llu\nsum %016llx\n", pch_name, size, sum);
    if (p->base) {
        char *bl = ks__prelude_base_line(p);
        if (!bl) {
            free(ks_buf_take(&b));
            return -1;
        }
        ks_buf_printf(&b, "%s\n", bl);
        free(bl);
    }
    for (size_t i = 0; i < p->nfiles; i++)
        ks_buf_printf(&b, "f %d %s\n", p->is_system[i], p->files[i]);
    p->inst_file = first_instantiating(p);
    ks_buf_printf(&b, "inst %ld\n", p->inst_file);
    for (size_t i = first_stamped(p); i < p->nfiles; i++) {
        char st[160];
        if (file_stamp(p->files[i], st, sizeof st) != 0) {
            free(ks_buf_take(&b));
            return -1;           /* a header gone since the parse: no entry */
        }
        ks_buf_printf(&b, "s %zu %s\n", i, st);
    }
    /* A layer's names: its base's (verified) and its own files'; the base's
     * headers are not read again. */
    ks_buf nb = {0};
    char *prior = NULL;
    if (p->base) {
        char bn[96];
        size_t blen;
        const char *why;
        entry_name(p->base, bn, sizeof bn, ".names");
        prior = ks__entry_read(p->dirfd, bn, KS__NAMES_MAGIC, p->base->key, KS__NAMES_MAX, &blen, &why);
    }
    int nrc = ks__prelude_names_after(p, prior ? p->base->nfiles : 0, prior, &nb);
    free(prior);
    if (nrc != 0) {
        free(ks_buf_take(&nb));
        free(ks_buf_take(&b));
        return -1;               /* a header gone since the parse: no entry */
    }
    /* The probes ("h" lines) and what the search directories hold of
     * them and of the files, checked on every hit (check_search). */
    for (const char *h = strstr(nb.data ? nb.data : "", "\nh "); h; h = strstr(h + 1, "\nh ")) {
        const char *end = strchr(h + 1, '\n');
        ks_buf_put(&b, h + 1, end ? (size_t)(end - h) : strlen(h + 1));
        if (!end)
            ks_buf_puts(&b, "\n");
    }
    char sig[65];
    ks__prelude_search_sig(p, nb.data ? nb.data : "", args, nargs, sig);
    ks_buf_printf(&b, "search %s\n", sig);
    /* The names apart from the payload: a hit reads them only when the
     * input has -I/-D/-U of its own. Written first: an entry in place has
     * its names (or an older entry's of the same key, which agree). */
    char names_file[96];
    entry_name(p, names_file, sizeof names_file, ".names");
    size_t nlen = nb.len;
    char *names = ks_buf_take(&nb);
    nrc = ks__entry_write(p->dirfd, names_file, KS__NAMES_MAGIC, p->key, names, nlen);
    free(names);
    if (nrc != 0) {
        free(ks_buf_take(&b));
        return -1;
    }
    size_t len = b.len;
    char *payload = ks_buf_take(&b);
    char name[96];
    entry_name(p, name, sizeof name, ".prelude");
    char *old = current_pch_name(p);
    int rc = ks__entry_write(p->dirfd, name, KS__PRELUDE_MAGIC, p->key, payload, len);
    free(payload);
    if (rc != 0) {
        free(old);
        return -1;
    }
    /* The PCH the replaced entry named, unless it is this one: a process
     * still reading it keeps it open. */
    if (old && strcmp(old, pch_name) != 0)
        unlinkat(p->dirfd, old, 0);
    free(old);
    return 0;
}

/* Parses the prelude and writes the entry; p->fd the new PCH. 0, or -1. */
static int build(ks_prelude *p, const char *const *args, size_t nargs, const char *text, const char **why)
{
    size_t clen;
    const char *compat = ks_compat_header(&clen);
    struct CXUnsavedFile unsaved[2] = {{KS_COMPAT_PATH, compat, (unsigned long)clen},
                                       {KS_PRELUDE_PATH, text, (unsigned long)strlen(text)}};
    /* Only the unit's own declarations listed (a layer's not the base's,
     * each read from the PCH to be listed): prelude_files.c visits them. */
    CXIndex index = clang_createIndex(1, 0);
    CXTranslationUnit tu = NULL;
    /* The templates the prelude's headers use are instantiated when it is
     * built (clang's -fpch-instantiate-templates, a benign language option)
     * rather than at the end of every file that loads it: loading the
     * CUDA prelude then costs 0.05 s of CPU instead of 0.17 s. It moves
     * those instantiations' point to the end of the prelude, a point of
     * instantiation the standard allows as well as the end of the file
     * ([temp.point]: where the two differ, the program is ill-formed, no
     * diagnostic required); an instantiation that fails there is an error
     * in the prelude, so the file is parsed without it, as before. */
    const char **bargs = ks_xmalloc((nargs + 4) * sizeof *bargs);
    memcpy(bargs, args, nargs * sizeof *bargs);
    size_t nb = nargs;
    bargs[nb++] = "-Xclang";
    bargs[nb++] = "-fpch-instantiate-templates";
    char *base_arg = NULL;
    if (p->base) {                          /* a layer: chained on the base's PCH */
        base_arg = ks_xasprintf("/proc/self/fd/%d/%s", KS__PRELUDE_BASE_DIR_FD, p->base->pch_name);
        bargs[nb++] = "-include-pch";
        bargs[nb++] = base_arg;
    }
    unsigned parse_before = ks_fileguard_parse_begin(p->base ? p->base->files : NULL, p->base ? p->base->nfiles : 0);
    enum CXErrorCode ec = clang_parseTranslationUnit2(index, KS_PRELUDE_PATH, bargs, (int)nb, unsaved, 2,
                                                      CXTranslationUnit_Incomplete |
                                                          CXTranslationUnit_ForSerialization,
                                                      &tu);
    int rc = -1;
    char tmp[128] = "", path[PATH_MAX];
    if (ec != CXError_Success || !tu) {
        *why = "libclang could not parse the prelude";
        goto out;
    }
    for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        int err = clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error && !ks_redecl_nvcc_merges(tu, d);
        clang_disposeDiagnostic(d);
        if (err) {
            *why = "the prelude has errors (the file's own parse reports them)";
            goto out;
        }
    }
    if (ks_fileguard_ncopies() != 0) {
        /* Its stamps would not cover the copy it skipped: the file's own
         * parse reads both (fileguard_copies.c). */
        *why = "a header is a same-time copy of another one read before (#pragma once by contents)";
        goto out;
    }
    ks__prelude_free_files(p);
    if (p->base)                            /* the base's files first, as a parse without it lists them */
        for (size_t i = 0; i < p->base->nfiles; i++)
            ks__prelude_add_file(p, p->base->files[i], p->base->is_system[i]);
    if (ks__prelude_collect_files(p, tu) != 0) {
        *why = "a header's path holds a newline";
        goto out;
    }
    /* Saved through the directory's descriptor, never its path again. */
    unique_tmp(p, tmp, sizeof tmp, ".pch.tmp");
    snprintf(path, sizeof path, "/proc/self/fd/%d/%s", p->dirfd, tmp);
    if (clang_saveTranslationUnit(tu, path, clang_defaultSaveOptions(tu)) != CXSaveError_None) {
        *why = "libclang could not save the PCH";
        goto out;
    }
    struct stat sb;
    int fd = ks__open_regular(p->dirfd, tmp, 1, &sb);
    if (fd < 0) {
        *why = "the saved PCH cannot be opened";
        goto out;
    }
    void *m = sb.st_size >= 4 ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (m == MAP_FAILED || memcmp(m, "CPCH", 4) != 0) {
        if (m != MAP_FAILED)
            munmap(m, (size_t)sb.st_size);
        close(fd);
        *why = "the saved PCH is not a PCH";
        goto out;
    }
    unsigned long long size = (unsigned long long)sb.st_size, sum = ks__prelude_checksum(m, (size_t)size);
    munmap(m, (size_t)size);
    fchmod(fd, 0600);
    char final[128], hex[65];
    ks__sha256_hex(p->key, hex);
    snprintf(final, sizeof final, "%s.%016llx.pch", hex, sum);
    if (renameat(p->dirfd, tmp, p->dirfd, final) != 0) {
        close(fd);
        *why = "the PCH cannot be renamed into place";
        goto out;
    }
    tmp[0] = '\0';
    if (write_meta(p, final, size, sum, args, nargs) != 0) {
        unlinkat(p->dirfd, final, 0);
        close(fd);
        *why = "the entry cannot be written";
        goto out;
    }
    p->fd = fd;
    p->built = 1;
    free(p->pch_name);
    p->pch_name = ks_xstrdup(final);
    rc = 0;
out:
    if (tmp[0])
        unlinkat(p->dirfd, tmp, 0);
    if (tu)
        clang_disposeTranslationUnit(tu);
    ks_fileguard_parse_resume(parse_before);
    clang_disposeIndex(index);
    free(bargs);
    free(base_arg);
    if (rc != 0)
        ks__prelude_free_files(p);
    return rc;
}

/* An exclusive flock on KEY.lock, waited for; the fd or -1. */
static int lock_key(const ks_prelude *p)
{
    char name[96];
    entry_name(p, name, sizeof name, ".lock");
    int fd = openat(p->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid()) {
        close(fd);
        return -1;
    }
    for (int waited_ms = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; waited_ms += 20) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || waited_ms >= KS__LOCK_WAIT_S * 1000) {
            close(fd);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return fd;
}

/* Whether an entry can be written here: a file created, 64 KiB written and
 * removed. A directory of mode 0500, a read-only file system or a full disk
 * fails it; then the 1-3 s build would be thrown away (issue 19 #9). 0, or
 * the errno. A disk with room for the probe and not for the PCH is the
 * case it cannot see: the build's write then fails as before. */
static int write_probe(const ks_prelude *p)
{
    char tmp[128], hex[65];
    ks__sha256_hex(p->key, hex);
    int fd = ks__entry_tmp_open(p->dirfd, hex, ".probe.tmp", tmp, sizeof tmp);
    if (fd < 0)
        return errno ? errno : EACCES;
    static const char block[64 * 1024];
    int err = ks__write_all(fd, block, sizeof block) == 0 ? 0 : errno ? errno : ENOSPC;
    if (close(fd) != 0 && err == 0)
        err = errno;
    unlinkat(p->dirfd, tmp, 0);
    return err;
}

/* write_probe, with a warning the first time it fails in a run (one kstub
 * may parse more than once): 1 when an entry can be built. */
static int writable(const ks_prelude *p)
{
    int err = write_probe(p);
    if (err == 0)
        return 1;
    static int warned;
    if (!warned++) {
        char link[64], dir[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", p->dirfd);
        ssize_t n = readlink(link, dir, sizeof dir - 1);
        dir[n > 0 ? (size_t)n : 0] = '\0';
        ks_warning_at(NULL, 0, 0, "the prelude cache directory '%s' cannot be written (%s): parsing without "
                      "the precompiled prelude, which is slower (--cache-dir names another directory, "
                      "--no-cache stops trying)", n > 0 ? dir : "?", strerror(err));
    }
    ks_prelude_debug("not built: the directory cannot be written: %s", strerror(err));
    return 0;
}

/* One line when a prelude is about to be built (seconds, once per set of
 * options; a run that finds it in the cache says nothing), and only to a
 * terminal, as git shows progress: a log or a test compares a run's
 * messages byte for byte with those of --no-cache. */
/* The one line on a terminal: what, why, and roughly how long, going by
 * the last build this cache saw (none yet: a first guess). */
static void say_building(int dirfd)
{
    static int said;
    if (said++ || !isatty(STDERR_FILENO))
        return;
    unsigned long long hits, misses, ms;
    ks_cache_counts(dirfd, &hits, &misses, &ms);
    if (ms)
        fprintf(stderr, "kstub: precompiling the CUDA headers for these options, once (about %.1f s, as "
                "the last time); later runs with them reuse it from the cache\n", (double)ms / 1000.0);
    else
        fputs("kstub: precompiling the CUDA headers for these options, once (a few seconds); later runs "
              "with them reuse it from the cache\n", stderr);
}

static unsigned long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000u + (unsigned long long)t.tv_nsec / 1000000u;
}

void ks__prelude_drop_base(ks_prelude *p)
{
    if (!p->base)
        return;
    p->base->dirfd = -1;
    ks_prelude_close(p->base);
    free(p->base);
    p->base = NULL;
}

char *ks__prelude_read_names(const ks_prelude *p, const char **why)
{
    char nf[96];
    size_t nlen;
    entry_name(p, nf, sizeof nf, ".names");
    return ks__entry_read(p->dirfd, nf, KS__NAMES_MAGIC, p->key, KS__NAMES_MAX, &nlen, why);
}

/* An entry with a header that may write an explicit instantiation is kept
 * (the next run finds it and does not build it again) but not used: the
 * file is parsed without a prelude, as --no-cache parses it. -1 then. */
static int usable(ks_prelude *p)
{
    if (p->inst_file == -1)
        return 0;
    ks_prelude_debug("not used: %s may write an explicit instantiation, whose macros the walk would not see",
                     p->inst_file >= 0 ? p->files[p->inst_file] : "a header that could not be read");
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
    return -1;
}

/* The entry of p->key, verified and open in p->fd: looked up, or built
 * with args (waiting for a concurrent builder of the same key). 0, or -1. */
int ks__prelude_acquire(ks_prelude *p, const char *const *args, size_t nargs, const char *text)
{
    char hex[65];
    ks__sha256_hex(p->key, hex);
    const char *why = NULL;
    if (lookup(p, args, nargs, &why) == 0) {
        ks_prelude_debug("hit %.16s (%zu leading include%s)", hex, p->nleading, p->nleading == 1 ? "" : "s");
        char used[96];                              /* LRU: this entry was used now */
        entry_name(p, used, sizeof used, ".prelude");
        ks_cache_touch(p->dirfd, used);
        ks_cache_count(p->dirfd, 1, p->base != NULL, 0);
        return usable(p);
    }
    ks_prelude_debug("miss %.16s: %s", hex, why);
    if (!writable(p))
        return -1;
    int lock = lock_key(p);
    /* Another builder may have finished while this one waited. */
    if (lock >= 0 && lookup(p, args, nargs, &why) == 0) {
        ks_prelude_debug("hit %.16s after waiting for its builder", hex);
        close(lock);
        ks_cache_count(p->dirfd, 1, p->base != NULL, 0);
        return usable(p);
    }
    if (!p->base)                               /* a layer takes a fraction of a second */
        say_building(p->dirfd);
    unsigned long long start = now_ms();
    int rc = build(p, args, nargs, text, &why);
    unsigned long long took = now_ms() - start;
    if (lock >= 0)
        close(lock);
    if (rc != 0) {
        ks_prelude_debug("not built: %s", why);
        return -1;
    }
    if (p->base)
        ks_prelude_debug("built %.16s, a layer on the base prelude", hex);
    else
        ks_prelude_debug("built %.16s", hex);
    /* The time "about X s" quotes is a whole prelude's, never a layer's. */
    ks_cache_count(p->dirfd, 0, p->base != NULL, p->base ? 0 : took ? took : 1);
    unsigned long long freed, cap;                  /* stay under the cap */
    size_t evicted = ks_cache_trim(p->dirfd, hex, &freed, &cap);
    if (evicted)
        ks_prelude_debug("evicted %zu least recently used entr%s (%llu bytes) to stay under %llu",
                         evicted, evicted == 1 ? "y" : "ies", freed, cap);
    return usable(p);
}

void ks_prelude_rebuild(ks_prelude *p, const ks_options *opts)
{
    (void)opts;
    if (p->dirfd < 0 || !p->bargs)
        return;
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
    free(p->pch_arg);
    p->pch_arg = NULL;
    if (!writable(p))
        return;
    int lock = lock_key(p);
    char name[96];
    char *pch = current_pch_name(p);
    entry_name(p, name, sizeof name, ".prelude");
    unlinkat(p->dirfd, name, 0);
    if (pch)
        unlinkat(p->dirfd, pch, 0);
    free(pch);
    char *text = ks__prelude_text(p->leading, p->nleading);
    const char *why = NULL;
    say_building(p->dirfd);
    int rc = build(p, p->bargs, p->nbargs, text, &why);
    free(text);
    if (lock >= 0)
        close(lock);
    if (rc == 0)
        ks_prelude_debug("rebuilt an entry libclang refused");
    else
        ks_prelude_debug("removed an entry libclang refused; not rebuilt: %s", why);
}

void ks_prelude_close(ks_prelude *p)
{
    ks__prelude_drop_base(p);
    free(p->pch_name);
    if (p->fd >= 0)
        close(p->fd);
    if (p->dirfd >= 0)
        close(p->dirfd);
    free(p->pch_arg);
    free(p->bargs);
    ks__prelude_free_files(p);
    ks_prelude_names_free(p->leading, p->nleading);
    memset(p, 0, sizeof *p);
    p->fd = p->dirfd = -1;
}
