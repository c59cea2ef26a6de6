/*
 * check_races_gpu.c — the races check (issue 45) on a real GPU, through the
 * real CUPTI: every case of the issue. Reported: unordered writers on two
 * streams (overlapping in time, and not), a reader and a writer, an async
 * copy into a buffer a kernel on another stream reads, a free on another
 * stream while a kernel uses the memory. Not reported: writers ordered by
 * an event, by a synchronisation, on one stream, by the legacy default
 * stream with a blocking stream; two readers; disjoint halves with extent
 * hints; the free after an event; two threads with their own streams; a
 * double-buffered pipeline ordered by events over many rounds. And with the
 * pointers and extents checks on too (their free watch shares CUPTI's one
 * subscription): races still reported, a watched free refused.
 *
 * Each case runs in a child process that turns the check on before it makes
 * its streams. Hand-written descriptors: no generator needed on the GPU
 * machine. Without a driver it says so and passes; without CUPTI it fails,
 * saying so (KSTUB_CUPTI names the library).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "kstub.h"

#ifndef RC_FATBIN
#define RC_FATBIN "build/tests/gpu_races/races_kernels.fatbin"
#endif

static ks_image image = KS_IMAGE_INIT("races_kernels.cu", NULL, 0, KS_IMAGE_NONE);
static const ks_extent_op n_at_1[] = {{KS_EXTENT_PARAM, 1}};
static const ks_extent_op one[] = {{KS_EXTENT_CONST, 1}};
/* fill(float *y, int n, float v), y with "kstub:extent(y, n)" */
static const ks_param_desc fill_p[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, "n", 1, n_at_1, 0},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
    {12, 4, 4, KS_PARAM_FLOAT, "v", "float", 0, 0, NULL, 0, NULL, 0},
};
/* the same kernel without the hint */
static const ks_param_desc fill_nohint_p[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, NULL, 0, NULL, 0},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
    {12, 4, 4, KS_PARAM_FLOAT, "v", "float", 0, 0, NULL, 0, NULL, 0},
};
/* spin_fill(float *y, int n, float v, long long cycles) */
static const ks_param_desc spin_p[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, "n", 1, n_at_1, 0},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
    {12, 4, 4, KS_PARAM_FLOAT, "v", "float", 0, 0, NULL, 0, NULL, 0},
    {16, 8, 8, KS_PARAM_SIGNED, "cycles", "long long", 0, 0, NULL, 0, NULL, 0},
};
/* sum(const float *x [n], int n, float *out [1]) */
static const ks_param_desc sum_p[] = {
    {0, 8, 8, KS_PARAM_POINTER, "x", "const float *", 4, 4, "n", 1, n_at_1, 1},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL, 0},
    {16, 8, 8, KS_PARAM_POINTER, "out", "float *", 4, 4, "1", 1, one, 0},
};
static ks_kernel fill = KS_KERNEL_INIT(&image, "fill", "fill", 3, fill_p, 0);
static ks_kernel fill_nohint = KS_KERNEL_INIT(&image, "fill", "fill_nohint", 3, fill_nohint_p, 0);
static ks_kernel spin_fill = KS_KERNEL_INIT(&image, "spin_fill", "spin_fill", 4, spin_p, 0);
static ks_kernel sum = KS_KERNEL_INIT(&image, "sum", "sum", 3, sum_p, 256);

/* The driver calls the program makes itself, as cuGetProcAddress gives them. */
static CUresult (*mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*mem_free)(CUdeviceptr);
static CUresult (*mem_alloc_async)(CUdeviceptr *, size_t, CUstream);
static CUresult (*mem_free_async)(CUdeviceptr, CUstream);
static CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
static CUresult (*stream_create)(CUstream *, unsigned);
static CUresult (*stream_sync)(CUstream);
static CUresult (*event_create)(CUevent *, unsigned);
static CUresult (*event_record)(CUevent, CUstream);
static CUresult (*stream_wait_event)(CUstream, CUevent, unsigned);
static CUresult (*ctx_get_current)(CUcontext *);
static CUresult (*ctx_set_current)(CUcontext);

