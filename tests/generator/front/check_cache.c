/*
 * check_cache.c — the cache stays small (issue 21): KSTUB_CACHE_SIZE parsed,
 * generation evicts the least recently used prelude entries to stay under
 * the cap (a hit counts as a use), and `kstub cache --stats / --prune /
 * --clear` on entries made by hand (sizes and times chosen) as well as real
 * ones. Files that are not cache entries are never touched.
 */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "front/prelude/cachecmd.h"
#include "testutil.h"

static char tmpdir[PATH_MAX];

static const char *kstub_bin(void)
{
    const char *k = getenv("KSTUB");
    return k ? k : "build/bin/kstub";
}

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/kstub-cache-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    char *rp = realpath(tmpdir, NULL);
    ck_assert_ptr_nonnull(rp);
    snprintf(tmpdir, sizeof tmpdir, "%s", rp);
    free(rp);
    char cache[PATH_MAX + 16];
    snprintf(cache, sizeof cache, "%s/cache", tmpdir);
    ck_assert_int_eq(mkdir(cache, 0700), 0);
}

static void remove_tmpdir(void)
{
    run(NULL, "rm -rf '%s'", tmpdir);
}

/* A hand-made file in the cache: KEY (one hex digit repeated 64 times) and
 * suffix, size bytes, modification time now - age seconds. */
static void fake(char digit, const char *suffix, long size, long age)
{
    char path[PATH_MAX + 128];
    int n = snprintf(path, sizeof path, "%s/cache/", tmpdir);
    memset(path + n, digit, 64);
    snprintf(path + n + 64, sizeof path - (size_t)n - 64, "%s", suffix);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), size), 0);
    fclose(f);
    char cmd[PATH_MAX + 200];
    snprintf(cmd, sizeof cmd, "touch -d '@%ld' '%s'", (long)time(NULL) - age, path);
    ck_assert_int_eq(system(cmd), 0);
}

static int exists(char digit, const char *suffix)
{
    char path[PATH_MAX + 128];
    int n = snprintf(path, sizeof path, "%s/cache/", tmpdir);
    memset(path + n, digit, 64);
    snprintf(path + n + 64, sizeof path - (size_t)n - 64, "%s", suffix);
    return access(path, F_OK) == 0;
}

/* The bytes of every file in the cache directory. */
static long long cache_bytes(void)
{
    char *out;
    ck_assert_int_eq(run(&out, "cd '%s/cache' && find . -type f -printf '%%s\\n' | awk '{s+=$1} END {print s+0}'",
                         tmpdir), 0);
    long long v = atoll(out);
    free(out);
    return v;
}

