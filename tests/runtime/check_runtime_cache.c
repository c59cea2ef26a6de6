/*
 * check_runtime_cache.c — the runtime suite (tests/support/runtime_fixture.h): SHA-256 (common/sha256.c), the NVRTC disk cache and its key, and the
 * real NVRTC compiling and caching (skipped, saying so, without it).
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

/* The key covers the headers the source includes (issue 10 #5). */
static const char inc_src[] =
    "#include \"cfg.h\"\n"
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = SCALE * a * x[i] + y[i];\n}\n";
static ks_image inc_image = KS_IMAGE_INIT("kernels/inc.cu", inc_src, sizeof inc_src, KS_IMAGE_SOURCE);
static ks_kernel inc_saxpy = KS_KERNEL_INIT(&inc_image, "saxpy", "inc_saxpy", 4, saxpy_params, 0);

static ks_status reload(ks_image *img, ks_kernel *k)
{
    ks_status st = ks_image_unload(img);
    return st == KS_OK ? ks_kernel_resolve(k) : st;
}

START_TEST(cache_key_follows_includes)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    char inc[128], opt[160], path[PATH_MAX];
    snprintf(inc, sizeof inc, "%s/inc", tmp_dir);
    ck_assert_int_eq(mkdir(inc, 0700), 0);
    snprintf(path, sizeof path, "%s/cfg.h", inc);
    write_text(path, "#include \"more.h\"\n#define SCALE 2\n");
    snprintf(path, sizeof path, "%s/more.h", inc);
    write_text(path, "#define MORE 1\n");
    snprintf(opt, sizeof opt, "-I%s", inc);
    ck_assert_status(ks_image_set_nvrtc_options(&inc_image, (const char *[]){opt}, 1), KS_OK);
    ck_assert_status(ks_kernel_resolve(&inc_saxpy), KS_OK);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);     /* warm */
    /* The included header changes: SCALE 2 -> 3 is another binary. */
    snprintf(path, sizeof path, "%s/cfg.h", inc);
    write_text(path, "#include \"more.h\"\n#define SCALE 3\n");
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&inc_image, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 0);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    /* So does a header it includes in turn. */
    snprintf(path, sizeof path, "%s/more.h", inc);
    write_text(path, "#define MORE 2\n");
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 3);
    /* A header appearing earlier in the search order (the other -I first). */
    char inc2[128], opt2[160];
    snprintf(inc2, sizeof inc2, "%s/inc2", tmp_dir);
    ck_assert_int_eq(mkdir(inc2, 0700), 0);
    snprintf(opt2, sizeof opt2, "-I%s", inc2);
    ck_assert_status(ks_image_set_nvrtc_options(&inc_image, (const char *[]){opt2, opt}, 2), KS_OK);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 4);
    snprintf(path, sizeof path, "%s/cfg.h", inc2);
    write_text(path, "#define SCALE 5\n");
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 5);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 5);
    ck_assert_status(ks_image_unload(&inc_image), KS_OK);
}
END_TEST

/* "#include" in a comment or a string is text, not a directive: such a
 * source is cached (the H200 suite's own kernel file said "no #include" in
 * a comment, and was compiled again on every load). */
START_TEST(cache_include_word_in_comment_still_cached)
{
    static const char src[] = "// compiled at run time: no #include.\n"
                              "const char *s = \"#include <nothing>\";\n"
                              "extern \"C\" __global__ void saxpy() {}\n";
    ks_image img = KS_IMAGE_INIT("kernels/c.cu", src, sizeof src, KS_IMAGE_SOURCE);
    ks_kernel k = KS_KERNEL_INIT(&img, "saxpy", "c", 0, NULL, 0);
    fake.set_params("saxpy", 0, NULL, NULL);
    ck_assert_status(ks_kernel_resolve(&k), KS_OK);
    ck_assert_status(reload(&img, &k), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);     /* the second load was warm */
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 1);
    ck_assert_status(ks_image_unload(&img), KS_OK);
}
END_TEST

/* Issue 19 #2: every place a directive may start, as NVRTC reads it (each
 * form was checked against libnvrtc 13: it opens cfg.h in all of them). A
 * changed cfg.h must miss the cache in every form, never serve the binary
 * built from the old one. \p hdr is cfg.h's first line (NULL: none), then
 * a header "deep.h" that cfg.h may include. */
