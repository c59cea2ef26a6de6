/*
 * runtime_fixture.h — what the runtime suite's files share: the fake driver
 * and fake NVRTC controls, the test kernels (mix, bounded, missing, bad, the
 * on-disk and NVRTC-source images), the per-test temporary and cache
 * directories, file helpers, the 32-thread race, and the fixture that
 * tcases get (runtime_add_case). tests/support/runtime_fixture.c defines them.
 * check_graph.c and check_checks.c use the fake driver's controls
 * (fake_cuda_open) and the status assertions from here too.
 *
 * The suite is one binary, build/tests/check_runtime, made of
 *   check_runtime.c         main: the suite, one Check case per area, from
 *   check_runtime_driver.c  status and errors, driver loading, each driver call
 *                           failing in turn, versions, contexts
 *   check_runtime_launch.c  what reaches cuLaunchKernel, the ABI check, validation,
 *                           handle caching and threads, launch attributes,
 *                           dynamic shared memory, occupancy and queries
 *   check_runtime_load.c    the module fallback, images from files, the set-uid environment
 *   check_runtime_nvrtc.c   NVRTC through the fake (counts, failures)
 *   check_runtime_cache.c   SHA-256, the NVRTC disk cache
 *   check_runtime_cache_key.c  the cache's key (#includes), the real NVRTC
 *   check_runtime_global.c  device variables: accessors' copies, bounds, the size proof
 *
 * Each case runs in its own forked process (check_runtime.c forces it):
 * libkstub loads its driver once per process and the test kernels keep their
 * handles in static storage, so a fresh process per case is what makes the
 * cases independent.
 */
#ifndef KSTUB_RUNTIME_FIXTURE_H
#define KSTUB_RUNTIME_FIXTURE_H

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
struct fake_cuda_controls {
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
    __typeof__(&fake_cuda_live_graphs) live_graphs;
    __typeof__(&fake_cuda_alloc) alloc;
    __typeof__(&fake_cuda_free) free;
    __typeof__(&fake_cuda_alloc_at) alloc_at;
    __typeof__(&fake_cuda_remap) remap;
    __typeof__(&fake_cuda_mapping) mapping;
    __typeof__(&fake_cuda_peer_access) peer_access;
    __typeof__(&fake_cuda_peer_flags) peer_flags;
    __typeof__(&fake_cuda_stream_context) stream_context;
    __typeof__(&fake_cuda_set_global) set_global;
    __typeof__(&fake_cuda_global) global;
    __typeof__(&fake_cuda_last_copy) last_copy;
};
extern struct fake_cuda_controls fake;

/* Points libkstub at the fake driver (KSTUB_LIBCUDA, before libkstub's first
 * use, which reads it once), loads it, fills in fake and resets the fake.
 * Fails the test if the fake or one of its controls is missing. The fixture
 * of the runtime suite starts with it; so do check_graph.c's and
 * check_checks.c's, which link runtime_fixture.c for it. */
void fake_cuda_open(void);
/* Stores dlsym(lib, name), a function, in the function pointer at slot; fails
 * the test if lib lacks it ("the fake lacks NAME"). */
void load_control(void *slot, void *lib, const char *name);

/* The fake NVRTC's controls (tests/support/fake_nvrtc.c). */
struct fake_nvrtc_controls {
    void (*reset)(void);
    void (*inject)(const char *entry, int result, int nth);
    int (*calls)(const char *entry);
    const char *(*option)(int i);
    void (*delay_compile)(unsigned us);
};
extern struct fake_nvrtc_controls fnv;

/* This test's own cache directory (KSTUB_CACHE_DIR), under a fresh temporary one. */
extern char tmp_dir[64], cache_dir[128];

/* ---- test kernels -------------------------------------------------------------- */

/* mix(char, short, int, double, float *) in mix_image (PTX): offsets as nvcc lays them out. */
#define MIX_PTX                                                                          \
    ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry _Z3mixcsidPf(...)\n{\n ret;\n}\n"
