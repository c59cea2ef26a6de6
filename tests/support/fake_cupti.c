/*
 * fake_cupti.c — a stand-in for libcupti for the races check's CPU tests
 * (tests/runtime/check_races_cupti.c): cuptiSubscribe keeps the callback
 * (or refuses, as when another tool holds CUPTI, with FAKE_CUPTI_BUSY set),
 * cuptiEnableCallback counts what is turned on, and fake_cupti_emit plays a
 * driver call's exit callback as the real CUPTI would on the calling thread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <cupti.h>
#pragma GCC diagnostic pop

/* The controls the tests find with dlsym. */
int fake_cupti_enabled(unsigned id);
void fake_cupti_emit(unsigned id, void *ctx, const void *params, int result);

static CUpti_CallbackFunc cb;
static void *cb_user;
static unsigned char enabled[4096];

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc f, void *user)
{
    const char *busy = getenv("FAKE_CUPTI_BUSY");
    if (busy && busy[0])
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    cb = f, cb_user = user;
    *sub = (CUpti_SubscriberHandle)(uintptr_t)1;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle sub, CUpti_CallbackDomain d, CUpti_CallbackId id)
{
    (void)sub;
    if (d != CUPTI_CB_DOMAIN_DRIVER_API || id >= sizeof enabled)
        return CUPTI_ERROR_INVALID_PARAMETER;
    enabled[id] = (unsigned char)on;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                             : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

/* Whether the callback for \p id is on. */
int fake_cupti_enabled(unsigned id)
{
    return id < sizeof enabled && enabled[id];
}

/* Play the exit callback of driver call \p id (params as CUPTI passes them) in \p ctx. */
void fake_cupti_emit(unsigned id, void *ctx, const void *params, int result)
{
    if (cb == NULL || !fake_cupti_enabled(id))
        return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = CUPTI_API_EXIT;
    d.functionParams = params;
    d.functionReturnValue = &result;
    d.context = (CUcontext)ctx;
    cb(cb_user, CUPTI_CB_DOMAIN_DRIVER_API, (CUpti_CallbackId)id, &d);
}
