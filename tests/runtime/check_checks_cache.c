/*
 * check_checks_cache.c — the pointers check's per-thread allocation cache
 * (runtime/pointers.c, issue 45) against the fake driver, linked into
 * check_checks, without the free watch (the fixture names no CUPTI, so the
 * watch falls back; tests/runtime/check_watch.c has it on): a cached
 * allocation is revalidated by its buffer id alone
 * (one cuPointerGetAttribute), which catches a free and a new allocation at
 * the same address and a cuMemMap remap (a new id, as the driver gives every
 * map) to a smaller size or, at the same size, another device; a pointer
 * into the middle of a cached allocation is judged by that allocation; each
 * thread has its own cache; peer access is asked every launch.
 */
#include <pthread.h>

#include "runtime_fixture.h"    /* the fake driver's controls (fake), ck_assert_status */

void checks_cases_cache(Suite *s);

/* scale(float *y, int n): y must hold n elements (the extent hint). */
static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry scale()\n{\n ret;\n}\n";
static ks_image image = KS_IMAGE_INIT("scale.cu", ptx, sizeof ptx, KS_IMAGE_PTX);
static const ks_extent_op y_extent[] = {{KS_EXTENT_PARAM, 1}};
static const ks_param_desc params[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, "n", 1, y_extent},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL},
};
static ks_kernel scale = KS_KERNEL_INIT(&image, "scale", "scale", 2, params, 0);
static const size_t offs[] = {0, 8}, sizes[] = {8, 4};

static ks_status launch(unsigned long long y, int n)
{
    void *args[2] = {&y, &n};
    ks_launch l = ks_launch_1d(1, 32);
    return ks_kernel_launch(&scale, &l, args);
}

static void setup(void)
{
    unsetenv("KSTUB_CHECK");
    unsetenv("KSTUB_TRACE");
    fake_cuda_open();
    fake.set_params("scale", 2, offs, sizes);
}

/* Driver calls about pointers so far: full queries and one-attribute revalidations. */
#define FULL() fake.calls("cuPointerGetAttributes")
#define ONE() fake.calls("cuPointerGetAttribute")

/* A hit costs one attribute; the first launch asks everything. */
START_TEST(cached_allocation_revalidated_by_one_attribute)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    for (int i = 0; i < 4; i++)
        ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(FULL(), 1);
    ck_assert_int_eq(ONE(), 3);
    /* The middle of the cached allocation: judged by its range, still one attribute. */
    ck_assert_status(launch(y + 32, 8), KS_OK);
    ck_assert_status(launch(y + 32, 9), KS_ERR_EXTENT);
    ck_assert_message_has("allocation (0x");
    ck_assert_int_eq(FULL(), 1);
    ck_assert_int_eq(ONE(), 5);
    ck_assert_int_eq(fake.launch_count(), 5);
}
END_TEST

/* Freed, and a new allocation made at the same address (a new buffer id): its own
 * attributes count, never the cached ones; here another device's memory, no peer access. */
START_TEST(freed_and_reallocated_at_the_same_address_asked_again)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y, 16), KS_OK);
    fake.free(y);
    ck_assert_uint_eq(fake.alloc_at(y, 64, CU_MEMORYTYPE_DEVICE, 1), y);
    ck_assert_status(launch(y, 16), KS_ERR_POINTER);
    ck_assert_message_has("is memory of device 1; device 0 (the launch's) has no peer access to it");
    /* And a smaller one on the launch's device: its size counts. */
    fake.free(y);
    ck_assert_uint_eq(fake.alloc_at(y, 32, CU_MEMORYTYPE_DEVICE, 0), y);
    ck_assert_status(launch(y, 16), KS_ERR_EXTENT);
    ck_assert_message_has("allocation (0x");
    ck_assert_message_has("32 bytes)");
    ck_assert_status(launch(y, 8), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 3);
}
END_TEST

/* Memory the program maps itself (cuMemCreate + cuMemMap) keeps its address
 * across an unmap and a new map of another size or device, but not its buffer
 * id: a cached mapping is asked again after a remap, whatever its size. */
START_TEST(vmm_remap_to_a_smaller_size_caught)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_int_eq(FULL(), 1);
    ck_assert_int_eq(ONE(), 1);
    fake.remap(y, 32, 0);
    ck_assert_status(launch(y, 16), KS_ERR_EXTENT);
    ck_assert_message_has("32 bytes)");
    ck_assert_status(launch(y + 28, 1), KS_OK);
    ck_assert_status(launch(y + 32, 1), KS_ERR_POINTER);     /* past the new mapping */
    /* The same size and address, another device's memory now: nothing but the
     * device (and the id) tells it from what was there. */
    fake.remap(y, 32, 1);
    ck_assert_status(launch(y, 8), KS_ERR_POINTER);
    ck_assert_message_has("is memory of device 1");
    ck_assert_int_eq(fake.launch_count(), 3);
}
END_TEST

/* Peer memory with access enabled is cached like any allocation, but the access
 * flags are asked every launch: disabling peer access is seen at once. */
START_TEST(cached_peer_memory_still_asks_access)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    fake.peer_flags(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    ck_assert_status(launch(y, 16), KS_OK);
    ck_assert_status(launch(y, 16), KS_OK);
    fake.peer_flags(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);
    ck_assert_status(launch(y, 16), KS_ERR_POINTER);
    ck_assert_message_has("has no peer access to it");
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

/* Each thread fills its own cache: a pointer another thread cached is asked in
 * full by this one the first time; a free is seen by both. */
static unsigned long long shared_y;

static void *other_thread(void *arg)
{
    (void)arg;
    ks_status a = launch(shared_y, 16), b = launch(shared_y, 16);
    return (void *)(uintptr_t)(a != KS_OK ? a : b);
}

START_TEST(cache_per_thread)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    shared_y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(shared_y, 16), KS_OK);
    ck_assert_status(launch(shared_y, 16), KS_OK);
    ck_assert_int_eq(FULL(), 1);
    pthread_t t;
    void *ret;
    ck_assert_int_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, &ret), 0);
    ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    ck_assert_int_eq(FULL(), 2);                /* the other thread's own first look */
    ck_assert_int_eq(ONE(), 2);                 /* a hit in each thread */
    fake.free(shared_y);
    ck_assert_status(launch(shared_y, 16), KS_ERR_POINTER);
    ck_assert_int_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, &ret), 0);
    ck_assert_int_eq((int)(uintptr_t)ret, KS_ERR_POINTER);
}
END_TEST

void checks_cases_cache(Suite *s)
{
    TCase *c = tcase_create("pointers cache");
    tcase_add_checked_fixture(c, setup, NULL);
    tcase_add_test(c, cached_allocation_revalidated_by_one_attribute);
    tcase_add_test(c, freed_and_reallocated_at_the_same_address_asked_again);
    tcase_add_test(c, vmm_remap_to_a_smaller_size_caught);
    tcase_add_test(c, cached_peer_memory_still_asks_access);
    tcase_add_test(c, cache_per_thread);
    suite_add_tcase(s, c);
}