static void hidden_include_misses(const char *what, const char *src, size_t srclen, const char *hdr,
                                  size_t hdrlen, int angled_cwd)
{
    char inc[128], opt[160], path[PATH_MAX], sub[64];
    static int n;
    int me = n++;
    snprintf(sub, sizeof sub, "hid%d", me);
    snprintf(inc, sizeof inc, "%s/%s", tmp_dir, sub);
    ck_assert_int_eq(mkdir(inc, 0700), 0);
    snprintf(opt, sizeof opt, "-I%s", inc);
    snprintf(path, sizeof path, "%s/cfg.h", inc);
    const char *changed = "deep.h";
    if (hdr != NULL) {
        write_file(path, hdr, hdrlen);           /* cfg.h hides "deep.h" */
        snprintf(path, sizeof path, "%s/deep.h", inc);
    } else {
        changed = "cfg.h";
    }
    write_text(path, "#define SCALE 2\n");
    if (angled_cwd) {                            /* ./cfg.h, which <cfg.h> does not read */
        ck_assert_int_eq(chdir(tmp_dir), 0);
        write_text("cfg.h", "#define SCALE 7\n");
    }
    /* Static: an image's state lives as long as the image (as a generated one does). */
    static ks_image imgs[32];
    ck_assert_int_lt(me, 32);
    imgs[me] = (ks_image)KS_IMAGE_INIT("kernels/h.cu", src, srclen, KS_IMAGE_SOURCE);
    ks_image *img = &imgs[me];
    ks_kernel k = KS_KERNEL_INIT(img, "saxpy", "h", 0, NULL, 0);
    fake.set_params("saxpy", 0, NULL, NULL);
    fnv.reset();
    ck_assert_status(ks_image_set_nvrtc_options(img, (const char *[]){opt}, 1), KS_OK);
    ck_assert_status(ks_kernel_resolve(&k), KS_OK);
    ck_assert_status(reload(img, &k), KS_OK);
    ck_assert_msg(fnv.calls("nvrtcCompileProgram") == 1, "%s: not cached at all", what);
    write_text(path, "#define SCALE 3\n");
    ck_assert_status(reload(img, &k), KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(img, &info), KS_OK);
    ck_assert_msg(info.from_cache == 0 && fnv.calls("nvrtcCompileProgram") == 2,
                  "%s: the binary built before %s changed came from the cache", what, changed);
    ck_assert_status(ks_image_unload(img), KS_OK);
}

#define KERNEL_TEXT "\nextern \"C\" __global__ void saxpy() {}\n"
/* Each form opens cfg.h in libnvrtc (real_nvrtc_reads_hidden_headers). */
static const struct { const char *what, *src; } hidden_forms[] = {
    {"comment before #", "/* c */ #include \"cfg.h\"" KERNEL_TEXT},
    {"form feed before #", "\f#include \"cfg.h\"" KERNEL_TEXT},
    {"vertical tab before #", "\v#include \"cfg.h\"" KERNEL_TEXT},
    {"splice after #", "#\\\ninclude \"cfg.h\"" KERNEL_TEXT},
    {"splice inside include", "#inc\\\nlude \"cfg.h\"" KERNEL_TEXT},
    {"CRLF splice inside include", "#inc\\\r\nlude \"cfg.h\"" KERNEL_TEXT},
    {"space after #", "# include \"cfg.h\"" KERNEL_TEXT},
    {"digraph", "%: include \"cfg.h\"" KERNEL_TEXT},
    {"comment spanning lines", "int x; /* a\n b */ #include \"cfg.h\"" KERNEL_TEXT},
    {"comment spanning lines at the start", "/* a\n b */ #include \"cfg.h\"" KERNEL_TEXT},
    {"digit separator then a comment", "int y = 1'000; /* x\n*/ #include \"cfg.h\"" KERNEL_TEXT},
    {"\"/*\" in a string", "const char *s = \"/*\";\n#include \"cfg.h\"" KERNEL_TEXT},
    {"backslash and space: no splice", "// x \\ \n#include \"cfg.h\"" KERNEL_TEXT},
    {"carriage return after #", "#\rinclude \"cfg.h\"" KERNEL_TEXT},
    {"form feed after include", "#include\f\"cfg.h\"" KERNEL_TEXT},
    {"CRLF lines", "int z;\r\n#include \"cfg.h\"\r\n" KERNEL_TEXT},
};