static int failures;
#define EXPECT(cond, ...)                                                     \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "  FAIL line %d: ", __LINE__);                    \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            failures++;                                                       \
        }                                                                     \
    } while (0)
#define EXPECT_STATUS(call, want)                                             \
    do {                                                                      \
        ks_status s_ = (call);                                                \
        EXPECT(s_ == (want), "%s: got %s, want %s: %s", #call, ks_status_name(s_), \
               ks_status_name(want), ks_last_error_message());                \
        printf("  %s -> %s%s%s\n", #call, ks_status_name(s_), s_ ? ": " : "", \
               s_ ? ks_last_error_message() : "");                           \
    } while (0)
#define HAS(text) EXPECT(strstr(ks_last_error_message(), (text)) != NULL, "message lacks \"%s\"", (text))
#define CU(call) EXPECT((call) == CUDA_SUCCESS, "%s failed", #call)

#define N 4096                   /* floats in a buffer */

static ks_status run_fill(ks_kernel *k, CUstream s, CUdeviceptr y, int n, int line)
{
    float v = 1.0f;
    void *args[3] = {&y, &n, &v};
    ks_launch l = ks_launch_1d((unsigned)(n + 255) / 256, 256);
    l.stream = s;
    return ks_kernel_launch_at(k, &l, args, "check_races_gpu.c", line);
}

/* About 50 ms of spinning at ~2 GHz: still running when the next call comes. */
static ks_status run_spin(CUstream s, CUdeviceptr y, int n, int line)
{
    float v = 2.0f;
    long long cycles = 100000000;
    void *args[4] = {&y, &n, &v, &cycles};
    ks_launch l = ks_launch_1d((unsigned)(n + 255) / 256, 256);
    l.stream = s;
    return ks_kernel_launch_at(&spin_fill, &l, args, "check_races_gpu.c", line);
}

static ks_status run_sum(CUstream s, CUdeviceptr x, int n, CUdeviceptr out, int line)
{
    void *args[3] = {&x, &n, &out};
    ks_launch l = ks_launch_1d(1, 256);
    l.stream = s;
    return ks_kernel_launch_at(&sum, &l, args, "check_races_gpu.c", line);
}

static CUdeviceptr alloc(size_t bytes)
{
    CUdeviceptr p = 0;
    CU(mem_alloc(&p, bytes));
    return p;
}

static CUstream stream(unsigned flags)
{
    CUstream s = NULL;
    CU(stream_create(&s, flags));
    return s;
}

static CUevent event(void)
{
    CUevent e = NULL;
    CU(event_create(&e, CU_EVENT_DISABLE_TIMING));
    return e;
}

/* ---- reported ---------------------------------------------------------------------------- */

static void unordered_writers_overlapping_in_time(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4);
    EXPECT_STATUS(run_spin(a, y, N, 101), KS_OK);
    EXPECT_STATUS(run_fill(&fill, b, y, N, 102), KS_ERR_RACE);
    HAS("races: kernel 'fill' on stream 0x");
    HAS("(parameter y, writes bytes [0, 16384)) at check_races_gpu.c:102 and kernel 'spin_fill' on stream 0x");
    HAS("at check_races_gpu.c:101 touch bytes [0, 16384) of the allocation at 0x");
    HAS("both writing, and nothing the program does orders them");
    HAS("in this run they may have overlapped in time (the earlier one's stream was still busy)");
}

static void unordered_writers_not_overlapping_in_time(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4);
    EXPECT_STATUS(run_fill(&fill, a, y, N, 111), KS_OK);
    usleep(200000);              /* done by now, but nothing in the program says so */
    EXPECT_STATUS(run_fill(&fill, b, y, N, 112), KS_ERR_RACE);
    HAS("at check_races_gpu.c:112 and kernel 'fill'");
    HAS("in this run they did not overlap in time");
}