START_TEST(sizes_parse)
{
    unsigned long long v;
    ck_assert_int_eq(ks_cache_parse_size("0", &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(ks_cache_parse_size("1048576", &v), 0);
    ck_assert_uint_eq(v, 1048576);
    ck_assert_int_eq(ks_cache_parse_size("500M", &v), 0);
    ck_assert_uint_eq(v, 500ULL << 20);
    ck_assert_int_eq(ks_cache_parse_size("2G", &v), 0);
    ck_assert_uint_eq(v, 2ULL << 30);
    ck_assert_int_eq(ks_cache_parse_size("64K", &v), 0);
    ck_assert_uint_eq(v, 64ULL << 10);
    ck_assert_int_eq(ks_cache_parse_size("18446744073709551615", &v), 0);
    ck_assert_uint_eq(v, ~0ULL);
    ck_assert_int_eq(ks_cache_parse_size("", &v), -1);
    /* Issue 26 #9: exactly digits and an optional K, M or G. strtoull took
     * " -1" (a leading space) for 2^64 - 1. */
    static const char *const bad[] = {" -1", " 1", "+1", "1 ", "1M ", "0x10", "1.5G", "64KiB", "1MB",
                                      "1m", "1k", "18446744073709551616", "17179869184G", "1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(ks_cache_parse_size(bad[i], &v) == -1, "'%s' taken for %llu", bad[i], v);
    ck_assert_int_eq(ks_cache_parse_size("", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("-1", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("12T", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("M", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("99999999999999999999G", &v), -1);
    unsetenv("KSTUB_CACHE_SIZE");
    const char *origin;
    ck_assert_uint_eq(ks_cache_cap(&origin), 2048ULL << 20);
    ck_assert_str_eq(origin, "default");
    setenv("KSTUB_CACHE_SIZE", "30M", 1);
    ck_assert_uint_eq(ks_cache_cap(&origin), 30ULL << 20);
    ck_assert_str_eq(origin, "KSTUB_CACHE_SIZE");
    unsetenv("KSTUB_CACHE_SIZE");
}
END_TEST

/* Issue 26 #9 and #10: KSTUB_CACHE_SIZE=" -1" is no size: one warning that
 * names the value, escaped (a newline in it starts no line of its own), and
 * the default cap; --max-size " -1" is a usage error naming it escaped. */
START_TEST(bad_sizes_are_reported_escaped)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "{ KSTUB_CACHE_SIZE=' -1' '%s' cache --stats --cache-dir '%s/cache' 2>&1 >/dev/null; }",
                 kstub_bin(), tmpdir);
    ck_assert_msg(strstr(out, "kstub: warning: KSTUB_CACHE_SIZE=' -1' is not a size"), "%s", out);
    ck_assert_msg(!strstr(strstr(out, "warning") + 1, "warning"), "more than one warning:\n%s", out);
    free(out);
    rc = run(&out, "{ KSTUB_CACHE_SIZE=\"$(printf '1\\n::error::forged')\" '%s' cache --stats "
                   "--cache-dir '%s/cache' 2>&1 >/dev/null; }", kstub_bin(), tmpdir);
    ck_assert_msg(strstr(out, "KSTUB_CACHE_SIZE='1\\n::error::forged'") && !strstr(out, "\n::error"), "%s", out);
    free(out);
    rc = run(&out, "'%s' cache --prune --max-size ' -1' --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 2 && strstr(out, "--max-size ' -1' is not a size"), "%s", out);
    free(out);
    rc = run(&out, "'%s' cache --prune --max-size \"$(printf '1\\n::error::x')\" --cache-dir '%s/cache'",
             kstub_bin(), tmpdir);
    ck_assert_msg(rc == 2 && strstr(out, "'1\\n::error::x'"), "%s", out);
    free(out);
    /* The cap in force is the default. */
    rc = run(&out, "{ KSTUB_CACHE_SIZE=' -1' '%s' cache --stats --cache-dir '%s/cache' 2>/dev/null; }",
             kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "cap               2147483648 bytes (2.0 GiB, default)"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 26 #10: a cache directory whose name holds a newline is printed
 * escaped by --stats (stdout) and in the refusal (stderr). */
START_TEST(cache_paths_are_escaped)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "d=\"$(printf '%s/new\\n::error::line')\" && mkdir -m 700 \"$d\" && "
                 "'%s' cache --stats --cache-dir \"$d\"", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0 && strstr(out, "/new\\n::error::line") && !strstr(out, "\n::error"), "%s", out);
    free(out);
    rc = run(&out, "d=\"$(printf '%s/open\\n::error::line')\" && mkdir -m 777 \"$d\" && "
                 "'%s' cache --stats --cache-dir \"$d\" 2>&1", tmpdir, kstub_bin());
    ck_assert_msg(rc == 1 && strstr(out, "/open\\n::error::line") && !strstr(out, "\n::error"), "%s", out);
    free(out);
    /* KSTUB_DEBUG_PCH names the directory it does not use. */
    run(NULL, "printf '__global__ void k(int *p) { *p = 1; }\\n' > '%s/k.cu'", tmpdir);
    rc = run(&out, "cd '%s' && KSTUB_DEBUG_PCH=1 KSTUB_CACHE_DIR=\"$(printf '%s/open\\n::error::line')\" "
                   "'%s' k.cu --list", tmpdir, tmpdir, kstub_bin());
    ck_assert_msg(rc == 0 && strstr(out, "prelude cache: not used") && strstr(out, "/open\\n::error::line") &&
                  !strstr(out, "\n::error"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* A temporary file of either cache, named as ks__entry_tmp_name names it,
 * for pid, last written age seconds ago. */
static void fake_tmp(const char *name, long size, long age)
{
    run(NULL, "cd '%s/cache' && truncate -s %ld '%s' && touch -d '@%ld' '%s'", tmpdir, size, name,
        (long)time(NULL) - age, name);
}

static int tmp_exists(const char *name)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/cache/%s", tmpdir, name);
    return access(path, F_OK) == 0;
}

/* Issue 26 #5: an interrupted write leaves ".<16 hex>.<pid>.<n>.<ns>….tmp".
 * --stats counts it as a leftover; --prune and --clear remove it once ten
 * minutes old with its writer gone, never a younger one nor a live
 * writer's (this process's pid), whatever its age. */
START_TEST(temporaries_are_leftovers)
{
    make_tmpdir();
    char dead_old[128], dead_young[128], live_old[128], nv_old[128];
    /* A pid no process has: above the kernel's pid_max. */
    long dead = 99999999;
    snprintf(dead_old, sizeof dead_old, ".0a7c0a7c0a7c0a7c.%ld.1.1f.pch.tmp", dead);
    snprintf(dead_young, sizeof dead_young, ".1b7c0a7c0a7c0a7c.%ld.2.2f.pch.tmp", dead);
    snprintf(live_old, sizeof live_old, ".2c7c0a7c0a7c0a7c.%ld.3.3f.pch.tmp", (long)getpid());
    snprintf(nv_old, sizeof nv_old, ".3d7c0a7c0a7c0a7c.%ld.4.4f.tmp", dead);
    fake_tmp(dead_old, 1000, 3600);
    fake_tmp(dead_young, 100, 60);
    fake_tmp(live_old, 10, 3600);
    fake_tmp(nv_old, 1, 3600);
    char *out;
    int rc = run(&out, "'%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "leftovers         4 (1111 bytes)") &&
                  strstr(out, "total             1111 bytes"), "%s", out);
    free(out);
    /* A file of the user's in the directory kstub has claimed (its tag). */
    run(NULL, "echo mine > '%s/cache/.hidden.tmp'", tmpdir);
    rc = run(&out, "'%s' cache --prune --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "2 leftovers"), "%s", out);
    free(out);
    ck_assert(!tmp_exists(dead_old) && !tmp_exists(nv_old));
    ck_assert(tmp_exists(dead_young) && tmp_exists(live_old) && tmp_exists(".hidden.tmp"));
    rc = run(&out, "'%s' cache --clear --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "removed 0 entries and 0 leftovers") && strstr(out, "kept 2 temporary files"), "%s", out);
    free(out);
    ck_assert(tmp_exists(dead_young) && tmp_exists(live_old) && tmp_exists(".hidden.tmp"));
    /* Ten minutes on, the dead writer's goes; the live one's stays. */
    fake_tmp(dead_young, 100, 601);
    rc = run(&out, "'%s' cache --clear --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "removed 0 entries and 1 leftover (100 bytes); kept 1 temporary file"), "%s", out);
    free(out);
    ck_assert(!tmp_exists(dead_young) && tmp_exists(live_old));
    remove_tmpdir();
}
END_TEST

/* Three entries of 10 bytes (a prelude, its PCH), used 300, 200 and 100 s
 * ago, an NVRTC image of 10 bytes 250 s ago, and a file that is no entry:
 * --stats counts them; --prune to 25 bytes removes the two least recently
 * used (a, then the NVRTC image) and leaves the rest; --clear removes every
 * entry and nothing else. */
START_TEST(stats_prune_clear)
{
    make_tmpdir();
    fake('a', ".prelude", 4, 300);
    fake('a', ".0123456789abcdef.pch", 6, 300);
    fake('b', ".prelude", 4, 200);
    fake('b', ".0123456789abcdef.pch", 6, 200);
    fake('c', ".prelude", 4, 100);
    fake('c', ".0123456789abcdef.pch", 6, 100);
    fake('d', ".nvrtc", 10, 250);
    char *out;
    int rc = run(&out, "'%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    run(NULL, "echo mine > '%s/cache/notes.txt'", tmpdir);
    ck_assert_msg(strstr(out, "preludes          3 (30 bytes)") && strstr(out, "NVRTC images      1 (10 bytes)") &&
                  strstr(out, "total             40 bytes"), "%s", out);
    free(out);
    rc = run(&out, "'%s' cache --prune --max-size 25 --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "removed 2 least recently used entries"), "%s", out);
    free(out);
    ck_assert(!exists('a', ".prelude") && !exists('a', ".0123456789abcdef.pch"));
    ck_assert(!exists('d', ".nvrtc"));
    ck_assert(exists('b', ".prelude") && exists('c', ".prelude") && exists('c', ".0123456789abcdef.pch"));
    rc = run(&out, "'%s' cache --clear --cache-dir '%s/cache' && ls -A '%s/cache'", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "removed 2 entries and 0 leftovers"), "%s", out);
    ck_assert_msg(strstr(out, "notes.txt") && !strstr(out, ".prelude") && !strstr(out, ".pch"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* --prune also removes a PCH whose entry is gone once it is a minute old (a
 * builder that died), never a fresh one (a builder writing its entry now). */
START_TEST(prune_removes_old_leftovers_only)
{
    make_tmpdir();
    fake('e', ".0123456789abcdef.pch", 100, 3600);
    fake('f', ".0123456789abcdef.pch", 100, 0);
    char *out;
    int rc = run(&out, "'%s' cache --prune --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "1 leftover"), "%s", out);
    free(out);
    ck_assert(!exists('e', ".0123456789abcdef.pch"));
    ck_assert(exists('f', ".0123456789abcdef.pch"));
    remove_tmpdir();
}
END_TEST

/* The build time "about X s, as the last time" quotes is a whole
 * prelude's: a layer's build (0 ms) counts a miss and keeps it. */
START_TEST(layer_builds_keep_the_quoted_time)
{
    make_tmpdir();
    char cache[PATH_MAX + 16];
    snprintf(cache, sizeof cache, "%s/cache", tmpdir);
    int dirfd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(dirfd, 0);
    unsigned long long hits, misses, ms;
    ks_cache_count(dirfd, 0, 0, 1400);
    ks_cache_count(dirfd, 0, 1, 0);
    ks_cache_count(dirfd, 1, 1, 0);
    ks_cache_counts(dirfd, &hits, &misses, &ms);
    ck_assert_uint_eq(hits, 1);
    ck_assert_uint_eq(misses, 2);
    ck_assert_uint_eq(ms, 1400);
    ks_cache_count(dirfd, 0, 0, 900);
    ks_cache_counts(dirfd, &hits, &misses, &ms);
    ck_assert_uint_eq(ms, 900);
    close(dirfd);
    remove_tmpdir();
}
END_TEST

/* Issue 38: the counters per kind of prelude (base, layer), each lookup in
 * exactly one, their sums the totals; --stats shows both; a counts file of
 * the format before (totals only) reads as zeros per kind, and counting on
 * from it keeps its totals. */
START_TEST(counts_per_kind)
{
    make_tmpdir();
    char cache[PATH_MAX + 16];
    snprintf(cache, sizeof cache, "%s/cache", tmpdir);
    int dirfd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(dirfd, 0);
    run(NULL, "printf 'hits 5\\nmisses 2\\nbuild-ms 700\\n' > '%s/prelude-counts'", cache);
    unsigned long long k[6], hits, misses, ms;
    ks_cache_kind_counts(dirfd, k);
    ck_assert(k[0] == 0 && k[1] == 0 && k[2] == 0 && k[3] == 0);
    static const int seq[][2] = {{1, 0}, {1, 0}, {0, 0}, {1, 1}, {0, 1}, {0, 1}, {1, 1}};
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++)
        ks_cache_count(dirfd, seq[i][0], seq[i][1], seq[i][1] ? 0 : 300);
    ks_cache_kind_counts(dirfd, k);
    ks_cache_counts(dirfd, &hits, &misses, &ms);
    ck_assert_uint_eq(k[0], 2);        /* base hits */
    ck_assert_uint_eq(k[1], 1);        /* base misses */
    ck_assert_uint_eq(k[2], 2);        /* layer hits */
    ck_assert_uint_eq(k[3], 2);        /* layer misses */
    ck_assert_uint_eq(hits, 5 + 4);
    ck_assert_uint_eq(misses, 2 + 3);
    ck_assert_uint_eq(ms, 300);
    close(dirfd);
    char *out;
    int rc = run(&out, "'%s' cache --stats --cache-dir '%s'", kstub_bin(), cache);
    ck_assert_msg(rc == 0 && strstr(out, "prelude hits      9, misses 5 ") &&
                  strstr(out, "\n  base preludes   hits 2, misses 1\n") &&
                  strstr(out, "\n  layers          hits 2, misses 2\n"), "%s", out);
    free(out);
    /* Racing processes (make -j) lose no count and never leave a file that
     * reads as none. */
    pid_t kids[8];
    for (int i = 0; i < 8; i++) {
        kids[i] = fork();
        ck_assert_int_ge(kids[i], 0);
        if (kids[i] == 0) {
            int fd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            for (int j = 0; j < 50; j++)
                ks_cache_count(fd, j % 2, i % 2, 0);
            _exit(0);
        }
    }
    for (int i = 0; i < 8; i++)
        waitpid(kids[i], NULL, 0);
    dirfd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ks_cache_kind_counts(dirfd, k);
    ks_cache_counts(dirfd, &hits, &misses, &ms);
    close(dirfd);
    ck_assert_uint_eq(hits + misses, 14 + 400);
    ck_assert_uint_eq(k[0] + k[1] + k[2] + k[3], 7 + 400);
    ck_assert_uint_eq(k[2] + k[3], 4 + 200);
    remove_tmpdir();
}
END_TEST

/* A prelude entry for the eviction tests: KEY.prelude whose payload names a
 * base (a layer) or not, and its PCH, dated age seconds ago. */
static void fake_prelude(char digit, int layer, long pch_size, long age)
{
    char path[PATH_MAX + 128];
    int n = snprintf(path, sizeof path, "%s/cache/", tmpdir);
    memset(path + n, digit, 64);
    snprintf(path + n + 64, sizeof path - (size_t)n - 64, ".prelude");
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    char head[80];
    memset(head, 'h', sizeof head);
    fwrite(head, 1, sizeof head, f);
    fprintf(f, "\nkey x\n%sf /usr/include/stdio.h\n", layer ? "base ABC.pch 1 2.3\n" : "");
    fclose(f);
    char cmd[PATH_MAX + 200];
    snprintf(cmd, sizeof cmd, "touch -d '@%ld' '%s'", (long)time(NULL) - age, path);
    ck_assert_int_eq(system(cmd), 0);
    fake(digit, ".0123456789abcdef.pch", pch_size, age);
}

/* Issue 38: eviction takes every layer, least recently used first, before
 * any base prelude, however recently the layer was used: a layer is
 * rebuilt on its base in a fraction of the base's time. Then the bases,
 * least recently used first. By --prune and by the trim after a write. */
START_TEST(eviction_takes_layers_before_bases)
{
    make_tmpdir();
    fake_prelude('a', 0, 1000, 400);   /* the oldest: a base */
    fake_prelude('b', 1, 1000, 10);    /* the newest: a layer */
    fake_prelude('c', 1, 1000, 300);   /* an older layer */
    fake_prelude('d', 0, 1000, 200);   /* a base */
    char *out;
    int rc = run(&out, "'%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "2 of them layers"), "%s", out);
    free(out);
    /* Room for three entries: the older layer goes. */
    rc = run(&out, "'%s' cache --prune --max-size 3400 --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "removed 1 least recently used entry"), "%s", out);
    free(out);
    ck_assert(!exists('c', ".prelude") && exists('a', ".prelude") && exists('b', ".prelude") && exists('d', ".prelude"));
    /* Room for two: the other layer, though newer than both bases. */
    rc = run(&out, "'%s' cache --prune --max-size 2300 --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "removed 1 least recently used entry"), "%s", out);
    free(out);
    ck_assert(!exists('b', ".prelude") && exists('a', ".prelude") && exists('d', ".prelude"));
    /* Room for one: the older base. */
    rc = run(&out, "'%s' cache --prune --max-size 1200 --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    ck_assert(!exists('a', ".prelude") && exists('d', ".prelude"));
    remove_tmpdir();
}
END_TEST

/* Issue 38: the default cap holds a project: 2 GiB, said by --stats. */
START_TEST(default_cap_holds_a_project)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "env -u KSTUB_CACHE_SIZE '%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "cap               2147483648 bytes (2.0 GiB, default)"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 38: kstub cache --warm OPTIONS builds the base prelude those
 * options give (a file generated with them then hits it), says so, finds
 * it the second time, leaves nothing behind in the temporary directory,
 * and with options that do not parse shows kstub's message and fails. */
START_TEST(warm_builds_the_base_prelude)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "cd '%s' && mkdir t && TMPDIR=$PWD/t '%s' cache --warm -std=c++17 --cache-dir cache",
                 tmpdir, kstub_bin());
    ck_assert_msg(rc == 0 && strstr(out, "built the base prelude"), "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && TMPDIR=$PWD/t '%s' cache --warm -std=c++17 --cache-dir cache && ls -A t | wc -l",
             tmpdir, kstub_bin());
    ck_assert_msg(rc == 0 && strstr(out, "already in the cache") && strstr(out, "\n0\n"), "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && printf '__global__ void k(int *p) { *p = 1; }\\n' > k.cu && KSTUB_DEBUG_PCH=1 "
             "'%s' k.cu -std=c++17 --cache-dir cache -o k 2>&1 && '%s' cache --stats --cache-dir cache", tmpdir,
             kstub_bin(), kstub_bin());
    ck_assert_msg(rc == 0 && strstr(out, "prelude cache: hit") && !strstr(out, "cache: miss") &&
                  strstr(out, "base preludes   hits 2, misses 1"), "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && '%s' cache --warm --no-such-option --cache-dir cache", tmpdir, kstub_bin());
    ck_assert_msg(rc == 2 && strstr(out, "--no-such-option") && strstr(out, "was not built"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(usage_errors)
{
    char *out;
    ck_assert_int_eq(run(&out, "'%s' cache --prune --clear", kstub_bin()), 2);
    free(out);
    ck_assert_int_eq(run(&out, "'%s' cache --prune --max-size lots", kstub_bin()), 2);
    ck_assert_msg(strstr(out, "not a size"), "%s", out);
    free(out);
    ck_assert_int_eq(run(&out, "'%s' cache --bogus", kstub_bin()), 2);
    free(out);
}
END_TEST

/* Real entries: four prelude configurations (a -D each: another key, another
 * PCH of about 10 MiB) under a cap of two and a half. After every run the
 * cache is under the cap and the entry just made is there; the second
 * configuration, used again before the fourth is built, outlives the first
 * and third (least recently used goes first). The result cache is off: the
 * second configuration's second run must parse (load its prelude), not
 * replay the first run's result. */
START_TEST(generation_stays_under_the_cap)
{
    make_tmpdir();
    run(NULL, "printf '__global__ void k(int *p) { *p = 1; }\\n' > '%s/k.cu'", tmpdir);
    long long one = 0;
    char *out;
    /* The size of one entry, to set the cap by. */
    int rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR=probe '%s' k.cu --arch sm_75 -o p && "
                 "find probe -type f -printf '%%s\\n' | awk '{s+=$1} END {print s+0}'", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    one = atoll(out);
    free(out);
    ck_assert_int_gt(one, 1 << 20);
    long long cap = one * 5 / 2;
    /* Configurations that differ in the prelude itself (a -D of a name its
     * headers never mention would share one): the architecture. */
    static const char *const arch[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"};
    int order[] = {1, 2, 3, 2, 4};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR=cache KSTUB_CACHE_SIZE=%lld KSTUB_DEBUG_PCH=1 KSTUB_RESULT_CACHE=0 '%s' k.cu "
                 "--arch %s -o out%d", tmpdir, cap, kstub_bin(), arch[order[i]], order[i]);
        ck_assert_msg(rc == 0, "%s", out);
        ck_assert_msg(cache_bytes() <= cap, "run %zu: %lld bytes over the cap %lld\n%s", i, cache_bytes(), cap, out);
        free(out);
    }
    /* Which configurations are left: ask kstub (a hit says "hit"). */
    const int kept[] = {2, 4}, gone[] = {1, 3};
    for (int j = 0; j < 2; j++) {
        rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR=cache KSTUB_CACHE_SIZE=0 KSTUB_DEBUG_PCH=1 '%s' k.cu --arch %s "
                 "--list", tmpdir, kstub_bin(), arch[kept[j]]);
        ck_assert_msg(rc == 0 && strstr(out, "prelude cache: hit"), "%s should be kept:\n%s", arch[kept[j]], out);
        free(out);
    }
    for (int j = 0; j < 2; j++) {
        rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR=cache KSTUB_CACHE_SIZE=0 KSTUB_DEBUG_PCH=1 '%s' k.cu --arch %s "
                 "--list", tmpdir, kstub_bin(), arch[gone[j]]);
        ck_assert_msg(rc == 0 && strstr(out, "prelude cache: miss"), "%s should be evicted:\n%s", arch[gone[j]], out);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

/* Issue 41 #12: LLVM's own temporary beside a PCH being saved
 * ("….pch.tmp.temp-stream-XXXXXX", left by a kill during the save) is a
 * temporary of the cache like kstub's: counted, and removed once its
 * writer is gone. A temporary dated in the future (a dead writer's) is as
 * much a leftover as an old one; a live writer's is kept either way. */
START_TEST(llvm_and_future_temporaries_are_leftovers)
{
    make_tmpdir();
    long dead = 99999999;
    char stream[160], future[128], future_live[128], stream_live[160];
    snprintf(stream, sizeof stream, ".4e7c0a7c0a7c0a7c.%ld.1.1f.pch.tmp.temp-stream-a1B2c3", dead);
    snprintf(stream_live, sizeof stream_live, ".5f7c0a7c0a7c0a7c.%ld.1.1f.pch.tmp.temp-stream-Zz9", (long)getpid());
    snprintf(future, sizeof future, ".6a7c0a7c0a7c0a7c.%ld.2.2f.pch.tmp", dead);
    snprintf(future_live, sizeof future_live, ".7b7c0a7c0a7c0a7c.%ld.3.3f.pch.tmp", (long)getpid());
    fake_tmp(stream, 1000, 3600);
    fake_tmp(stream_live, 1, 3600);
    fake_tmp(future, 100, -365L * 24 * 3600);
    fake_tmp(future_live, 10, -365L * 24 * 3600);
    char *out;
    int rc = run(&out, "'%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "leftovers         4 (1111 bytes)"), "%s", out);
    free(out);
    rc = run(&out, "'%s' cache --prune --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "and 2 leftovers (1.1 KiB)"), "%s", out);
    free(out);
    ck_assert(!tmp_exists(stream) && !tmp_exists(future));
    ck_assert(tmp_exists(stream_live) && tmp_exists(future_live));
    remove_tmpdir();
}
END_TEST

/* Issue 41 #12: --clear counts entries (a KEY.prelude or KEY.nvrtc and its
 * files) apart from leftovers: a KEY.lock alone is no entry. */
START_TEST(clear_counts_a_lock_as_no_entry)
{
    make_tmpdir();
    fake('a', ".prelude", 4, 300);
    fake('a', ".0123456789abcdef.pch", 6, 300);
    fake('a', ".lock", 0, 300);
    fake('b', ".lock", 0, 300);
    fake('c', ".nvrtc", 5, 300);
    char *out;
    int rc = run(&out, "'%s' cache --clear --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "removed 2 entries and 1 leftover (15 bytes)"), "%s", out);
    free(out);
    ck_assert(!exists('a', ".lock") && !exists('b', ".lock") && !exists('c', ".nvrtc"));
    remove_tmpdir();
}
END_TEST

/* Runs cmd (a format) as a user that cannot write the cache: the caller
 * itself when it is not root (the directory made read-only), else nobody
 * (through setpriv; the directory handed to nobody, then made read-only),
 * since root writes a directory of mode 0500. */
static int run_read_only(char **out, const char *cmd)
{
    char full[PATH_MAX * 2 + 512];
    if (geteuid() == 0) {
        run(NULL, "chown -R 65534:65534 '%s' && chmod 0500 '%s/cache'", tmpdir, tmpdir);
        snprintf(full, sizeof full, "setpriv --reuid=65534 --regid=65534 --clear-groups %s", cmd);
    } else {
        run(NULL, "chmod 0500 '%s/cache'", tmpdir);
        snprintf(full, sizeof full, "%s", cmd);
    }
    int rc = run(out, "%s", full);
    run(NULL, "chmod 0700 '%s/cache'", tmpdir);
    return rc;
}

/* Issue 41 #13: --clear and --prune on a directory nothing can be removed
 * from say so and fail, and never claim to have removed anything. */
START_TEST(read_only_cache_reports_what_was_removed)
{
    make_tmpdir();
    char *out;
    ck_assert_int_eq(run(&out, "'%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir), 0);
    free(out);
    fake('a', ".prelude", 4, 300);
    fake('a', ".0123456789abcdef.pch", 6, 300);
    fake('e', ".0123456789abcdef.pch", 100, 3600);
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd, "'%s' cache --clear --cache-dir '%s/cache' 2>&1", kstub_bin(), tmpdir);
    int rc = run_read_only(&out, cmd);
    ck_assert_msg(rc == 1 && strstr(out, "removed 0 entries and 0 leftovers (0 bytes)") &&
                  strstr(out, "could not remove 2 entries or leftovers: "), "%s", out);
    free(out);
    ck_assert(exists('a', ".prelude") && exists('e', ".0123456789abcdef.pch"));
    snprintf(cmd, sizeof cmd, "'%s' cache --prune --max-size 1 --cache-dir '%s/cache' 2>&1", kstub_bin(), tmpdir);
    rc = run_read_only(&out, cmd);
    ck_assert_msg(rc == 1 && strstr(out, "removed 0 least recently used entries and 0 leftovers (0 bytes)") &&
                  strstr(out, "could not remove"), "%s", out);
    free(out);
    ck_assert(exists('a', ".prelude") && exists('e', ".0123456789abcdef.pch"));
    remove_tmpdir();
}
END_TEST

/* Issue 41 #15: a cache directory must be kstub's: one holding its tag, or
 * nothing but what a kstub cache writes (new, empty, or an older kstub's,
 * which is adopted and tagged). "/" and a directory of the user's own files
 * are refused by `kstub cache` and left untouched by generation. Issue 41
 * #19: the refusal reads as a sentence. */
START_TEST(only_kstubs_own_directory_is_a_cache)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "'%s' cache --stats --cache-dir / 2>&1", kstub_bin());
    ck_assert_msg(rc == 1 && strstr(out, "kstub cache: the cache directory '/' cannot be used: it holds '") &&
                  strstr(out, "not kstub's"), "%s", out);
    free(out);
    run(NULL, "mkdir -m 700 '%s/mine' && echo notes > '%s/mine/notes.txt'", tmpdir, tmpdir);
    rc = run(&out, "'%s' cache --clear --cache-dir '%s/mine' 2>&1", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 1 && strstr(out, "it holds 'notes.txt'"), "%s", out);
    free(out);
    run(NULL, "printf '__global__ void k(int *p) { *p = 1; }\\n' > '%s/k.cu'", tmpdir);
    rc = run(&out, "cd '%s' && KSTUB_DEBUG_PCH=1 KSTUB_CACHE_DIR=mine '%s' k.cu --list 2>&1 && ls -A mine | tr '\\n' ' '", tmpdir,
             kstub_bin());
    ck_assert_msg(rc == 0 && strstr(out, "prelude cache: not used: the cache directory") &&
                  strstr(out, "\nnotes.txt ") && strcmp(strstr(out, "\nnotes.txt "), "\nnotes.txt ") == 0,
                  "%s", out);
    free(out);
    /* An older kstub's cache (entries, a temporary, the counts): adopted. */
    fake('a', ".prelude", 4, 300);
    fake('a', ".0123456789abcdef.pch", 6, 300);
    fake_tmp(".0a7c0a7c0a7c0a7c.99999999.1.1f.pch.tmp", 1, 3600);
    run(NULL, "echo 'hits 1' > '%s/cache/prelude-counts'", tmpdir);
    rc = run(&out, "'%s' cache --stats --cache-dir '%s/cache' && head -c 43 '%s/cache/CACHEDIR.TAG'", kstub_bin(),
             tmpdir, tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "preludes          1") &&
                  strstr(out, "Signature: 8a477f597d28d172789f06886806bc55"), "%s", out);
    free(out);
    /* Tagged, it stays kstub's with other files beside. */
    run(NULL, "echo notes > '%s/cache/notes.txt'", tmpdir);
    ck_assert_int_eq(run(&out, "'%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir), 0);
    free(out);
    remove_tmpdir();
}
END_TEST

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("command");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sizes_parse);
    tcase_add_test(tc, stats_prune_clear);
    tcase_add_test(tc, prune_removes_old_leftovers_only);
    tcase_add_test(tc, usage_errors);
    tcase_add_test(tc, layer_builds_keep_the_quoted_time);
    tcase_add_test(tc, bad_sizes_are_reported_escaped);
    tcase_add_test(tc, cache_paths_are_escaped);
    tcase_add_test(tc, temporaries_are_leftovers);
    tcase_add_test(tc, llvm_and_future_temporaries_are_leftovers);
    tcase_add_test(tc, clear_counts_a_lock_as_no_entry);
    tcase_add_test(tc, read_only_cache_reports_what_was_removed);
    tcase_add_test(tc, only_kstubs_own_directory_is_a_cache);
    tcase_add_test(tc, counts_per_kind);
    tcase_add_test(tc, eviction_takes_layers_before_bases);
    tcase_add_test(tc, default_cap_holds_a_project);
    suite_add_tcase(s, tc);
    tc = tcase_create("cap");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, generation_stays_under_the_cap);
    tcase_add_test(tc, warm_builds_the_base_prelude);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(cache_suite(), CK_FORK_GETENV);
}
