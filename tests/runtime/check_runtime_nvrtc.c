/*
 * check_runtime_nvrtc.c — the runtime suite (tests/support/runtime_fixture.h): NVRTC through the fake (tests/support/fake_nvrtc.c): compiles, counts, failures.
 */
#include "runtime_fixture.h"

/* ---- NVRTC (the fake: counts, failures) -------------------------------------------------------- */

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

void runtime_cases_nvrtc(Suite *s)
{
    runtime_add_case(s, "nvrtc", TESTS(nvrtc_compiles_for_the_device, nvrtc_compile_error_log,
                                       nvrtc_calls_fail_in_turn, nvrtc_missing, nvrtc_threads_race,
                                       nvrtc_module_fallback_compiles_once, nvrtc_source_file));
}
