/*
 * check_runtime.c — libkstub against a fake driver (tests/fake_cuda.c), so
 * the whole runtime (driver loading, image load, ABI check, launch, errors,
 * contexts, threads) is tested on machines without a GPU.
 *
 * Each case runs in its own forked process (forced below, whatever CK_FORK
 * says): libkstub loads its driver once per process and the test kernels
 * below keep their handles in static storage, so a fresh process per case is
 * what makes the cases independent.
 */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kstub.h"
#include "fake_cuda.h"
#include "sha256.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#include <nvrtc.h>  /* nvrtcResult values for the fake NVRTC */
#pragma GCC diagnostic pop

#ifndef FAKE_CUDA_PATH
#define FAKE_CUDA_PATH "build/tests/libcuda_fake.so"
#endif
#ifndef FAKE_NVRTC_PATH
#define FAKE_NVRTC_PATH "build/tests/libnvrtc_fake.so"
#endif
#ifndef REAL_NVRTC_PATH
#define REAL_NVRTC_PATH "/usr/local/cuda/lib64/libnvrtc.so"
#endif

/* The fake's control functions, reached through dlsym (see fake_cuda.h). */
static struct {
    __typeof__(&fake_cuda_reset) reset;
    __typeof__(&fake_cuda_fail) inject; /* "fail" is a Check macro */
    __typeof__(&fake_cuda_set_params) set_params;
    __typeof__(&fake_cuda_hide) hide;
    __typeof__(&fake_cuda_delay) delay;
    __typeof__(&fake_cuda_no_current_context) no_current_context;
    __typeof__(&fake_cuda_calls) calls;
    __typeof__(&fake_cuda_launch_count) launch_count;
    __typeof__(&fake_cuda_launch) launch;
    __typeof__(&fake_cuda_last_symbol) last_symbol;
    __typeof__(&fake_cuda_last_image) last_image;
    __typeof__(&fake_cuda_proc_version) proc_version;
    __typeof__(&fake_cuda_proc_version_of) proc_version_of;
    __typeof__(&fake_cuda_live_libraries) live_libraries;
    __typeof__(&fake_cuda_live_modules) live_modules;
    __typeof__(&fake_cuda_set_context) set_context;
    __typeof__(&fake_cuda_set_device) set_device;
    __typeof__(&fake_cuda_occupancy_args) occupancy_args;
    __typeof__(&fake_cuda_lazy_jit) lazy_jit;
} fake;

/* The fake NVRTC's controls (tests/fake_nvrtc.c). */
static struct {
    void (*reset)(void);
    void (*inject)(const char *entry, int result, int nth);
    int (*calls)(const char *entry);
    const char *(*option)(int i);
    void (*delay_compile)(unsigned us);
} fnv;

/* This test's own cache directory (KSTUB_CACHE_DIR), under a fresh temporary one. */
static char tmp_dir[64], cache_dir[128];

/* ---- test kernels -------------------------------------------------------------- */

/* mix(char, short, int, double, float *): offsets as nvcc lays them out. */
static const char mix_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry _Z3mixcsidPf(...)\n{\n ret;\n}\n";
static ks_image mix_image = KS_IMAGE_INIT("mix.cu", mix_ptx, sizeof mix_ptx, KS_IMAGE_PTX);
static const ks_param_desc mix_params[] = {{0, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 8}};
static ks_kernel mix = KS_KERNEL_INIT(&mix_image, "_Z3mixcsidPf", "ns::mix", 5, mix_params, 0);
static const size_t mix_off[] = {0, 2, 4, 8, 16}, mix_size[] = {1, 2, 4, 8, 8};

/* A kernel with __launch_bounds__(256) and no parameters, in the same image. */
static ks_kernel bounded = KS_KERNEL_INIT(&mix_image, "_Z7boundedv", "bounded", 0, NULL, 256);

/* A kernel the image does not have. */
static ks_kernel missing = KS_KERNEL_INIT(&mix_image, "_Z7missingv", "missing", 0, NULL, 0);

/* PTX the (fake) JIT rejects. */
static const char bad_ptx[] = ".version 8.0\n.target sm_80\n.visible .entry BAD()\n{\n}\n";
static ks_image bad_image = KS_IMAGE_INIT("bad.cu", bad_ptx, sizeof bad_ptx, KS_IMAGE_PTX);
static ks_kernel bad = KS_KERNEL_INIT(&bad_image, "BAD", "bad", 0, NULL, 0);

static void *mix_args(char *c, short *s, int *i, double *d, float **p, void **args)
{
    args[0] = c, args[1] = s, args[2] = i, args[3] = d, args[4] = p;
    return args;
}

/* Launch mix with fixed arguments; the status is what the test looks at. */
static ks_status launch_mix(const ks_launch *l)
{
    char c = 'a';
    short s = -2;
    int i = 0x12345678;
    double d = 3.5;
    float *p = (float *)(uintptr_t)0x7f0012345678;
    void *args[5];
    return ks_kernel_launch(&mix, l, mix_args(&c, &s, &i, &d, &p, args));
}

#define ck_assert_status(expr, want)                                                     \
    do {                                                                                 \
        ks_status got_ = (expr);                                                         \
        ck_assert_msg(got_ == (want), "%s: got %s, want %s; message: %s", #expr,         \
                      ks_status_name(got_), ks_status_name(want), ks_last_error_message()); \
    } while (0)

#define ck_assert_message_has(text)                                                      \
    ck_assert_msg(strstr(ks_last_error_message(), (text)) != NULL,                       \
                  "message lacks \"%s\": %s", (text), ks_last_error_message())

/* ---- fixture ------------------------------------------------------------------- */

static void load_control(void *slot, void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    ck_assert_msg(p != NULL, "the fake lacks %s", name);
    memcpy(slot, &p, sizeof p);
}

static void setup(void)
{
    /* Before libkstub's first use, which reads it once. */
    setenv("KSTUB_LIBCUDA", FAKE_CUDA_PATH, 1);
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
#undef CONTROL
    fake.reset();

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

/* ---- status and errors --------------------------------------------------------- */

START_TEST(status_names_and_strings)
{
    static const struct { ks_status s; const char *name, *text; } all[] = {
#define ROW(name, text) {KS_##name, "KS_" #name, text},
        KS_STATUS_MAP(ROW)
#undef ROW
    };
    ck_assert_int_eq(sizeof all / sizeof all[0], KS__STATUS_COUNT);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        ck_assert_int_eq(all[i].s, (int)i);
        ck_assert_str_eq(ks_status_name(all[i].s), all[i].name);
        ck_assert_str_eq(ks_status_string(all[i].s), all[i].text);
    }
    ck_assert_str_eq(ks_status_name(KS__STATUS_COUNT), "KS_UNKNOWN");
    ck_assert_str_eq(ks_status_name((ks_status)-1), "KS_UNKNOWN");
    ck_assert_str_eq(ks_status_string((ks_status)1000), "unknown status");
}
END_TEST

START_TEST(last_error_starts_empty)
{
    const ks_error *e = ks_last_error();
    ck_assert_int_eq(e->status, KS_OK);
    ck_assert_str_eq(e->message, "");
    ck_assert_ptr_null(e->kernel);
    ck_assert_ptr_null(e->call);
    ck_assert_ptr_null(e->log);
    ck_assert_str_eq(ks_last_error_message(), "");
}
END_TEST

static void *fail_in_thread(void *arg)
{
    (void)arg;
    ks_launch l = ks_launch_1d(0, 1);
    return (void *)(uintptr_t)launch_mix(&l);
}

START_TEST(last_error_is_per_thread)
{
    pthread_t t;
    void *ret;
    ck_assert_int_eq(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, &ret), 0);
    ck_assert_int_eq((int)(uintptr_t)ret, KS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(ks_last_error()->status, KS_OK);
    ck_assert_str_eq(ks_last_error_message(), "");
}
END_TEST

/* ---- driver loading -------------------------------------------------------------- */

START_TEST(no_driver)
{
    setenv("KSTUB_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_NO_DRIVER);
    ck_assert_message_has("/nonexistent/libcuda.so.1");
    ck_assert_message_has("kernel 'ns::mix'");
    ck_assert_int_eq(ks_last_error()->status, KS_ERR_NO_DRIVER);
    /* Loaded once per process: the failure is replayed, not retried. */
    ck_assert_status(ks_image_load(&mix_image), KS_ERR_NO_DRIVER);
    ck_assert_message_has("/nonexistent/libcuda.so.1");
}
END_TEST

START_TEST(missing_entry_point)
{
    /* Neither loader: nothing to fall back to. */
    fake.hide("cuLibraryLoadData");
    fake.hide("cuModuleLoadDataEx");
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_NO_DRIVER);
    ck_assert_message_has("cuLibraryLoadData");
    ck_assert_message_has("cuModuleLoadDataEx");
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 0);
}
END_TEST

START_TEST(entry_points_through_get_proc_address)
{
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_gt(fake.calls("cuGetProcAddress_v2"), 0);
    ck_assert_int_eq(fake.calls("cuGetProcAddress"), 0);
    ck_assert_int_eq(fake.proc_version(), CUDA_VERSION);
    ck_assert_int_eq(fake.proc_version_of("cuLaunchKernel"), CUDA_VERSION);
    /* CUDA 13's cuCtxGetDevice takes a context too: the runtime asks for the old form. */
    ck_assert_int_eq(fake.proc_version_of("cuCtxGetDevice"), 12000);
    ck_assert_int_eq(fake.calls("cuInit"), 1);
}
END_TEST

