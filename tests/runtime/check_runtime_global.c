/*
 * check_runtime_global.c — the runtime suite (tests/support/runtime_fixture.h):
 * device variables (ks_global, what the generated accessors call) against
 * the fake driver: copies both ways on each kind of stream, bounds in
 * elements, the load-time size proof, both loaders and their contexts,
 * unload, the graph memcpy node, the trace; two threads first-touching one
 * variable in two contexts at once (run under check-runtime-tsan too).
 */
#include "runtime_fixture.h"
#include "trace_lines.h"    /* trace_lines: a trace as kstub trace prints it */

/* __constant__ float c_w[16] and __device__ int g_count, in mix_image. */
static ks_global c_w = KS_GLOBAL_INIT(&mix_image, "c_w", "c_w", "float[16]", 64u, 4u, KS_GLOBAL_CONSTANT, 0u);
static ks_global g_count = KS_GLOBAL_INIT(&mix_image, "g_count", "g_count", "int", 4u, 4u, KS_GLOBAL_DEVICE, 0u);
/* A const table nvcc folded away: not in the image. */
static ks_global k_gone = KS_GLOBAL_INIT(&mix_image, "k_gone", "k_gone", "const float[4]", 16u, 4u,
                                         KS_GLOBAL_CONSTANT, KS_GLOBAL_CONST);

static void declare(void)
{
    fake.set_global("c_w", 64);
    fake.set_global("g_count", 4);
}

