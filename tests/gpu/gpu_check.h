/*
 * gpu_check.h — the assertion macros of the GPU suites that run cases of
 * their own (check_gpu.c, check_graph_gpu.c). The including file defines,
 * before including this,
 *   static void fail_at(int line, const char *fmt, ...);   records a failure
 *   static const char *cu_name(CUresult r);                 names a CUresult
 * EXPECT records a failure and goes on; the REQUIREs end the case (they
 * return from the function they stand in).
 */
#ifndef KSTUB_GPU_CHECK_H
#define KSTUB_GPU_CHECK_H

#define EXPECT(cond, ...)                                               \
    do {                                                                \
        if (!(cond))                                                    \
            fail_at(__LINE__, __VA_ARGS__);                             \
    } while (0)

#define REQUIRE(cond, ...)                                              \
    do {                                                                \
        if (!(cond)) {                                                  \
            fail_at(__LINE__, __VA_ARGS__);                             \
            return;                                                     \
        }                                                               \
    } while (0)

#define CU_REQUIRE(call)                                                \
    do {                                                                \
        CUresult r_ = (call);                                           \
        REQUIRE(r_ == CUDA_SUCCESS, "%s failed: %s", #call, cu_name(r_)); \
    } while (0)

#define KS_REQUIRE(call)                                                \
    do {                                                                \
        ks_status s_ = (call);                                          \
        REQUIRE(s_ == KS_OK, "%s returned %s: %s", #call, ks_status_name(s_), \
                ks_last_error_message());                               \
    } while (0)

#endif /* KSTUB_GPU_CHECK_H */