START_TEST(cache_hidden_includes_miss_on_change)
{
    for (size_t i = 0; i < sizeof hidden_forms / sizeof hidden_forms[0]; i++)
        hidden_include_misses(hidden_forms[i].what, hidden_forms[i].src, strlen(hidden_forms[i].src) + 1, NULL, 0,
                              0);
    /* In a header: after a NUL byte (NVRTC reads on), and after a comment. */
    static const char plain[] = "#include \"cfg.h\"" KERNEL_TEXT;
    static const char nul_hdr[] = "#define A 1\n\0\n#include \"deep.h\"\n";
    hidden_include_misses("header: after a NUL byte", plain, sizeof plain, nul_hdr, sizeof nul_hdr - 1, 0);
    static const char bom_hdr[] = "\xef\xbb\xbf#include \"deep.h\"\n";
    hidden_include_misses("header: after a byte order mark", plain, sizeof plain, bom_hdr, sizeof bom_hdr - 1, 0);
    static const char cmt_hdr[] = "/* c */ #include \"deep.h\"\n";
    hidden_include_misses("header: comment before #", plain, sizeof plain, cmt_hdr, sizeof cmt_hdr - 1, 0);
    /* <cfg.h> is the -I one even with a cfg.h in the working directory. */
    static const char angled[] = "#include <cfg.h>" KERNEL_TEXT;
    hidden_include_misses("angled name, cfg.h in the working directory", angled, sizeof angled, NULL, 0, 1);
}
END_TEST

/* Directive names that read files but are not modelled are never cached. */
START_TEST(cache_other_file_directives_not_cached)
{
    static const char *const srcs[] = {
        "/* c */ #include_next <x.h>" KERNEL_TEXT,
        "#__include_macros \"cfg.h\"" KERNEL_TEXT,
        "\f#import \"cfg.h\"" KERNEL_TEXT,
        "#if __has_embed(\"cfg.h\")\n#endif" KERNEL_TEXT,
        "#inc?" "?/\nlude \"cfg.h\"" KERNEL_TEXT,
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        ks_image img = KS_IMAGE_INIT("kernels/u.cu", srcs[i], strlen(srcs[i]) + 1, KS_IMAGE_SOURCE);
        ks_kernel k = KS_KERNEL_INIT(&img, "saxpy", "u", 0, NULL, 0);
        fake.set_params("saxpy", 0, NULL, NULL);
        ck_assert_status(ks_kernel_resolve(&k), KS_OK);
        ck_assert_status(reload(&img, &k), KS_OK);
        ck_assert_msg(fnv.calls("nvrtcCompileProgram") == (int)(2 * i + 2), "source %zu was cached", i);
        ck_assert_status(ks_image_unload(&img), KS_OK);
    }
    ck_assert_int_le(count_files(cache_dir, ".nvrtc"), 0);
}
END_TEST

/* Includes that cannot be followed are never cached. */
START_TEST(cache_unfollowable_includes_not_cached)
{
    static const char *const srcs[] = {
        "#define H \"cfg.h\"\n#include H\nextern \"C\" __global__ void saxpy() {}\n",
        "#if __has_include(\"cfg.h\")\n#endif\nextern \"C\" __global__ void saxpy() {}\n",
        "#/* split\n */ include \"cfg.h\"\nextern \"C\" __global__ void saxpy() {}\n",
        "%:include_next <x.h>\nextern \"C\" __global__ void saxpy() {}\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        ks_image img = KS_IMAGE_INIT("kernels/u.cu", srcs[i], strlen(srcs[i]) + 1, KS_IMAGE_SOURCE);
        ks_kernel k = KS_KERNEL_INIT(&img, "saxpy", "u", 0, NULL, 0);
        fake.set_params("saxpy", 0, NULL, NULL);
        ck_assert_status(ks_kernel_resolve(&k), KS_OK);
        ck_assert_status(reload(&img, &k), KS_OK);
        ck_assert_msg(fnv.calls("nvrtcCompileProgram") == (int)(2 * i + 2), "source %zu was cached", i);
        ck_assert_status(ks_image_unload(&img), KS_OK);
    }
    ck_assert_int_le(count_files(cache_dir, ".nvrtc"), 0);
    /* And options that name headers or places the text does not. */
    static const char *const opts[][2] = {{"-include", "cfg.h"}, {"-isystem", "/tmp"}, {"-imacros", "m.h"}};
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_status(ks_image_set_nvrtc_options(&src_image, opts[i], 2), KS_OK);
        ck_assert_status(launch_saxpy(), KS_OK);
        ck_assert_status(ks_image_unload(&src_image), KS_OK);
        ck_assert_int_le(count_files(cache_dir, ".nvrtc"), 0);
    }
}
END_TEST


