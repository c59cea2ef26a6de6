/*
 * check_checks.c — the run-time checks (runtime/check.c, pointers.c,
 * nvtx.c, trace.c) against the fake driver: every refusal path of the
 * pointers and extents checks, the sync check's attribution of a fault, the
 * choice of checks (environment, API, a bad word), the NVTX ranges (through
 * an injection library) and the trace's round trip; the pointers check's
 * allocation cache is check_checks_cache.c's. One forked process per case:
 * libkstub reads KSTUB_CHECK once per process.
 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "runtime_fixture.h"    /* the fake driver's controls (fake), ck_assert_status */
#include "testutil.h"           /* run_suite */
#include "trace_lines.h"        /* trace_lines: a trace as kstub trace prints it */

#ifndef NVTX_INJECT_PATH
#define NVTX_INJECT_PATH "build/tests/libnvtx_inject.so"
#endif

/* axpy4(float *y, const float4 *v, int n, double a, struct { char c[3]; } s):
 * y must hold n elements (the extent hint), v is 16-byte aligned. */
static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry axpy4()\n{\n ret;\n}\n";
static ks_image image = KS_IMAGE_INIT("axpy4.cu", ptx, sizeof ptx, KS_IMAGE_PTX);
static const ks_extent_op y_extent[] = {{KS_EXTENT_PARAM, 2}};
static const ks_param_desc params[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, "n", 1, y_extent},
    {8, 8, 8, KS_PARAM_POINTER, "v", "const float4 *", 16, 16, NULL, 0, NULL, 1},
    {16, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL},
    {24, 8, 8, KS_PARAM_FLOAT, "a", "double", 0, 0, NULL, 0, NULL},
    {32, 3, 1, KS_PARAM_BYTES, "s", "struct S", 0, 0, NULL, 0, NULL},
};
static ks_kernel axpy4 = KS_KERNEL_INIT(&image, "axpy4", "axpy4", 5, params, 0);
static const size_t offs[] = {0, 8, 16, 24, 32}, sizes[] = {8, 8, 4, 8, 3};

typedef struct { char c[3]; } three;

static ks_status launch_at(unsigned long long y, unsigned long long v, int n, const char *file, int line)
{
    double a = 2.5;
    three s = {{1, 2, 3}};
    void *args[5] = {&y, &v, &n, &a, &s};
    ks_launch l = ks_launch_1d(4, 64);
    return ks_kernel_launch_at(&axpy4, &l, args, file, line);
}

static ks_status launch(unsigned long long y, unsigned long long v, int n)
{
    return launch_at(y, v, n, NULL, 0);
}

static void setup(void)
{
    unsetenv("KSTUB_CHECK");
    unsetenv("KSTUB_TRACE");
    fake_cuda_open();
    fake.set_params("axpy4", 5, offs, sizes);
}

/* ---- choosing checks ----------------------------------------------------------------------- */

START_TEST(off_by_default_costs_no_driver_call)
{
    float host[4];
    ck_assert_uint_eq(ks_checks_get(), 0);
    ck_assert_status(launch((uintptr_t)host, 0, 4), KS_OK);
    ck_assert_int_eq(fake.calls("cuPointerGetAttributes"), 0);
    ck_assert_int_eq(fake.calls("cuStreamSynchronize"), 0);
    ck_assert_int_eq(fake.launch_count(), 1);
}
END_TEST

START_TEST(environment_chooses_checks)
{
    setenv("KSTUB_CHECK", "sync, pointers", 1);
    ck_assert_status(ks_image_load(&image), KS_OK);
    ck_assert_uint_eq(ks_checks_get(), KS_CHECK_SYNC | KS_CHECK_POINTERS);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 0, 4), KS_OK);
    ck_assert_int_eq(fake.calls("cuPointerGetAttributes"), 1);    /* y; v is NULL */
    ck_assert_int_eq(fake.calls("cuStreamSynchronize"), 2);       /* before and after */
}
END_TEST

START_TEST(environment_trace_path_turns_trace_on)
{
    char path[] = "/tmp/kstub-trace-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("KSTUB_TRACE", path, 1);
    ck_assert_status(ks_image_load(&image), KS_OK);
    ck_assert_uint_eq(ks_checks_get(), KS_CHECK_TRACE);
    unlink(path);
}
END_TEST

