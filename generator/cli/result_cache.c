/*
 * result_cache.c — a second run of an unchanged file costs no parse: the
 * result cache (ccache's "direct mode", kstub's entries).
 *
 * The key (SHA-256): the entry format; kstub's own binary (its version,
 * path, size, time and inode) and libclang's library file; the whole
 * command line as given (output names appear in the outputs: the header's
 * guard, the depfile's targets); the working directory (relative names
 * appear in the outputs and resolve against it); CUDA_PATH, the include
 * path variables clang reads (CPATH and the rest) and every KSTUB_*
 * variable but those that only steer the caches; and the input's bytes.
 *
 * The manifest, stored with the outputs: every name the run asked the file
 * system (front/fileguard_seen.c) from the start of the run until the
 * outputs were rendered, with the answer: each file read (its size,
 * modification and change times to the nanosecond, inode, and SHA-256 of
 * its bytes), each name found, each folder listed (its time), and each
 * name found missing ("must still not exist": an include searched in the
 * first -I before it was found in the second); the depfile's files (the
 * precompiled prelude's headers, which clang reads from the PCH, not the
 * file) and every file kstub read itself (inputs.h: templates, the compile
 * database, the image) are read files too. A lookup trusts a file whose
 * stat is the one recorded and hashes one whose stat is not: a touched
 * header still hits (and the entry is written again with its new stat),
 * an edit that kept the size and the time (the change time moves with
 * every write) is a miss.
 *
 * A file changed while the run read it would make the recorded hash a
 * later file's than the one parsed: a file whose modification or change
 * time is not older than the run's start (on the file system's own coarse
 * clock) keeps the run from being stored, and each is stat'ed before and
 * after hashing.
 *
 * A hit writes the stored bytes through the writer a miss uses (unchanged
 * outputs keep their times) and says again on stderr what the run's
 * diagnostics said (warnings, notes). A run with an error stores nothing.
 * Entries are KEY.result in the cache directory (common/cache_entry.c's
 * format, written to a temporary and renamed: two racing runs both store,
 * one entry stays), touched on a hit, counted by `kstub cache --stats`,
 * removed by --prune, --clear and the cap as every entry is.
 */
#include "cli/result_cache.h"
#include "base/inputs.h"
#include "base/util.h"
#include "front/fileguard.h"
#include "front/prelude/cachecmd.h"
#include "front/prelude/prelude.h"
#include "front/walk.h"

#include <clang-c/Index.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_entry.h"
#include "sha256.h"

#define KS__RESULT_MAGIC "KSTUBRS1"
#define KS__RESULT_FORMAT "kstub result 1\n"
#define KS__RESULT_MAX (256u << 20)

static char *trial_cached(const ks_options *o, const char *path, const char *const *args, size_t nargs,
                          ks_trial_fn trial, void *ctx);

extern char **environ;

/* ---- the key ---------------------------------------------------------------------------------- */

static void put_s(ks__sha256_ctx *c, const char *tag, const char *s)
{
    ks__sha256_field(c, tag, s ? s : "", s ? strlen(s) : 0);
    ks__sha256_field(c, "set", s ? "1" : "0", 1);
}

/* A file by its real path, size, time and inode: a rebuilt one is another. */
static void put_file_identity(ks__sha256_ctx *c, const char *tag, const char *path)
{
    char *real = path ? realpath(path, NULL) : NULL;
    struct stat sb;
    char *id = real && stat(real, &sb) == 0
        ? ks_xasprintf("%s %lld %lld.%09ld %llu", real, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                       sb.st_mtim.tv_nsec, (unsigned long long)sb.st_ino)
        : ks_xstrdup(path ? path : "?");
    ks__sha256_field(c, tag, id, strlen(id));
    free(id);
    free(real);
}

