/*
 * nvtx_inject.c — a minimal NVTX injection library (NVTX_INJECTION64_PATH)
 * for the nvtx check's tests: it records each domain range push (its ASCII
 * message) and pop, which the tests read through nvtx_inject_*.
 */
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

#define API __attribute__((visibility("default")))

static char names[64][128];
static int pushes, pops, depth, max_depth;

static int push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
    (void)domain;
    if (pushes < 64 && a && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii)
        strncpy(names[pushes], a->message.ascii, sizeof names[0] - 1);
    pushes++;
    if (++depth > max_depth)
        max_depth = depth;
    return depth - 1;
}

static int pop(nvtxDomainHandle_t domain)
{
    (void)domain;
    pops++;
    return --depth;
}

API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (cb == NULL || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
        size <= NVTX_CBID_CORE2_DomainRangePop)
        return 0;
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
    *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
    return 1;
}

API int nvtx_inject_pushes(void);
API int nvtx_inject_pushes(void) { return pushes; }
API int nvtx_inject_pops(void);
API int nvtx_inject_pops(void) { return pops; }
API const char *nvtx_inject_name(int i);
API const char *nvtx_inject_name(int i) { return i >= 0 && i < 64 && i < pushes ? names[i] : NULL; }
