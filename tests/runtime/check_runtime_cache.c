/*
 * check_runtime_cache.c — the runtime suite (tests/support/runtime_fixture.h): SHA-256
 * (common/sha256.c) and the NVRTC disk cache: cold and warm, damaged and foreign
 * entries rebuilt, unsafe directories not used, the trim under the cap. Its key
 * and the real NVRTC are check_runtime_cache_key.c's.
 */
#include "runtime_fixture.h"

/* ---- SHA-256 (common/sha256.c) ------------------------------------------------------------ */

static void hex_of(const void *data, size_t n, char hex[65])
{
    unsigned char d[32];
    ks__sha256(data, n, d);
    ks__sha256_hex(d, hex);
}

START_TEST(sha256_fips_vectors)
{
    /* FIPS 180-4 / NIST example messages. */
    char hex[65];
    hex_of("abc", 3, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hex_of("", 0, hex);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(m448, strlen(m448), hex);
    ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                       "klmnopqrlmnopqrsmnopqrstnopqrstu";
    hex_of(m896, strlen(m896), hex);
    ck_assert_str_eq(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* One million 'a', fed in uneven pieces to cross every block boundary case. */
    static char a[1000003];
    memset(a, 'a', sizeof a);
    ks__sha256_ctx c;
    ks__sha256_init(&c);
    size_t left = 1000000, step = 1;
    while (left > 0) {
        size_t take = step < left ? step : left;
        ks__sha256_update(&c, a, take);
        left -= take;
        step = step * 3 % 997 + 1;
    }
    unsigned char d[32];
    ks__sha256_final(&c, d);
    ks__sha256_hex(d, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST


/* ---- the NVRTC disk cache ------------------------------------------------------------------------ */

START_TEST(cache_cold_then_warm)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
    struct stat sb;
    ck_assert_int_eq(stat(cache_dir, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0700);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 1);
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);               /* and no temporary file left behind */
    ck_assert_int_eq(stat(entry, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0077, 0);

    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);   /* warm: no compile */
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&src_image, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 1);
    const unsigned char *copy;
    fake.last_image(&copy, NULL);
    ck_assert_mem_eq(copy, "\x7f" "ELFexte", 8);

    /* Other options or another architecture are other entries. */
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, (const char *[]){"-DX=1"}, 1), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, NULL, 0), KS_OK);
    fake.set_device(8, 0, 163 * 1024);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 3);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 3);
}
END_TEST

/* Compile once (cold), damage the entry with \p damage, then check a reload
 * ignores it, compiles again and leaves a good entry behind. */
static void damaged_entry_is_rebuilt(void (*damage)(const char *entry))
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_status(launch_saxpy(), KS_OK);
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    static unsigned char good[4096];
    size_t n = read_file(entry, good, sizeof good);
    damage(entry);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&src_image, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 0);
    const unsigned char *copy;
    fake.last_image(&copy, NULL);
    ck_assert_mem_eq(copy, "\x7f" "ELFexte", 8);
    /* Rewritten whole: the next load is a hit again. */
    static unsigned char again[4096];
    ck_assert_uint_eq(read_file(entry, again, sizeof again), n);
    ck_assert_mem_eq(again, good, n);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
}

static void flip_payload_byte(const char *entry)
{
    unsigned char buf[4096];
    size_t n = read_file(entry, buf, sizeof buf);
    buf[n - 3] ^= 0x40;                 /* the content no longer matches its hash */
    write_file(entry, buf, n);
}

static void truncate_entry(const char *entry)
{
    unsigned char buf[4096];
    size_t n = read_file(entry, buf, sizeof buf);
    write_file(entry, buf, n - 10);
}

static void header_only(const char *entry)
{
    unsigned char buf[4096];
    read_file(entry, buf, sizeof buf);
    write_file(entry, buf, 20);
}

/* A valid entry for another key, under this key's name (a copied file). */
static void foreign_entry(const char *entry)
{
    unsigned char buf[4096];
    size_t n = read_file(entry, buf, sizeof buf);
    buf[8] ^= 1;                        /* the key field */
    write_file(entry, buf, n);
}

START_TEST(cache_corrupt_entry_rebuilt) { damaged_entry_is_rebuilt(flip_payload_byte); }
END_TEST
START_TEST(cache_truncated_entry_rebuilt) { damaged_entry_is_rebuilt(truncate_entry); }
END_TEST
START_TEST(cache_short_entry_rebuilt) { damaged_entry_is_rebuilt(header_only); }
END_TEST
START_TEST(cache_foreign_entry_rebuilt) { damaged_entry_is_rebuilt(foreign_entry); }
END_TEST

