/*
 * fake_cupti.c — a stand-in for libcupti for the CPU tests of the checks
 * that follow the program's driver calls (tests/runtime/check_races_cupti.c,
 * the races check; check_checks_watch.c, the pointers check's free watch):
 * cuptiSubscribe keeps the callback (or refuses, as when another tool holds
 * CUPTI, with FAKE_CUPTI_BUSY set, and as the real one refuses a second
 * subscriber), cuptiEnableCallback keeps what is turned on in each domain,
 * fake_cupti_emit plays a driver call's exit callback as the real CUPTI
 * would on the calling thread, and the fake driver's own frees
 * (tests/support/fake_cuda.c: cuMemFree_v2, cuMemFreeAsync, cuMemUnmap) call
 * back at their entry and exit, as they would through the real one.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <cupti.h>
#pragma GCC diagnostic pop

/* The controls the tests find with dlsym. */
int fake_cupti_enabled(unsigned id);
int fake_cupti_enabled_in(int domain, unsigned id);
int fake_cupti_subscribes(void);
void fake_cupti_emit(unsigned id, void *ctx, const void *params, int result);
void fake_cupti_emit_runtime(unsigned id, const void *params);

static CUpti_CallbackFunc cb;
static void *cb_user;
static int subscribes;                      /* cuptiSubscribe calls, refused ones included */
static unsigned char enabled[2][4096];      /* [domain - 1][id]: driver, runtime */

/* Play \p id of \p domain at \p site, if it is on. */
static void call_back(CUpti_CallbackDomain domain, unsigned id, CUpti_ApiCallbackSite site, void *ctx,
                      const void *params, int result)
{
    if (cb == NULL || !fake_cupti_enabled_in((int)domain, id))
        return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site;
    d.functionParams = params;
    d.functionReturnValue = &result;
    d.context = (CUcontext)ctx;
    cb(cb_user, domain, (CUpti_CallbackId)id, &d);
}

/* The fake driver's frees, as CUPTI's driver callbacks would see them. */
static void from_driver(const char *entry, int exit, const void *params, int result)
{
    static const struct { const char *name; unsigned id; } ids[] = {
        {"cuMemFree_v2", CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2},
        {"cuMemFreeAsync", CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync},
        {"cuMemUnmap", CUPTI_DRIVER_TRACE_CBID_cuMemUnmap},
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (strcmp(ids[i].name, entry) == 0)
            call_back(CUPTI_CB_DOMAIN_DRIVER_API, ids[i].id, exit ? CUPTI_API_EXIT : CUPTI_API_ENTER, NULL,
                      params, result);
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc f, void *user)
{
    subscribes++;
    const char *busy = getenv("FAKE_CUPTI_BUSY");
    if ((busy && busy[0]) || cb != NULL)     /* another tool, or a second subscriber */
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    cb = f, cb_user = user;
    *sub = (CUpti_SubscriberHandle)(uintptr_t)1;
    /* The fake driver the program uses (libkstub's KSTUB_LIBCUDA), if loaded, tells us of its frees. */
    const char *driver = getenv("KSTUB_LIBCUDA");
    void *lib = driver ? dlopen(driver, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void (*set_tool)(void (*)(const char *, int, const void *, int)) = NULL;
    if (lib) {
        void *fn = dlsym(lib, "fake_cuda_set_tool");
        memcpy(&set_tool, &fn, sizeof fn);
    }
    if (set_tool)
        set_tool(from_driver);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle sub, CUpti_CallbackDomain d, CUpti_CallbackId id)
{
    (void)sub;
    if ((d != CUPTI_CB_DOMAIN_DRIVER_API && d != CUPTI_CB_DOMAIN_RUNTIME_API) || id >= sizeof enabled[0])
        return CUPTI_ERROR_INVALID_PARAMETER;
    __atomic_store_n(&enabled[d - 1][id], (unsigned char)on, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                             : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

/* Whether the callback for \p id of \p domain (1 the driver's, 2 the runtime's) is on. */
int fake_cupti_enabled_in(int domain, unsigned id)
{
    return (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API) &&
           id < sizeof enabled[0] && __atomic_load_n(&enabled[domain - 1][id], __ATOMIC_RELAXED);
}

/* Whether the callback for driver call \p id is on. */
int fake_cupti_enabled(unsigned id)
{
    return fake_cupti_enabled_in(CUPTI_CB_DOMAIN_DRIVER_API, id);
}

/* How many times cuptiSubscribe was called. */
int fake_cupti_subscribes(void)
{
    return subscribes;
}

/* Play the exit callback of driver call \p id (params as CUPTI passes them) in \p ctx. */
void fake_cupti_emit(unsigned id, void *ctx, const void *params, int result)
{
    call_back(CUPTI_CB_DOMAIN_DRIVER_API, id, CUPTI_API_EXIT, ctx, params, result);
}

/* Play runtime call \p id's entry and exit callbacks (a cudaFree the runtime makes). */
void fake_cupti_emit_runtime(unsigned id, const void *params)
{
    call_back(CUPTI_CB_DOMAIN_RUNTIME_API, id, CUPTI_API_ENTER, NULL, params, 0);
    call_back(CUPTI_CB_DOMAIN_RUNTIME_API, id, CUPTI_API_EXIT, NULL, params, 0);
}