START_TEST(driver_proc_for_the_application)
{
    void *fn = (void *)1;
    ck_assert_status(ks_driver_proc("cuDriverGetVersion", &fn), KS_OK);
    CUresult (*get_version)(int *);
    memcpy(&get_version, &fn, sizeof fn);
    int v = 0;
    ck_assert_int_eq(get_version(&v), CUDA_SUCCESS);
    ck_assert_int_eq(v, CUDA_VERSION);
    ck_assert_status(ks_driver_proc("cuNoSuchCall", &fn), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_ptr_null(fn);
    ck_assert_message_has("cuNoSuchCall");
    ck_assert_status(ks_driver_proc(NULL, &fn), KS_ERR_INVALID_VALUE);
}
END_TEST

START_TEST(driver_proc_without_driver)
{
    setenv("KSTUB_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    void *fn;
    ck_assert_status(ks_driver_proc("cuInit", &fn), KS_ERR_NO_DRIVER);
    ck_assert_ptr_null(fn);
}
END_TEST

START_TEST(init_fails)
{
    fake.inject("cuInit", CUDA_ERROR_NO_DEVICE, 1);
    ck_assert_status(ks_image_load(&mix_image), KS_ERR_DRIVER);
    ck_assert_message_has("cuInit failed: CUDA_ERROR_NO_DEVICE");
    ck_assert_str_eq(ks_last_error()->call, "cuInit");
    ck_assert_int_eq(ks_last_error()->cu_result, CUDA_ERROR_NO_DEVICE);
}
END_TEST

START_TEST(param_info_missing_skips_abi_check)
{
    fake.hide("cuKernelGetParamInfo");
    size_t wrong_size[] = {1, 2, 4, 4, 8};
    fake.set_params(mix.symbol, 5, mix_off, wrong_size);   /* would fail the check */
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuKernelGetParamInfo"), 0);
}
END_TEST

/* ---- what reaches cuLaunchKernel ---------------------------------------------------- */

START_TEST(exact_parameter_bytes)
{
    ks_launch l = ks_launch_1d(2, 64);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 1);
    const fake_launch *r = fake.launch(0);
    ck_assert_str_eq(r->symbol, "_Z3mixcsidPf");
    ck_assert_uint_eq(r->nparams, 5);
    char c = 'a';
    short s = -2;
    int i = 0x12345678;
    double d = 3.5;
    float *p = (float *)(uintptr_t)0x7f0012345678;
    unsigned char want[24] = {0};
    memcpy(want + 0, &c, 1);
    memcpy(want + 2, &s, 2);
    memcpy(want + 4, &i, 4);
    memcpy(want + 8, &d, 8);
    memcpy(want + 16, &p, 8);
    ck_assert_mem_eq(r->params, want, sizeof want);
}
END_TEST

START_TEST(configuration_passes_through)
{
    ks_dim3 g = {3, 4, 5}, b = {8, 4, 2};
    ks_launch l = ks_launch_3d(g, b);
    l.shared_bytes = 1024;
    ck_assert_status(launch_mix(&l), KS_OK);
    const fake_launch *r = fake.launch(0);
    ck_assert_uint_eq(r->grid[0], 3);
    ck_assert_uint_eq(r->grid[1], 4);
    ck_assert_uint_eq(r->grid[2], 5);
    ck_assert_uint_eq(r->block[0], 8);
    ck_assert_uint_eq(r->block[1], 4);
    ck_assert_uint_eq(r->block[2], 2);
    ck_assert_uint_eq(r->shared, 1024);
}
END_TEST

START_TEST(streams_pass_through)
{
    CUstream user = (CUstream)(uintptr_t)0xdeadbee0;
    CUstream streams[] = {NULL, CU_STREAM_PER_THREAD, CU_STREAM_LEGACY, user};
    for (int i = 0; i < 4; i++) {
        ks_launch l = ks_launch_on(ks_launch_1d(1, 32), streams[i]);
        ck_assert_status(launch_mix(&l), KS_OK);
        ck_assert_ptr_eq(fake.launch(i)->stream, streams[i]);
    }
}
END_TEST

START_TEST(kernel_without_parameters)
{
    ks_launch l = ks_launch_1d(1, 128);
    ck_assert_status(ks_kernel_launch(&bounded, &l, NULL), KS_OK);
    ck_assert_uint_eq(fake.launch(0)->nparams, 0);
}
END_TEST

START_TEST(image_bytes_reach_the_driver)
{
    ck_assert_status(ks_image_load(&mix_image), KS_OK);
    ck_assert_status(ks_image_load(&mix_image), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    const unsigned char *copy;
    size_t n;
    ck_assert_ptr_eq(fake.last_image(&copy, &n), mix_ptx);
    ck_assert_uint_eq(n, sizeof mix_ptx);
    ck_assert_mem_eq(copy, mix_ptx, sizeof mix_ptx);
}
END_TEST

/* ---- each driver call failing in turn ------------------------------------------------ */

START_TEST(load_fails_then_recovers)
{
    fake.inject("cuLibraryLoadData", CUDA_ERROR_OUT_OF_MEMORY, 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_LOAD);
    const ks_error *e = ks_last_error();
    ck_assert_str_eq(e->kernel, "ns::mix");
    ck_assert_str_eq(e->call, "cuLibraryLoadData");
    ck_assert_int_eq(e->cu_result, CUDA_ERROR_OUT_OF_MEMORY);
    ck_assert_str_eq(e->cu_name, "CUDA_ERROR_OUT_OF_MEMORY");
    ck_assert_str_eq(e->cu_string, "out of memory");
    ck_assert_message_has("mix.cu");
    ck_assert_message_has("cuLibraryLoadData failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    ck_assert_ptr_null(mix_image.ks__library);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 2);
}
END_TEST

START_TEST(get_kernel_fails_then_recovers)
{
    fake.inject("cuLibraryGetKernel", CUDA_ERROR_UNKNOWN, 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_DRIVER);
    ck_assert_message_has("cuLibraryGetKernel failed: CUDA_ERROR_UNKNOWN");
    ck_assert_message_has("_Z3mixcsidPf");
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);   /* the image stayed loaded */
}
END_TEST

START_TEST(symbol_not_found)
{
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_launch(&missing, &l, NULL), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_message_has("kernel 'missing'");
    ck_assert_message_has("symbol '_Z7missingv'");
    ck_assert_message_has("CUDA_ERROR_NOT_FOUND");
    ck_assert_str_eq(fake.last_symbol(), "_Z7missingv");
}
END_TEST

START_TEST(param_info_fails_then_recovers)
{
    fake.inject("cuKernelGetParamInfo", CUDA_ERROR_UNKNOWN, 2);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_DRIVER);
    ck_assert_message_has("cuKernelGetParamInfo failed: CUDA_ERROR_UNKNOWN (unknown error)");
    ck_assert_message_has("parameter 1");
    ck_assert_ptr_null(mix.ks__handle);
    ck_assert_status(launch_mix(&l), KS_OK);
}
END_TEST

START_TEST(launch_fails_then_recovers)
{
    fake.inject("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_LAUNCH);
    ck_assert_str_eq(ks_last_error_message(),
                     "kernel 'ns::mix': cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES "
                     "(too many resources requested for launch)");
    ck_assert_ptr_null(ks_last_error()->log);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 1);
}
END_TEST

START_TEST(unknown_cuda_result_is_named_by_number)
{
    fake.inject("cuLaunchKernel", (CUresult)12345, 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_LAUNCH);
    ck_assert_message_has("CUresult 12345");
}
END_TEST

START_TEST(jit_failure_log)
{
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_launch(&bad, &l, NULL), KS_ERR_LOAD);
    const ks_error *e = ks_last_error();
    ck_assert_ptr_nonnull(e->log);
    ck_assert_ptr_nonnull(strstr(e->log, "Unknown symbol 'BAD'"));
    ck_assert_ptr_nonnull(strstr(e->log, "Ptx assembly aborted"));
    ck_assert_message_has("CUDA_ERROR_INVALID_PTX");
    ck_assert_message_has("Unknown symbol 'BAD'");
    ck_assert_ptr_null(strchr(e->message, '\n'));
}
END_TEST

/* With lazy loading the JIT runs at the kernel's look-up: still KS_ERR_LOAD, with the log. */
START_TEST(lazy_jit_failure_log)
{
    fake.lazy_jit(1);
    ck_assert_status(ks_image_load(&bad_image), KS_OK);    /* the JIT has not run yet */
    ks_launch l = ks_launch_1d(1, 32);
    for (int i = 0; i < 2; i++) {                           /* not published: reported again */
        ck_assert_status(ks_kernel_launch(&bad, &l, NULL), KS_ERR_LOAD);
        const ks_error *e = ks_last_error();
        ck_assert_str_eq(e->call, "cuLibraryGetKernel");
        ck_assert_ptr_nonnull(e->log);
        ck_assert_ptr_nonnull(strstr(e->log, "Unknown symbol 'BAD'"));
        ck_assert_message_has("bad.cu");
        ck_assert_message_has("CUDA_ERROR_INVALID_PTX");
    }
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

START_TEST(lazy_jit_failure_log_modules)
{
    fake.lazy_jit(1);
    fake.hide("cuLibraryLoadData");
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_launch(&bad, &l, NULL), KS_ERR_LOAD);
    ck_assert_str_eq(ks_last_error()->call, "cuModuleGetFunction");
    ck_assert_ptr_nonnull(ks_last_error()->log);
    ck_assert_ptr_nonnull(strstr(ks_last_error()->log, "Ptx assembly aborted"));
    ck_assert_status(ks_image_unload(&bad_image), KS_OK);
    ck_assert_int_eq(fake.live_modules(), 0);
}
END_TEST

