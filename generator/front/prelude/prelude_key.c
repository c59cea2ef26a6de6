/*
 * prelude_key.c — what shapes a precompiled prelude (pch.c keeps the
 * cache): its key, which of an input's own -I, -D and -U can change it, and
 * which of its leading includes it may hold. Reads files and the
 * environment; builds, loads and writes nothing.
 */
#include "base/util.h"
#include "front/prelude/prelude.h"
#include "front/prelude/prelude_int.h"
#include "front/compat.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

/* 3: keyed without the input's own -I/-D/-U that cannot change it;
 * 4: the headers' template instantiations done when it is built */
/* 5: the entry records its search directories' headers (search line) */
#define KS__PRELUDE_FORMAT "kstub prelude 5"

/* ---- the key ------------------------------------------------------------------------------------- */

/* The library file libclang was loaded from, with its size, time and
 * inode: a rebuilt libclang with the same version string is another key. */
static char *libclang_identity(void)
{
    Dl_info info;
    union { CXString (*fn)(void); void *p; } sym = {clang_getClangVersion};
    if (!dladdr(sym.p, &info) || !info.dli_fname)
        return ks_xstrdup("?");
    char *real = realpath(info.dli_fname, NULL);
    struct stat sb;
    char *id = real && stat(real, &sb) == 0
        ? ks_xasprintf("%s %lld %lld.%09ld %llu", real, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       sb.st_mtim.tv_nsec, (unsigned long long)sb.st_ino)
        : ks_xstrdup(info.dli_fname);
    free(real);
    return id;
}


/* The environment variables that add include directories to clang's
 * search (its driver reads them, as gcc's does): a prelude built with
 * CPATH=shadow finds shadow/cuda_fp16.h, one without finds the toolkit's. */
static const char *const path_env[] = {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
                                       "OBJCPLUS_INCLUDE_PATH"};

/* Options whose value is a path, joined ("-Iinc", "--cuda-path=x") or the
 * next argument ("-I inc"); longest first where one is a prefix of another. */
static const char *const path_opts[] = {
    "-iwithprefixbefore", "-iframeworkwithsysroot", "-isystem-after", "-iwithprefix", "-iframework",
    "-ivfsoverlay", "-idirafter", "-isysroot", "-isystem", "-iprefix", "-include-pch", "-include", "-imacros",
    "-iquote", "-cxx-isystem", "-resource-dir", "--include-directory", "--cuda-path", "--sysroot",
    "--gcc-toolchain", "--gcc-install-dir", "--ptxas-path", "-I", "-B", "-F",
};

/* Whether some path in the arguments or the environment is relative, so
 * resolves against the working directory (an empty element of CPATH is the
 * working directory too): then the directory is part of the key, and
 * "-Iinc" run from two directories is two preludes. */
static int resolves_against_cwd(const char *const *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        const char *a = args[i];
        for (size_t j = 0; j < sizeof path_opts / sizeof *path_opts; j++) {
            size_t n = strlen(path_opts[j]);
            if (strncmp(a, path_opts[j], n) != 0)
                continue;
            const char *v = a[n] == '=' ? a + n + 1 : a[n] ? a + n : i + 1 < nargs ? args[i + 1] : "/";
            if (v[0] != '/')
                return 1;
            break;
        }
    }
    for (size_t i = 0; i < sizeof path_env / sizeof *path_env; i++) {
        const char *v = getenv(path_env[i]);
        for (const char *e = v; e != NULL; e = strchr(e, ':') ? strchr(e, ':') + 1 : NULL)
            if (e[0] != '/')
                return 1;
    }
    return 0;
}

void ks__prelude_key(ks_prelude *p, const char *const *args, size_t nargs, const char *text)
{
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    ks__sha256_field(&c, "format", KS__PRELUDE_FORMAT, strlen(KS__PRELUDE_FORMAT));
    CXString version = clang_getClangVersion();
    const char *vs = clang_getCString(version);
    ks__sha256_field(&c, "libclang", vs ? vs : "", vs ? strlen(vs) : 0);
    clang_disposeString(version);
    char *lib = libclang_identity();
    ks__sha256_field(&c, "library", lib, strlen(lib));
    free(lib);
    for (size_t i = 0; i < nargs; i++)
        ks__sha256_field(&c, "arg", args[i], strlen(args[i]));
    size_t clen;
    const char *compat = ks_compat_header(&clen);
    ks__sha256_field(&c, "compat", compat, clen);
    ks__sha256_field(&c, "prelude", text, strlen(text));
    for (size_t i = 0; i < sizeof path_env / sizeof *path_env; i++) {
        const char *v = getenv(path_env[i]);
        ks__sha256_field(&c, path_env[i], v ? "set" : "unset", v ? 3 : 5);
        if (v)
            ks__sha256_field(&c, "value", v, strlen(v));
    }
    if (resolves_against_cwd(args, nargs)) {
        char *cwd = getcwd(NULL, 0);
        ks__sha256_field(&c, "cwd", cwd ? cwd : "?", cwd ? strlen(cwd) : 1);
        free(cwd);
    }
    ks__sha256_final(&c, p->key);
}