/* A warm cache must not load libnvrtc: the library is keyed by its file
 * (located without loading it), so a hit needs nothing from it. Each step
 * runs in a child process, so each starts with nothing loaded. */
static int nvrtc_step(const char *lib, int want_loaded, int want_from_cache)
{
    pid_t pid = fork();
    if (pid == 0) {
        ks_image_info info;
        int ok = launch_saxpy() == KS_OK && ks_image_info_get(&src_image, &info) == KS_OK &&
                 info.from_cache == want_from_cache &&
                 (dlopen(lib, RTLD_NOW | RTLD_NOLOAD) != NULL) == want_loaded;
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

START_TEST(cache_hit_does_not_load_nvrtc)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    /* A private copy of the fake NVRTC: whether it is mapped tells whether it was loaded. */
    char lib[PATH_MAX];
    snprintf(lib, sizeof lib, "%s/libnvrtc-copy.so", tmp_dir);
    static unsigned char buf[1 << 20];
    size_t n = read_file(FAKE_NVRTC_PATH, buf, sizeof buf);
    FILE *f = fopen(lib, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
    setenv("KSTUB_LIBNVRTC", lib, 1);
    ck_assert_msg(nvrtc_step(lib, 1, 0), "cold: compiled with the located NVRTC");
    ck_assert_msg(nvrtc_step(lib, 0, 1), "warm: from the cache, libnvrtc never loaded");
    /* Another NVRTC build (here: the same file changed) is another key. */
    struct timespec later[2] = {{0, UTIME_OMIT}, {2000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, lib, later, 0), 0);
    ck_assert_msg(nvrtc_step(lib, 1, 0), "a changed NVRTC file misses the cache");
}
END_TEST

START_TEST(cache_disabled_writes_nothing)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    setenv("KSTUB_CACHE", "0", 1);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    ck_assert_int_eq(count_files(cache_dir, ""), -1);
    /* The API's switch, and its directory. */
    unsetenv("KSTUB_CACHE");
    ks_cache_enable(0);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(count_files(cache_dir, ""), -1);
    ks_cache_enable(1);
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/api", tmp_dir);
    ck_assert_status(ks_cache_set_dir(dir), KS_OK);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(count_files(dir, ".nvrtc"), 1);
    ck_assert_int_eq(count_files(cache_dir, ""), -1);
    ck_assert_status(ks_cache_set_dir(""), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_cache_set_dir(NULL), KS_OK);
}
END_TEST

START_TEST(cache_unsafe_dir_not_used)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_int_eq(mkdir(cache_dir, 0700) == 0 || errno == ENOENT, 1);
    char parent[128];
    snprintf(parent, sizeof parent, "%s/cache", tmp_dir);
    mkdir(parent, 0700);
    ck_assert_int_eq(mkdir(cache_dir, 0700), 0);
    ck_assert_int_eq(chmod(cache_dir, 0777), 0);    /* others could plant entries */
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 0);
}
END_TEST

/* A parent of the cache directory that others may write (without the sticky
 * bit) lets them swap the directory: the cache is not used (issue 10 #4). */
START_TEST(cache_parent_writable_not_used)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    char parent[128];
    snprintf(parent, sizeof parent, "%s/cache", tmp_dir);
    ck_assert_int_eq(mkdir(parent, 0700), 0);
    ck_assert_int_eq(chmod(parent, 0777), 0);
    ck_assert_status(launch_saxpy(), KS_OK);              /* loading works, uncached */
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 0);
    ck_assert_status(ks_cache_check(), KS_ERR_UNTRUSTED);
    ck_assert_message_has(parent);
    ck_assert_message_has("writable by others and not sticky");
    /* Sticky, as /tmp is: others cannot rename what is ours in it. */
    ck_assert_int_eq(chmod(parent, 01777), 0);
    ck_assert_status(ks_cache_check(), KS_OK);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 1);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    /* A parent that belongs to someone else (only root can arrange it here). */
    if (geteuid() == 0) {
        ck_assert_int_eq(chmod(parent, 0755), 0);
        ck_assert_int_eq(chown(parent, 12345, (gid_t)-1), 0);
        ck_assert_status(ks_cache_check(), KS_ERR_UNTRUSTED);
        ck_assert_message_has("belongs to uid 12345, neither root nor you");
        ck_assert_status(ks_image_unload(&src_image), KS_OK);
        ck_assert_status(launch_saxpy(), KS_OK);
        ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 3);   /* not read from there either */
    }
    /* The directory itself: someone else's, or writable by others. */
    ck_assert_int_eq(chown(parent, geteuid(), (gid_t)-1), 0);
    ck_assert_int_eq(chmod(cache_dir, 0770), 0);
    ck_assert_status(ks_cache_check(), KS_ERR_UNTRUSTED);
    ck_assert_message_has("is writable by others");
    ck_assert_int_eq(chmod(cache_dir, 0700), 0);
    ck_assert_status(ks_cache_check(), KS_OK);
    /* Off is told apart. */
    ks_cache_enable(0);
    ck_assert_status(ks_cache_check(), KS_ERR_UNSUPPORTED);
    ck_assert_message_has("turned off");
}
END_TEST

