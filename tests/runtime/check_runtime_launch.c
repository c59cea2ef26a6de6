/*
 * check_runtime_launch.c — the runtime suite (tests/support/runtime_fixture.h): what reaches cuLaunchKernel, the load-time ABI check, validation
 * before the driver, handle caching and threads, launch attributes
 * (cuLaunchKernelEx), dynamic shared memory, occupancy and kernel queries.
 */
#include "runtime_fixture.h"

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

/* The limits written out plainly, as the CUDA programming guide states them:
 * what launch.c's one-pass config_ok must agree with. */
static int config_allowed(ks_dim3 g, ks_dim3 b, unsigned max_threads)
{
    unsigned long long limit = max_threads != 0 && max_threads < 1024 ? max_threads : 1024;
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
        return 0;
    if (b.x > 1024 || b.y > 1024 || b.z > 64 || (unsigned long long)b.x * b.y * b.z > limit)
        return 0;
    return g.x <= 0x7fffffffu && g.y <= 65535 && g.z <= 65535;
}

/* Every dimension at 0, 1, its limit, one past it and UINT_MAX (a block's x
 * and y also at 65536, whose square overflows 32 bits), in every
 * combination, for a kernel without and with __launch_bounds__, on the usual
 * path and (a cluster of one block: launch_slow) off it: a launch reaches
 * the driver exactly when the limits allow it. */
START_TEST(config_limits_every_edge)
{
    static const unsigned bxy[] = {0, 1, 1024, 1025, 65536, UINT_MAX}, bz[] = {0, 1, 64, 65, UINT_MAX},
                          gx[] = {0, 1, 0x7fffffffu, 0x80000000u, UINT_MAX},
                          gyz[] = {0, 1, 65535, 65536, UINT_MAX};
    ks_kernel *kernels[] = {&mix, &bounded};
    ks_launch_attrs one = ks_launch_attrs_cluster(ks_launch_attrs_none(), 1, 1, 1);
    int want = 0;
    for (int k = 0; k < 2; k++)
        for (int slow = 0; slow < 2; slow++)
            for (int i = 0; i < 6 * 6 * 5 * 5 * 5 * 5; i++) {
                ks_dim3 b = {bxy[i % 6], bxy[i / 6 % 6], bz[i / 36 % 5]};
                ks_dim3 g = {gx[i / 180 % 5], gyz[i / 900 % 5], gyz[i / 4500 % 5]};
                ks_launch l = ks_launch_with(ks_launch_3d(g, b), slow ? &one : NULL);
                int allowed = config_allowed(g, b, kernels[k]->max_threads);
                ks_status st = k == 0 ? launch_mix(&l) : ks_kernel_launch(&bounded, &l, NULL);
                ck_assert_msg(st == (allowed ? KS_OK : KS_ERR_INVALID_CONFIG),
                              "grid (%u, %u, %u) block (%u, %u, %u), kernel %s%s: %s", g.x, g.y, g.z, b.x, b.y,
                              b.z, kernels[k]->name, slow ? ", a cluster" : "", ks_status_name(st));
                want += allowed;
            }
    ck_assert_int_eq(fake.calls("cuLaunchKernel") + fake.calls("cuLaunchKernelEx"), want);
}
END_TEST

/* Every combination of the attribute flags, without and with a cluster,
 * reaches cuLaunchKernelEx as exactly those attributes. */
START_TEST(launch_attributes_every_combination)
{
    int n = 0;
    for (unsigned cluster = 0; cluster < 2; cluster++)
        for (unsigned flags = 0; flags < 8; flags++) {
            ks_launch_attrs a = ks_launch_attrs_cluster(ks_launch_attrs_none(), cluster, cluster, cluster);
            a.flags = flags;
            a.priority = -(int)flags;
            ks_launch l = ks_launch_with(ks_launch_1d(4, 32), &a);
            ck_assert_status(launch_mix(&l), KS_OK);
            const fake_launch *r = fake.launch(n++);
            ck_assert_int_eq(r->ex, 1);
            ck_assert_int_eq(r->nattrs, (int)cluster + __builtin_popcount(flags));
            ck_assert_uint_eq(r->cluster[0], cluster);
            ck_assert_int_eq(r->cooperative, (flags & KS_LAUNCH_COOPERATIVE) != 0);
            ck_assert_int_eq(r->pdl, (flags & KS_LAUNCH_PDL) != 0);
            ck_assert_int_eq(r->has_priority, (flags & KS_LAUNCH_PRIORITY) != 0);
            ck_assert_int_eq(r->priority, (flags & KS_LAUNCH_PRIORITY) ? -(int)flags : 0);
        }
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

void runtime_cases_launch(Suite *s)
{
    runtime_add_case(s, "launch", TESTS(exact_parameter_bytes, configuration_passes_through,
                                        streams_pass_through, kernel_without_parameters,
                                        image_bytes_reach_the_driver));
    runtime_add_case(s, "abi", TESTS(abi_size_mismatch, abi_offset_mismatch, abi_count_mismatch,
                                     abi_overaligned_offsets));
    runtime_add_case(s, "validation", TESTS(invalid_configs, config_limits_every_edge, invalid_values,
                                            launch_attrs_unsupported, invalid_images));
    runtime_add_case(s, "caching", TESTS(no_lookup_after_first_launch, unload_then_relaunch_reloads,
                                         resolve_without_launch, threads_race_on_first_launch));
    runtime_add_case(s, "attributes", TESTS(launch_attributes_reach_the_driver, launch_attributes_every_combination,
                                            launch_attributes_checked,
                                            launch_ex_fails_then_recovers, launch_ex_module_fallback));
    runtime_add_case(s, "shared", TESTS(shared_over_48k_needs_opt_in, shared_beyond_the_device,
                                        shared_opt_in_follows_contexts));
    runtime_add_case(s, "queries", TESTS(launch_config_1d_occupancy, launch_n, occupancy_module_fallback,
                                         kernel_info_reports, image_queries));
}