extern const char mix_ptx[sizeof MIX_PTX];
extern ks_image mix_image;
extern const ks_param_desc mix_params[5];
extern ks_kernel mix;
extern const size_t mix_off[5], mix_size[5];
/* __launch_bounds__(256), no parameters, in mix_image. */
extern ks_kernel bounded;
/* A kernel mix_image does not have. */
extern ks_kernel missing;
/* PTX the (fake) JIT rejects. */
extern ks_image bad_image;
extern ks_kernel bad;

/* args[0..4] = the addresses of mix's five arguments; returns args. */
void *mix_args(char *c, short *s, int *i, double *d, float **p, void **args);
/* Launch mix with fixed arguments; the status is what the test looks at. */
ks_status launch_mix(const ks_launch *l);

/* mix again, in an image read from a file (kernels/disk.cu's, looked up as
 * KSTUB_IMAGE_PATH and ks_image_set_file say). */
extern ks_image disk_image;
ks_status launch_disk(void);

/* saxpy(float, const float *, float *, int) as CUDA source NVRTC compiles. */
#define SAXPY_SRC                                                                        \
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"               \
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n"
extern const char saxpy_src[sizeof SAXPY_SRC];
extern ks_image src_image;
extern const ks_param_desc saxpy_params[4];
extern const size_t saxpy_off[4], saxpy_size[4];
extern ks_kernel saxpy;
ks_status launch_saxpy(void);

#define ck_assert_status(expr, want)                                                     \
    do {                                                                                 \
        ks_status got_ = (expr);                                                         \
        ck_assert_msg(got_ == (want), "%s: got %s, want %s; message: %s", #expr,         \
                      ks_status_name(got_), ks_status_name(want), ks_last_error_message()); \
    } while (0)

#define ck_assert_message_has(text)                                                      \
    ck_assert_msg(strstr(ks_last_error_message(), (text)) != NULL,                       \
                  "message lacks \"%s\": %s", (text), ks_last_error_message())


/* ---- threads ------------------------------------------------------------------- */

#define RACERS 32
/* The barrier the RACERS threads of race_32 wait at before they launch. */
extern pthread_barrier_t start_line;
/* Thread bodies: launch mix, saxpy (after start_line). */
void *race(void *arg);
void *race_saxpy(void *arg);
/* RACERS threads running fn at once; each must return KS_OK. */
void race_32(void *(*fn)(void *));

/* ---- files --------------------------------------------------------------------- */

void write_file(const char *path, const void *bytes, size_t n);
void write_text(const char *path, const char *text);
/* Regular files in \p dir whose names end in \p suffix; -1 if there is no such directory. */
int count_files(const char *dir, const char *suffix);
/* The path of the one cache entry (fails the test unless there is exactly one). */
void the_entry(char *out, size_t cap);
size_t read_file(const char *path, unsigned char *buf, size_t cap);

/* ---- the suite ------------------------------------------------------------------ */

/* A Check case of the given tests (a NULL-ended array: TESTS(a, b, c)), each
 * in a fresh process with the fixture (the fakes loaded and reset, a fresh
 * temporary directory, the environment cleared). */
void runtime_add_case(Suite *s, const char *name, const TTest *const *tests);
#define TESTS(...) ((const TTest *const[]){__VA_ARGS__, NULL})

/* Each file's cases. */
void runtime_cases_driver(Suite *s);
void runtime_cases_launch(Suite *s);
void runtime_cases_load(Suite *s);
void runtime_cases_nvrtc(Suite *s);
void runtime_cases_cache(Suite *s);
void runtime_cases_cache_key(Suite *s);
void runtime_cases_global(Suite *s);

/* check_runtime.c runs itself as a set-uid copy with --secure-env-probe (check_runtime_load.c). */
int secure_env_probe(void);

#endif
