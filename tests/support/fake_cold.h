/*
 * fake_cold.h — what the fake driver's launch entry points (cuLaunchKernel,
 * cuLaunchKernelEx, cuMemcpyHtoDAsync) do first when fake_cuda.c is built
 * with -DFAKE_CUDA_COLD_KB=N (build/tests/libcuda_cold.so, bench/cold.mk):
 * touch N KiB of data, one byte a line, and (with -DFAKE_CUDA_COLD_NOPS_KB=M)
 * run M KiB of nops, so that every cache line the caller touched before the
 * call misses again after it, as it does after a real launch (~3 us of
 * driver work that evicts L1 and L2). With N larger than the last-level
 * cache and M larger than L1i, cachegrind's LL misses per call of a path
 * count the lines (code and data) it touches per call. Off (not included)
 * in the test driver.
 */
#ifndef FAKE_COLD_H
#define FAKE_COLD_H

#ifndef FAKE_CUDA_COLD_NOPS_KB
#define FAKE_CUDA_COLD_NOPS_KB 0
#endif
#define FAKE_COLD_STR_(x) #x
#define FAKE_COLD_STR(x) FAKE_COLD_STR_(x)

static void fake_cold(void) __attribute__((noinline));
static void fake_cold(void)
{
    static unsigned char thrash[FAKE_CUDA_COLD_KB * 1024];
    static volatile unsigned sink;
    unsigned acc = 0;
    for (size_t i = 0; i < sizeof thrash; i += 64)
        acc += thrash[i]++;
    sink = acc;
#if FAKE_CUDA_COLD_NOPS_KB > 0
    __asm__ volatile(".rept " FAKE_COLD_STR(FAKE_CUDA_COLD_NOPS_KB) "*1024\n nop\n .endr");
#endif
}
#define FAKE_COLD() fake_cold()

#endif /* FAKE_COLD_H */