/* ---- what the input's own -I, -D and -U can change ------------------------------------------- */

/*
 * The prelude is the same for every file of a project unless a file's own
 * options reach into the headers it holds. A prelude is first built (key
 * K0) from the arguments less the input's -I, -D and -U; its entry records
 * every name that could be an identifier in the files it read, and every
 * header name a __has_include asked for. An input's -D or -U of a name none
 * of those files holds cannot change one token of it (the preprocessor
 * sees the same text and every #if evaluates the same); an -I directory in
 * which no file the prelude opened, and no header a __has_include asked
 * for, can be found under any trailing part of its path cannot change
 * which file an #include or __has_include finds. Those arguments are left
 * out of the prelude; libclang takes -D/-U the PCH lacks as definitions
 * after it and does not compare -I directories. The arguments that can
 * change it make a second entry keyed by K0 and them, built with them.
 *
 * The names are collected as every maximal run of identifier characters
 * (letters, digits, '_', '$', bytes of UTF-8) of each file's bytes, after
 * line splices are removed, in comments and strings as well: a superset of
 * the identifiers the preprocessor lexes (a run that starts with digits is
 * recorded also from its first non-digit), so a name absent from the set
 * is absent from the text. It decides no token boundary and reads no
 * directive: clang's preprocessor is the only one (DESIGN.md, contract 12).
 */

static int ident_byte(unsigned char c)
{
    return c == '_' || c == '$' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
}

typedef struct name_set {
    char **slot;               /* open addressing; NULL is empty */
    size_t cap, n;
} name_set;

static void name_add(name_set *ns, const char *s, size_t n)
{
    if ((ns->n + 1) * 2 > ns->cap) {
        name_set big = {ks_xmalloc((ns->cap ? ns->cap * 2 : 4096) * sizeof(char *)), ns->cap ? ns->cap * 2 : 4096, 0};
        memset(big.slot, 0, big.cap * sizeof(char *));
        for (size_t i = 0; i < ns->cap; i++)
            if (ns->slot[i]) {
                size_t j = ks_hash_bytes(ns->slot[i], strlen(ns->slot[i])) & (big.cap - 1);
                while (big.slot[j])
                    j = (j + 1) & (big.cap - 1);
                big.slot[j] = ns->slot[i];
                big.n++;
            }
        free(ns->slot);
        *ns = big;
    }
    size_t j = ks_hash_bytes(s, n) & (ns->cap - 1);
    for (; ns->slot[j]; j = (j + 1) & (ns->cap - 1))
        if (strncmp(ns->slot[j], s, n) == 0 && ns->slot[j][n] == '\0')
            return;
    char *c = ks_xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = '\0';
    ns->slot[j] = c;
    ns->n++;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Text with its line splices (backslash or "??/", then a newline) removed. */
static char *unspliced(const char *t, size_t n, size_t *out_n)
{
    char *o = ks_xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t b = t[i] == '\\' ? 1 : (t[i] == '?' && i + 2 < n && t[i + 1] == '?' && t[i + 2] == '/') ? 3 : 0;
        if (b) {
            size_t j = i + b;
            while (j < n && (t[j] == ' ' || t[j] == '\t'))   /* clang allows blanks before the newline */
                j++;
            if (j < n && (t[j] == '\n' || t[j] == '\r')) {
                i = j + (t[j] == '\r' && j + 1 < n && t[j + 1] == '\n');
                continue;
            }
        }
        o[k++] = t[i];
    }
    o[k] = '\0';
    *out_n = k;
    return o;
}

/* Records the names of one file's text, and the operands of its
 * __has_include queries ("h <name>" lines; "h *" for one that is not a
 * header name written out, which makes every -I count). */