/* The race of issue 10 #4, reproduced: a thread swaps a parent of the cache
 * directory with a symlink to an attacker's directory (renameat2
 * RENAME_EXCHANGE, so the parent always exists) as fast as it can, while
 * this thread loads the image up to 2,000 times. The attacker's directory
 * holds a valid entry for the same key whose payload differs in one byte;
 * it is writable by others (this test runs as one user: that stands for
 * "someone else's"), so the runtime must never take an entry from it.
 * Before the fix (lstat on the path, then open by path) 6 of 2,000 loads
 * took it; now the resolved path is walked component by component with
 * O_NOFOLLOW from "/", each checked by descriptor, so a load finds the real
 * directory or no cache, never the attacker's entry. Bounded to about 5 s. */
static volatile int swap_stop;
static int swap_errno;                        /* renameat2's errno in the swapping thread */
static unsigned long swaps_done;              /* so far, read by the loading thread */

static void *swap_parent(void *arg)
{
    const char *const *paths = arg;           /* the parent, the symlink beside it */
    uintptr_t swaps = 0;
    while (!__atomic_load_n(&swap_stop, __ATOMIC_RELAXED)) {
        if (renameat2(AT_FDCWD, paths[0], AT_FDCWD, paths[1], RENAME_EXCHANGE) != 0) {
            swap_errno = errno;
            return (void *)(uintptr_t)-1;
        }
        swaps++;
        __atomic_store_n(&swaps_done, (unsigned long)swaps, __ATOMIC_RELAXED);
    }
    if (swaps % 2 && renameat2(AT_FDCWD, paths[0], AT_FDCWD, paths[1], RENAME_EXCHANGE) != 0) {
        swap_errno = errno;                   /* (putting the real parent back) */
        return (void *)(uintptr_t)-1;
    }
    return (void *)swaps;
}

START_TEST(cache_parent_swap_race_never_loads_the_attackers_entry)
{
    alarm(50);
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_status(launch_saxpy(), KS_OK);          /* the genuine entry */
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    static unsigned char buf[1 << 16];
    size_t n = read_file(entry, buf, sizeof buf);
    ck_assert_uint_gt(n, 80 + 8);
    const unsigned char genuine4 = buf[80 + 4];

    /* The attacker's copy: <tmp>/evil/kstub/<entry>, payload byte 4 changed, hash made right. */
    char parent[128], evil[128], link[128], evil_entry[PATH_MAX + 400];
    snprintf(parent, sizeof parent, "%s/cache", tmp_dir);
    snprintf(evil, sizeof evil, "%s/evil", tmp_dir);
    snprintf(link, sizeof link, "%s/swap", tmp_dir);
    ck_assert_int_eq(mkdir(evil, 0700), 0);
    snprintf(evil_entry, sizeof evil_entry, "%s/kstub", evil);
    ck_assert_int_eq(mkdir(evil_entry, 0700), 0);
    ck_assert_int_eq(chmod(evil, 0777), 0);
    ck_assert_int_eq(chmod(evil_entry, 0777), 0);
    snprintf(evil_entry, sizeof evil_entry, "%s/kstub%s", evil, strrchr(entry, '/'));
    buf[80 + 4] ^= 0x20;
    ks__sha256(buf + 80, n - 80, buf + 48);
    write_file(evil_entry, buf, n);
    ck_assert_int_eq(symlink(evil, link), 0);

    /* The attack is real: by path, through the swapped parent, the attacker's entry is read. */
    ck_assert_int_eq(renameat2(AT_FDCWD, parent, AT_FDCWD, link, RENAME_EXCHANGE), 0);
    unsigned char seen[128];
    ck_assert_uint_eq(read_file(entry, seen, sizeof seen), sizeof seen);
    ck_assert_int_eq(seen[80 + 4], genuine4 ^ 0x20);
    ck_assert_status(ks_cache_check(), KS_ERR_UNTRUSTED);   /* the runtime does not use it */
    ck_assert_message_has("writable by others");
    ck_assert_int_eq(renameat2(AT_FDCWD, parent, AT_FDCWD, link, RENAME_EXCHANGE), 0);
    ck_assert_status(ks_cache_check(), KS_OK);

    const char *paths[2] = {parent, link};
    swap_stop = 0;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, swap_parent, paths), 0);
    /* Loads until the race has been run both ways (200 loads at least, one
     * that refused the swapped cache, 100 swaps), or 2000: counted, never
     * timed, so a slow or sanitized run does the same test (issue 19). */
    int loads = 0, hits = 0, misses = 0, attacker = 0;
    __atomic_store_n(&swaps_done, 0, __ATOMIC_RELAXED);
    for (; loads < 2000; loads++) {
        if (loads >= 200 && misses > 0 && __atomic_load_n(&swaps_done, __ATOMIC_RELAXED) > 100)
            break;
        ck_assert_status(ks_image_unload(&src_image), KS_OK);
        fake.reset();                                  /* its library table holds 64 */
        fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
        ck_assert_status(launch_saxpy(), KS_OK);
        ks_image_info info;
        ck_assert_status(ks_image_info_get(&src_image, &info), KS_OK);
        const unsigned char *copy;
        fake.last_image(&copy, NULL);
        if (copy[4] != genuine4)
            attacker++;
        else if (info.from_cache)
            hits++;
        else
            misses++;
    }
    __atomic_store_n(&swap_stop, 1, __ATOMIC_RELAXED);
    void *swaps;
    ck_assert_int_eq(pthread_join(t, &swaps), 0);
    ck_assert_msg((uintptr_t)swaps != (uintptr_t)-1, "renameat2: %s", strerror(swap_errno));
    printf("check_runtime: parent swap race: %d loads (%d from the cache, %d refused it), %lu swaps, "
           "%d of the attacker's entry\n", loads, hits, misses, (unsigned long)(uintptr_t)swaps, attacker);
    ck_assert_int_eq(attacker, 0);
    ck_assert_msg(misses > 0 && (uintptr_t)swaps > 100,
                  "the race was not exercised: %d loads refused the cache, %lu swaps", misses,
                  (unsigned long)(uintptr_t)swaps);
}
END_TEST