/* ---- real NVRTC: compile and cache, and a real compile error ------------------------------------ */

static int use_real_nvrtc(void)
{
    if (access(REAL_NVRTC_PATH, R_OK) != 0) {
        fprintf(stderr, "note: %s not found; real-NVRTC test skipped\n", REAL_NVRTC_PATH);
        return 0;
    }
    setenv("KSTUB_LIBNVRTC", REAL_NVRTC_PATH, 1);
    return 1;
}

static const char scale_src[] =
    "namespace ns {\n"
    "template <typename T> __global__ void scale(T *x, T a, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= a;\n}\n"
    "template __global__ void scale<float>(float *, float, int);\n"
    "}\n"
    "extern \"C\" __global__ void fill(float *x, float v, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] = v;\n}\n";

START_TEST(real_nvrtc_compile_and_cache)
{
    if (!use_real_nvrtc())
        return;
    static ks_image img = KS_IMAGE_INIT("scale.cu", scale_src, sizeof scale_src, KS_IMAGE_SOURCE);
    static const ks_param_desc p[] = {{0, 8}, {8, 4}, {12, 4}};
    static ks_kernel scale = KS_KERNEL_INIT(&img, "_ZN2ns5scaleIfEEvPT_S1_i", "ns::scale<float>", 3, p, 0);
    static const size_t off[] = {0, 8, 12}, size[] = {8, 4, 4};
    fake.set_params(scale.symbol, 3, off, size);
    ck_assert_status(ks_kernel_resolve(&scale), KS_OK);
    const unsigned char *copy;
    fake.last_image(&copy, NULL);
    ck_assert_mem_eq(copy, "\x7f" "ELF", 4);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.arch, 90);
    ck_assert_int_eq(info.from_cache, 0);

    /* The entry holds a real sm_90 cubin with the mangled and the C names in it. */
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    static unsigned char buf[1 << 16];
    size_t n = read_file(entry, buf, sizeof buf);
    ck_assert_uint_gt(n, 80);
    ck_assert_mem_eq(buf, "KSTUBNV1", 8);
    ck_assert_mem_eq(buf + 80, "\x7f" "ELF", 4);
    ck_assert_ptr_nonnull(memmem(buf, n, "_ZN2ns5scaleIfEEvPT_S1_i", 24));
    ck_assert_ptr_nonnull(memmem(buf, n, "fill", 4));
    unsigned char digest[32];
    ks__sha256(buf + 80, n - 80, digest);
    ck_assert_mem_eq(buf + 48, digest, 32);

    /* Warm. */
    ck_assert_status(ks_image_unload(&img), KS_OK);
    ck_assert_status(ks_kernel_resolve(&scale), KS_OK);
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 1);
}
END_TEST

/* Real NVRTC finds the header through -I, as the cache key assumes: a changed
 * header is a new entry holding a different cubin. */