static void scan_names(const char *raw, size_t rawn, name_set *ns, ks_buf *probes)
{
    size_t n;
    char *t = unspliced(raw, rawn, &n);
    for (size_t i = 0; i < n;) {
        if (!ident_byte((unsigned char)t[i])) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < n && ident_byte((unsigned char)t[i]))
            i++;
        name_add(ns, t + s, i - s);
        size_t d = s;
        while (d < i && t[d] >= '0' && t[d] <= '9')
            d++;
        if (d > s && d < i)
            name_add(ns, t + d, i - d);
        size_t len = i - s;
        if ((len == 13 && memcmp(t + s, "__has_include", 13) == 0) ||
            (len == 18 && memcmp(t + s, "__has_include_next", 18) == 0)) {
            size_t j = i;
            while (j < n && (t[j] == ' ' || t[j] == '\t'))
                j++;
            if (j >= n || t[j] != '(')
                continue;                            /* defined(__has_include), #ifdef: no query */
            j++;
            while (j < n && (t[j] == ' ' || t[j] == '\t'))
                j++;
            char close = j < n && t[j] == '<' ? '>' : j < n && t[j] == '"' ? '"' : 0;
            const char *e = close ? memchr(t + j + 1, close, n - j - 1) : NULL;
            if (!e || memchr(t + j + 1, '\n', (size_t)(e - (t + j + 1)))) {
                ks_buf_puts(probes, "h *\n");
                continue;
            }
            ks_buf_puts(probes, "h ");
            ks_buf_put(probes, t + j + 1, (size_t)(e - (t + j + 1)));
            ks_buf_puts(probes, "\n");
        }
    }
    free(t);
}

/* The "n" line (" name name … ", sorted) and the "h" lines of the files
 * p was built from and kstub's compat header; -1 when a file cannot be read. */
int ks__prelude_names(const ks_prelude *p, ks_buf *out)
{
    return ks__prelude_names_after(p, 0, NULL, out);
}

/* The names and probes of prior (a names text, as ks__prelude_names writes
 * it: the "n" line first, then the "h" lines) taken as they are. */
static void take_names(const char *prior, name_set *ns, ks_buf *probes)
{
    if (strncmp(prior, "n ", 2) == 0) {
        const char *s = prior + 2, *end = strchr(s, '\n');
        if (!end)
            end = s + strlen(s);
        while (s < end) {
            const char *sp = memchr(s, ' ', (size_t)(end - s));
            const char *e = sp ? sp : end;
            if (e > s)
                name_add(ns, s, (size_t)(e - s));
            s = e + 1;
        }
    }
    for (const char *h = strstr(prior, "\nh "); h; h = strstr(h + 1, "\nh ")) {
        const char *end = strchr(h + 1, '\n');
        ks_buf_put(probes, h + 1, end ? (size_t)(end - h) : strlen(h + 1));
        if (!end)
            ks_buf_puts(probes, "\n");
    }
}

int ks__prelude_names_after(const ks_prelude *p, size_t from, const char *prior, ks_buf *out)
{
    name_set ns = {0};
    ks_buf probes = {0};
    if (prior) {
        take_names(prior, &ns, &probes);
    } else {
        size_t clen;
        const char *compat = ks_compat_header(&clen);
        scan_names(compat, clen, &ns, &probes);
        from = 0;
    }
    int rc = 0;
    for (size_t i = from; i < p->nfiles && rc == 0; i++) {
        int fd = open(p->files[i], O_RDONLY | O_CLOEXEC);
        struct stat sb;
        void *m = MAP_FAILED;
        if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
            m = sb.st_size > 0 ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)"";
        if (fd >= 0)
            close(fd);
        if (m == MAP_FAILED) {
            rc = -1;
            break;
        }
        scan_names(m, (size_t)sb.st_size, &ns, &probes);
        if (sb.st_size > 0)
            munmap(m, (size_t)sb.st_size);
    }
    char **all = ks_xmalloc((ns.n + 1) * sizeof *all);
    size_t k = 0;
    for (size_t i = 0; i < ns.cap; i++)
        if (ns.slot[i])
            all[k++] = ns.slot[i];
    qsort(all, k, sizeof *all, name_cmp);
    ks_buf_puts(out, "n ");
    for (size_t i = 0; i < k; i++) {
        ks_buf_puts(out, all[i]);
        ks_buf_puts(out, " ");
        free(all[i]);
    }
    ks_buf_puts(out, "\n");
    char *pr = ks_buf_take(&probes);
    ks_buf_puts(out, pr);
    free(pr);
    free(all);
    free(ns.slot);
    return rc;
}