static void a_reader_and_a_writer(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = alloc(N * 4), out = alloc(4);
    EXPECT_STATUS(run_sum(a, x, N, out, 121), KS_OK);
    EXPECT_STATUS(run_fill(&fill, b, x, N, 122), KS_ERR_RACE);
    HAS("(parameter x, reads bytes [0, 16384)) at check_races_gpu.c:121");
    HAS("one writing");
}

static void an_async_copy_into_a_buffer_another_stream_reads(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = alloc(N * 4), out = alloc(4), z = alloc(N * 4);
    static float host[N];
    EXPECT_STATUS(run_sum(a, x, N, out, 131), KS_OK);
    CU(memcpy_htod_async(x, host, sizeof host, b));
    EXPECT_STATUS(run_fill(&fill, a, z, N, 133), KS_ERR_RACE);      /* the next checked launch reports it */
    HAS("races: cuMemcpyHtoDAsync");
    HAS("(parameter dst, writes bytes [0, 16384)) (call site not known) and kernel 'sum'");
}

static void a_free_on_another_stream_while_in_use(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = 0, z = alloc(N * 4);
    CU(mem_alloc_async(&y, N * 4, a));
    EXPECT_STATUS(run_spin(a, y, N, 141), KS_OK);
    CU(mem_free_async(y, b));
    EXPECT_STATUS(run_fill(&fill, a, z, N, 143), KS_ERR_RACE);
    HAS("races: cuMemFreeAsync");
    HAS("is not ordered after kernel 'spin_fill'");
    HAS("a use after free");
    CU(stream_sync(a));
}

static void without_extents_a_possible_race_names_the_hint(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4);
    EXPECT_STATUS(run_fill(&fill_nohint, a, y, N / 2, 151), KS_OK);
    EXPECT_STATUS(run_fill(&fill_nohint, b, y + N * 2, N / 2, 152), KS_ERR_RACE);
    HAS("races: possibly: ");
    HAS("'// kstub:extent(y, COUNT)' on the kernel settles it");
}

/* ---- not reported ------------------------------------------------------------------------ */

static void writers_ordered_by_an_event(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUevent e = event();
    CUdeviceptr y = alloc(N * 4);
    EXPECT_STATUS(run_spin(a, y, N, __LINE__), KS_OK);
    CU(event_record(e, a));
    CU(stream_wait_event(b, e, 0));
    EXPECT_STATUS(run_fill(&fill, b, y, N, __LINE__), KS_OK);
}

static void writers_ordered_by_a_synchronisation(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4);
    EXPECT_STATUS(run_fill(&fill, a, y, N, __LINE__), KS_OK);
    CU(stream_sync(a));
    EXPECT_STATUS(run_fill(&fill, b, y, N, __LINE__), KS_OK);
}

static void writers_on_one_stream(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4);
    for (int i = 0; i < 10; i++)
        EXPECT_STATUS(run_fill(&fill, a, y, N, __LINE__), KS_OK);
}

static void legacy_default_stream_with_a_blocking_stream(void)
{
    CUstream a = stream(CU_STREAM_DEFAULT);
    CUdeviceptr y = alloc(N * 4);
    EXPECT_STATUS(run_spin(a, y, N, __LINE__), KS_OK);
    EXPECT_STATUS(run_fill(&fill, NULL, y, N, __LINE__), KS_OK);   /* waits for a */
    EXPECT_STATUS(run_fill(&fill, a, y, N, __LINE__), KS_OK);      /* waits for the legacy stream */
    EXPECT_STATUS(run_fill(&fill, CU_STREAM_LEGACY, y, N, __LINE__), KS_OK);
}

static void two_readers(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = alloc(N * 4), o1 = alloc(4), o2 = alloc(4);
    EXPECT_STATUS(run_sum(a, x, N, o1, __LINE__), KS_OK);
    EXPECT_STATUS(run_sum(b, x, N, o2, __LINE__), KS_OK);
}