/* KSTUB_* variables that steer the caches only, never an output. */
static int cache_only_env(const char *e)
{
    static const char *const names[] = {"KSTUB_CACHE=", "KSTUB_CACHE_DIR=", "KSTUB_CACHE_SIZE=",
                                        "KSTUB_LAYERS=", "KSTUB_DEBUG_PCH=", "KSTUB_RESULT_CACHE=",
                                        "KSTUB_TRIAL_CACHE="};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strncmp(e, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void make_key(ks_result *r, int argc, char **argv, const char *input, size_t ninput)
{
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    ks__sha256_field(&c, "format", KS__RESULT_FORMAT, strlen(KS__RESULT_FORMAT));
    ks__sha256_field(&c, "version", KSTUB_VERSION_TEXT, strlen(KSTUB_VERSION_TEXT));
    put_file_identity(&c, "kstub", "/proc/self/exe");
    Dl_info info;
    union { CXString (*fn)(void); void *p; } sym = {clang_getClangVersion};
    put_file_identity(&c, "libclang", dladdr(sym.p, &info) && info.dli_fname ? info.dli_fname : NULL);
    for (int i = 1; i < argc; i++)
        ks__sha256_field(&c, "arg", argv[i], strlen(argv[i]));
    char *cwd = getcwd(NULL, 0);
    put_s(&c, "cwd", cwd);
    free(cwd);
    static const char *const vars[] = {"CUDA_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
                                       "OBJC_INCLUDE_PATH", "OBJCPLUS_INCLUDE_PATH"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        put_s(&c, vars[i], getenv(vars[i]));
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n += strncmp(*e, "KSTUB_", 6) == 0 && !cache_only_env(*e);
    char **kv = ks_xmalloc((n + 1) * sizeof *kv);
    n = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "KSTUB_", 6) == 0 && !cache_only_env(*e))
            kv[n++] = *e;
    qsort(kv, n, sizeof *kv, str_cmp);
    for (size_t i = 0; i < n; i++)
        ks__sha256_field(&c, "env", kv[i], strlen(kv[i]));
    free(kv);
    ks__sha256_field(&c, "input", input, ninput);
    ks__sha256_final(&c, r->key);
    ks__sha256_hex(r->key, r->hex);
}

/* ---- files: stat and hash --------------------------------------------------------------------- */

typedef struct stamp {
    long long size, ms, mns, cs, cns;
    unsigned long long ino;
} stamp;

static int stamp_of(const char *path, stamp *s)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return -1;
    s->size = (long long)sb.st_size;
    s->ms = (long long)sb.st_mtim.tv_sec, s->mns = sb.st_mtim.tv_nsec;
    s->cs = (long long)sb.st_ctim.tv_sec, s->cns = sb.st_ctim.tv_nsec;
    s->ino = (unsigned long long)sb.st_ino;
    return 0;
}

static int stamp_same(const stamp *a, const stamp *b)
{
    return a->size == b->size && a->ms == b->ms && a->mns == b->mns && a->cs == b->cs && a->cns == b->cns &&
           a->ino == b->ino;
}

/* The SHA-256 of a regular file's bytes, as hex: 0, or -1. */
static int hash_file(const char *path, char hex[65])
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return -1;
    }
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    static char b[1 << 16];
    ssize_t n;
    while ((n = read(fd, b, sizeof b)) > 0)
        ks__sha256_update(&c, b, (size_t)n);
    close(fd);
    if (n < 0)
        return -1;
    unsigned char h[32];
    ks__sha256_final(&c, h);
    ks__sha256_hex(h, hex);
    return 0;
}

static int is_dir(const char *path, struct stat *sb)
{
    return stat(path, sb) == 0 && S_ISDIR(sb->st_mode);
}

/* ---- the entry's records ---------------------------------------------------------------------- */

/*
 * The payload: KS__RESULT_FORMAT, then records, each a line of decimal
 * fields ending with the lengths of the strings that follow it, each
 * string followed by a newline:
 *
 *   F size mtime-s mtime-ns ctime-s ctime-ns inode sha256 LEN \n path      a file read
 *   E isdir LEN \n path                                                   a name found
 *   D mtime-s mtime-ns LEN \n path                                        a folder listed
 *   A LEN \n path                                                         a name missing
 *   O LEN LEN \n path \n text                                             an output
 *   S LEN \n text                                                         the diagnostics
 */