/* ---- the load-time ABI check ----------------------------------------------------------- */

START_TEST(abi_size_mismatch)
{
    size_t sizes[] = {1, 2, 4, 4, 8};   /* a float where the stub packs a double */
    fake.set_params(mix.symbol, 5, mix_off, sizes);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("kernel 'ns::mix'");
    ck_assert_message_has("parameter 3");
    ck_assert_message_has("offset 8 size 8");
    ck_assert_message_has("offset 8 size 4");
    ck_assert_int_eq(fake.launch_count(), 0);
    /* Not published: the next launch is refused again. */
    ck_assert_status(launch_mix(&l), KS_ERR_ABI_MISMATCH);
    ck_assert_ptr_null(mix.ks__handle);
}
END_TEST

START_TEST(abi_offset_mismatch)
{
    size_t offs[] = {0, 2, 4, 8, 24};
    fake.set_params(mix.symbol, 5, offs, mix_size);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("parameter 4");
    ck_assert_message_has("offset 24 size 8");
}
END_TEST

START_TEST(abi_count_mismatch)
{
    ks_launch l = ks_launch_1d(1, 32);
    fake.set_params(mix.symbol, 4, mix_off, mix_size);
    ck_assert_status(launch_mix(&l), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("has 4 parameters but the stub packs 5");

    size_t offs[] = {0, 2, 4, 8, 16, 24}, sizes[] = {1, 2, 4, 8, 8, 4};
    fake.set_params(mix.symbol, 6, offs, sizes);
    ck_assert_status(launch_mix(&l), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("more than the 5 parameters");
}
END_TEST

/* The driver places the parameter buffer 16-byte aligned, so from a more
 * strictly aligned parameter on (a CUtensorMap is 128-aligned) its offsets
 * may run behind the PTX layout the stub records (seen on an H200: 112 for
 * 128). Sizes must still agree exactly. */
START_TEST(abi_overaligned_offsets)
{
    static const ks_param_desc p[] = {{0, 8, 8}, {128, 128, 128}, {256, 8, 8}};
    static ks_kernel tmap = KS_KERNEL_INIT(&mix_image, "tmap", "tmap", 3, p, 0);
    size_t offs[] = {0, 112, 240}, sizes[] = {8, 128, 8};
    fake.set_params("tmap", 3, offs, sizes);
    ck_assert_status(ks_kernel_resolve(&tmap), KS_OK);

    static ks_kernel tmap2 = KS_KERNEL_INIT(&mix_image, "tmap2", "tmap2", 3, p, 0);
    size_t shrunk[] = {8, 128, 4};               /* the last one shrank */
    fake.set_params("tmap2", 3, offs, shrunk);
    ck_assert_status(ks_kernel_resolve(&tmap2), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("parameter 2");

    /* Before any over-aligned parameter, offsets are compared as ever. */
    static const ks_param_desc q[] = {{0, 4, 4}, {8, 8, 8}};
    static ks_kernel plain = KS_KERNEL_INIT(&mix_image, "plain", "plain", 2, q, 0);
    size_t qoffs[] = {0, 4}, qsizes[] = {4, 8};
    fake.set_params("plain", 2, qoffs, qsizes);
    ck_assert_status(ks_kernel_resolve(&plain), KS_ERR_ABI_MISMATCH);
}
END_TEST

/* ---- validation before the driver ------------------------------------------------------ */

START_TEST(invalid_configs)
{
    static const struct { ks_dim3 g, b; const char *says; } bad_configs[] = {
        {{0, 1, 1}, {32, 1, 1}, "every dimension >= 1"},
        {{1, 0, 1}, {32, 1, 1}, "every dimension >= 1"},
        {{1, 1, 0}, {32, 1, 1}, "every dimension >= 1"},
        {{1, 1, 1}, {0, 1, 1}, "every dimension >= 1"},
        {{1, 1, 1}, {32, 0, 1}, "every dimension >= 1"},
        {{1, 1, 1}, {32, 1, 0}, "every dimension >= 1"},
        {{1, 1, 1}, {2048, 1, 1}, "2048 threads; the limit is 1024"},
        {{1, 1, 1}, {32, 32, 2}, "2048 threads; the limit is 1024"},
        {{1, 1, 1}, {65536, 65536, 1}, "4294967296 threads"},
        {{1, 1, 1}, {1, 1, 65}, "per-dimension limits"},
        {{1, 65536, 1}, {32, 1, 1}, "grid (1, 65536, 1) exceeds"},
        {{1, 1, 65536}, {32, 1, 1}, "grid (1, 1, 65536) exceeds"},
        {{0x80000000u, 1, 1}, {32, 1, 1}, "exceeds the limits"},
    };
    for (size_t i = 0; i < sizeof bad_configs / sizeof bad_configs[0]; i++) {
        ks_launch l = ks_launch_3d(bad_configs[i].g, bad_configs[i].b);
        ck_assert_status(launch_mix(&l), KS_ERR_INVALID_CONFIG);
        ck_assert_message_has("kernel 'ns::mix'");
        ck_assert_message_has(bad_configs[i].says);
    }
    ks_launch l = ks_launch_1d(1, 512);
    ck_assert_status(ks_kernel_launch(&bounded, &l, NULL), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("512 threads but the kernel's __launch_bounds__ allows 256");
    l = ks_launch_1d(65535, 256);
    l.grid.y = 65535;
    ck_assert_status(ks_kernel_launch(&bounded, &l, NULL), KS_OK);
    /* Nothing invalid reached the driver, nor even loaded the image. */
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 1);
}
END_TEST

START_TEST(invalid_values)
{
    ck_assert_status(ks_kernel_launch(&mix, NULL, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("launch configuration");
    ks_launch l = ks_launch_1d(1, 1);
    ck_assert_status(ks_kernel_launch(&mix, &l, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("argument array");
    ck_assert_status(ks_kernel_launch(NULL, &l, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_image_load(NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_image_unload(NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_kernel_resolve(NULL), KS_ERR_INVALID_VALUE);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 0);
}
END_TEST

START_TEST(launch_attrs_unsupported)
{
    fake.hide("cuLaunchKernelEx");
    ks_launch_attrs a = ks_launch_attrs_pdl(ks_launch_attrs_none());
    ks_launch l = ks_launch_with(ks_launch_1d(1, 32), &a);
    ck_assert_status(launch_mix(&l), KS_ERR_UNSUPPORTED);
    ck_assert_message_has("cuLaunchKernelEx");
    ck_assert_int_eq(fake.launch_count(), 0);
    /* Without attributes the same kernel launches. */
    l.attrs = NULL;
    ck_assert_status(launch_mix(&l), KS_OK);
}
END_TEST

START_TEST(invalid_images)
{
    static const unsigned char elf[8] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    static const unsigned char fatbin[8] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0};
    static const char unterminated[4] = {'.', 'v', 'e', 'r'};
    ks_image none = KS_IMAGE_INIT("none.cu", NULL, 0, KS_IMAGE_NONE);
    ks_image null_data = KS_IMAGE_INIT("null.cu", NULL, 0, KS_IMAGE_FATBIN);
    ks_image ptx = KS_IMAGE_INIT("ptx.cu", unterminated, sizeof unterminated, KS_IMAGE_PTX);
    ks_image cubin_bad = KS_IMAGE_INIT("cubin.cu", fatbin, sizeof fatbin, KS_IMAGE_CUBIN);
    ks_image fatbin_bad = KS_IMAGE_INIT("fatbin.cu", elf, sizeof elf, KS_IMAGE_FATBIN);
    ks_image *bad_images[] = {&none, &null_data, &ptx, &cubin_bad, &fatbin_bad};
    for (size_t i = 0; i < sizeof bad_images / sizeof bad_images[0]; i++) {
        ck_assert_status(ks_image_load(bad_images[i]), KS_ERR_INVALID_IMAGE);
        ck_assert_message_has(bad_images[i]->source);
    }
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);

    ks_image cubin = KS_IMAGE_INIT("cubin.cu", elf, sizeof elf, KS_IMAGE_CUBIN);
    ks_image fat = KS_IMAGE_INIT("fatbin.cu", fatbin, sizeof fatbin, KS_IMAGE_FATBIN);
    const unsigned char *copy;
    ck_assert_status(ks_image_load(&cubin), KS_OK);
    ck_assert_ptr_eq(fake.last_image(&copy, NULL), elf);
    ck_assert_status(ks_image_load(&fat), KS_OK);
    ck_assert_ptr_eq(fake.last_image(&copy, NULL), fatbin);
    ck_assert_mem_eq(copy, fatbin, 8);
    ck_assert_status(ks_image_unload(&cubin), KS_OK);
    ck_assert_status(ks_image_unload(&fat), KS_OK);
    ck_assert_int_eq(fake.live_libraries(), 0);
}
END_TEST

/* ---- versions ------------------------------------------------------------------------- */

START_TEST(version_reported)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", KSTUB_VERSION_MAJOR, KSTUB_VERSION_MINOR, KSTUB_VERSION_PATCH);
    ck_assert_str_eq(ks_version(), want);
    ck_assert_int_eq(ks_version_number(), KSTUB_VERSION);
    ck_assert_int_eq(KSTUB_VERSION, 10000 * KSTUB_VERSION_MAJOR + 100 * KSTUB_VERSION_MINOR + KSTUB_VERSION_PATCH);
    /* The initialisers record the layout they were compiled against. */
    ck_assert_uint_eq(mix_image.desc_version, KS_DESC_VERSION);
    ck_assert_uint_eq(mix.desc_version, KS_DESC_VERSION);
    /* The field took 0.1's padding: sizes and every other offset are 0.1's, so
     * an object generated before it reads 0 there and is refused (LP64). */
    if (sizeof(void *) == 8) {
        ck_assert_uint_eq(sizeof(ks_kernel), 88);
        ck_assert_uint_eq(offsetof(ks_kernel, desc_version), offsetof(ks_kernel, max_threads) + 4);
        ck_assert_uint_eq(offsetof(ks_kernel, ks__handle), 48);
        ck_assert_uint_eq(sizeof(ks_image), 56);
        ck_assert_uint_eq(offsetof(ks_image, desc_version), offsetof(ks_image, kind) + 4);
        ck_assert_uint_eq(offsetof(ks_image, ks__library), 32);
    }
}
END_TEST

/* A descriptor from another layout is refused at load/resolve, never misread. */
START_TEST(descriptor_version_mismatch)
{
    static ks_image old_image = KS_IMAGE_INIT("old.cu", mix_ptx, sizeof mix_ptx, KS_IMAGE_PTX);
    static ks_kernel old = KS_KERNEL_INIT(&old_image, "_Z3mixcsidPf", "old_mix", 5, mix_params, 0);
    char c = 'a', text[64];
    short sh = 1;
    int i = 2;
    double d = 3;
    float *p = NULL;
    void *args[5];
    ks_launch l = ks_launch_1d(1, 32);
    static const unsigned versions[] = {KS_DESC_VERSION + 1, 0};    /* newer, and from before versions */
    for (size_t v = 0; v < 2; v++) {
        old.desc_version = versions[v];
        ck_assert_status(ks_kernel_launch(&old, &l, mix_args(&c, &sh, &i, &d, &p, args)), KS_ERR_VERSION);
        ck_assert_message_has("kernel 'old_mix'");
        snprintf(text, sizeof text, "layout version %u,", versions[v]);
        ck_assert_message_has(text);
        snprintf(text, sizeof text, "libkstub (%s) reads layout version %u", ks_version(), KS_DESC_VERSION);
        ck_assert_message_has(text);
        ck_assert_status(ks_kernel_resolve(&old), KS_ERR_VERSION);
    }
    old.desc_version = KS_DESC_VERSION;
    old_image.desc_version = KS_DESC_VERSION + 5;
    ck_assert_status(ks_kernel_launch(&old, &l, mix_args(&c, &sh, &i, &d, &p, args)), KS_ERR_VERSION);
    ck_assert_message_has("image descriptor of 'old.cu'");
    ck_assert_status(ks_image_load(&old_image), KS_ERR_VERSION);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    ck_assert_int_eq(fake.launch_count(), 0);
    old_image.desc_version = KS_DESC_VERSION;
    ck_assert_status(ks_kernel_launch(&old, &l, mix_args(&c, &sh, &i, &d, &p, args)), KS_OK);
    ck_assert_status(ks_image_unload(&old_image), KS_OK);
}
END_TEST

/* ---- contexts ------------------------------------------------------------------------- */

static void *launch_in_thread(void *arg)
{
    (void)arg;
    ks_launch l = ks_launch_1d(1, 32);
    return (void *)(uintptr_t)launch_mix(&l);
}

START_TEST(no_current_context_uses_primary)
{
    fake.no_current_context();
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 1);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 1);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 2);   /* failed once, retried */
    ck_assert_int_eq(fake.launch_count(), 1);
    /* Now current on this thread: no more context work. */
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 1);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 3);
    /* Another thread sets it current too, but the process retains it once. */
    pthread_t t;
    void *ret;
    ck_assert_int_eq(pthread_create(&t, NULL, launch_in_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, &ret), 0);
    ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 1);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 2);
    ck_assert_int_eq(fake.launch_count(), 3);
}
END_TEST