START_TEST(write_then_read_back)
{
    declare();
    float w[16], back[16];
    for (int i = 0; i < 16; i++)
        w[i] = (float)i * 0.5f;
    ck_assert_status(ks_global_write(&c_w, 0, w, 16, NULL), KS_OK);
    ck_assert(memcmp(fake.global("c_w", 0), w, sizeof w) == 0);
    memset(back, 0xff, sizeof back);
    ck_assert_status(ks_global_read(&c_w, 0, back, 16, NULL), KS_OK);
    ck_assert(memcmp(back, w, sizeof w) == 0);
    /* A part, from an element on: element 4 onward moves by 4 * 4 bytes. */
    float two[2] = {100.0f, 200.0f};
    ck_assert_status(ks_global_write(&c_w, 14, two, 2, NULL), KS_OK);
    ck_assert(memcmp(fake.global("c_w", 0) + 14 * 4, two, sizeof two) == 0);
    ck_assert_status(ks_global_read(&c_w, 15, back, 1, NULL), KS_OK);
    ck_assert(back[0] == 200.0f);
    /* One look-up for all of it; a read waits for its stream. */
    ck_assert_int_eq(fake.calls("cuLibraryGetGlobal"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.calls("cuStreamSynchronize"), 2);
    int n = 41;
    ck_assert_status(ks_global_write(&g_count, 0, &n, 1, NULL), KS_OK);
    int got = 0;
    ck_assert_status(ks_global_read(&g_count, 0, &got, 1, NULL), KS_OK);
    ck_assert_int_eq(got, 41);
    ck_assert_int_eq(fake.calls("cuLibraryGetGlobal"), 2);
}
END_TEST

START_TEST(streams_reach_the_copy)
{
    declare();
    float w[16] = {0};
    CUstream s;
    int dir;
    ks_stream user = (ks_stream)(uintptr_t)0x5000;
    ks_stream streams[] = {NULL, KS_STREAM_PER_THREAD, user};
    for (int i = 0; i < 3; i++) {
        ck_assert_status(ks_global_write(&c_w, 0, w, 16, streams[i]), KS_OK);
        ck_assert_uint_eq(fake.last_copy(&s, &dir), 64);
        ck_assert(s == (CUstream)streams[i] && dir == 1);
        ck_assert_status(ks_global_read(&c_w, 2, w, 3, streams[i]), KS_OK);
        ck_assert_uint_eq(fake.last_copy(&s, &dir), 12);
        ck_assert(s == (CUstream)streams[i] && dir == -1);
    }
}
END_TEST

START_TEST(bounds_are_in_elements_and_nothing_is_copied)
{
    declare();
    float w[17] = {0};
    ck_assert_status(ks_global_write(&c_w, 0, w, 17, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("variable 'c_w'");
    ck_assert_message_has("[0, 0 + 17) is outside its 16 elements (float[16]); nothing copied");
    ck_assert_status(ks_global_write_at(&c_w, 15, w, 2, NULL, "rt.c", 6), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("nothing copied (called at rt.c:6)");
    ck_assert_status(ks_global_read(&c_w, 16, w, 1, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_global_write(&c_w, (size_t)-1, w, 2, NULL), KS_ERR_INVALID_VALUE);  /* no wrap */
    ck_assert_status(ks_global_write(&c_w, 0, NULL, 1, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("the host pointer is NULL");
    ck_assert_int_eq(fake.calls("cuMemcpyHtoDAsync") + fake.calls("cuMemcpyDtoHAsync"), 0);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);      /* refused before anything loads */
    /* The last element, and nothing at the end, are fine. */
    ck_assert_status(ks_global_write(&c_w, 15, w, 1, NULL), KS_OK);
    ck_assert_status(ks_global_write(&c_w, 16, w, 0, NULL), KS_OK);
}
END_TEST

START_TEST(a_wrong_size_is_refused)
{
    fake.set_global("c_w", 60);                /* the image's c_w is not kstub's float[16] */
    float w[16] = {0};
    ck_assert_status(ks_global_write(&c_w, 0, w, 16, NULL), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("variable 'c_w': the accessors copy 64 bytes (float[16]) but the image's "
                          "'c_w' has 60");
    ck_assert_int_eq(fake.calls("cuMemcpyHtoDAsync"), 0);
    void *p = (void *)1;
    ck_assert_status(ks_global_address(&c_w, &p), KS_ERR_ABI_MISMATCH);
    ck_assert_ptr_null(p);
    /* The same under the module loader. */
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
}
END_TEST

START_TEST(module_loader_proves_the_size_too)
{
    fake.hide("cuLibraryLoadData");
    fake.set_global("c_w", 68);
    float w[16] = {0};
    ck_assert_status(ks_global_write(&c_w, 0, w, 16, NULL), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("has 68");
    ck_assert_int_eq(fake.calls("cuModuleGetGlobal"), 1);
}
END_TEST

START_TEST(missing_symbols_say_why)
{
    declare();
    float w[4] = {0};
    ck_assert_status(ks_global_write(&k_gone, 0, w, 4, NULL), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_message_has("variable 'k_gone': symbol 'k_gone' is not in the image of 'mix.cu' (it is const");
    static ks_global other = KS_GLOBAL_INIT(&mix_image, "g_other", "ns::g_other", "int", 4u, 4u,
                                            KS_GLOBAL_DEVICE, 0u);
    int v = 1;
    ck_assert_status(ks_global_write(&other, 0, &v, 1, NULL), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_message_has("-rdc");
}
END_TEST

START_TEST(module_loader_one_address_per_context)
{
    fake.hide("cuLibraryLoadData");
    declare();
    int a = 7, b = 9, got = 0;
    fake.set_context(0);
    ck_assert_status(ks_global_write(&g_count, 0, &a, 1, NULL), KS_OK);
    fake.set_context(2);
    ck_assert_status(ks_global_write(&g_count, 0, &b, 1, NULL), KS_OK);
    ck_assert_int_eq(*(int *)(void *)fake.global("g_count", 0), 7);
    ck_assert_int_eq(*(int *)(void *)fake.global("g_count", 2), 9);
    fake.set_context(0);
    ck_assert_status(ks_global_read(&g_count, 0, &got, 1, NULL), KS_OK);
    ck_assert_int_eq(got, 7);
    void *p0, *p2;
    ck_assert_status(ks_global_address(&g_count, &p0), KS_OK);
    fake.set_context(2);
    ck_assert_status(ks_global_address(&g_count, &p2), KS_OK);
    ck_assert_ptr_eq(p0, fake.global("g_count", 0));
    ck_assert_ptr_eq(p2, fake.global("g_count", 2));
    ck_assert_int_eq(fake.calls("cuModuleGetGlobal"), 2);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 2);
}
END_TEST

START_TEST(unload_forgets_addresses)
{
    declare();
    int v = 3;
    ck_assert_status(ks_global_write(&g_count, 0, &v, 1, NULL), KS_OK);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_int_eq(fake.live_libraries(), 0);
    ck_assert_ptr_null(g_count.ks__addrs);
    ck_assert_status(ks_global_write(&g_count, 0, &v, 1, NULL), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 2);
    ck_assert_int_eq(fake.calls("cuLibraryGetGlobal"), 2);
}
END_TEST

START_TEST(a_stale_descriptor_is_refused)
{
    declare();
    ks_global old = c_w;
    old.desc_version = 1;
    float w[16] = {0};
    ck_assert_status(ks_global_write(&old, 0, w, 16, NULL), KS_ERR_VERSION);
    ck_assert_message_has("variable 'c_w'");
}
END_TEST

START_TEST(graph_node_writes_when_the_graph_runs)
{
    declare();
    ks_graph g;
    ks_graph_exec e;
    ks_graph_node n;
    float w[4] = {1, 2, 3, 4};
    ck_assert_status(ks_graph_create(&g), KS_OK);
    ck_assert_status(ks_global_node_add(&c_w, g, NULL, 0, 12, w, 4, &n), KS_OK);
    ck_assert_ptr_nonnull(n);
    ck_assert_status(ks_global_node_add(&c_w, g, NULL, 0, 13, w, 4, &n), KS_ERR_INVALID_VALUE);
    ck_assert_ptr_null(n);
    ck_assert_status(ks_graph_instantiate(g, &e), KS_OK);
    float zero[16] = {0};
    ck_assert(memcmp(fake.global("c_w", 0), zero, sizeof zero) == 0);   /* nothing yet */
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    ck_assert(memcmp(fake.global("c_w", 0) + 12 * 4, w, sizeof w) == 0);
    w[0] = 42;                                                          /* read at each launch */
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    ck_assert(*(float *)(void *)(fake.global("c_w", 0) + 12 * 4) == 42.0f);
    ck_assert_status(ks_graph_exec_destroy(e), KS_OK);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
}
END_TEST

START_TEST(trace_records_accessor_calls)
{
    declare();
    char path[160];
    snprintf(path, sizeof path, "%s/trace.jsonl", tmp_dir);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    float w[16] = {0};
    ck_assert_status(ks_global_write_at(&c_w, 2, w, 3, NULL, "app.c", 40), KS_OK);
    ck_assert_status(ks_global_read(&c_w, 0, w, 16, KS_STREAM_PER_THREAD), KS_OK);
    unsigned char buf[2048];
    FILE *f = trace_lines(path, NULL);
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    ck_assert_msg(strstr((char *)buf, "\"variable\":\"c_w\",\"symbol\":\"c_w\",\"op\":\"write\",\"first\":2,"
                                      "\"count\":3,\"bytes\":12,\"stream\":\"0x0\",\"site\":\"app.c:40\"}\n") != NULL,
                  "%s", buf);
    ck_assert_msg(strstr((char *)buf, "\"op\":\"read\",\"first\":0,\"count\":16,\"bytes\":64,\"stream\":\"0x2\","
                                      "\"site\":null}\n") != NULL, "%s", buf);
}
END_TEST

START_TEST(pointers_check_refuses_device_memory_as_host)
{
    declare();
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long dev = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    const void *dp = (const void *)(uintptr_t)dev;
    ck_assert_status(ks_global_write_at(&c_w, 0, dp, 16, NULL, "app.c", 7), KS_ERR_POINTER);
    ck_assert_message_has("variable 'c_w': write: 0x");
    ck_assert_message_has("is device memory");
    /* A copy launches nothing: the site is where it was called (issue 39 #9). */
    ck_assert_message_has("(called at app.c:7)");
    ck_assert(strstr(ks_last_error()->message, "launched") == NULL);
    ck_assert_str_eq(ks_last_error()->file, "app.c");
    /* page-locked host memory shorter than the copy */
    unsigned long long pinned = fake.alloc(32, CU_MEMORYTYPE_HOST, 0);
    ck_assert_status(ks_global_read(&c_w, 0, (void *)(uintptr_t)pinned, 16, NULL), KS_ERR_POINTER);
    ck_assert_message_has("has 32 bytes to the end of its allocation");
    ck_assert_message_has("the copy needs 64");
    ck_assert_int_eq(fake.calls("cuMemcpyHtoDAsync") + fake.calls("cuMemcpyDtoHAsync"), 0);
    /* pageable memory the driver does not know passes */
    float w[16] = {0};
    ck_assert_status(ks_global_write(&c_w, 0, w, 16, NULL), KS_OK);
}
END_TEST

/* Issue 45: one thread per fake context (neither the primary), released at
 * once, each first-touching g_count (its own copy in its context), launching
 * mix and reading the variable back. Under check-runtime-tsan any unlocked
 * access to the variable's list, the image state or its globals array shows. */
static void *first_touch_in_context(void *arg)
{
    int ctx = (int)(intptr_t)arg, v = 100 + ctx, got = 0;
    fake.set_context(ctx);
    pthread_barrier_wait(&start_line);
    ks_status st = ks_global_write(&g_count, 0, &v, 1, NULL);
    if (st == KS_OK) {
        ks_launch l = ks_launch_1d(1, 32);
        st = launch_mix(&l);
    }
    if (st == KS_OK)
        st = ks_global_read(&g_count, 0, &got, 1, NULL);
    if (st == KS_OK && got != v)
        st = KS_ERR_DRIVER;
    return (void *)(uintptr_t)st;
}

static void two_contexts_first_touch(void)
{
    declare();
    enum { ROUNDS = 16 };
    const int ctxs[2] = {1, 2};
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t t[2];
        ck_assert_int_eq(pthread_barrier_init(&start_line, NULL, 2), 0);
        for (int i = 0; i < 2; i++)
            ck_assert_int_eq(pthread_create(&t[i], NULL, first_touch_in_context, (void *)(intptr_t)ctxs[i]), 0);
        for (int i = 0; i < 2; i++) {
            void *ret;
            ck_assert_int_eq(pthread_join(t[i], &ret), 0);
            ck_assert_msg((int)(uintptr_t)ret == KS_OK, "round %d, context %d: %s", round, ctxs[i],
                          ks_status_name((ks_status)(uintptr_t)ret));
        }
        pthread_barrier_destroy(&start_line);
        for (int i = 0; i < 2; i++)
            ck_assert_int_eq(*(int *)(void *)fake.global("g_count", ctxs[i]), 100 + ctxs[i]);
        /* Forget everything so the next round first-touches again (no thread runs now). */
        ck_assert_status(ks_image_unload(&mix_image), KS_OK);
        ck_assert_ptr_null(g_count.ks__addrs);
    }
}

START_TEST(two_contexts_first_touch_at_once)
{
    two_contexts_first_touch();
    ck_assert_int_eq(fake.calls("cuLibraryGetGlobal"), 2 * 16);
}
END_TEST

START_TEST(two_contexts_first_touch_at_once_module_loader)
{
    fake.hide("cuLibraryLoadData");
    two_contexts_first_touch();
    ck_assert_int_eq(fake.calls("cuModuleGetGlobal"), 2 * 16);
}
END_TEST

void runtime_cases_global(Suite *s)
{
    runtime_add_case(s, "global", TESTS(write_then_read_back, streams_reach_the_copy,
                                        bounds_are_in_elements_and_nothing_is_copied, a_wrong_size_is_refused,
                                        module_loader_proves_the_size_too, missing_symbols_say_why,
                                        module_loader_one_address_per_context, unload_forgets_addresses,
                                        a_stale_descriptor_is_refused, graph_node_writes_when_the_graph_runs,
                                        trace_records_accessor_calls,
                                        pointers_check_refuses_device_memory_as_host,
                                        two_contexts_first_touch_at_once,
                                        two_contexts_first_touch_at_once_module_loader));
}