static void disjoint_halves_with_extents(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4);
    EXPECT_STATUS(run_fill(&fill, a, y, N / 2, __LINE__), KS_OK);
    EXPECT_STATUS(run_fill(&fill, b, y + N * 2, N / 2, __LINE__), KS_OK);
}

static void a_free_after_an_event(void)
{
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUevent e = event();
    CUdeviceptr y = 0, z = alloc(N * 4);
    CU(mem_alloc_async(&y, N * 4, a));
    EXPECT_STATUS(run_spin(a, y, N, __LINE__), KS_OK);
    CU(event_record(e, a));
    CU(stream_wait_event(b, e, 0));
    CU(mem_free_async(y, b));
    EXPECT_STATUS(run_fill(&fill, a, z, N, __LINE__), KS_OK);
    CU(stream_sync(b));
}

static CUcontext shared_ctx;

static void *own_stream(void *arg)
{
    (void)arg;
    ctx_set_current(shared_ctx);
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4);
    for (int i = 0; i < 50; i++)
        EXPECT_STATUS(run_fill(&fill, s, y, N, __LINE__), KS_OK);
    CU(stream_sync(s));
    return NULL;
}

static void two_threads_with_their_own_streams(void)
{
    ctx_get_current(&shared_ctx);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, own_stream, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

static void a_double_buffered_pipeline(void)
{
    CUstream copy = stream(CU_STREAM_NON_BLOCKING), compute = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr buf = alloc(2 * N * 4), out = alloc(4);
    CUevent filled[2] = {event(), event()}, used[2] = {event(), event()};
    static float host[N];
    for (int r = 0; r < 200; r++) {
        int b = r % 2;
        CUdeviceptr half = buf + (CUdeviceptr)b * N * 4;
        if (r >= 2)
            CU(stream_wait_event(copy, used[b], 0));     /* don't refill what compute still reads */
        CU(memcpy_htod_async(half, host, sizeof host, copy));
        CU(event_record(filled[b], copy));
        CU(stream_wait_event(compute, filled[b], 0));
        ks_status st = run_sum(compute, half, N, out, __LINE__);
        EXPECT(st == KS_OK, "round %d: %s", r, ks_last_error_message());
        CU(event_record(used[b], compute));
    }
    CU(stream_sync(compute));
}

/* ---- with the pointers check's free watch (one CUPTI subscription for both) --------------- */

/* Races and pointers on together: races still reported, a free the watch saw
 * refused by the pointers check (a cached hit would launch on freed memory),
 * and races still reported once pointers is off again. */
static void with_pointers_and_extents_on(void)
{
    EXPECT_STATUS(ks_checks_set(KS_CHECK_RACES | KS_CHECK_POINTERS | KS_CHECK_EXTENTS), KS_OK);
    CUstream a = stream(CU_STREAM_NON_BLOCKING), b = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr y = alloc(N * 4), z = alloc(N * 4);
    EXPECT_STATUS(run_fill(&fill, a, y, N, 401), KS_OK);
    EXPECT_STATUS(run_fill(&fill, a, y, N, 402), KS_OK);
    EXPECT_STATUS(run_fill(&fill, b, y, N, 403), KS_ERR_RACE);
    HAS("at check_races_gpu.c:403 and kernel 'fill'");
    CU(mem_free(y));                           /* waits for the context's work */
    EXPECT_STATUS(run_fill(&fill, a, y, N, 405), KS_ERR_POINTER);
    HAS("parameter y");
    EXPECT_STATUS(ks_checks_set(KS_CHECK_RACES), KS_OK);
    EXPECT_STATUS(run_fill(&fill, a, z, N, 407), KS_OK);
    EXPECT_STATUS(run_fill(&fill, b, z, N, 408), KS_ERR_RACE);
    HAS("at check_races_gpu.c:408 and kernel 'fill'");
    CU(stream_sync(a));
    CU(stream_sync(b));
}

static const struct { const char *name; void (*fn)(void); } cases[] = {
    {"unordered_writers_overlapping_in_time", unordered_writers_overlapping_in_time},
    {"unordered_writers_not_overlapping_in_time", unordered_writers_not_overlapping_in_time},
    {"a_reader_and_a_writer", a_reader_and_a_writer},
    {"an_async_copy_into_a_buffer_another_stream_reads", an_async_copy_into_a_buffer_another_stream_reads},
    {"a_free_on_another_stream_while_in_use", a_free_on_another_stream_while_in_use},
    {"without_extents_a_possible_race_names_the_hint", without_extents_a_possible_race_names_the_hint},
    {"writers_ordered_by_an_event", writers_ordered_by_an_event},
    {"writers_ordered_by_a_synchronisation", writers_ordered_by_a_synchronisation},
    {"writers_on_one_stream", writers_on_one_stream},
    {"legacy_default_stream_with_a_blocking_stream", legacy_default_stream_with_a_blocking_stream},
    {"two_readers", two_readers},
    {"disjoint_halves_with_extents", disjoint_halves_with_extents},
    {"a_free_after_an_event", a_free_after_an_event},
    {"two_threads_with_their_own_streams", two_threads_with_their_own_streams},
    {"a_double_buffered_pipeline", a_double_buffered_pipeline},
    {"with_pointers_and_extents_on", with_pointers_and_extents_on},
};

static int resolve(const char *name, void *fn)
{
    void *p;
    if (ks_driver_proc(name, &p) != KS_OK || p == NULL) {
        fprintf(stderr, "  no %s: %s\n", name, ks_last_error_message());
        return -1;
    }
    memcpy(fn, &p, sizeof p);
    return 0;
}

/* The driver, device 0's primary context current, the check on, the image loaded. */
static int start(void)
{
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    if (resolve("cuMemAlloc", &mem_alloc) || resolve("cuMemFree", &mem_free) ||
        resolve("cuMemAllocAsync", &mem_alloc_async) || resolve("cuMemFreeAsync", &mem_free_async) ||
        resolve("cuMemcpyHtoDAsync", &memcpy_htod_async) || resolve("cuStreamCreate", &stream_create) ||
        resolve("cuStreamSynchronize", &stream_sync) || resolve("cuEventCreate", &event_create) ||
        resolve("cuEventRecord", &event_record) || resolve("cuStreamWaitEvent", &stream_wait_event) ||
        resolve("cuCtxGetCurrent", &ctx_get_current) || resolve("cuCtxSetCurrent", &ctx_set_current) ||
        resolve("cuDeviceGet", &device_get) || resolve("cuDevicePrimaryCtxRetain", &retain))
        return -1;
    /* On before the program makes any stream: CUPTI must see them made. */
    if (ks_checks_set(KS_CHECK_RACES) != KS_OK)
        return -1;
    CUdevice dev;
    CUcontext ctx;
    if (device_get(&dev, 0) != CUDA_SUCCESS || retain(&ctx, dev) != CUDA_SUCCESS ||
        ctx_set_current(ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "  cannot make device 0's primary context current\n");
        return -1;
    }
    if (ks_image_set_file(&image, RC_FATBIN) != KS_OK || ks_image_load(&image) != KS_OK) {
        fprintf(stderr, "  cannot load %s: %s\n", RC_FATBIN, ks_last_error_message());
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* The parent only looks for the driver: each child initialises CUDA itself. */
    void *lib = dlopen(getenv("KSTUB_LIBCUDA") ? getenv("KSTUB_LIBCUDA") : "libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        printf("gpu-check-races: skipped (no CUDA driver: %s)\n", dlerror());
        return 0;
    }
    dlclose(lib);
    int bad = 0, ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        ran++;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            if (start() != 0)
                _exit(1);
            printf("%s\n", cases[i].name);
            cases[i].fn();
            fflush(stdout);
            _exit(failures ? 1 : 0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        printf("%s: %s\n", ok ? "PASS" : "FAIL", cases[i].name);
        bad += !ok;
    }
    printf("gpu-check-races: %d of %d cases failed\n", bad, ran);
    return bad ? 1 : 0;
}