typedef struct reader {
    char *p, *end;
} reader;

/* One record: its tag, its numbers, its hash (F) and its strings,
 * NUL-terminated in place. */
typedef struct record {
    char tag;
    long long num[6];
    char hash[65];
    char *str[2];
} record;

/* The next record: 1, 0 at the end, -1 malformed. */
static int next_record(reader *rd, record *rec)
{
    if (rd->p >= rd->end)
        return 0;
    char *nl = memchr(rd->p, '\n', (size_t)(rd->end - rd->p));
    if (!nl)
        return -1;
    *nl = '\0';
    long long *v = rec->num, len[2] = {-1, -1};
    int nstr = 1, got = 0, want = 0;
    rec->tag = rd->p[0];
    switch (rec->tag) {
    case 'F':
        want = 8;
        got = sscanf(rd->p, "F %lld %lld %lld %lld %lld %lld %64s %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                     rec->hash, &len[0]);
        break;
    case 'E': want = 2, got = sscanf(rd->p, "E %lld %lld", &v[0], &len[0]); break;
    case 'D': want = 3, got = sscanf(rd->p, "D %lld %lld %lld", &v[0], &v[1], &len[0]); break;
    case 'A': want = 1, got = sscanf(rd->p, "A %lld", &len[0]); break;
    case 'S': want = 1, got = sscanf(rd->p, "S %lld", &len[0]); break;
    case 'O': want = 2, nstr = 2, got = sscanf(rd->p, "O %lld %lld", &len[0], &len[1]); break;
    default: return -1;
    }
    if (got != want)
        return -1;
    char *q = nl + 1;
    for (int i = 0; i < nstr; i++) {
        if (len[i] < 0 || len[i] >= rd->end - q || q[len[i]] != '\n')
            return -1;
        q[len[i]] = '\0';
        rec->str[i] = q;
        q += len[i] + 1;
    }
    rd->p = q;
    return 1;
}

/* Whether a file changed at or after the run's start (the file system's
 * coarse clock): it may have changed while the run read it. */
static int too_new(const ks_result *r, const stamp *s)
{
    return s->ms > (long long)r->start.tv_sec || (s->ms == (long long)r->start.tv_sec && s->mns >= r->start.tv_nsec) ||
           s->cs > (long long)r->start.tv_sec || (s->cs == (long long)r->start.tv_sec && s->cns >= r->start.tv_nsec);
}

/* The record again, as it was written; a file's with the stamp st when not NULL. */
static void put_record(ks_buf *b, const record *rec, const stamp *st)
{
    switch (rec->tag) {
    case 'F':
        if (st)
            ks_buf_printf(b, "F %lld %lld %lld %lld %lld %llu", st->size, st->ms, st->mns, st->cs, st->cns, st->ino);
        else
            ks_buf_printf(b, "F %lld %lld %lld %lld %lld %lld", rec->num[0], rec->num[1], rec->num[2], rec->num[3],
                          rec->num[4], rec->num[5]);
        ks_buf_printf(b, " %s %zu\n%s\n", rec->hash, strlen(rec->str[0]), rec->str[0]);
        break;
    case 'E': ks_buf_printf(b, "E %lld %zu\n%s\n", rec->num[0], strlen(rec->str[0]), rec->str[0]); break;
    case 'D':
        ks_buf_printf(b, "D %lld %lld %zu\n%s\n", rec->num[0], rec->num[1], strlen(rec->str[0]), rec->str[0]);
        break;
    case 'A': ks_buf_printf(b, "A %zu\n%s\n", strlen(rec->str[0]), rec->str[0]); break;
    case 'S': ks_buf_printf(b, "S %zu\n%s\n", strlen(rec->str[0]), rec->str[0]); break;
    default:
        ks_buf_printf(b, "O %zu %zu\n%s\n%s\n", strlen(rec->str[0]), strlen(rec->str[1]), rec->str[0], rec->str[1]);
        break;
    }
}

/* Whether the record still holds for the file system now (1; 2: a file
 * whose stat changed and whose bytes did not, its stat now in *fresh);
 * 0 with *why when not. */
static int still_holds(const record *rec, const char **why, stamp *fresh)
{
    struct stat sb;
    const char *path = rec->str[0];
    switch (rec->tag) {
    case 'A':
        if (stat(path, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR)) {
            *why = "a name the parse found missing exists now";
            return 0;
        }
        return 1;
    case 'E':
        if (stat(path, &sb) != 0 || (S_ISDIR(sb.st_mode) != 0) != (rec->num[0] != 0)) {
            *why = "a name the parse found is gone or another kind";
            return 0;
        }
        return 1;
    case 'D':
        if (!is_dir(path, &sb) || (long long)sb.st_mtim.tv_sec != rec->num[0] ||
            (long long)sb.st_mtim.tv_nsec != rec->num[1]) {
            *why = "a folder the parse listed changed";
            return 0;
        }
        return 1;
    case 'F': {
        stamp now, then = {rec->num[0], rec->num[1], rec->num[2], rec->num[3], rec->num[4],
                           (unsigned long long)rec->num[5]};
        if (stamp_of(path, &now) != 0) {
            *why = "a file the parse read is gone";
            return 0;
        }
        if (stamp_same(&now, &then))
            return 1;
        char hex[65];
        stamp after;
        if (now.size != then.size || hash_file(path, hex) != 0 || strcmp(hex, rec->hash) != 0) {
            *why = "a file the parse read changed";
            return 0;
        }
        *fresh = now;
        return stamp_of(path, &after) == 0 && stamp_same(&now, &after) ? 2 : 1;   /* touched, not changed */
    }
    default:
        return 1;
    }
}

/* ---- lookup ----------------------------------------------------------------------------------- */

/* Off by KSTUB_RESULT_CACHE=0; and under KSTUB_DEBUG_ARGS, whose files
 * (the parse's arguments) only a parse writes. */
static int result_off(void)
{
    const char *v = getenv("KSTUB_RESULT_CACHE"), *d = getenv("KSTUB_DEBUG_ARGS");
    return (v && strcmp(v, "0") == 0) || (d && *d);
}

void ks_result_begin(ks_result *r, int generating)
{
    memset(r, 0, sizeof *r);
    r->dirfd = -1;
    clock_gettime(CLOCK_REALTIME_COARSE, &r->start);
    ks_fileguard_record(generating);
    ks_host_trial_cached = trial_cached;
}

/* Reads the entry's records: 1 a hit (r->outs set), 0 a miss. */
static int replay(ks_result *r, char *payload, size_t n, const char **why)
{
    if (n < strlen(KS__RESULT_FORMAT) || memcmp(payload, KS__RESULT_FORMAT, strlen(KS__RESULT_FORMAT)) != 0) {
        *why = "another entry format";
        return 0;
    }
    reader rd = {payload + strlen(KS__RESULT_FORMAT), payload + n};
    record rec;
    int rc;
    const char *diags = NULL;
    const char **read = NULL;
    size_t nread = 0, restamped = 0;
    ks_buf again = {0};                /* the entry with the stamps of files touched, not changed */
    ks_buf_puts(&again, KS__RESULT_FORMAT);
    while ((rc = next_record(&rd, &rec)) == 1) {
        stamp fresh;
        int holds = 1;
        if (rec.tag == 'O') {
            r->outs = ks_xrealloc(r->outs, (r->nouts + 1) * sizeof *r->outs);
            r->outs[r->nouts].path = rec.str[0];
            r->outs[r->nouts++].text = rec.str[1];
        } else if (rec.tag == 'S') {
            diags = rec.str[0];
        } else if (!(holds = still_holds(&rec, why, &fresh))) {
            ks_prelude_debug("result: '%s': %s", rec.str[0], *why);
            free(read);
            free(ks_buf_take(&again));
            return 0;
        } else if (rec.tag == 'F') {
            read = ks_xrealloc(read, (nread + 1) * sizeof *read);
            read[nread++] = rec.str[0];
        }
        /* A stamp is renewed only when the file is older than this run
         * (as a miss stores it): else it is hashed again next time. */
        int renew = holds == 2 && !too_new(r, &fresh);
        restamped += renew;
        put_record(&again, &rec, renew ? &fresh : NULL);
    }
    if (rc < 0 || r->nouts == 0) {
        *why = "a malformed entry";
        free(read);
        free(ks_buf_take(&again));
        return 0;
    }
    if (restamped) {
        char name[80];
        snprintf(name, sizeof name, "%s.result", r->hex);
        size_t len = again.len;
        char *text = ks_buf_take(&again);
        if (ks__entry_write(r->dirfd, name, KS__RESULT_MAGIC, r->key, text, len) == 0)
            ks_prelude_debug("result restamped %s (%zu files touched, not changed)", r->hex, restamped);
        free(text);
    }
    free(ks_buf_take(&again));
    /* What the parse read is an input of this run too: no output may
     * replace it (main.c's check, as on a miss). */
    for (size_t i = 0; i < nread; i++)
        ks_inputs_note_path(read[i]);
    free(read);
    if (diags)
        fputs(diags, stderr);
    return 1;
}

int ks_result_lookup(ks_result *r, const ks_options *o, int argc, char **argv)
{
    ks_fileguard_record(0);            /* the lookup's own stats are not the run's */
    char why_dir[PATH_MAX + 512];
    if (result_off() || (r->dirfd = ks_cache_dir_open(o->cache_dir, o->no_cache, why_dir, sizeof why_dir)) < 0) {
        r->dirfd = -1;
        return 0;
    }
    size_t ninput;
    char *input = ks_peek_file(o->input, &ninput);
    if (!input) {                       /* said by the run, which goes on */
        close(r->dirfd);
        r->dirfd = -1;
        return 0;
    }
    make_key(r, argc, argv, input, ninput);
    char dir[PATH_MAX + 16];
    const char *origin;
    int dl = ks__cache_dir_path(o->cache_dir, "--cache-dir", dir, sizeof dir, &origin);
    r->cache_dir = dl > 0 && (size_t)dl < sizeof dir ? ks_xstrdup(dir) : NULL;
    free(input);
    char name[80];
    snprintf(name, sizeof name, "%s.result", r->hex);
    size_t n;
    const char *why = NULL;
    char *payload = ks__entry_read(r->dirfd, name, KS__RESULT_MAGIC, r->key, KS__RESULT_MAX, &n, &why);
    if (payload && replay(r, payload, n, &why)) {
        r->payload = payload;
        ks_cache_touch(r->dirfd, name);
        ks_cache_count_result(r->dirfd, 1);
        ks_prelude_debug("result hit %s", r->hex);
        return 1;
    }
    free(payload);
    free(r->outs);
    r->outs = NULL;
    r->nouts = 0;
    ks_prelude_debug("result miss %s: %s", r->hex, why ? why : "no entry");
    ks_cache_count_result(r->dirfd, 0);
    ks_diag_capture(1);
    ks_fileguard_record(1);
    return 0;
}

void ks_result_generated(ks_result *r)
{
    (void)r;
    ks_fileguard_record(0);
    ks_diag_capture(0);
}

/* ---- store ------------------------------------------------------------------------------------ */

typedef struct store_ctx {
    ks_result *r;
    ks_buf b;
    char **read;               /* files read, sorted, for the depfile's and inputs' lookup */
    size_t nread, capread;
    const char *cache_dir;     /* names under it are the caches' own */
    const char *why;           /* set: nothing is stored */
} store_ctx;


static void put_read(store_ctx *sc, const char *path)
{
    if (sc->why)
        return;
    stamp a, b;
    char hex[65];
    if (stamp_of(path, &a) != 0 || hash_file(path, hex) != 0 || stamp_of(path, &b) != 0 || !stamp_same(&a, &b)) {
        ks_prelude_debug("result not stored: '%s' changed or went while it was read", path);
        sc->why = "changed";
        return;
    }
    if (too_new(sc->r, &a)) {
        ks_prelude_debug("result not stored: '%s' changed during the run", path);
        sc->why = "too new";
        return;
    }
    ks_buf_printf(&sc->b, "F %lld %lld %lld %lld %lld %llu %s %zu\n%s\n", a.size, a.ms, a.mns, a.cs, a.cns, a.ino,
                  hex, strlen(path), path);
}

static int known_read(const store_ctx *sc, const char *path)
{
    return bsearch(&path, sc->read, sc->nread, sizeof *sc->read, str_cmp) != NULL;
}

static int under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return dir[0] && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void put_seen(const char *path, int kind, const struct timespec *mtime, void *data)
{
    store_ctx *sc = data;
    struct stat sb;
    if (sc->why || (sc->cache_dir && under(path, sc->cache_dir)))
        return;
    switch (kind) {
    case KS_SEEN_READ:
        put_read(sc, path);
        break;
    case KS_SEEN_LISTED:
        ks_buf_printf(&sc->b, "D %lld %ld %zu\n%s\n", (long long)mtime->tv_sec, mtime->tv_nsec, strlen(path), path);
        break;
    case KS_SEEN_FOUND:
        if (known_read(sc, path))
            break;
        if (stat(path, &sb) != 0) {
            sc->why = "gone";
            break;
        }
        ks_buf_printf(&sc->b, "E %d %zu\n%s\n", S_ISDIR(sb.st_mode) ? 1 : 0, strlen(path), path);
        break;
    default:
        if (stat(path, &sb) == 0) {
            ks_prelude_debug("result not stored: '%s' appeared during the run", path);
            sc->why = "appeared";
            break;
        }
        ks_buf_printf(&sc->b, "A %zu\n%s\n", strlen(path), path);
        break;
    }
}

static void add_read(store_ctx *sc, const char *path)
{
    if (sc->nread == sc->capread)
        sc->read = ks_xrealloc(sc->read, (sc->capread = sc->capread ? 2 * sc->capread : 256) * sizeof *sc->read);
    sc->read[sc->nread++] = (char *)path;
}

static void collect_seen_read(const char *path, int kind, const struct timespec *mtime, void *data)
{
    (void)mtime;
    if (kind == KS_SEEN_READ)
        add_read(data, path);
}

static void collect_input(const char *path, void *data)
{
    add_read(data, path);
}

void ks_result_store(ks_result *r, const ks_output *outs, size_t n, const ks_deps *deps)
{
    if (r->dirfd < 0 || ks_error_count() > 0)
        return;
    if (ks_fileguard_seen_incomplete()) {
        ks_prelude_debug("result not stored: the record of the parse's files is incomplete");
        return;
    }
    store_ctx sc = {r, {0}, NULL, 0, 0, NULL, NULL};
    sc.cache_dir = r->cache_dir;
    ks_buf_puts(&sc.b, KS__RESULT_FORMAT);
    /* Every file read, once: what the guard saw opened, the depfile's
     * (the prelude's headers among them) and kstub's own reads. */
    ks_fileguard_each_seen(collect_seen_read, &sc);
    for (size_t i = 0; deps && i < deps->nfiles; i++)
        add_read(&sc, deps->files[i]);
    ks_inputs_each(collect_input, &sc);
    qsort(sc.read, sc.nread, sizeof *sc.read, str_cmp);
    size_t k = 0;
    for (size_t i = 0; i < sc.nread; i++)
        if (k == 0 || strcmp(sc.read[k - 1], sc.read[i]) != 0)
            sc.read[k++] = sc.read[i];
    sc.nread = k;
    for (size_t i = 0; i < sc.nread && !sc.why; i++)
        put_read(&sc, sc.read[i]);
    /* The names found, listed or missing (a read one is recorded above). */
    ks_fileguard_each_seen(put_seen, &sc);
    if (!sc.why) {
        for (size_t i = 0; i < n; i++)
            ks_buf_printf(&sc.b, "O %zu %zu\n%s\n%s\n", strlen(outs[i].path), strlen(outs[i].text), outs[i].path,
                          outs[i].text);
        char *diags = ks_diag_captured();
        if (*diags)
            ks_buf_printf(&sc.b, "S %zu\n%s\n", strlen(diags), diags);
        free(diags);
        char name[80];
        snprintf(name, sizeof name, "%s.result", r->hex);
        size_t len = sc.b.len;
        char *payload = ks_buf_take(&sc.b);
        if (ks__entry_write(r->dirfd, name, KS__RESULT_MAGIC, r->key, payload, len) == 0) {
            unsigned long long freed, cap;
            ks_cache_trim(r->dirfd, r->hex, &freed, &cap);
            ks_prelude_debug("result stored %s (%zu bytes)", r->hex, len);
        }
        free(payload);
    }
    free(ks_buf_take(&sc.b));
    free(sc.read);
}

void ks_result_free(ks_result *r)
{
    if (r->dirfd >= 0)
        close(r->dirfd);
    free(r->outs);
    free(r->payload);
    free(r->cache_dir);
    memset(r, 0, sizeof *r);
    r->dirfd = -1;
}

/* ---- the host trials' cache ------------------------------------------------------------------- */

/*
 * A host trial (front/typemap_host.c: the application's header that
 * defines a parameter's type, compiled alone as host C11 or C++17) costs a
 * parse of that header and of all it includes (CUTLASS's: ~0.7 s), and
 * every file of a code base that uses the header asks the same. Its verdict
 * is kept in KEY.trial: the key is the entry format, kstub's version and
 * binary, libclang's library, the trial's whole argument list, the header's
 * name, the working directory and the include path variables; the entry is
 * the verdict with a manifest in the result's own records (above): every
 * name the trial's parse asked the file system (read, found, listed,
 * missing), validated as a result's is. On a hit the files it names are
 * the run's inputs (the result cache's manifest keeps them, as if the
 * trial had run). Off with the prelude cache
 * (--no-cache, KSTUB_CACHE=0) and by KSTUB_TRIAL_CACHE=0, not by
 * KSTUB_RESULT_CACHE=0.
 */
#define KS__TRIAL_MAGIC "KSTUBTR1"
#define KS__TRIAL_FORMAT "kstub trial 1\n"

static void trial_key(const char *path, const char *const *args, size_t nargs, unsigned char key[32], char hex[65])
{
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    ks__sha256_field(&c, "format", KS__TRIAL_FORMAT, strlen(KS__TRIAL_FORMAT));
    ks__sha256_field(&c, "version", KSTUB_VERSION_TEXT, strlen(KSTUB_VERSION_TEXT));
    put_file_identity(&c, "kstub", "/proc/self/exe");
    Dl_info info;
    union { CXString (*fn)(void); void *p; } sym = {clang_getClangVersion};
    put_file_identity(&c, "libclang", dladdr(sym.p, &info) && info.dli_fname ? info.dli_fname : NULL);
    for (size_t i = 0; i < nargs; i++)
        ks__sha256_field(&c, "arg", args[i], strlen(args[i]));
    put_s(&c, "path", path);
    char *cwd = getcwd(NULL, 0);
    put_s(&c, "cwd", cwd);
    free(cwd);
    static const char *const vars[] = {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        put_s(&c, vars[i], getenv(vars[i]));
    ks__sha256_final(&c, key);
    ks__sha256_hex(key, hex);
}

/* A stored trial's verdict: 1 with *why (NULL: compiles cleanly), or 0
 * when its manifest no longer holds. The entry: records, then one
 * "O pass|fail" record whose text is the first failure. */
static int trial_replay(char *payload, size_t n, char **why, const char **miss)
{
    if (n < strlen(KS__TRIAL_FORMAT) || memcmp(payload, KS__TRIAL_FORMAT, strlen(KS__TRIAL_FORMAT)) != 0) {
        *miss = "another entry format";
        return 0;
    }
    reader rd = {payload + strlen(KS__TRIAL_FORMAT), payload + n};
    record rec;
    int rc, verdicts = 0;
    const char *fail = NULL;
    const char **read = NULL;
    size_t nread = 0;
    while ((rc = next_record(&rd, &rec)) == 1) {
        stamp fresh;
        if (rec.tag == 'O') {
            verdicts++;
            fail = strcmp(rec.str[0], "fail") == 0 ? rec.str[1] : NULL;
        } else if (rec.tag == 'S' || !still_holds(&rec, miss, &fresh)) {
            if (rec.tag == 'S')
                *miss = "a malformed entry";
            free(read);
            return 0;
        } else if (rec.tag == 'F') {
            read = ks_xrealloc(read, (nread + 1) * sizeof *read);
            read[nread++] = rec.str[0];
        }
    }
    if (rc < 0 || verdicts != 1) {
        *miss = "a malformed entry";
        free(read);
        return 0;
    }
    /* What the trial read is this run's input as if it had run: the
     * result cache's manifest holds it (a stat of each name the trial
     * found or found missing was just kept too). */
    for (size_t i = 0; i < nread; i++)
        ks_inputs_note_path(read[i]);
    free(read);
    *why = fail ? ks_xstrdup(fail) : NULL;
    return 1;
}

static char *trial_cached(const ks_options *o, const char *path, const char *const *args, size_t nargs,
                          ks_trial_fn trial, void *ctx)
{
    char why_dir[PATH_MAX + 512];
    const char *v = getenv("KSTUB_TRIAL_CACHE");
    int dirfd = v && strcmp(v, "0") == 0 ? -1 : ks_cache_dir_open(o->cache_dir, o->no_cache, why_dir, sizeof why_dir);
    if (dirfd < 0)
        return trial(ctx);
    ks_result tr;
    memset(&tr, 0, sizeof tr);
    trial_key(path, args, nargs, tr.key, tr.hex);
    char name[80];
    snprintf(name, sizeof name, "%s.trial", tr.hex);
    size_t n;
    const char *miss = NULL;
    char *why = NULL;
    char *payload = ks__entry_read(dirfd, name, KS__TRIAL_MAGIC, tr.key, KS__RESULT_MAX, &n, &miss);
    if (payload && trial_replay(payload, n, &why, &miss)) {
        free(payload);
        ks_cache_touch(dirfd, name);
        ks_prelude_debug("trial hit %s (%s)", tr.hex, path);
        close(dirfd);
        return why;
    }
    free(payload);
    ks_prelude_debug("trial miss %s (%s): %s", tr.hex, path, miss ? miss : "no entry");
    /* The trial's own names: those asked under a new mark. */
    clock_gettime(CLOCK_REALTIME_COARSE, &tr.start);
    int was = ks_fileguard_recording();
    unsigned long mark = ks_fileguard_mark();
    ks_fileguard_record(1);
    why = trial(ctx);
    ks_fileguard_record(was);
    if (ks_fileguard_seen_incomplete()) {
        close(dirfd);
        return why;
    }
    store_ctx sc = {&tr, {0}, NULL, 0, 0, NULL, NULL};
    char dir[PATH_MAX + 16];
    const char *origin;
    int dl = ks__cache_dir_path(o->cache_dir, "--cache-dir", dir, sizeof dir, &origin);
    sc.cache_dir = dl > 0 && (size_t)dl < sizeof dir ? dir : NULL;
    ks_buf_puts(&sc.b, KS__TRIAL_FORMAT);
    ks_fileguard_each_seen_since(mark, collect_seen_read, &sc);
    if (sc.nread)
        qsort(sc.read, sc.nread, sizeof *sc.read, str_cmp);
    ks_fileguard_each_seen_since(mark, put_seen, &sc);
    if (!sc.why) {
        ks_buf_printf(&sc.b, "O 4 %zu\n%s\n%s\n", why ? strlen(why) : 0, why ? "fail" : "pass", why ? why : "");
        size_t len = sc.b.len;
        char *text = ks_buf_take(&sc.b);
        if (ks__entry_write(dirfd, name, KS__TRIAL_MAGIC, tr.key, text, len) == 0) {
            unsigned long long freed, cap;
            ks_cache_trim(dirfd, tr.hex, &freed, &cap);
            ks_prelude_debug("trial stored %s (%zu bytes)", tr.hex, len);
        }
        free(text);
    }
    free(ks_buf_take(&sc.b));
    free(sc.read);
    close(dirfd);
    return why;
}
