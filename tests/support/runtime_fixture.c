/*
 * runtime_fixture.c — the runtime suite's shared fixture and test kernels
 * (declared, with the list of the suite's files, in runtime_fixture.h).
 */
#include "runtime_fixture.h"

struct fake_cuda_controls fake;
struct fake_nvrtc_controls fnv;
char tmp_dir[64], cache_dir[128];

/* ---- test kernels -------------------------------------------------------------- */

/* mix(char, short, int, double, float *): offsets as nvcc lays them out. */
const char mix_ptx[sizeof MIX_PTX] = MIX_PTX;
ks_image mix_image = KS_IMAGE_INIT("mix.cu", mix_ptx, sizeof mix_ptx, KS_IMAGE_PTX);
const ks_param_desc mix_params[] = {{0, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 8}};
ks_kernel mix = KS_KERNEL_INIT(&mix_image, "_Z3mixcsidPf", "ns::mix", 5, mix_params, 0);
const size_t mix_off[] = {0, 2, 4, 8, 16}, mix_size[] = {1, 2, 4, 8, 8};

/* A kernel with __launch_bounds__(256) and no parameters, in the same image. */
ks_kernel bounded = KS_KERNEL_INIT(&mix_image, "_Z7boundedv", "bounded", 0, NULL, 256);

/* A kernel the image does not have. */
ks_kernel missing = KS_KERNEL_INIT(&mix_image, "_Z7missingv", "missing", 0, NULL, 0);

/* PTX the (fake) JIT rejects. */
static const char bad_ptx[] = ".version 8.0\n.target sm_80\n.visible .entry BAD()\n{\n}\n";
ks_image bad_image = KS_IMAGE_INIT("bad.cu", bad_ptx, sizeof bad_ptx, KS_IMAGE_PTX);
ks_kernel bad = KS_KERNEL_INIT(&bad_image, "BAD", "bad", 0, NULL, 0);

void *mix_args(char *c, short *s, int *i, double *d, float **p, void **args)
{
    args[0] = c, args[1] = s, args[2] = i, args[3] = d, args[4] = p;
    return args;
}

/* Launch mix with fixed arguments; the status is what the test looks at. */
ks_status launch_mix(const ks_launch *l)
{
    char c = 'a';
    short s = -2;
    int i = 0x12345678;
    double d = 3.5;
    float *p = (float *)(uintptr_t)0x7f0012345678;
    void *args[5];
    return ks_kernel_launch(&mix, l, mix_args(&c, &s, &i, &d, &p, args));
}

/* ---- fixture ------------------------------------------------------------------- */

void load_control(void *slot, void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    ck_assert_msg(p != NULL, "the fake lacks %s", name);
    memcpy(slot, &p, sizeof p);
}

void fake_cuda_open(void)
{
    /* Before libkstub's first use, which reads it once. */
    setenv("KSTUB_LIBCUDA", FAKE_CUDA_PATH, 1);
    /* Never the real CUPTI (the pointers check's free watch would load it):
     * a test that wants one names the fake first. */
    setenv("KSTUB_CUPTI", "/nonexistent/libcupti.so", 0);
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "cannot load the fake driver: %s", dlerror());
#define CONTROL(field) load_control(&fake.field, lib, "fake_cuda_" #field)
    CONTROL(reset);
    load_control(&fake.inject, lib, "fake_cuda_fail");
    CONTROL(set_params);
    CONTROL(hide);
    CONTROL(delay);
    CONTROL(no_current_context);
    CONTROL(calls);
    CONTROL(launch_count);
    CONTROL(launch);
    CONTROL(last_symbol);
    CONTROL(last_image);
    CONTROL(proc_version);
    CONTROL(proc_version_of);
    CONTROL(live_libraries);
    CONTROL(live_modules);
    CONTROL(set_context);
    CONTROL(set_device);
    CONTROL(occupancy_args);
    CONTROL(lazy_jit);
    CONTROL(live_graphs);
    CONTROL(alloc);
    CONTROL(free);
    CONTROL(alloc_at);
    CONTROL(remap);
    CONTROL(mapping);
    CONTROL(peer_access);
    CONTROL(peer_flags);
    CONTROL(stream_context);
    CONTROL(set_global);
    CONTROL(global);
    CONTROL(last_copy);
#undef CONTROL
    fake.reset();
}