START_TEST(unknown_word_fails_every_launch)
{
    setenv("KSTUB_CHECK", "sync,pointer", 1);
    ck_assert_status(launch(0, 0, 4), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("KSTUB_CHECK names an unknown check 'pointer'");
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

/* Issue 41 #19: the unknown word is quoted escaped, as the generator
 * escapes (an ESC byte and a newline would let "::error::forged" start a
 * line of its own in a CI log), both at launch and from ks_checks_parse. */
START_TEST(unknown_word_is_quoted_escaped)
{
    setenv("KSTUB_CHECK", "sync,x\x1b[31m\n::error::forged\r\x7f", 1);
    ck_assert_status(launch(0, 0, 4), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("unknown check 'x\\x1b[31m\\n::error::forged\\r\\x7f'");
    const char *m = ks_last_error_message();
    for (const char *p = m; *p; p++)
        ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f, "raw control byte in: %s", m);
    unsigned bits;
    ck_assert_status(ks_checks_parse("\x1b]0;title\x07", &bits), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("unknown check '\\x1b]0;title\\x07'");
}
END_TEST

/* Issue 30 #14: with no driver to load, the typo is still what a launch
 * reports (it returned KS_ERR_NO_DRIVER, hiding it); without the typo the
 * same launch says there is no driver. */
static void setup_no_driver(void)
{
    unsetenv("KSTUB_CHECK");
    unsetenv("KSTUB_TRACE");
    setenv("KSTUB_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
}

START_TEST(unknown_word_fails_without_a_driver)
{
    setenv("KSTUB_CHECK", "sync,pointer", 1);
    ck_assert_status(launch(0, 0, 4), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("KSTUB_CHECK names an unknown check 'pointer'");
    ck_assert_status(launch(0, 0, 4), KS_ERR_INVALID_VALUE);
}
END_TEST

START_TEST(no_driver_without_a_typo)
{
    setenv("KSTUB_CHECK", "sync,pointers", 1);
    ck_assert_status(launch(0, 0, 4), KS_ERR_NO_DRIVER);
}
END_TEST

START_TEST(api_overrides_environment)
{
    unsigned bits = 99;
    setenv("KSTUB_CHECK", "all", 1);
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    ck_assert_status(ks_image_load(&image), KS_OK);
    ck_assert_uint_eq(ks_checks_get(), KS_CHECK_POINTERS);
    ck_assert_status(ks_checks_set(0x100), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_checks_parse("nvtx,trace", &bits), KS_OK);
    ck_assert_uint_eq(bits, KS_CHECK_NVTX | KS_CHECK_TRACE);
    ck_assert_status(ks_checks_parse("all", &bits), KS_OK);
    ck_assert_uint_eq(bits, KS_CHECK_ALL);
    ck_assert_status(ks_checks_parse("", &bits), KS_OK);
    ck_assert_uint_eq(bits, 0);
    ck_assert_status(ks_checks_parse("sync,frob", &bits), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("'frob'");
}
END_TEST

/* ---- pointers -------------------------------------------------------------------------------- */

START_TEST(host_stack_pointer_refused)
{
    float stack_buffer[8];
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    ck_assert_status(launch_at((uintptr_t)stack_buffer, 0, 8, "app.c", 42), KS_ERR_POINTER);
    ck_assert_message_has("kernel 'axpy4': parameter y (float *): 0x");
    ck_assert_message_has("is host stack memory, not device memory");
    ck_assert_message_has("(called at app.c:42)");
    ck_assert_str_eq(ks_last_error()->file, "app.c");
    ck_assert_int_eq(ks_last_error()->line, 42);
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

START_TEST(host_heap_pointer_refused)
{
    float *heap = malloc(64);
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    ck_assert_status(launch((uintptr_t)heap, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("parameter y (float *)");
    ck_assert_message_has("pageable host memory");
    ck_assert_int_eq(fake.launch_count(), 0);
    free(heap);
}
END_TEST

START_TEST(freed_pointer_refused)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 0, 8), KS_OK);
    fake.free(y);
    ck_assert_status(launch(y, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("not a live CUDA allocation: freed device memory");
    ck_assert_int_eq(fake.launch_count(), 1);
}
END_TEST

/* Issue 45: the allocations a thread saw are cached, but the driver is still
 * asked about every pointer of every launch (its buffer id, one attribute:
 * check_checks_cache.c has the rest), so a free the
 * runtime cannot see is never hidden: a pointer inside a cached allocation
 * is judged by that allocation's range, and one past it is not. */
START_TEST(cached_allocation_still_asked_every_launch)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    for (int i = 0; i < 3; i++)
        ck_assert_status(launch(y, 0, 8), KS_OK);
    ck_assert_int_eq(fake.calls("cuPointerGetAttributes"), 1);
    ck_assert_int_eq(fake.calls("cuPointerGetAttribute"), 2);
    ck_assert_status(launch(y + 60, 0, 8), KS_OK);               /* the last float of the cached range */
    ck_assert_status(launch(y + 64, 0, 8), KS_ERR_POINTER);      /* just past it */
    fake.free(y);
    ck_assert_status(launch(y + 60, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("not a live CUDA allocation: freed device memory");
    ck_assert_int_eq(fake.launch_count(), 4);
}
END_TEST

START_TEST(misaligned_float4_refused)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long v = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(0, v + 16, 8), KS_OK);
    ck_assert_status(launch(0, v + 4, 8), KS_ERR_POINTER);
    ck_assert_message_has("parameter v (const float4 *)");
    ck_assert_message_has("is not 16-byte aligned");
    ck_assert_message_has("4 bytes past a boundary");
}
END_TEST

START_TEST(less_than_one_element_refused)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(6, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 0, 8), KS_OK);
    ck_assert_status(launch(y + 4, 0, 8), KS_ERR_POINTER);   /* 2 bytes left, a float needs 4 */
    ck_assert_message_has("parameter y (float *)");
    ck_assert_message_has("has 2 bytes to the end of its allocation");
    ck_assert_message_has("one element needs 4");
}
END_TEST

/* Another device's memory passes only where peer access is enabled, as the driver's
 * CU_POINTER_ATTRIBUTE_ACCESS_FLAGS says: hardware that could (cuDeviceCanAccessPeer)
 * is not enough. */
START_TEST(peer_memory_refused_until_access_enabled)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    fake.peer_access(1);                              /* the hardware could */
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    ck_assert_status(launch(y, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("parameter y (float *)");
    ck_assert_message_has("is memory of device 1; device 0 (the launch's) has no peer access to it: "
                          "cuCtxEnablePeerAccess of device 1's context, with device 0's current, enables it");
    ck_assert_int_eq(fake.launch_count(), 0);
    fake.peer_flags(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);   /* cuCtxEnablePeerAccess */
    ck_assert_status(launch(y, 0, 8), KS_OK);
    fake.peer_flags(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);        /* cuCtxDisablePeerAccess */
    ck_assert_status(launch(y, 0, 8), KS_ERR_POINTER);
    ck_assert_int_eq(fake.launch_count(), 1);
}
END_TEST

/* The same from a context of device 1: its own memory passes, device 0's is the peer's. */
START_TEST(peer_check_names_the_launch_device)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    fake.set_context(2);                              /* a context of device 1 */
    unsigned long long mine = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    unsigned long long other = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(mine, 0, 8), KS_OK);
    ck_assert_status(launch(other, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("is memory of device 0; device 1 (the launch's) has no peer access to it");
}
END_TEST

/* A stream of another device's context: the kernel runs there, so that device's
 * memory is its own, and another's is asked with that context current. */
START_TEST(peer_check_follows_the_stream_context)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    CUstream s1 = (CUstream)(uintptr_t)0x7700;                  /* made in context 2: device 1 */
    fake.stream_context(s1, 2);
    unsigned long long on1 = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    double a = 2.5;
    three st3 = {{1, 2, 3}};
    unsigned long long v = 0;
    int n = 8;
    void *args[5] = {&on1, &v, &n, &a, &st3};
    ks_launch l = ks_launch_on(ks_launch_1d(4, 64), s1);
    ck_assert_status(ks_kernel_launch(&axpy4, &l, args), KS_OK);
    ck_assert_int_eq(fake.launch(0)->ctx, 2);
    ck_assert_int_eq(fake.calls("cuCtxPushCurrent"), fake.calls("cuCtxPopCurrent"));
    /* The same memory on the current context's own (device 0) stream: a peer's. */
    ck_assert_status(launch(on1, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("is memory of device 1; device 0 (the launch's)");
}
END_TEST

/* Read-only peer access: a pointer to const passes, one the kernel may write through does not. */
START_TEST(peer_read_only_access_refuses_writable_pointer)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    fake.peer_flags(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    unsigned long long v = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 1);
    ck_assert_status(launch(0, v, 8), KS_OK);         /* v: const float4 * */
    ck_assert_status(launch(y, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("parameter y (float *)");
    ck_assert_message_has("is memory of device 1, which device 0 (the launch's) may only read (its peer "
                          "access is read-only), but the kernel may write through a pointer to non-const");
}
END_TEST

/* A driver whose cuPointerGetAttributes does not answer the access flags but whose
 * cuPointerGetAttribute does: its answer counts. */
START_TEST(peer_access_flags_from_the_single_attribute_call)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    fake.peer_access(1);
    fake.peer_flags(-2);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    ck_assert_status(launch(y, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("device 0 (the launch's) has no peer access to it");
    ck_assert_int_eq(fake.calls("cuPointerGetAttribute"), 1);
}
END_TEST

/* A driver that does not answer the access flags: cuDeviceCanAccessPeer decides, as before. */
START_TEST(peer_access_flags_unsupported_falls_back)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    fake.peer_flags(-1);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    ck_assert_status(launch(y, 0, 8), KS_ERR_POINTER);
    ck_assert_message_has("memory of device 1, which device 0 (the launch's) cannot reach");
    fake.peer_access(1);
    ck_assert_status(launch(y, 0, 8), KS_OK);
}
END_TEST

/* The access flags are asked only of another device's memory: one query per
 * pointer of the launch's own device, as before, and one more for a peer's. */
START_TEST(access_flags_asked_only_of_other_devices)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    unsigned long long v = fake.alloc(256, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, v, 8), KS_OK);
    ck_assert_int_eq(fake.calls("cuPointerGetAttributes"), 2);
    fake.peer_flags(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    unsigned long long peer = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 1);
    ck_assert_status(launch(peer, 0, 8), KS_OK);
    ck_assert_int_eq(fake.calls("cuPointerGetAttributes"), 4);
}
END_TEST

START_TEST(managed_mapped_and_null_pass)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    unsigned long long m = fake.alloc(64, CU_MEMORYTYPE_UNIFIED, 0);
    unsigned long long h = fake.alloc(64, CU_MEMORYTYPE_HOST, 0);
    ck_assert_status(launch(m, 0, 16), KS_OK);
    ck_assert_status(launch(h, 0, 16), KS_OK);
    ck_assert_status(launch(0, 0, 16), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 3);
}
END_TEST

/* ---- extents --------------------------------------------------------------------------------- */

START_TEST(extent_one_element_short_refused)
{
    ck_assert_status(ks_checks_set(KS_CHECK_EXTENTS), KS_OK);
    unsigned long long y = fake.alloc(999 * sizeof(float), CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 0, 999), KS_OK);
    ck_assert_status(launch(y, 0, 1000), KS_ERR_EXTENT);
    ck_assert_message_has("parameter y (float *)");
    ck_assert_message_has("must hold n = 1000 elements (4000 bytes)");
    ck_assert_message_has("(999 elements)");
    ck_assert_status(launch(y, 0, -1), KS_ERR_EXTENT);
    ck_assert_message_has("n = -1 is negative");
    /* extents alone asks only about hinted pointers: v is not looked at */
    unsigned long long v = fake.alloc(64, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, v + 4, 10), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

START_TEST(pointers_without_extents_ignore_hint)
{
    ck_assert_status(ks_checks_set(KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(4 * sizeof(float), CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch(y, 0, 1000), KS_OK);
}
END_TEST

/* ---- sync ------------------------------------------------------------------------------------ */

START_TEST(sync_attributes_fault_to_its_launch)
{
    ck_assert_status(ks_checks_set(KS_CHECK_SYNC), KS_OK);
    ck_assert_status(launch(0, 0, 8), KS_OK);
    /* The next launch's wait after it (its second cuStreamSynchronize) reports the fault. */
    fake.inject("cuStreamSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS, 2);
    ck_assert_status(launch_at(0, 0, 8, "main.c", 17), KS_ERR_FAULT);
    ck_assert_message_has("kernel 'axpy4': faulted while running (grid (4, 1, 1), block (64, 1, 1), "
                          "0 shared bytes, stream");
    ck_assert_message_has("CUDA_ERROR_ILLEGAL_ADDRESS");
    ck_assert_message_has("the CUDA context is now unusable");
    ck_assert_message_has("(called at main.c:17)");
    ck_assert_str_eq(ks_last_error()->call, "cuStreamSynchronize");
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

START_TEST(sync_blames_earlier_work_before_launching)
{
    ck_assert_status(ks_checks_set(KS_CHECK_SYNC), KS_OK);
    fake.inject("cuStreamSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS, 1);
    ck_assert_status(launch(0, 0, 8), KS_ERR_FAULT);
    ck_assert_message_has("not launched: earlier work on stream");
    ck_assert_message_has("(not this kernel)");
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

/* ---- nvtx ------------------------------------------------------------------------------------ */

START_TEST(nvtx_range_named_after_kernel)
{
    setenv("NVTX_INJECTION64_PATH", NVTX_INJECT_PATH, 1);
    void *inj = dlopen(NVTX_INJECT_PATH, RTLD_NOW | RTLD_GLOBAL);
    ck_assert_msg(inj != NULL, "%s", dlerror());
    int (*pushes)(void), (*pops)(void);
    const char *(*name)(int);
    load_control(&pushes, inj, "nvtx_inject_pushes");
    load_control(&pops, inj, "nvtx_inject_pops");
    load_control(&name, inj, "nvtx_inject_name");
    ck_assert_status(launch(0, 0, 8), KS_OK);
    ck_assert_int_eq(pushes(), 0);                  /* off: NVTX never called */
    ck_assert_status(ks_checks_set(KS_CHECK_NVTX | KS_CHECK_POINTERS), KS_OK);
    ck_assert_status(launch(0, 0, 8), KS_OK);
    ck_assert_status(launch(12345, 0, 8), KS_ERR_POINTER);   /* a refusal closes its range too */
    ck_assert_int_eq(pushes(), 2);
    ck_assert_int_eq(pops(), 2);
    ck_assert_str_eq(name(0), "axpy4");
}
END_TEST

/* ---- trace ----------------------------------------------------------------------------------- */

static void hex_bytes(const char *hex, unsigned char *out, size_t n)
{
    ck_assert_uint_eq(strlen(hex), 2 * n);
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &b), 1);
        out[i] = (unsigned char)b;
    }
}

START_TEST(trace_of_three_launches_round_trips)
{
    char path[] = "/tmp/kstub-trace-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE | KS_CHECK_POINTERS), KS_OK);
    unsigned long long y = fake.alloc(4096, CU_MEMORYTYPE_DEVICE, 0);
    ck_assert_status(launch_at(y, 0, 7, "t.c", 1), KS_OK);
    ck_assert_status(launch_at(y + 8, 0, -3, "t.c", 2), KS_OK);
    ck_assert_status(launch_at(12345, 0, 9, "t.c", 3), KS_ERR_POINTER);
    FILE *f = trace_lines(path, NULL);
    ck_assert_ptr_nonnull(f);
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t err;
        json_t *j = json_loads(line, 0, &err);
        ck_assert_msg(j != NULL, "line %d is not JSON (%s): %s", n + 1, err.text, line);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "seq")), n + 1);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "pid")), getpid());
        ck_assert_str_eq(json_string_value(json_object_get(j, "kernel")), "axpy4");
        ck_assert_str_eq(json_string_value(json_object_get(j, "symbol")), "axpy4");
        ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(j, "grid"), 0)), 4);
        ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(j, "block"), 0)), 64);
        char site[16];
        snprintf(site, sizeof site, "t.c:%d", n + 1);
        ck_assert_str_eq(json_string_value(json_object_get(j, "site")), site);
        ck_assert_str_eq(json_string_value(json_object_get(j, "status")),
                         n == 2 ? "KS_ERR_POINTER" : "KS_OK");
        /* Rebuild the argument buffer from the bytes and compare with what was passed. */
        json_t *args = json_object_get(j, "args");
        ck_assert_uint_eq(json_array_size(args), 5);
        unsigned char buf[64] = {0};
        for (size_t i = 0; i < 5; i++) {
            json_t *a = json_array_get(args, i);
            size_t off = (size_t)json_integer_value(json_object_get(a, "offset"));
            size_t sz = (size_t)json_integer_value(json_object_get(a, "size"));
            ck_assert_uint_eq(off, offs[i]);
            hex_bytes(json_string_value(json_object_get(a, "bytes")), buf + off, sz);
        }
        unsigned long long want_y = n == 0 ? y : n == 1 ? y + 8 : 12345, got_y;
        int want_n = n == 0 ? 7 : n == 1 ? -3 : 9, got_n;
        double got_a;
        memcpy(&got_y, buf, 8);
        memcpy(&got_n, buf + 16, 4);
        memcpy(&got_a, buf + 24, 8);
        ck_assert_uint_eq(got_y, want_y);
        ck_assert_int_eq(got_n, want_n);
        ck_assert(got_a == 2.5);
        ck_assert_int_eq(buf[32] + buf[33] + buf[34], 6);
        ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(args, 2), "value")), want_n);
        ck_assert(json_real_value(json_object_get(json_array_get(args, 3), "value")) == 2.5);
        char ptr[32];
        snprintf(ptr, sizeof ptr, "0x%llx", want_y);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(args, 0), "pointer")), ptr);
        json_decref(j);
        n++;
    }
    fclose(f);
    unlink(path);
    ck_assert_int_eq(n, 3);
}
END_TEST

