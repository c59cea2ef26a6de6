/*
 * check_runtime_driver.c — the runtime suite (tests/support/runtime_fixture.h): status and errors, driver loading, each driver call failing in turn,
 * versions, contexts.
 */
#include "runtime_fixture.h"

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

void runtime_cases_driver(Suite *s)
{
    runtime_add_case(s, "status", TESTS(status_names_and_strings, last_error_starts_empty,
                                        last_error_is_per_thread));
    runtime_add_case(s, "driver", TESTS(no_driver, missing_entry_point, entry_points_through_get_proc_address,
                                        init_fails, param_info_missing_skips_abi_check,
                                        driver_proc_for_the_application, driver_proc_without_driver));
    runtime_add_case(s, "failures", TESTS(load_fails_then_recovers, get_kernel_fails_then_recovers,
                                          symbol_not_found, param_info_fails_then_recovers,
                                          launch_fails_then_recovers, unknown_cuda_result_is_named_by_number,
                                          jit_failure_log, lazy_jit_failure_log,
                                          lazy_jit_failure_log_modules));
    runtime_add_case(s, "contexts", TESTS(no_current_context_uses_primary, no_device_no_context,
                                          own_context_is_not_replaced, load_without_context_retries));
    runtime_add_case(s, "versions", TESTS(version_reported, descriptor_version_mismatch));
}