START_TEST(no_device_no_context)
{
    fake.no_current_context();
    fake.inject("cuDeviceGet", CUDA_ERROR_NO_DEVICE, 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_NO_CONTEXT);
    ck_assert_message_has("cuDeviceGet failed: CUDA_ERROR_NO_DEVICE");
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

START_TEST(own_context_is_not_replaced)
{
    /* The thread has a context (the fake's default) that the driver rejects:
     * the caller's bug to see, not for libkstub to paper over. */
    fake.inject("cuLaunchKernel", CUDA_ERROR_INVALID_CONTEXT, 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_LAUNCH);
    ck_assert_message_has("cuLaunchKernel failed: CUDA_ERROR_INVALID_CONTEXT");
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 0);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 0);
}
END_TEST

START_TEST(load_without_context_retries)
{
    fake.inject("cuLibraryLoadData", CUDA_ERROR_INVALID_CONTEXT, 1);
    fake.no_current_context();
    ck_assert_status(ks_image_load(&mix_image), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 2);
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 1);
}
END_TEST

/* ---- caching, unloading, threads ---------------------------------------------------------- */

START_TEST(no_lookup_after_first_launch)
{
    ks_launch l = ks_launch_1d(1, 32);
    for (int i = 0; i < 10; i++)
        ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 1);
    ck_assert_int_eq(fake.calls("cuKernelGetParamInfo"), 6);   /* 5 and the one past the end */
    ck_assert_int_eq(fake.calls("cuCtxGetCurrent"), 0);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 10);
    ck_assert_int_eq(fake.launch_count(), 10);
}
END_TEST

START_TEST(unload_then_relaunch_reloads)
{
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_status(ks_kernel_launch(&bounded, &l, NULL), KS_OK);
    ck_assert_ptr_nonnull(mix.ks__handle);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_ptr_null(mix.ks__handle);
    ck_assert_ptr_null(bounded.ks__handle);
    ck_assert_ptr_null(mix_image.ks__library);
    ck_assert_ptr_null(mix_image.ks__kernels);
    ck_assert_int_eq(fake.live_libraries(), 0);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);    /* twice is harmless */
    ck_assert_int_eq(fake.calls("cuLibraryUnload"), 1);

    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 2);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 3);
    ck_assert_int_eq(fake.live_libraries(), 1);
    ck_assert_int_eq(fake.launch_count(), 3);
}
END_TEST

START_TEST(resolve_without_launch)
{
    ck_assert_status(ks_kernel_resolve(&mix), KS_OK);
    ck_assert_status(ks_kernel_resolve(&mix), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 1);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 0);
    ck_assert_ptr_eq(mix_image.ks__kernels, &mix);
}
END_TEST

#define RACERS 32
static pthread_barrier_t start_line;

static void *race(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start_line);
    ks_launch l = ks_launch_1d(1, 32);
    return (void *)(uintptr_t)launch_mix(&l);
}

START_TEST(threads_race_on_first_launch)
{
    pthread_t t[RACERS];
    /* A slow load keeps the first thread in the slow path while the rest arrive. */
    fake.delay("cuLibraryLoadData", 50000);
    ck_assert_int_eq(pthread_barrier_init(&start_line, NULL, RACERS), 0);
    for (int i = 0; i < RACERS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, race, NULL), 0);
    for (int i = 0; i < RACERS; i++) {
        void *ret;
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    }
    pthread_barrier_destroy(&start_line);
    ck_assert_int_eq(fake.calls("cuInit"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 1);
    ck_assert_msg(fake.launch_count() == RACERS, "launches %d, cuLaunchKernel calls %d, ctxset %d, primary %d",
                  fake.launch_count(), fake.calls("cuLaunchKernel"), fake.calls("cuCtxSetCurrent"), fake.calls("cuDevicePrimaryCtxRetain"));
}
END_TEST

/* ---- helpers for files ------------------------------------------------------------------ */

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}

/* Regular files in \p dir whose names end in \p suffix; -1 if there is no such directory. */
static int count_files(const char *dir, const char *suffix)
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
static void the_entry(char *out, size_t cap)
{
    DIR *d = opendir(cache_dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(out, cap, "%s/%s", cache_dir, e->d_name);
        n++;
    }
    closedir(d);
    ck_assert_int_eq(n, 1);
}

static size_t read_file(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* ---- SHA-256 (runtime/sha256.c) ------------------------------------------------------------ */

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

/* ---- the module fallback (drivers without cuLibrary*) --------------------------------------- */

START_TEST(module_fallback_launches)
{
    fake.hide("cuLibraryLoadData");
    ks_launch l = ks_launch_1d(2, 64);
    for (int i = 0; i < 5; i++)
        ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 1);
    ck_assert_int_eq(fake.calls("cuModuleGetFunction"), 1);
    ck_assert_int_eq(fake.calls("cuFuncGetParamInfo"), 6);
    ck_assert_int_eq(fake.calls("cuCtxGetCurrent"), 5 + 1);   /* one a launch, one to resolve */
    ck_assert_int_eq(fake.launch_count(), 5);
    ck_assert_str_eq(fake.launch(4)->symbol, "_Z3mixcsidPf");
    ck_assert(ks_image_is_loaded(&mix_image));
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&mix_image, &info), KS_OK);
    ck_assert_int_eq(info.library, 0);
    ck_assert_int_eq(info.kind, KS_IMAGE_PTX);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_int_eq(fake.live_modules(), 0);
    ck_assert(!ks_image_is_loaded(&mix_image));
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 2);
}
END_TEST

START_TEST(loader_env_forces_modules)
{
    setenv("KSTUB_LOADER", "module", 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 1);
}
END_TEST

static void *launch_in_context(void *arg)
{
    fake.set_context((int)(intptr_t)arg);
    ks_launch l = ks_launch_1d(1, 32);
    return (void *)(uintptr_t)launch_mix(&l);
}