/* Issue 26 #8: a trace that cannot be opened must not stop the program's
 * work. The first launch is refused (KS_ERR_IO, not launched, saying later
 * launches go on untraced); every later one runs, untraced; naming a file
 * again traces again. */
START_TEST(trace_file_unopenable_fails_once_then_untraced)
{
    ck_assert_status(ks_trace_set_file("/nonexistent-dir/trace.jsonl"), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    ck_assert_status(launch(0, 0, 1), KS_ERR_IO);
    ck_assert_message_has("not launched: the trace file '/nonexistent-dir/trace.jsonl' cannot be opened");
    ck_assert_message_has("later launches go on untraced");
    ck_assert_int_eq(fake.launch_count(), 0);
    ck_assert_status(launch(0, 0, 1), KS_OK);
    ck_assert_status(launch(0, 0, 1), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 2);
    char path[] = "/tmp/kstub-trace-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(launch(0, 0, 1), KS_OK);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_gt(sb.st_size, 0);
    unlink(path);
}
END_TEST

/* Issue 41 #14, kept by issue 45's mapped trace: a record that cannot be
 * written (the file cannot grow: a file-size limit as a full disk;
 * SIGXFSZ ignored, so the growth says EFBIG) is reported once, nothing of
 * it is in the file (every record there is whole), later launches go on
 * untraced. The launch whose record is lost ran: "launched, but"; when
 * that launch failed anyway, the next one is refused saying so. */
static off_t trace_size(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return sb.st_size;
}

/* The trace holds `records` whole records and nothing torn. */
static void trace_holds(const char *path, unsigned long long records)
{
    ks__trace_counts n;
    FILE *f = trace_lines(path, &n);
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_uint_eq(n.torn, 0);
    ck_assert_uint_eq(n.records, records);
}

START_TEST(trace_growth_failure_reported_once)
{
    char path[] = "/tmp/kstub-trace-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    ck_assert_status(launch(0, 0, 1), KS_OK);
    off_t one = trace_size(path);
    struct rlimit rl = {(rlim_t)one, (rlim_t)one};    /* the first chunk, and no more */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    unsigned long long ok = 1;
    ks_status st = KS_OK;
    while (ok < 100000 && (st = launch(0, 0, 2)) == KS_OK)
        ok++;
    ck_assert_status(st, KS_ERR_IO);
    ck_assert_message_has("launched, but the trace file '");
    ck_assert_message_has("cannot be written: File too large; its last record is lost and later launches go on "
                          "untraced");
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), (int)ok + 1);
    ck_assert_int_eq(trace_size(path), one);
    trace_holds(path, ok);
    ck_assert_status(launch(0, 0, 3), KS_OK);                     /* once */
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), (int)ok + 2);
    trace_holds(path, ok);
    /* a launch that fails anyway keeps its own error; the next says the record is lost */
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE | KS_CHECK_POINTERS), KS_OK);
    ck_assert_status(launch(12345, 0, 4), KS_ERR_POINTER);
    ck_assert_status(launch(0, 0, 5), KS_ERR_IO);
    ck_assert_message_has("not launched: the trace file '");
    ck_assert_int_eq(fake.calls("cuLaunchKernel"), (int)ok + 2);
    ck_assert_status(launch(0, 0, 6), KS_OK);
    ck_assert_int_eq(trace_size(path), one);
    trace_holds(path, ok);
    unlink(path);
}
END_TEST