/* A cache entry that is a FIFO is no entry, and loading does not hang (issue 10 #7). */
START_TEST(cache_fifo_entry_ignored)
{
    alarm(20);
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_status(launch_saxpy(), KS_OK);
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    ck_assert_int_eq(unlink(entry), 0);
    ck_assert_int_eq(mkfifo(entry, 0600), 0);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    struct stat sb;                    /* replaced by a real entry, used next time */
    ck_assert_int_eq(lstat(entry, &sb), 0);
    ck_assert(S_ISREG(sb.st_mode));
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    alarm(0);
}
END_TEST

/* A directory that is not kstub's (KSTUB_CACHE_DIR=/ or ~: here one that
 * holds a file no kstub cache writes, "passwd") is not used, as kstub refuses it
 * (issue 41 #15): the launch works, uncached, and nothing is written there. */
START_TEST(cache_dir_not_kstubs_not_used)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    char dir[PATH_MAX + 16], file[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/home", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/passwd", dir);
    write_text(file, "root:x:0:0::/root:/bin/sh\n");
    setenv("KSTUB_CACHE_DIR", dir, 1);
    ck_assert_status(ks_cache_check(), KS_ERR_UNTRUSTED);
    ck_assert_message_has("passwd");
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(count_files(dir, ""), 1);           /* passwd alone: no entry, no tag */
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
}
END_TEST

/* A KSTUB_CACHE_DIR longer than PATH_MAX is refused, not cut short (issue 10 #17). */
START_TEST(cache_dir_longer_than_path_max)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    /* Short components, so the first PATH_MAX - 1 bytes would be a usable path. */
    static char longdir[PATH_MAX + 400];
    size_t len = (size_t)snprintf(longdir, sizeof longdir, "%s/long", tmp_dir);
    while (len < PATH_MAX + 200)
        len += (size_t)snprintf(longdir + len, sizeof longdir - len, "/%s", "abcdefghijklmnopqrstuvwxyz0123456789");
    setenv("KSTUB_CACHE_DIR", longdir, 1);
    ck_assert_status(launch_saxpy(), KS_OK);
    struct stat sb;                     /* before the fix its first PATH_MAX - 1 bytes were used */
    char first[256];
    snprintf(first, sizeof first, "%s/long", tmp_dir);
    ck_assert_msg(stat(first, &sb) != 0, "a truncated cache directory was created under %s", first);
    ck_assert_status(ks_cache_check(), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("PATH_MAX");
    ck_assert_message_has("KSTUB_CACHE_DIR");
    ck_assert_status(ks_cache_set_dir(longdir), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("PATH_MAX");
}
END_TEST

/* A file in the cache directory: \p size bytes, last written \p age seconds ago. */
static void cache_file(const char *name, long size, long age)
{
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", cache_dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), size), 0);
    fclose(f);
    struct timespec t[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

static int cache_has(const char *name)
{
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", cache_dir, name);
    return access(path, F_OK) == 0;
}

static time_t cache_mtime(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return sb.st_mtime;
}

/* Issue 26 #7: a hit touches its entry, so that trimming goes by use. */
START_TEST(cache_hit_touches_the_entry)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_status(launch_saxpy(), KS_OK);
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, entry, old, 0), 0);
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);      /* a hit */
    ck_assert_int_gt(cache_mtime(entry), time(NULL) - 3600);
}
END_TEST