START_TEST(module_one_per_context)
{
    fake.hide("cuLibraryLoadData");
    ks_launch l = ks_launch_1d(1, 32);
    fake.set_context(0);
    ck_assert_status(launch_mix(&l), KS_OK);
    fake.set_context(2);                        /* another device's context */
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    fake.set_context(0);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 2);
    ck_assert_int_eq(fake.calls("cuModuleGetFunction"), 2);
    ck_assert_int_eq(fake.launch(0)->ctx, 0);
    ck_assert_int_eq(fake.launch(1)->ctx, 2);
    ck_assert_int_eq(fake.launch(2)->ctx, 2);
    ck_assert_int_eq(fake.launch(3)->ctx, 0);
    /* Threads in two more contexts at once. */
    pthread_t t[2];
    void *ret;
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, launch_in_context, (void *)(intptr_t)(i + 1)), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    }
    ck_assert_int_eq(fake.live_modules(), 3);  /* contexts 0, 1, 2 (3 was never used) */
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 3);
    /* Each module is unloaded in its own context; the caller's stays current. */
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_int_eq(fake.live_modules(), 0);
    ck_assert_int_eq(fake.calls("cuCtxPushCurrent"), 3);
    ck_assert_int_eq(fake.calls("cuCtxPopCurrent"), 3);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(fake.launch_count() - 1)->ctx, 0);
}
END_TEST

START_TEST(library_many_contexts)
{
    pthread_t t[3];
    void *ret;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, launch_in_context, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    }
    /* One context-independent load serves every context. */
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 1);
    ck_assert_int_eq(fake.launch_count(), 3);
}
END_TEST

START_TEST(module_no_current_context)
{
    fake.hide("cuLibraryLoadData");
    fake.no_current_context();
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 1);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 1);
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

START_TEST(module_abi_check)
{
    fake.hide("cuLibraryLoadData");
    size_t sizes[] = {1, 2, 4, 4, 8};
    fake.set_params(mix.symbol, 5, mix_off, sizes);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("parameter 3");
    ck_assert_int_eq(fake.launch_count(), 0);
    fake.hide("cuFuncGetParamInfo");           /* hidden only for later look-ups: already resolved */
}
END_TEST

START_TEST(module_jit_log)
{
    fake.hide("cuLibraryLoadData");
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_launch(&bad, &l, NULL), KS_ERR_LOAD);
    ck_assert_str_eq(ks_last_error()->call, "cuModuleLoadDataEx");
    ck_assert_ptr_nonnull(ks_last_error()->log);
    ck_assert_ptr_nonnull(strstr(ks_last_error()->log, "Unknown symbol 'BAD'"));
    ck_assert_message_has("CUDA_ERROR_INVALID_PTX");
    ck_assert_int_eq(fake.live_modules(), 0);
}
END_TEST

START_TEST(module_calls_fail_in_turn)
{
    fake.hide("cuLibraryLoadData");
    static const struct { const char *entry; int nth; ks_status want; } cases[] = {
        {"cuModuleLoadDataEx", 1, KS_ERR_LOAD},
        {"cuModuleGetFunction", 1, KS_ERR_DRIVER},
        {"cuFuncGetParamInfo", 3, KS_ERR_DRIVER},
        {"cuCtxGetCurrent", 1, KS_ERR_NO_CONTEXT},
        {"cuLaunchKernel", 1, KS_ERR_LAUNCH},
    };
    ks_launch l = ks_launch_1d(1, 32);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_status(ks_image_unload(&mix_image), KS_OK);
        ck_assert_int_eq(fake.live_modules(), 0);
        fake.inject(cases[i].entry, CUDA_ERROR_UNKNOWN, cases[i].nth);
        ck_assert_status(launch_mix(&l), cases[i].want);
        ck_assert_message_has(cases[i].entry);
        ck_assert_int_le(fake.live_modules(), 1);   /* kept for unload, never lost */
        ck_assert_status(launch_mix(&l), KS_OK);
    }
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_int_eq(fake.live_modules(), 0);
    ck_assert_int_eq(fake.launch_count(), 5);
}
END_TEST

/* ---- launch attributes (cuLaunchKernelEx) ---------------------------------------------------- */

START_TEST(launch_attributes_reach_the_driver)
{
    ks_launch_attrs a = ks_launch_attrs_priority(
        ks_launch_attrs_pdl(ks_launch_attrs_cooperative(ks_launch_attrs_cluster(ks_launch_attrs_none(), 2, 1, 1))),
        -1);
    ks_launch l = ks_launch_with(ks_launch_on(ks_launch_1d(8, 128), CU_STREAM_PER_THREAD), &a);
    l.shared_bytes = 256;
    ck_assert_status(launch_mix(&l), KS_OK);
    const fake_launch *r = fake.launch(0);
    ck_assert_int_eq(r->ex, 1);
    ck_assert_int_eq(r->nattrs, 4);
    ck_assert_uint_eq(r->cluster[0], 2);
    ck_assert_uint_eq(r->cluster[1], 1);
    ck_assert_uint_eq(r->cluster[2], 1);
    ck_assert_int_eq(r->cooperative, 1);
    ck_assert_int_eq(r->pdl, 1);
    ck_assert_int_eq(r->has_priority, 1);
    ck_assert_int_eq(r->priority, -1);
    ck_assert_uint_eq(r->grid[0], 8);
    ck_assert_uint_eq(r->block[0], 128);
    ck_assert_uint_eq(r->shared, 256);
    ck_assert_ptr_eq(r->stream, CU_STREAM_PER_THREAD);
    ck_assert_uint_eq(r->nparams, 5);
    ck_assert_mem_eq(r->params + 4, &(int){0x12345678}, 4);

    /* Only what is asked for; and no attributes at all means plain cuLaunchKernel. */
    static const ks_launch_attrs init = KS_LAUNCH_ATTRS_INIT;
    ks_launch_attrs coop = ks_launch_attrs_cooperative(init);
    l = ks_launch_with(ks_launch_1d(4, 32), &coop);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(1)->nattrs, 1);
    ck_assert_int_eq(fake.launch(1)->cooperative, 1);
    l = ks_launch_with(ks_launch_1d(4, 32), &init);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(2)->ex, 1);
    ck_assert_int_eq(fake.launch(2)->nattrs, 0);
    l.attrs = NULL;
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(3)->ex, 0);
    ck_assert_int_eq(fake.calls("cuLaunchKernelEx"), 3);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 1);
}
END_TEST

START_TEST(launch_attributes_checked)
{
    ks_launch_attrs a = ks_launch_attrs_cluster(ks_launch_attrs_none(), 2, 0, 1);
    ks_launch l = ks_launch_with(ks_launch_1d(8, 32), &a);
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("cluster (2, 0, 1)");
    a = ks_launch_attrs_cluster(ks_launch_attrs_none(), 4, 1, 1);
    l.grid.x = 6;
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("not a whole number of clusters");
    a = ks_launch_attrs_none();
    a.flags = 0x80;
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("0x80");
    ck_assert_int_eq(fake.calls("cuLaunchKernelEx"), 0);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
}
END_TEST

