// What nvcc's implicit includes bring (issue 18, item 4): cuda_runtime.h
// includes <stdio.h>, <stdlib.h>, <string.h>, <time.h> and <assert.h>
// (through crt/common_functions.h) and <utility>, so code that uses FILE,
// CLOCKS_PER_SEC, time, assert or std::swap without including them compiles
// under nvcc. kstub refused it ("unknown type name 'FILE'"). This file
// includes nothing at all, as an application header relying on it would.

static void log_to(FILE *f, const char *msg) { fprintf(f, "%s\n", msg); }
static size_t name_len(const char *s) { return strlen(s); }
static double seconds(clock_t c) { return (double)c / CLOCKS_PER_SEC; }
static time_t now(void) { return time(NULL); }
static void check(int ok)
{
    assert(ok);
    if (!ok)
        exit(EXIT_FAILURE);
}
template <typename T> void swap_them(T &a, T &b) { std::swap(a, b); }

__global__ void stamp(float *x, long long t, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(n >= 0);
    if (i < n)
        x[i] = (float)t;
}

void host_side(float *x, int n)
{
    int a = 1, b = 2;
    swap_them(a, b);
    check(a == 2);
    log_to(stderr, "stamp");
    stamp<<<1, 32>>>(x, (long long)now() + (long long)seconds(clock()) + (long long)name_len("x"), n);
}