#define KEY_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KEY_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define KEY_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define KEY_D "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"

/* Issue 26 #7: after a miss writes its entry, libkstub trims the directory
 * under KSTUB_CACHE_SIZE by the prelude cache's rule: least recently used
 * first (an NVRTC image and a prelude alike), never the entry just written,
 * a dead writer's old temporary as a leftover, a live one's never, and no
 * file that is no entry. */
START_TEST(cache_trimmed_under_the_cap_after_a_miss)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    char mk[PATH_MAX];
    snprintf(mk, sizeof mk, "mkdir -p -m 700 '%s'", cache_dir);
    ck_assert_int_eq(system(mk), 0);
    char tag[PATH_MAX + 16];                      /* kstub's directory: notes.txt is the user's */
    snprintf(tag, sizeof tag, "%s/CACHEDIR.TAG", cache_dir);
    write_text(tag, "Signature: 8a477f597d28d172789f06886806bc55\n# kstub's cache\n");
    cache_file(KEY_A ".nvrtc", 4096, 400);
    cache_file(KEY_B ".prelude", 96, 300);
    cache_file(KEY_B ".0123456789abcdef.pch", 4000, 300);
    cache_file(KEY_C ".nvrtc", 4096, 200);
    cache_file(KEY_D ".nvrtc", 4096, 100);
    cache_file(".0a7c0a7c0a7c0a7c.99999999.1.1f.tmp", 500, 3600);     /* a dead writer's */
    char live[96];
    snprintf(live, sizeof live, ".1b7c0a7c0a7c0a7c.%ld.1.1f.tmp", (long)getpid());
    cache_file(live, 500, 3600);
    cache_file("notes.txt", 5000, 9000);
    setenv("KSTUB_CACHE_SIZE", "9K", 1);
    ck_assert_status(launch_saxpy(), KS_OK);
    unsetenv("KSTUB_CACHE_SIZE");
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
    ck_assert(!cache_has(KEY_A ".nvrtc"));
    ck_assert(!cache_has(KEY_B ".prelude") && !cache_has(KEY_B ".0123456789abcdef.pch"));
    ck_assert(cache_has(KEY_C ".nvrtc") && cache_has(KEY_D ".nvrtc"));
    ck_assert(!cache_has(".0a7c0a7c0a7c0a7c.99999999.1.1f.tmp"));
    ck_assert(cache_has(live) && cache_has("notes.txt"));
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 3);      /* C, D and the new one */

    /* A hit never trims: under a cap of 1 byte, everything stays. */
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    setenv("KSTUB_CACHE_SIZE", "1", 1);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 3);
    /* Nor does a miss under a size that is none (the default cap, 2 GiB). */
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    setenv("KSTUB_CACHE_SIZE", " -1", 1);
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, (const char *[]){"-DX=1"}, 1), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    unsetenv("KSTUB_CACHE_SIZE");
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 4);
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, NULL, 0), KS_OK);
}
END_TEST

void runtime_cases_cache(Suite *s)
{
    runtime_add_case(s, "sha256", TESTS(sha256_fips_vectors));
    runtime_add_case(s, "cache", TESTS(cache_cold_then_warm, cache_hit_does_not_load_nvrtc,
                                       cache_hit_touches_the_entry, cache_trimmed_under_the_cap_after_a_miss,
                                       cache_corrupt_entry_rebuilt, cache_truncated_entry_rebuilt,
                                       cache_short_entry_rebuilt, cache_foreign_entry_rebuilt,
                                       cache_disabled_writes_nothing, cache_unsafe_dir_not_used,
                                       cache_parent_writable_not_used, cache_dir_not_kstubs_not_used,
                                       cache_parent_swap_race_never_loads_the_attackers_entry,
                                       cache_fifo_entry_ignored, cache_dir_longer_than_path_max));
}