/* A file that takes no write (/proc/self/mem is a "regular" file): the
 * first launch says so, later ones go on untraced. */
START_TEST(trace_unwritable_file_reported_once)
{
    ck_assert_status(ks_trace_set_file("/proc/self/mem"), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    ck_assert_status(launch(0, 0, 1), KS_ERR_IO);
    ck_assert_message_has("the trace file '/proc/self/mem' cannot be");
    ck_assert_message_has("later launches go on untraced");
    ck_assert_status(launch(0, 0, 1), KS_OK);
    ck_assert_status(launch(0, 0, 1), KS_OK);
}
END_TEST

static void rm_rf(const char *dir)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A scratch directory with victim.txt ("precious\n") in it. */
static void scratch(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/kstub-trace-dir-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char victim[PATH_MAX];
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    FILE *f = fopen(victim, "w");
    ck_assert_ptr_nonnull(f);
    fputs("precious\n", f);
    fclose(f);
}

static void victim_untouched(const char *dir)
{
    char victim[PATH_MAX], text[64] = "";
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    FILE *f = fopen(victim, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    ck_assert_str_eq(text, "precious\n");
}

/* Issue 26 #8: the trace file is opened as every output is: a symbolic link
 * (here the default name, planted beside the program) is not followed, so
 * the file it points at is never appended to; the launch after goes on. */
START_TEST(trace_does_not_follow_a_symbolic_link)
{
    char dir[64], name[PATH_MAX];
    scratch(dir, sizeof dir);
    ck_assert_int_eq(chdir(dir), 0);
    snprintf(name, sizeof name, "kstub-trace-%ld.kstrace", (long)getpid());
    ck_assert_int_eq(symlink("victim.txt", name), 0);
    setenv("KSTUB_CHECK", "trace", 1);
    ck_assert_status(launch(0, 0, 1), KS_ERR_IO);
    ck_assert_message_has("is a symbolic link, which is not followed");
    ck_assert_status(launch(0, 0, 1), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 1);
    victim_untouched(dir);
    rm_rf(dir);
}
END_TEST

/* A FIFO as the trace is refused at once, never waited on. */
START_TEST(trace_fifo_refused_without_blocking)
{
    char dir[64], fifo[PATH_MAX];
    scratch(dir, sizeof dir);
    snprintf(fifo, sizeof fifo, "%s/t.jsonl", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    setenv("KSTUB_TRACE", fifo, 1);
    ck_assert_status(launch(0, 0, 1), KS_ERR_IO);
    ck_assert_message_has("it is not a regular file");
    ck_assert_status(launch(0, 0, 1), KS_OK);
    rm_rf(dir);
}
END_TEST

/* Issue 26 #8: KSTUB_TRACE=0 turns the trace off (also when KSTUB_CHECK
 * names it) and writes nothing; it wrote a file named 0. */
START_TEST(trace_env_zero_is_off)
{
    char dir[64];
    scratch(dir, sizeof dir);
    ck_assert_int_eq(chdir(dir), 0);
    setenv("KSTUB_CHECK", "trace,sync", 1);
    setenv("KSTUB_TRACE", "0", 1);
    ck_assert_status(launch(0, 0, 1), KS_OK);
    ck_assert_uint_eq(ks_checks_get(), KS_CHECK_SYNC);
    ck_assert_int_eq(access("0", F_OK), -1);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(n, 1);             /* victim.txt alone */
    rm_rf(dir);
}
END_TEST

/* KSTUB_TRACE=1 turns it on with the default file, ./kstub-trace-<pid>.kstrace. */
START_TEST(trace_env_one_is_the_default_file)
{
    char dir[64], name[PATH_MAX];
    scratch(dir, sizeof dir);
    ck_assert_int_eq(chdir(dir), 0);
    setenv("KSTUB_TRACE", "1", 1);
    ck_assert_status(launch(0, 0, 1), KS_OK);
    ck_assert_uint_eq(ks_checks_get(), KS_CHECK_TRACE);
    ck_assert_int_eq(access("1", F_OK), -1);
    snprintf(name, sizeof name, "kstub-trace-%ld.kstrace", (long)getpid());
    struct stat sb;
    ck_assert_int_eq(stat(name, &sb), 0);
    ck_assert_int_gt(sb.st_size, 0);
    rm_rf(dir);
}
END_TEST

/* check_checks_cache.c: the pointers check's allocation cache. */
void checks_cases_cache(Suite *s);

static Suite *checks_suite(void)
{
    Suite *s = suite_create("checks");
    TCase *c = tcase_create("choice");
    tcase_add_checked_fixture(c, setup, NULL);
    tcase_add_test(c, off_by_default_costs_no_driver_call);
    tcase_add_test(c, environment_chooses_checks);
    tcase_add_test(c, environment_trace_path_turns_trace_on);
    tcase_add_test(c, unknown_word_fails_every_launch);
    tcase_add_test(c, unknown_word_is_quoted_escaped);
    tcase_add_test(c, api_overrides_environment);
    suite_add_tcase(s, c);
    c = tcase_create("choice without a driver");
    tcase_add_checked_fixture(c, setup_no_driver, NULL);
    tcase_add_test(c, unknown_word_fails_without_a_driver);
    tcase_add_test(c, no_driver_without_a_typo);
    suite_add_tcase(s, c);
    c = tcase_create("pointers");
    tcase_add_checked_fixture(c, setup, NULL);
    tcase_add_test(c, host_stack_pointer_refused);
    tcase_add_test(c, host_heap_pointer_refused);
    tcase_add_test(c, freed_pointer_refused);
    tcase_add_test(c, cached_allocation_still_asked_every_launch);
    tcase_add_test(c, misaligned_float4_refused);
    tcase_add_test(c, less_than_one_element_refused);
    tcase_add_test(c, peer_memory_refused_until_access_enabled);
    tcase_add_test(c, peer_check_names_the_launch_device);
    tcase_add_test(c, peer_check_follows_the_stream_context);
    tcase_add_test(c, peer_read_only_access_refuses_writable_pointer);
    tcase_add_test(c, peer_access_flags_unsupported_falls_back);
    tcase_add_test(c, peer_access_flags_from_the_single_attribute_call);
    tcase_add_test(c, access_flags_asked_only_of_other_devices);
    tcase_add_test(c, managed_mapped_and_null_pass);
    tcase_add_test(c, extent_one_element_short_refused);
    tcase_add_test(c, pointers_without_extents_ignore_hint);
    suite_add_tcase(s, c);
    c = tcase_create("sync, nvtx, trace");
    tcase_add_checked_fixture(c, setup, NULL);
    tcase_add_test(c, sync_attributes_fault_to_its_launch);
    tcase_add_test(c, sync_blames_earlier_work_before_launching);
    tcase_add_test(c, nvtx_range_named_after_kernel);
    tcase_add_test(c, trace_of_three_launches_round_trips);
    tcase_add_test(c, trace_file_unopenable_fails_once_then_untraced);
    tcase_add_test(c, trace_growth_failure_reported_once);
    tcase_add_test(c, trace_unwritable_file_reported_once);
    tcase_add_test(c, trace_does_not_follow_a_symbolic_link);
    tcase_add_test(c, trace_fifo_refused_without_blocking);
    tcase_add_test(c, trace_env_zero_is_off);
    tcase_add_test(c, trace_env_one_is_the_default_file);
    suite_add_tcase(s, c);
    checks_cases_cache(s);
    return s;
}

int main(void)
{
    return run_suite(checks_suite(), CK_FORK);
}
