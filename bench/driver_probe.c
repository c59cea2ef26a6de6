/* driver_probe.c — what the driver charges for the calls the checks make, and whether an
 * allocation's buffer id survives a free, a pool reuse or a VMM remap at the same address
 * (bench/README.md question 8; results/driver_probe.md). Build: gcc -O2 bench/driver_probe.c -lcuda */
#include <cuda.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); printf("%s: %s line %d\n", #x, s, __LINE__); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
#define N 200000
int main(void) {
    CK(cuInit(0)); CUdevice d; CK(cuDeviceGet(&d, 0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
    CUdeviceptr p; CK(cuMemAlloc(&p, 1 << 20));
    CUpointer_attribute a7[] = {CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_CONTEXT};
    unsigned long long id = 0, id2 = 0; CUdeviceptr st = 0; size_t sz = 0; unsigned mt = 0; int ord = 0, man = 0; CUcontext pc = 0;
    void *d7[] = {&id, &st, &sz, &mt, &ord, &man, &pc};
    for (int rep = 0; rep < 3; rep++) {
        for (int n = 1; n <= 7; n += (n == 1 ? 2 : (n == 3 ? 4 : 1))) {
            double t0 = now();
            for (int i = 0; i < N; i++) cuPointerGetAttributes(n, a7, d7, p + 64);
            printf("cuPointerGetAttributes(%d attrs): %.1f ns\n", n, (now() - t0) / N);
        }
        double t0 = now();
        for (int i = 0; i < N; i++) cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p + 64);
        printf("cuPointerGetAttribute(BUFFER_ID): %.1f ns\n", (now() - t0) / N);
        t0 = now();
        for (int i = 0; i < N; i++) cuPointerGetAttribute(&st, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 64);
        printf("cuPointerGetAttribute(RANGE_START): %.1f ns\n", (now() - t0) / N);
        t0 = now(); CUcontext cc;
        for (int i = 0; i < N; i++) cuCtxGetCurrent(&cc);
        printf("cuCtxGetCurrent: %.1f ns\n", (now() - t0) / N);
        CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
        t0 = now();
        for (int i = 0; i < N; i++) cuStreamGetCtx(s, &cc);
        printf("cuStreamGetCtx: %.1f ns\n", (now() - t0) / N);
        unsigned long long sid;
        t0 = now();
        for (int i = 0; i < N; i++) cuStreamGetId(s, &sid);
        printf("cuStreamGetId: %.1f ns\n", (now() - t0) / N);
        cuStreamDestroy(s);
    }
    /* buffer ids: free + alloc at the same address */
    cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p);
    CK(cuMemFree(p)); CUdeviceptr q; CK(cuMemAlloc(&q, 1 << 20));
    cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, q);
    printf("cuMemAlloc again: same address %d, id %llu -> %llu\n", p == q, id, id2);
    /* VMM: unmap and map another physical allocation at the same range */
    CUmemAllocationProp prop = {0}; prop.type = CU_MEM_ALLOCATION_TYPE_PINNED; prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;
    size_t gran = 0; CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUdeviceptr va; CK(cuMemAddressReserve(&va, 4 * gran, 0, 0, 0));
    CUmemGenericAllocationHandle h1, h2; CK(cuMemCreate(&h1, 2 * gran, &prop, 0));
    CK(cuMemMap(va, 2 * gran, 0, h1, 0));
    CUmemAccessDesc acc = {0}; acc.location = prop.location; acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, 2 * gran, &acc, 1));
    CK(cuPointerGetAttributes(7, a7, d7, va + 64));
    printf("VMM map1: id %llu start %llx size %zu (va %llx gran %zu) type %u\n", id, (unsigned long long)st, sz, (unsigned long long)va, gran, mt);
    CK(cuMemUnmap(va, 2 * gran)); CK(cuMemRelease(h1));
    CK(cuMemCreate(&h2, 4 * gran, &prop, 0)); CK(cuMemMap(va, 4 * gran, 0, h2, 0)); CK(cuMemSetAccess(va, 4 * gran, &acc, 1));
    CK(cuPointerGetAttributes(7, a7, d7, va + 64));
    printf("VMM map2 (4 gran): id %llu start %llx size %zu\n", id, (unsigned long long)st, sz);
    CK(cuMemUnmap(va, 4 * gran));
    CK(cuMemMap(va, 4 * gran, 0, h2, 0)); CK(cuMemSetAccess(va, 4 * gran, &acc, 1));
    CK(cuPointerGetAttributes(7, a7, d7, va + 64));
    printf("VMM remap same handle: id %llu start %llx size %zu\n", id, (unsigned long long)st, sz);
    /* two maps in one reserved range */
    CK(cuMemUnmap(va, 4 * gran));
    CUmemGenericAllocationHandle h3; CK(cuMemCreate(&h3, 2 * gran, &prop, 0));
    CK(cuMemMap(va, 2 * gran, 0, h3, 0)); CK(cuMemMap(va + 2 * gran, 2 * gran, 0, h2, 0)); CK(cuMemSetAccess(va, 4 * gran, &acc, 1));
    CK(cuPointerGetAttributes(7, a7, d7, va + 64));
    printf("VMM two maps, first: id %llu start %llx size %zu\n", id, (unsigned long long)st, sz);
    CK(cuPointerGetAttributes(7, a7, d7, va + 2 * gran + 64));
    printf("VMM two maps, second: id %llu start %llx size %zu\n", id, (unsigned long long)st, sz);
    /* pool alloc */
    CUstream s0 = 0; CUdeviceptr pa; CK(cuMemAllocAsync(&pa, 1 << 20, s0)); CK(cuStreamSynchronize(s0));
    CK(cuPointerGetAttributes(7, a7, d7, pa)); printf("pool: id %llu\n", id);
    CK(cuMemFreeAsync(pa, s0)); CUdeviceptr pb; CK(cuMemAllocAsync(&pb, 1 << 20, s0)); CK(cuStreamSynchronize(s0));
    CK(cuPointerGetAttributes(7, a7, d7, pb)); printf("pool again: same address %d id %llu\n", pa == pb, id);
    return 0;
}