static void setup(void)
{
    fake_cuda_open();

    setenv("KSTUB_LIBNVRTC", FAKE_NVRTC_PATH, 1);
    void *nvrtc = dlopen(FAKE_NVRTC_PATH, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(nvrtc != NULL, "cannot load the fake NVRTC: %s", dlerror());
    load_control(&fnv.reset, nvrtc, "fake_nvrtc_reset");
    load_control(&fnv.inject, nvrtc, "fake_nvrtc_fail");
    load_control(&fnv.calls, nvrtc, "fake_nvrtc_calls");
    load_control(&fnv.option, nvrtc, "fake_nvrtc_option");
    load_control(&fnv.delay_compile, nvrtc, "fake_nvrtc_delay_compile");
    fnv.reset();

    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/kstub-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
    snprintf(cache_dir, sizeof cache_dir, "%s/cache/kstub", tmp_dir);
    setenv("KSTUB_CACHE_DIR", cache_dir, 1);
    unsetenv("KSTUB_CACHE");
    unsetenv("KSTUB_IMAGE_PATH");
    unsetenv("KSTUB_LOADER");
    fake.set_params(mix.symbol, 5, mix_off, mix_size);
    fake.set_params(bounded.symbol, 0, NULL, NULL);
    fake.set_params(bad.symbol, 0, NULL, NULL);
}


pthread_barrier_t start_line;

void *race(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start_line);
    ks_launch l = ks_launch_1d(1, 32);
    return (void *)(uintptr_t)launch_mix(&l);
}

/* ---- helpers for files ------------------------------------------------------------------ */

void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

void write_text(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}

/* Regular files in \p dir whose names end in \p suffix; -1 if there is no such directory. */
int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), slen = strlen(suffix);
        if (e->d_name[0] != '.' && len >= slen && strcmp(e->d_name + len - slen, suffix) == 0)
            n++;
    }
    closedir(d);
    return n;
}

/* The path of the one cache entry (fails the test unless there is exactly one). */
void the_entry(char *out, size_t cap)
{
    DIR *d = opendir(cache_dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "CACHEDIR.TAG") == 0)   /* the cache's tag is no entry */
            continue;
        snprintf(out, cap, "%s/%s", cache_dir, e->d_name);
        n++;
    }
    closedir(d);
    ck_assert_int_eq(n, 1);
}

size_t read_file(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}
/* ---- images read from files, and NVRTC source -------------------------------------- */

ks_image disk_image = KS_IMAGE_INIT("kernels/disk.cu", NULL, 0, KS_IMAGE_NONE);
static ks_kernel disk_mix = KS_KERNEL_INIT(&disk_image, "_Z3mixcsidPf", "disk_mix", 5, mix_params, 0);

ks_status launch_disk(void)
{
    char c = 'a';
    short s = -2;
    int i = 1;
    double d = 3.5;
    float *p = NULL;
    void *args[5];
    ks_launch l = ks_launch_1d(1, 32);
    return ks_kernel_launch(&disk_mix, &l, mix_args(&c, &s, &i, &d, &p, args));
}

const char saxpy_src[sizeof SAXPY_SRC] = SAXPY_SRC;
ks_image src_image = KS_IMAGE_INIT("kernels/saxpy.cu", saxpy_src, sizeof saxpy_src, KS_IMAGE_SOURCE);
const ks_param_desc saxpy_params[] = {{0, 4}, {8, 8}, {16, 8}, {24, 4}};
const size_t saxpy_off[] = {0, 8, 16, 24}, saxpy_size[] = {4, 8, 8, 4};
ks_kernel saxpy = KS_KERNEL_INIT(&src_image, "saxpy", "saxpy", 4, saxpy_params, 0);

ks_status launch_saxpy(void)
{
    float a = 2.0f;
    const float *x = NULL;
    float *y = NULL;
    int n = 10;
    void *args[] = {&a, &x, &y, &n};
    ks_launch l = ks_launch_1d(1, 32);
    return ks_kernel_launch(&saxpy, &l, args);
}

void *race_saxpy(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start_line);
    return (void *)(uintptr_t)launch_saxpy();
}


void race_32(void *(*fn)(void *))
{
    pthread_t t[RACERS];
    ck_assert_int_eq(pthread_barrier_init(&start_line, NULL, RACERS), 0);
    for (int i = 0; i < RACERS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, fn, NULL), 0);
    for (int i = 0; i < RACERS; i++) {
        void *ret;
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    }
    pthread_barrier_destroy(&start_line);
}

/* ---- the fixture of every case --------------------------------------------------------- */

/* Remove the test's temporary directory (two levels are all the tests make). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        remove_tree(sub);
    }
    closedir(d);
    chmod(path, 0700);
    rmdir(path);
}

static void teardown(void)
{
    if (tmp_dir[0])
        remove_tree(tmp_dir);
}

void runtime_add_case(Suite *s, const char *name, const TTest *const *tests)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);      /* 32 threads under valgrind are slow */
    for (; *tests; tests++)
        tcase_add_test(tc, *tests);
    suite_add_tcase(s, tc);
}