START_TEST(launch_ex_fails_then_recovers)
{
    fake.inject("cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 1);
    ks_launch_attrs a = ks_launch_attrs_cooperative(ks_launch_attrs_none());
    ks_launch l = ks_launch_with(ks_launch_1d(1, 32), &a);
    ck_assert_status(launch_mix(&l), KS_ERR_LAUNCH);
    ck_assert_str_eq(ks_last_error()->call, "cuLaunchKernelEx");
    ck_assert_message_has("cuLaunchKernelEx failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 1);
}
END_TEST

START_TEST(launch_ex_module_fallback)
{
    fake.hide("cuLibraryLoadData");
    ks_launch_attrs a = ks_launch_attrs_cluster(ks_launch_attrs_none(), 2, 2, 1);
    ks_dim3 g = {4, 2, 1}, b = {32, 1, 1};
    ks_launch l = ks_launch_with(ks_launch_3d(g, b), &a);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(0)->ex, 1);
    ck_assert_uint_eq(fake.launch(0)->cluster[1], 2);
}
END_TEST

/* ---- dynamic shared memory ---------------------------------------------------------------- */

START_TEST(shared_over_48k_needs_opt_in)
{
    ks_launch l = ks_launch_1d(1, 32);
    l.shared_bytes = 48 * 1024;
    ck_assert_status(launch_mix(&l), KS_OK);            /* the default limit itself is fine */
    l.shared_bytes = 64 * 1024;
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("65536 bytes of dynamic shared memory");
    ck_assert_message_has("ks_kernel_set_max_shared(kernel, 65536)");
    ck_assert_int_eq(fake.launch_count(), 1);
    ck_assert_status(ks_kernel_set_max_shared(&mix, 100 * 1024), KS_OK);
    ck_assert_int_eq(fake.calls("cuKernelSetAttribute"), 1);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_uint_eq(fake.launch(1)->shared, 64 * 1024);
    l.shared_bytes = 100 * 1024 + 1;
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("more than the 102400");
    ks_kernel_attrs at;
    ck_assert_status(ks_kernel_info(&mix, &at), KS_OK);
    ck_assert_int_eq(at.max_dynamic_shared_bytes, 100 * 1024);
}
END_TEST

START_TEST(shared_beyond_the_device)
{
    ks_launch l = ks_launch_1d(1, 32);
    l.shared_bytes = 300 * 1024;
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("exceed the device's limit of 232448 bytes");
    /* Static shared memory counts against the limit too. */
    ck_assert_status(ks_kernel_set_max_shared(&mix, 227 * 1024), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("the kernel's 1024 static");
    ck_assert_status(ks_kernel_set_max_shared(&mix, 226 * 1024), KS_OK);
    ck_assert_int_eq(fake.calls("cuKernelSetAttribute"), 1);
    /* The device limit was read once and cached. */
    ck_assert_int_eq(fake.calls("cuDeviceGetAttribute"), 1);
    fake.inject("cuKernelSetAttribute", CUDA_ERROR_INVALID_VALUE, 1);
    ck_assert_status(ks_kernel_set_max_shared(&mix, 200 * 1024), KS_ERR_DRIVER);
    ck_assert_message_has("cuKernelSetAttribute failed");
    l.shared_bytes = 226 * 1024;                /* the earlier opt-in still holds */
    ck_assert_status(launch_mix(&l), KS_OK);
}
END_TEST

START_TEST(shared_opt_in_follows_contexts)
{
    fake.hide("cuLibraryLoadData");
    ck_assert_status(ks_kernel_set_max_shared(&mix, 96 * 1024), KS_OK);
    ck_assert_int_eq(fake.calls("cuFuncSetAttribute"), 1);
    ks_launch l = ks_launch_1d(1, 32);
    l.shared_bytes = 96 * 1024;
    ck_assert_status(launch_mix(&l), KS_OK);
    fake.set_context(2);                        /* a new function there gets it too */
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuFuncSetAttribute"), 2);
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

/* ---- occupancy and kernel queries ------------------------------------------------------------ */

START_TEST(launch_config_1d_occupancy)
{
    ks_launch l;
    ck_assert_status(ks_launch_config_1d(&mix, 1000000, 0, &l), KS_OK);
    ck_assert_uint_eq(l.block.x, 768);
    ck_assert_uint_eq(l.grid.x, (1000000 + 767) / 768);
    ck_assert_uint_eq(l.grid.y * l.grid.z * l.block.y * l.block.z, 1);
    ck_assert_ptr_null(l.stream);
    ck_assert_ptr_null(l.attrs);
    /* Cached: the same question costs no occupancy query. */
    int before = fake.calls("cuCtxGetDevice") + fake.calls("cuCtxGetCurrent");
    ck_assert_status(ks_launch_config_1d(&mix, 10, 0, &l), KS_OK);
    ck_assert_uint_eq(l.grid.x, 1);
    ck_assert_int_eq(fake.calls("cuOccupancyMaxPotentialBlockSize"), 1);
    ck_assert_int_eq(fake.calls("cuCtxGetDevice") + fake.calls("cuCtxGetCurrent"), before + 1);
    /* Dynamic shared memory is part of the question. */
    ck_assert_status(ks_launch_config_1d(&mix, 1000, 80 * 1024, &l), KS_OK);
    ck_assert_uint_eq(l.block.x, 256);
    ck_assert_uint_eq(l.shared_bytes, 80 * 1024);
    int shared, limit;
    fake.occupancy_args(&shared, &limit);
    ck_assert_int_eq(shared, 80 * 1024);
    ck_assert_int_eq(fake.calls("cuOccupancyMaxPotentialBlockSize"), 2);
    /* __launch_bounds__ caps the block. */
    ck_assert_status(ks_launch_config_1d(&bounded, 1000, 0, &l), KS_OK);
    fake.occupancy_args(&shared, &limit);
    ck_assert_int_eq(limit, 256);
    ck_assert_uint_eq(l.block.x, 256);
    /* Another device asks again. */
    fake.set_context(2);
    ck_assert_status(ks_launch_config_1d(&mix, 1000, 0, &l), KS_OK);
    ck_assert_int_eq(fake.calls("cuOccupancyMaxPotentialBlockSize"), 4);
    ck_assert_status(ks_launch_config_1d(&mix, 0, 0, &l), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_launch_config_1d(&mix, (size_t)1 << 62, 0, &l), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("grid limit");
}
END_TEST

START_TEST(launch_n)
{
    char c = 'a';
    short s = -2;
    int i = 0x12345678;
    double d = 3.5;
    float *p = NULL;
    void *args[5];
    CUstream user = (CUstream)(uintptr_t)0xdeadbee0;
    ck_assert_status(ks_kernel_launch_n(&mix, 0, 0, user, mix_args(&c, &s, &i, &d, &p, args)), KS_OK);
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), 0);
    ck_assert_status(ks_kernel_launch_n(&mix, 5000, 0, user, args), KS_OK);
    const fake_launch *r = fake.launch(0);
    ck_assert_uint_eq(r->block[0], 768);
    ck_assert_uint_eq(r->grid[0], 7);
    ck_assert_ptr_eq(r->stream, user);
    fake.inject("cuOccupancyMaxPotentialBlockSize", CUDA_ERROR_UNKNOWN, 1);
    ck_assert_status(ks_kernel_launch_n(&bounded, 100, 0, NULL, NULL), KS_ERR_DRIVER);
    ck_assert_message_has("cuOccupancyMaxPotentialBlockSize failed");
    ck_assert_status(ks_kernel_launch_n(&bounded, 100, 0, NULL, NULL), KS_OK);
    ck_assert_uint_eq(fake.launch(1)->block[0], 256);
}
END_TEST

START_TEST(occupancy_module_fallback)
{
    fake.hide("cuLibraryLoadData");
    ks_launch l;
    ck_assert_status(ks_launch_config_1d(&mix, 4096, 0, &l), KS_OK);
    ck_assert_uint_eq(l.block.x, 768);
    ck_assert_int_eq(fake.calls("cuKernelGetFunction"), 0);
    ck_assert_status(ks_kernel_launch(&mix, &l, (void *[5]){&(char){0}, &(short){0}, &(int){0},
                                                             &(double){0}, &(float *){NULL}}), KS_OK);
}
END_TEST

START_TEST(kernel_info_reports)
{
    ks_kernel_attrs a;
    fake.set_device(8, 6, 99 * 1024);
    ck_assert_status(ks_kernel_info(&mix, &a), KS_OK);
    ck_assert_int_eq(a.max_threads_per_block, 1024);
    ck_assert_int_eq(a.num_regs, 32);
    ck_assert_int_eq(a.shared_static_bytes, 1024);
    ck_assert_int_eq(a.max_dynamic_shared_bytes, 48 * 1024);
    ck_assert_int_eq(a.binary_version, 86);
    fake.inject("cuFuncGetAttribute", CUDA_ERROR_UNKNOWN, 2);
    ck_assert_status(ks_kernel_info(&mix, &a), KS_ERR_DRIVER);
    ck_assert_message_has("registers");
    ck_assert_int_eq(a.num_regs, 0);
    ck_assert_status(ks_kernel_info(&missing, &a), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_status(ks_kernel_info(NULL, &a), KS_ERR_INVALID_VALUE);
}
END_TEST

START_TEST(image_queries)
{
    ks_image_info info;
    ck_assert(!ks_image_is_loaded(&mix_image));
    ck_assert_status(ks_image_info_get(&mix_image, &info), KS_OK);
    ck_assert_int_eq(info.loaded, 0);
    ck_assert_status(ks_image_load(&mix_image), KS_OK);
    ck_assert(ks_image_is_loaded(&mix_image));
    ck_assert_status(ks_image_info_get(&mix_image, &info), KS_OK);
    ck_assert_int_eq(info.loaded, 1);
    ck_assert_int_eq(info.origin, KS_IMAGE_PTX);
    ck_assert_int_eq(info.kind, KS_IMAGE_PTX);
    ck_assert_ptr_null(info.path);
    ck_assert_int_eq(info.library, 1);
    ck_assert_int_eq(info.arch, 0);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert(!ks_image_is_loaded(&mix_image));
    ck_assert_status(ks_image_info_get(NULL, &info), KS_ERR_INVALID_VALUE);
}
END_TEST

/* ---- images from files ---------------------------------------------------------------------- */

static const unsigned char elf_bytes[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 'c', 'u', 'b', 'i', 'n', 0, 0, 0};
static const unsigned char fatbin_bytes[16] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 'f', 'a', 't', 0, 0, 0, 0, 0};

static ks_image disk_image = KS_IMAGE_INIT("kernels/disk.cu", NULL, 0, KS_IMAGE_NONE);
static ks_kernel disk_mix = KS_KERNEL_INIT(&disk_image, "_Z3mixcsidPf", "disk_mix", 5, mix_params, 0);

static ks_status launch_disk(void)
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

START_TEST(file_from_image_path)
{
    char dir[128], path[PATH_MAX + 32], env[2 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s/images", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/disk.cubin", dir);
    write_file(path, elf_bytes, sizeof elf_bytes);
    snprintf(path, sizeof path, "%s/disk.ptx", dir);
    write_file(path, ".version 8.0\n", 13);
    snprintf(env, sizeof env, "/nonexistent::%s", dir);
    setenv("KSTUB_IMAGE_PATH", env, 1);
    ck_assert_status(launch_disk(), KS_OK);
    /* The cubin wins over the PTX; the bytes are the file's. */
    const unsigned char *copy;
    size_t n;
    fake.last_image(&copy, &n);
    ck_assert_mem_eq(copy, elf_bytes, 8);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&disk_image, &info), KS_OK);
    snprintf(path, sizeof path, "%s/disk.cubin", dir);
    ck_assert_str_eq(info.path, path);
    ck_assert_int_eq(info.kind, KS_IMAGE_CUBIN);
    ck_assert_int_eq(info.origin, KS_IMAGE_CUBIN);
    /* A fatbin beside it is preferred after a reload. */
    snprintf(path, sizeof path, "%s/disk.fatbin", dir);
    write_file(path, fatbin_bytes, sizeof fatbin_bytes);
    ck_assert_status(ks_image_unload(&disk_image), KS_OK);
    ck_assert_status(launch_disk(), KS_OK);
    fake.last_image(&copy, &n);
    ck_assert_mem_eq(copy, fatbin_bytes, 8);
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

START_TEST(file_not_found_lists_paths)
{
    setenv("KSTUB_IMAGE_PATH", "/nonexistent/a:/nonexistent/b", 1);
    ck_assert_status(launch_disk(), KS_ERR_INVALID_IMAGE);
    ck_assert_message_has("kernels/disk.cu");
    ck_assert_message_has("/nonexistent/a/disk.fatbin");
    ck_assert_message_has("/nonexistent/b/disk.ptx");
    ck_assert_message_has("KSTUB_IMAGE_PATH");
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
}
END_TEST

START_TEST(file_beside_the_executable)
{
    char exe[PATH_MAX], path[PATH_MAX + 32];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(len, 0);
    exe[len] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(path, sizeof path, "%s/disk.ptx", exe);
    static const char ptx[] = ".version 8.0\n.target sm_90\n";
    write_file(path, ptx, sizeof ptx - 1);
    ks_status st = launch_disk();
    unlink(path);
    ck_assert_status(st, KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&disk_image, &info), KS_OK);
    ck_assert_int_eq(info.kind, KS_IMAGE_PTX);
    const unsigned char *copy;
    size_t n;
    fake.last_image(&copy, &n);
    ck_assert_uint_eq(n, sizeof ptx);                 /* NUL-terminated for the driver */
    ck_assert_str_eq((const char *)copy, ptx);
}
END_TEST

