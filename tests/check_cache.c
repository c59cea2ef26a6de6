/*
 * check_cache.c — the cache stays small (issue 21): KSTUB_CACHE_SIZE parsed,
 * generation evicts the least recently used prelude entries to stay under
 * the cap (a hit counts as a use), and `kstub cache --stats / --prune /
 * --clear` on entries made by hand (sizes and times chosen) as well as real
 * ones. Files that are not cache entries are never touched.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../generator/cachecmd.h"
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
    ck_assert_int_eq(ks_cache_parse_size("64KiB", &v), 0);
    ck_assert_uint_eq(v, 64ULL << 10);
    ck_assert_int_eq(ks_cache_parse_size("", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("-1", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("12T", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("M", &v), -1);
    ck_assert_int_eq(ks_cache_parse_size("99999999999999999999G", &v), -1);
    unsetenv("KSTUB_CACHE_SIZE");
    const char *origin;
    ck_assert_uint_eq(ks_cache_cap(&origin), 256ULL << 20);
    ck_assert_str_eq(origin, "default");
    setenv("KSTUB_CACHE_SIZE", "30M", 1);
    ck_assert_uint_eq(ks_cache_cap(&origin), 30ULL << 20);
    ck_assert_str_eq(origin, "KSTUB_CACHE_SIZE");
    unsetenv("KSTUB_CACHE_SIZE");
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
    run(NULL, "echo mine > '%s/cache/notes.txt'", tmpdir);
    char *out;
    int rc = run(&out, "'%s' cache --stats --cache-dir '%s/cache'", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
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
    ck_assert_msg(rc == 0 && strstr(out, "removed 2 entries"), "%s", out);
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

START_TEST(usage_errors)
{
    char *out;
    ck_assert_int_eq(run(&out, "'%s' cache --prune --clear", kstub_bin()), 2);
    free(out);
    ck_assert_int_eq(run(&out, "'%s' cache --max-size lots --stats", kstub_bin()), 2);
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
 * and third (least recently used goes first). */
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
        rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR=cache KSTUB_CACHE_SIZE=%lld KSTUB_DEBUG_PCH=1 '%s' k.cu "
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

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("command");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sizes_parse);
    tcase_add_test(tc, stats_prune_clear);
    tcase_add_test(tc, prune_removes_old_leftovers_only);
    tcase_add_test(tc, usage_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("cap");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, generation_stays_under_the_cap);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(cache_suite(), CK_FORK_GETENV);
}