/* The macro name of "-DNAME", "-DNAME=V", "-DNAME(a)=V" or "-UNAME", or
 * NULL when the argument is neither or the name is not plain ASCII
 * letters, digits and '_' (then it counts, to be safe). */
static int define_name(const char *a, const char **name, size_t *n)
{
    if (a[0] != '-' || (a[1] != 'D' && a[1] != 'U'))
        return -1;
    const char *s = a + 2, *e = s;
    while (*e && *e != '=' && *e != '(')
        e++;
    for (const char *c = s; c < e; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return -1;
    *name = s;
    *n = (size_t)(e - s);
    return e > s ? 0 : -1;
}

static int has_name(const char *names, const char *name, size_t n)
{
    const char *line = strncmp(names, "n ", 2) == 0 ? names - 1 : strstr(names, "\nn ");
    if (!line)
        return 1;
    char *needle = ks_xmalloc(n + 3);
    needle[0] = ' ';
    memcpy(needle + 1, name, n);
    needle[n + 1] = ' ';
    needle[n + 2] = '\0';
    const char *end = strchr(line + 1, '\n');
    const char *hit = strstr(line + 2, needle);
    free(needle);
    return hit && (!end || hit < end);
}

/* An include directory's own entries, lowercased and sorted: a path under
 * it whose first component is none of them (in any case: a file system may
 * fold case) cannot exist, and needs no access(2). The prelude's ~300
 * headers under every trailing part of their paths made about 2,000 calls
 * per -I. n == SIZE_MAX: the directory cannot be listed; every path is
 * tried. */
typedef struct dir_entries {
    char **name;
    size_t n;
} dir_entries;

static int lower_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_dir(const char *dir, dir_entries *d)
{
    d->name = NULL;
    d->n = SIZE_MAX;
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    size_t n = 0, cap = 0;
    char **name = NULL;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (n == cap)
            name = ks_xrealloc(name, (cap = cap ? 2 * cap : 64) * sizeof *name);
        char *l = ks_xstrdup(e->d_name);
        for (char *c = l; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        name[n++] = l;
    }
    closedir(dp);
    qsort(name, n, sizeof *name, lower_cmp);
    d->name = name;
    d->n = n;
}

static void free_dir(dir_entries *d)
{
    for (size_t i = 0; d->n != SIZE_MAX && i < d->n; i++)
        free(d->name[i]);
    free(d->name);
}

static int exists_under(const char *dir, const dir_entries *d, const char *rel)
{
    if (d->n != SIZE_MAX) {
        char first[NAME_MAX + 1];
        size_t k = strcspn(rel, "/");
        if (k > NAME_MAX)
            return 0;
        for (size_t i = 0; i < k; i++)
            first[i] = (char)tolower((unsigned char)rel[i]);
        first[k] = '\0';
        const char *key = first;
        if (!bsearch(&key, d->name, d->n, sizeof *d->name, lower_cmp))
            return 0;
    }
    char path[PATH_MAX];
    int k = snprintf(path, sizeof path, "%s/%s", dir, rel);
    return k > 0 && (size_t)k < sizeof path && access(path, F_OK) == 0;
}

/* Every path that could name, under the include directory dir, a file the
 * prelude opened (any trailing part of its path) or a header a
 * __has_include asked for ("h" lines of names): with c NULL, whether one
 * exists there (1) or none (0); else each that exists is hashed into c,
 * in a fixed order, and 0 is returned. */
static int dir_walk(const ks_prelude *p, const char *names, const char *dir, ks__sha256_ctx *c)
{
    dir_entries d;
    list_dir(dir, &d);
    int found = 0;
    for (size_t i = 0; i < p->nfiles && !found; i++)
        for (const char *s = strchr(p->files[i], '/'); s && !found; s = strchr(s + 1, '/'))
            if (s[1] && exists_under(dir, &d, s + 1)) {
                if (c)
                    ks__sha256_field(c, "has", s + 1, strlen(s + 1));
                else
                    found = 1;
            }
    for (const char *h = strstr(names, "\nh "); h && !found; h = strstr(h + 1, "\nh ")) {
        const char *end = strchr(h + 3, '\n');
        size_t n = end ? (size_t)(end - (h + 3)) : strlen(h + 3);
        char rel[PATH_MAX];
        if ((n == 1 && h[3] == '*') || n >= sizeof rel) {
            found = !c;                         /* any directory may count; no set to compare */
            continue;
        }
        memcpy(rel, h + 3, n);
        rel[n] = '\0';
        if (exists_under(dir, &d, rel)) {
            if (c)
                ks__sha256_field(c, "probe", rel, n);
            else
                found = 1;
        }
    }
    free_dir(&d);
    return found;
}

/* Whether the include directory dir holds, under any trailing part of its
 * path, a file the prelude opened, or a header a __has_include asked for. */
static int dir_shadows(const ks_prelude *p, const char *names, const char *dir)
{
    return dir_walk(p, names, dir, NULL);
}

/* ---- every search directory: what it holds of the prelude's headers -------------------------- */

/*
 * The key holds the arguments and the include path variables as text; a
 * directory they name may gain a header later (inc/cuda_fp16.h created
 * after the prelude was built from an empty CPATH folder), which a parse
 * without the cache would find first. So an entry also records, for every
 * directory of the search path it was built with (-I, -isystem, -iquote,
 * -idirafter and their spellings; CPATH, C_INCLUDE_PATH,
 * CPLUS_INCLUDE_PATH, OBJC_INCLUDE_PATH and OBJCPLUS_INCLUDE_PATH, an empty
 * element the working directory), which of the paths its headers and
 * __has_include queries could be found by exist there: the same test an
 * input's own -I is put to (dir_shadows). A hit whose directories hold
 * another set is a miss, and the entry is built again. The toolkit's own
 * folders are left out: their headers are the prelude's, stamped one by
 * one.
 */
static const char *const search_opts[] = {
    "--include-directory", "-isystem-after", "-cxx-isystem", "-idirafter", "-isystem", "-iquote", "-I",
};

static void search_dir(const ks_prelude *p, const char *names, const char *cuda, const char *dir,
                       ks__sha256_ctx *c)
{
    size_t n = cuda ? strlen(cuda) : 0;
    if (n && strncmp(dir, cuda, n) == 0 && (dir[n] == '/' || dir[n] == '\0'))
        return;
    ks__sha256_field(c, "dir", dir, strlen(dir));
    dir_walk(p, names, dir, c);
}

void ks__prelude_search_sig(const ks_prelude *p, const char *names, const char *const *args, size_t nargs,
                           char hex[65])
{
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    const char *cuda = NULL;
    for (size_t i = 0; i < nargs; i++)
        if (strncmp(args[i], "--cuda-path=", 12) == 0)
            cuda = args[i] + 12;
    for (size_t i = 0; i < nargs; i++)
        for (size_t j = 0; j < sizeof search_opts / sizeof *search_opts; j++) {
            size_t n = strlen(search_opts[j]);
            if (strncmp(args[i], search_opts[j], n) != 0)
                continue;
            const char *v = args[i][n] == '=' ? args[i] + n + 1 : args[i][n] ? args[i] + n
                          : i + 1 < nargs ? args[++i] : NULL;
            if (v)
                search_dir(p, names, cuda, v, &c);
            break;
        }
    for (size_t i = 0; i < sizeof path_env / sizeof *path_env; i++) {
        const char *v = getenv(path_env[i]);
        for (const char *e = v; e != NULL; e = strchr(e, ':') ? strchr(e, ':') + 1 : NULL) {
            size_t n = strcspn(e, ":");
            char *dir = n ? ks_xasprintf("%.*s", (int)n, e) : ks_xstrdup(".");
            search_dir(p, names, cuda, dir, &c);
            free(dir);
        }
    }
    unsigned char h[32];
    ks__sha256_final(&c, h);
    ks__sha256_hex(h, hex);
}

/* The input's own arguments (user: "-I" DIR pairs, -D, -U) that can change
 * the prelude p, given its verified names (NULL: unreadable, so all of
 * them can), in their order, into out (room for nuser). Returns how many. */
size_t ks__prelude_relevant_args(const ks_prelude *p, const char *names, const char *const *user, size_t nuser,
                                const char **out)
{
    size_t k = 0;
    for (size_t i = 0; i < nuser; i++) {
        const char *name;
        size_t n;
        if (strcmp(user[i], "-I") == 0 && i + 1 < nuser) {
            if (!names || dir_shadows(p, names, user[i + 1])) {
                out[k++] = user[i];
                out[k++] = user[i + 1];
            }
            i++;
        } else if (!names || define_name(user[i], &name, &n) != 0 || has_name(names, name, n)) {
            out[k++] = user[i];
        }
    }
    return k;
}

/* The key of the prelude built with the arguments of the input's that can
 * change it: the base prelude's key and those arguments. */
void ks__prelude_variant_key(ks_prelude *p, const char *const *rel, size_t nrel)
{
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    ks__sha256_field(&c, "base", p->key, sizeof p->key);
    for (size_t i = 0; i < nrel; i++)
        ks__sha256_field(&c, "arg", rel[i], strlen(rel[i]));
    if (resolves_against_cwd(rel, nrel)) {       /* "-I inc" from two directories: two preludes */
        char *cwd = getcwd(NULL, 0);
        ks__sha256_field(&c, "cwd", cwd ? cwd : "?", cwd ? strlen(cwd) : 1);
        free(cwd);
    }
    ks__sha256_final(&c, p->key);
}

/* The key of the layer of p's leading includes on the base prelude, from
 * the key of the whole prelude of the same text: the base is found through
 * the cache directory pinned at descriptor fd (pch.c). */
void ks__prelude_layer_key(ks_prelude *p, int fd)
{
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    ks__sha256_field(&c, "whole", p->key, sizeof p->key);
    char at[32];
    int n = snprintf(at, sizeof at, "layer on descriptor %d", fd);
    ks__sha256_field(&c, "layer", at, (size_t)n);
    ks__sha256_final(&c, p->key);
}

/* ---- the input's leading includes ----------------------------------------------------------- */

/*
 * Headers a file's leading includes may bring into the prelude: the C and
 * C++ standard library's and the CUDA toolkit's. Precompiling them is
 * equivalent to the file's own includes when nothing comes before them but
 * the implicit prelude (blank lines and comments only): the parse with the
 * prelude reads the file with those directives blanked (session.c), so the
 * preprocessor and the parser see the same tokens in the same order and
 * state as without it, guarded header or not (libstdc++'s <cstdio> has no
 * controlling macro). What could still differ is keyed (prelude_key.c): a
 * -I that shadows a header the prelude opened, a -D/-U of a name its
 * headers mention (NDEBUG for <cassert>), every other option; and the
 * entry's headers are checked unchanged before use. Quoted includes never
 * qualify (they search the input's directory first), nor project headers
 * (they change as the project is edited: each edit would rebuild the
 * prelude).
 */
static const char *const leading_ok[] = {
    /* CUDA toolkit */
    "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cuda_fp6.h", "cuda_fp4.h",
    "cooperative_groups.h", "cuda.h", "cuda_runtime.h", "cuda_runtime_api.h",
    "vector_types.h", "vector_functions.h", "mma.h", "cuda_pipeline.h", "cuda_awbarrier.h",
    "device_launch_parameters.h", "curand_kernel.h", "math_constants.h", "cuComplex.h",
    /* C++ standard library */
    "algorithm", "any", "array", "atomic", "bit", "bitset", "cassert", "cctype", "cerrno", "cfenv",
    "cfloat", "charconv", "chrono", "cinttypes", "climits", "clocale", "cmath", "compare",
    "complex", "concepts", "condition_variable", "cstdarg", "cstddef", "cstdint", "cstdio",
    "cstdlib", "cstring", "ctime", "cwchar", "cwctype", "deque", "exception", "functional",
    "initializer_list", "iomanip", "ios", "iosfwd", "iostream", "istream", "iterator", "limits",
    "list", "map", "memory", "mutex", "new", "numeric", "optional", "ostream", "queue", "random",
    "ratio", "set", "sstream", "stack", "stdexcept", "string", "string_view", "system_error",
    "thread", "tuple", "type_traits", "typeinfo", "unordered_map", "unordered_set", "utility",
    "variant", "vector",
    /* C standard library */
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "stdarg.h",
    "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "time.h",
};

static int leading_allowed(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof leading_ok / sizeof *leading_ok; i++)
        if (strlen(leading_ok[i]) == n && memcmp(leading_ok[i], name, n) == 0)
            return 1;
    return 0;
}

size_t ks_prelude_leading(const char *t, size_t len, char ***names, char *blanked)
{
    return ks__leading_includes(t, len, leading_allowed, names, blanked);
}

void ks_prelude_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