START_TEST(file_set_explicitly)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/other.cubin", tmp_dir);
    write_file(path, elf_bytes, sizeof elf_bytes);
    /* An embedded image can be replaced by a file, and go back. */
    ck_assert_status(ks_image_set_file(&mix_image, path), KS_OK);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    const unsigned char *copy;
    ck_assert_ptr_ne(fake.last_image(&copy, NULL), mix_ptx);
    ck_assert_mem_eq(copy, elf_bytes, 8);
    ck_assert_status(ks_image_set_file(&mix_image, NULL), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);          /* still loaded from the file */
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_ptr_eq(fake.last_image(NULL, NULL), mix_ptx);
    /* A bare name is searched for. */
    setenv("KSTUB_IMAGE_PATH", tmp_dir, 1);
    ck_assert_status(ks_image_set_file(&disk_image, "other.cubin"), KS_OK);
    ck_assert_status(launch_disk(), KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&disk_image, &info), KS_OK);
    ck_assert_str_eq(info.path, path);
    /* Missing and unreadable files. */
    ck_assert_status(ks_image_unload(&disk_image), KS_OK);
    ck_assert_status(ks_image_set_file(&disk_image, "/nonexistent/x.cubin"), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has("/nonexistent/x.cubin");
    ck_assert_message_has("No such file");
    ck_assert_status(ks_image_set_file(&disk_image, tmp_dir), KS_OK);   /* a directory */
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_status(ks_image_set_file(&disk_image, "nothere.cubin"), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has("was not found");
    ck_assert_status(ks_image_set_file(&disk_image, ""), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_image_set_file(NULL, "x"), KS_ERR_INVALID_VALUE);
    snprintf(path, sizeof path, "%s/binary.ptx", tmp_dir);
    write_file(path, "ab\0cd", 5);
    ck_assert_status(ks_image_set_file(&disk_image, path), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_INVALID_IMAGE);
    ck_assert_int_eq(fake.live_libraries(), 1);    /* mix_image's; none of disk_image's failures */
}
END_TEST

static void *race_disk(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start_line);
    return (void *)(uintptr_t)launch_disk();
}

static void race_32(void *(*fn)(void *))
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

/* A FIFO where an image file should be must not block the load (issue 10 #7). */
START_TEST(file_fifo_is_refused)
{
    alarm(20);                          /* before the fix this hung for ever */
    char dir[128], path[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/images", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/disk.fatbin", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    setenv("KSTUB_IMAGE_PATH", dir, 1);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has(path);
    ck_assert_message_has("not a regular file");
    ck_assert_status(ks_image_set_file(&disk_image, path), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has("not a regular file");
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    alarm(0);
}
END_TEST

START_TEST(file_threads_race)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/disk.fatbin", tmp_dir);
    write_file(path, fatbin_bytes, sizeof fatbin_bytes);
    setenv("KSTUB_IMAGE_PATH", tmp_dir, 1);
    fake.delay("cuLibraryLoadData", 50000);
    race_32(race_disk);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.launch_count(), RACERS);
}
END_TEST

START_TEST(module_threads_race)
{
    fake.hide("cuLibraryLoadData");
    fake.delay("cuModuleLoadDataEx", 50000);
    race_32(race);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 1);
    ck_assert_int_eq(fake.calls("cuModuleGetFunction"), 1);
    ck_assert_int_eq(fake.launch_count(), RACERS);
}
END_TEST

/* ---- NVRTC (the fake: counts, failures) -------------------------------------------------------- */

static const char saxpy_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n";
static ks_image src_image = KS_IMAGE_INIT("kernels/saxpy.cu", saxpy_src, sizeof saxpy_src, KS_IMAGE_SOURCE);
static const ks_param_desc saxpy_params[] = {{0, 4}, {8, 8}, {16, 8}, {24, 4}};
static const size_t saxpy_off[] = {0, 8, 16, 24}, saxpy_size[] = {4, 8, 8, 4};
static ks_kernel saxpy = KS_KERNEL_INIT(&src_image, "saxpy", "saxpy", 4, saxpy_params, 0);

static ks_status launch_saxpy(void)
{
    float a = 2.0f;
    const float *x = NULL;
    float *y = NULL;
    int n = 10;
    void *args[] = {&a, &x, &y, &n};
    ks_launch l = ks_launch_1d(1, 32);
    return ks_kernel_launch(&saxpy, &l, args);
}

static void *race_saxpy(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start_line);
    return (void *)(uintptr_t)launch_saxpy();
}

START_TEST(nvrtc_compiles_for_the_device)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    fake.set_device(8, 6, 99 * 1024);
    const char *opts[] = {"-std=c++17", "-DSCALE=2"};
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, opts, 2), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
    ck_assert_str_eq(fnv.option(0), "-std=c++17");
    ck_assert_str_eq(fnv.option(1), "-DSCALE=2");
    ck_assert_str_eq(fnv.option(2), "--gpu-architecture=sm_86");
    ck_assert_ptr_null(fnv.option(3));
    ck_assert_int_eq(fnv.calls("live"), 0);
    const unsigned char *copy;
    fake.last_image(&copy, NULL);
    ck_assert_mem_eq(copy, "\x7f" "ELFexte", 8);    /* the fake's "cubin": magic + source */
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&src_image, &info), KS_OK);
    ck_assert_int_eq(info.origin, KS_IMAGE_SOURCE);
    ck_assert_int_eq(info.kind, KS_IMAGE_CUBIN);
    ck_assert_int_eq(info.arch, 86);
    ck_assert_int_eq(info.from_cache, 0);
    /* A driver-chosen architecture is refused, before NVRTC runs. */
    const char *arch[] = {"--gpu-architecture=sm_70"};
    ck_assert_status(ks_image_unload(&src_image), KS_OK);
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, arch, 1), KS_OK);
    ck_assert_status(launch_saxpy(), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("leave it out");
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, NULL, 0), KS_OK);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_status(ks_image_set_nvrtc_options(NULL, NULL, 0), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_image_set_nvrtc_options(&src_image, (const char *[]){NULL}, 1), KS_ERR_INVALID_VALUE);
}
END_TEST

static const char broken_src[] = "#error broken on purpose\n__global__ void k() {}\n";
static ks_image broken_image = KS_IMAGE_INIT("broken.cu", broken_src, sizeof broken_src, KS_IMAGE_SOURCE);
static ks_kernel broken = KS_KERNEL_INIT(&broken_image, "_Z1kv", "k", 0, NULL, 0);

START_TEST(nvrtc_compile_error_log)
{
    ks_launch l = ks_launch_1d(1, 32);
    for (int i = 1; i <= 2; i++) {       /* a failure is not cached: it is tried again */
        ck_assert_status(ks_kernel_launch(&broken, &l, NULL), KS_ERR_COMPILE);
        const ks_error *e = ks_last_error();
        ck_assert_str_eq(e->call, "nvrtcCompileProgram");
        ck_assert_str_eq(e->cu_name, "NVRTC_ERROR_COMPILATION");
        ck_assert_ptr_nonnull(e->log);
        ck_assert_ptr_nonnull(strstr(e->log, "1 error detected"));
        ck_assert_message_has("broken.cu");
        ck_assert_message_has("sm_90");
        ck_assert_message_has("#error directive");
        ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), i);
        ck_assert_int_eq(fnv.calls("live"), 0);
    }
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 0);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
}
END_TEST

