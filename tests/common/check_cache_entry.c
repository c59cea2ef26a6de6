/*
 * check_cache_entry.c — the cache entry both caches write (runtime/
 * cache_entry.c, issue 20 #5): an entry read back is the payload written;
 * another magic, another key, a changed byte, a short file, one someone
 * else can write, a link or a FIFO is no entry; writing leaves no temporary
 * file; the directory rule's order (the caller's own setting,
 * KSTUB_CACHE_DIR, an absolute XDG_CACHE_HOME, HOME) and KSTUB_CACHE=0.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_entry.h"
#include "safefile.h"

static char dir[PATH_MAX];
static int dirfd_ = -1;
static const unsigned char key[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const char *const name = "0102030405060708090a000000000000000000000000000000000000000000.x";

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/kstub-entry-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(dirfd_, 0);
}

static void teardown(void)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (de->d_name[0] != '.' || (de->d_name[1] && strcmp(de->d_name, "..") != 0))
            unlinkat(dirfd_, de->d_name, 0);
    if (d)
        closedir(d);
    close(dirfd_);
    rmdir(dir);
}

static size_t files_in_dir(void)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void *read_entry(const char *magic, const unsigned char *k, const char **why)
{
    size_t n = 0;
    return ks__entry_read(dirfd_, name, magic, k, 1 << 20, &n, why);
}

START_TEST(written_entry_reads_back)
{
    static const char payload[] = "the payload\nof an entry";
    ck_assert_int_eq(ks__entry_write(dirfd_, name, "KSTUBT01", key, payload, sizeof payload - 1), 0);
    ck_assert_uint_eq(files_in_dir(), 1);           /* no temporary file left */
    size_t n = 0;
    const char *why = NULL;
    char *got = ks__entry_read(dirfd_, name, "KSTUBT01", key, 1 << 20, &n, &why);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(n, sizeof payload - 1);
    ck_assert_str_eq(got, payload);                 /* NUL-terminated */
    free(got);
    struct stat sb;
    ck_assert_int_eq(fstatat(dirfd_, name, &sb, 0), 0);
    ck_assert_uint_eq(sb.st_mode & 0777, 0600);
    ck_assert_uint_eq((size_t)sb.st_size, KS__ENTRY_HEADER_BYTES + n);
}
END_TEST

START_TEST(foreign_or_damaged_entries_are_no_entry)
{
    const char *why = NULL;
    ck_assert_ptr_null(read_entry("KSTUBT01", key, &why));
    ck_assert_str_eq(why, "no entry");
    ck_assert_int_eq(ks__entry_write(dirfd_, name, "KSTUBT01", key, "abc", 3), 0);
    ck_assert_ptr_null(read_entry("KSTUBT02", key, &why));     /* the other cache's magic */
    ck_assert_ptr_nonnull(strstr(why, "corrupt or foreign"));
    unsigned char other[32] = {9};
    ck_assert_ptr_null(read_entry("KSTUBT01", other, &why));
    /* A payload byte changed. */
    int fd = openat(dirfd_, name, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, "x", 1, KS__ENTRY_HEADER_BYTES), 1);
    close(fd);
    ck_assert_ptr_null(read_entry("KSTUBT01", key, &why));
    /* Cut short below the header. */
    ck_assert_int_eq(ks__entry_write(dirfd_, name, "KSTUBT01", key, "abc", 3), 0);
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(truncate(path, 40), 0);
    ck_assert_ptr_null(read_entry("KSTUBT01", key, &why));
    /* Others can write it: refused by both caches (the NVRTC cache did not
     * look at the mode before issue 20 #5). */
    ck_assert_int_eq(ks__entry_write(dirfd_, name, "KSTUBT01", key, "abc", 3), 0);
    ck_assert_int_eq(chmod(path, 0620), 0);
    ck_assert_ptr_null(read_entry("KSTUBT01", key, &why));
    ck_assert_ptr_nonnull(strstr(why, "not this user's alone"));
    /* A link to a good entry, and a FIFO. */
    ck_assert_int_eq(chmod(path, 0600), 0);
    char target[PATH_MAX + 128];
    snprintf(target, sizeof target, "%s/good", dir);
    ck_assert_int_eq(rename(path, target), 0);
    ck_assert_int_eq(symlink(target, path), 0);
    ck_assert_ptr_null(read_entry("KSTUBT01", key, &why));
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_ptr_null(read_entry("KSTUBT01", key, &why));
    ck_assert_str_eq(why, "the entry is not a regular file");
}
END_TEST

START_TEST(directory_rule_order)
{
    char path[PATH_MAX];
    const char *origin;
    setenv("KSTUB_CACHE_DIR", "/k", 1);
    setenv("XDG_CACHE_HOME", "/x", 1);
    setenv("HOME", "/h", 1);
    ck_assert_int_eq(ks__cache_dir_path("/own", "--cache-dir", path, sizeof path, &origin), 4);
    ck_assert_str_eq(path, "/own");
    ck_assert_str_eq(origin, "--cache-dir");
    ck_assert_int_eq(ks__cache_dir_path("", "--cache-dir", path, sizeof path, &origin), 2);
    ck_assert_str_eq(origin, "KSTUB_CACHE_DIR");
    unsetenv("KSTUB_CACHE_DIR");
    ck_assert_int_ge(ks__cache_dir_path(NULL, "x", path, sizeof path, &origin), 0);
    ck_assert_str_eq(path, "/x/kstub");
    setenv("XDG_CACHE_HOME", "relative", 1);          /* ignored, as the XDG spec says */
    ck_assert_int_ge(ks__cache_dir_path(NULL, "x", path, sizeof path, &origin), 0);
    ck_assert_str_eq(path, "/h/.cache/kstub");
    ck_assert_str_eq(origin, "HOME");
    unsetenv("HOME");
    ck_assert_int_eq(ks__cache_dir_path(NULL, "x", path, sizeof path, &origin), -1);
    setenv("KSTUB_CACHE", "0", 1);
    ck_assert(ks__cache_env_off());
    setenv("KSTUB_CACHE", "1", 1);
    ck_assert(!ks__cache_env_off());
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cache_entry");
    TCase *tc = tcase_create("entry");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, written_entry_reads_back);
    tcase_add_test(tc, foreign_or_damaged_entries_are_no_entry);
    tcase_add_test(tc, directory_rule_order);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
