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
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kstub.h"
#include "fake_cuda.h"

#ifndef FAKE_CUDA_PATH
#define FAKE_CUDA_PATH "build/tests/libcuda_fake.so"
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
    __typeof__(&fake_cuda_live_libraries) live_libraries;
} fake;

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
    CONTROL(live_libraries);
#undef CONTROL
    fake.reset();
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
    ck_assert_int_eq(sizeof all / sizeof all[0], KS_STATUS_COUNT_);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        ck_assert_int_eq(all[i].s, (int)i);
        ck_assert_str_eq(ks_status_name(all[i].s), all[i].name);
        ck_assert_str_eq(ks_status_string(all[i].s), all[i].text);
    }
    ck_assert_str_eq(ks_status_name(KS_STATUS_COUNT_), "KS_UNKNOWN");
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
    ck_assert_int_eq(fake.launch_count(), RACERS);
}
END_TEST

/* ---- suite ------------------------------------------------------------------------------ */

/* One named test case per area, each test in a fresh process with the fixture. */
static void add_case(Suite *s, const char *name, const TTest *const *tests)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, NULL);
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
                                  jit_failure_log));
    add_case(s, "abi", TESTS(abi_size_mismatch, abi_offset_mismatch, abi_count_mismatch));
    add_case(s, "validation", TESTS(invalid_configs, invalid_values, launch_attrs_unsupported,
                                    invalid_images));
    add_case(s, "contexts", TESTS(no_current_context_uses_primary, no_device_no_context,
                                  own_context_is_not_replaced, load_without_context_retries));
    add_case(s, "caching", TESTS(no_lookup_after_first_launch, unload_then_relaunch_reloads,
                                 resolve_without_launch, threads_race_on_first_launch));
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(runtime_suite());
    /* Not CK_FORK's default of "ask the environment": see the top of the file. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