START_TEST(nvrtc_calls_fail_in_turn)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ks_cache_enable(0);
    static const struct { const char *entry; int result; ks_status want; } cases[] = {
        {"nvrtcCreateProgram", NVRTC_ERROR_OUT_OF_MEMORY, KS_ERR_NO_MEMORY},
        {"nvrtcCompileProgram", NVRTC_ERROR_INVALID_OPTION, KS_ERR_COMPILE},
        {"nvrtcGetCUBINSize", NVRTC_ERROR_INTERNAL_ERROR, KS_ERR_COMPILE},
        {"nvrtcGetCUBIN", NVRTC_ERROR_INTERNAL_ERROR, KS_ERR_COMPILE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fnv.inject(cases[i].entry, cases[i].result, 1);
        ck_assert_status(launch_saxpy(), cases[i].want);
        ck_assert_str_eq(ks_last_error()->call, cases[i].entry);
        ck_assert_int_eq(ks_last_error()->cu_result, cases[i].result);
        ck_assert_int_eq(fnv.calls("live"), 0);
        ck_assert(!ks_image_is_loaded(&src_image));
        ck_assert_status(launch_saxpy(), KS_OK);
        ck_assert_status(ks_image_unload(&src_image), KS_OK);
    }
    /* And the driver failing to load NVRTC's output. */
    fake.inject("cuLibraryLoadData", CUDA_ERROR_INVALID_IMAGE, 1);
    ck_assert_status(launch_saxpy(), KS_ERR_LOAD);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fake.live_libraries(), 1);
    ck_assert_int_eq(fake.launch_count(), 5);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), -1);   /* disabled: not even created */
}
END_TEST

START_TEST(nvrtc_missing)
{
    setenv("KSTUB_LIBNVRTC", "/nonexistent/libnvrtc.so", 1);
    ck_assert_status(launch_saxpy(), KS_ERR_NO_NVRTC);
    ck_assert_message_has("/nonexistent/libnvrtc.so");
    ck_assert_status(launch_saxpy(), KS_ERR_NO_NVRTC);    /* replayed, not retried */
}
END_TEST

START_TEST(nvrtc_threads_race)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    fnv.delay_compile(50000);
    race_32(race_saxpy);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_msg(fake.launch_count() == RACERS, "launches %d, cuLaunchKernel calls %d, ctxset %d, primary %d",
                  fake.launch_count(), fake.calls("cuLaunchKernel"), fake.calls("cuCtxSetCurrent"), fake.calls("cuDevicePrimaryCtxRetain"));
}
END_TEST

START_TEST(nvrtc_module_fallback_compiles_once)
{
    fake.hide("cuLibraryLoadData");
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_status(launch_saxpy(), KS_OK);
    fake.set_context(1);
    ck_assert_status(launch_saxpy(), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
    ck_assert_int_eq(fake.live_modules(), 2);
}
END_TEST

START_TEST(nvrtc_source_file)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/saxpy2.cu", tmp_dir);
    write_file(path, saxpy_src, sizeof saxpy_src - 1);
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    ck_assert_status(ks_image_set_file(&disk_image, path), KS_OK);
    ks_kernel k = KS_KERNEL_INIT(&disk_image, "saxpy", "saxpy", 4, saxpy_params, 0);
    ck_assert_status(ks_kernel_resolve(&k), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&disk_image, &info), KS_OK);
    ck_assert_int_eq(info.origin, KS_IMAGE_SOURCE);
    ck_assert_int_eq(info.kind, KS_IMAGE_CUBIN);
    ck_assert_str_eq(info.path, path);
    ck_assert_status(ks_image_unload(&disk_image), KS_OK);
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

/* ---- the environment of a set-uid program (issue 10 #10) --------------------------------------- */

/* Run as a set-uid copy of this program (see below): with AT_SECURE set,
 * KSTUB_LIBCUDA must be ignored, so the fake driver must not get loaded.
 * 0: ignored; 1: it was used; 77: the kernel did not mark the process secure. */
static int secure_env_probe(void)
{
    if (getauxval(AT_SECURE) == 0)
        return 77;
    void *fn;
    ks_driver_proc("cuInit", &fn);      /* fails without a real driver: what matters is which was tried */
    return dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD) != NULL;
}

START_TEST(setuid_ignores_the_environment)
{
    if (geteuid() != 0) {
        fprintf(stderr, "note: not root; the set-uid environment test is skipped\n");
        return;
    }
    char probe[PATH_MAX];
    snprintf(probe, sizeof probe, "%s/probe", tmp_dir);
    int in = open("/proc/self/exe", O_RDONLY), out = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0700);
    ck_assert(in >= 0 && out >= 0);
    static char buf[1 << 16];
    for (ssize_t n; (n = read(in, buf, sizeof buf)) > 0;)
        ck_assert_int_eq(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
    ck_assert_int_eq(chmod(probe, 04755), 0);
    ck_assert_int_eq(chmod(tmp_dir, 0755), 0);
    ck_assert_str_eq(getenv("KSTUB_LIBCUDA"), FAKE_CUDA_PATH);
    pid_t pid = fork();
    if (pid == 0) {
        /* An ordinary user starts the set-uid-root program: euid 0, ruid 65534. */
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(90);
        execl(probe, probe, "--secure-env-probe", (char *)NULL);
        _exit(91);
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st), "the probe died (status 0x%x)", st);
    if (WEXITSTATUS(st) == 77) {
        fprintf(stderr, "note: the set-uid probe did not run with AT_SECURE (nosuid mount?); test skipped\n");
        return;
    }
    ck_assert_msg(WEXITSTATUS(st) == 0, "a set-uid program loaded the driver KSTUB_LIBCUDA named (probe exit %d)",
                  WEXITSTATUS(st));
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

/* ---- suite ------------------------------------------------------------------------------ */

/* One named test case per area, each test in a fresh process with the fixture. */
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

static void add_case(Suite *s, const char *name, const TTest *const *tests)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);      /* 32 threads under valgrind are slow */
    for (; *tests; tests++)
        tcase_add_test(tc, *tests);
    suite_add_tcase(s, tc);
}

#define TESTS(...) ((const TTest *const[]){__VA_ARGS__, NULL})

static Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    add_case(s, "status", TESTS(status_names_and_strings, last_error_starts_empty,
                                last_error_is_per_thread));
    add_case(s, "driver", TESTS(no_driver, missing_entry_point, entry_points_through_get_proc_address,
                                init_fails, param_info_missing_skips_abi_check,
                                driver_proc_for_the_application, driver_proc_without_driver));
    add_case(s, "launch", TESTS(exact_parameter_bytes, configuration_passes_through,
                                streams_pass_through, kernel_without_parameters,
                                image_bytes_reach_the_driver));
    add_case(s, "failures", TESTS(load_fails_then_recovers, get_kernel_fails_then_recovers,
                                  symbol_not_found, param_info_fails_then_recovers,
                                  launch_fails_then_recovers, unknown_cuda_result_is_named_by_number,
                                  jit_failure_log, lazy_jit_failure_log, lazy_jit_failure_log_modules));
    add_case(s, "abi", TESTS(abi_size_mismatch, abi_offset_mismatch, abi_count_mismatch,
                                 abi_overaligned_offsets));
    add_case(s, "validation", TESTS(invalid_configs, invalid_values, launch_attrs_unsupported,
                                    invalid_images));
    add_case(s, "contexts", TESTS(no_current_context_uses_primary, no_device_no_context,
                                  own_context_is_not_replaced, load_without_context_retries));
    add_case(s, "caching", TESTS(no_lookup_after_first_launch, unload_then_relaunch_reloads,
                                 resolve_without_launch, threads_race_on_first_launch));
    add_case(s, "sha256", TESTS(sha256_fips_vectors));
    add_case(s, "environment", TESTS(setuid_ignores_the_environment));
    add_case(s, "versions", TESTS(version_reported, descriptor_version_mismatch));
    add_case(s, "modules", TESTS(module_fallback_launches, loader_env_forces_modules, module_one_per_context,
                                 library_many_contexts, module_no_current_context, module_abi_check,
                                 module_jit_log, module_calls_fail_in_turn, module_threads_race));
    add_case(s, "attributes", TESTS(launch_attributes_reach_the_driver, launch_attributes_checked,
                                    launch_ex_fails_then_recovers, launch_ex_module_fallback));
    add_case(s, "shared", TESTS(shared_over_48k_needs_opt_in, shared_beyond_the_device,
                                shared_opt_in_follows_contexts));
    add_case(s, "queries", TESTS(launch_config_1d_occupancy, launch_n, occupancy_module_fallback,
                                 kernel_info_reports, image_queries));
    add_case(s, "files", TESTS(file_from_image_path, file_not_found_lists_paths, file_beside_the_executable,
                               file_set_explicitly, file_threads_race, file_fifo_is_refused));
    add_case(s, "nvrtc", TESTS(nvrtc_compiles_for_the_device, nvrtc_compile_error_log, nvrtc_calls_fail_in_turn,
                               nvrtc_missing, nvrtc_threads_race, nvrtc_module_fallback_compiles_once,
                               nvrtc_source_file));
    add_case(s, "cache", TESTS(cache_cold_then_warm, cache_hit_does_not_load_nvrtc, cache_corrupt_entry_rebuilt, cache_truncated_entry_rebuilt,
                               cache_short_entry_rebuilt, cache_foreign_entry_rebuilt,
                               cache_disabled_writes_nothing, cache_unsafe_dir_not_used,
                               cache_parent_writable_not_used,
                               cache_parent_swap_race_never_loads_the_attackers_entry, cache_fifo_entry_ignored,
                               cache_dir_longer_than_path_max, cache_key_follows_includes,
                               cache_unfollowable_includes_not_cached,
                               cache_include_word_in_comment_still_cached,
                               cache_hidden_includes_miss_on_change, cache_other_file_directives_not_cached,
                               real_nvrtc_compile_and_cache, real_nvrtc_header_change,
                               real_nvrtc_compile_error, real_nvrtc_reads_hidden_headers));
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--secure-env-probe") == 0)
        return secure_env_probe();
    SRunner *sr = srunner_create(runtime_suite());
    /* Not CK_FORK's default of "ask the environment": see the top of the file. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