START_TEST(real_nvrtc_header_change)
{
    if (!use_real_nvrtc())
        return;
    static const char src[] = "#include \"rcfg.h\"\n"
                              "extern \"C\" __global__ void put(float *y) { y[threadIdx.x] = SCALE; }\n";
    static ks_image img = KS_IMAGE_INIT("put.cu", src, sizeof src, KS_IMAGE_SOURCE);
    static const ks_param_desc p[] = {{0, 8}};
    static ks_kernel k = KS_KERNEL_INIT(&img, "put", "put", 1, p, 0);
    static const size_t off[] = {0}, size[] = {8};
    fake.set_params("put", 1, off, size);
    char dir[128], opt[160], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/rinc", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/rcfg.h", dir);
    snprintf(opt, sizeof opt, "-I%s", dir);
    ck_assert_status(ks_image_set_nvrtc_options(&img, (const char *[]){opt}, 1), KS_OK);
    write_text(path, "#define SCALE 2.0f\n");
    ck_assert_status(ks_kernel_resolve(&k), KS_OK);
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    static unsigned char first[1 << 16], second[1 << 16];
    size_t n1 = read_file(entry, first, sizeof first), n2 = 0;
    write_text(path, "#define SCALE 3.0f\n");
    ck_assert_status(reload(&img, &k), KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 0);
    DIR *d = opendir(cache_dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        char other[PATH_MAX + 300];
        snprintf(other, sizeof other, "%s/%s", cache_dir, e->d_name);
        if (e->d_name[0] != '.' && strcmp(other, entry) != 0)
            n2 = read_file(other, second, sizeof second);
    }
    if (d != NULL)
        closedir(d);
    ck_assert_uint_gt(n1, 80);
    ck_assert_uint_gt(n2, 80);
    ck_assert_msg(n1 != n2 || memcmp(first + 80, second + 80, n1 - 80) != 0, "the same cubin for SCALE 2 and 3");
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 2);
    ck_assert_status(reload(&img, &k), KS_OK);
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 1);
}
END_TEST

START_TEST(real_nvrtc_compile_error)
{
    if (!use_real_nvrtc())
        return;
    static const char src[] = "__global__ void k(float *x) { x[0] = undefined_thing; }\n";
    static ks_image img = KS_IMAGE_INIT("typo.cu", src, sizeof src, KS_IMAGE_SOURCE);
    static ks_kernel k = KS_KERNEL_INIT(&img, "_Z1kPf", "k", 0, NULL, 0);
    ck_assert_status(ks_kernel_resolve(&k), KS_ERR_COMPILE);
    ck_assert_ptr_nonnull(ks_last_error()->log);
    ck_assert_ptr_nonnull(strstr(ks_last_error()->log, "undefined_thing"));
    ck_assert_message_has("typo.cu");
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 0);
}
END_TEST

/* The oracle of cache_hidden_includes_miss_on_change: the real NVRTC opens
 * cfg.h in every one of those forms (its #error is in the log). */
START_TEST(real_nvrtc_reads_hidden_headers)
{
    if (!use_real_nvrtc())
        return;
    char dir[128], opt[160], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/hinc", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/cfg.h", dir);
    write_text(path, "#error KSTUB_HIDDEN_HEADER_READ\n");
    snprintf(opt, sizeof opt, "-I%s", dir);
    static ks_image imgs[sizeof hidden_forms / sizeof hidden_forms[0]];   /* static: see hidden_include_misses */
    for (size_t i = 0; i < sizeof hidden_forms / sizeof hidden_forms[0]; i++) {
        imgs[i] = (ks_image)KS_IMAGE_INIT("h.cu", hidden_forms[i].src, strlen(hidden_forms[i].src) + 1,
                                          KS_IMAGE_SOURCE);
        ks_kernel k = KS_KERNEL_INIT(&imgs[i], "saxpy", "h", 0, NULL, 0);
        ck_assert_status(ks_image_set_nvrtc_options(&imgs[i], (const char *[]){opt}, 1), KS_OK);
        ck_assert_status(ks_kernel_resolve(&k), KS_ERR_COMPILE);
        const char *log = ks_last_error()->log;
        ck_assert_msg(log && strstr(log, "KSTUB_HIDDEN_HEADER_READ"), "%s: NVRTC did not read cfg.h:\n%s",
                      hidden_forms[i].what, log ? log : "(no log)");
        ks_image_unload(&imgs[i]);
    }
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
                                       cache_fifo_entry_ignored, cache_dir_longer_than_path_max,
                                       cache_key_follows_includes, cache_unfollowable_includes_not_cached,
                                       cache_include_word_in_comment_still_cached,
                                       cache_hidden_includes_miss_on_change,
                                       cache_other_file_directives_not_cached, real_nvrtc_compile_and_cache,
                                       real_nvrtc_header_change, real_nvrtc_compile_error,
                                       real_nvrtc_reads_hidden_headers));
}
