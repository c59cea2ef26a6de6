/*
 * nvtx.c — the nvtx check: an NVTX range named after the kernel around each
 * launch, in the domain "kstub", so Nsight Systems (or any NVTX tool) shows
 * kernel names from C programs that have no NVTX calls of their own.
 *
 * NVTX 3 is header-only: its first call looks for a tool (NVTX_INJECTION64_PATH,
 * or one linked in) and, without one, every call is a no-op. Only this
 * check calls it, so with the check off NVTX is never initialised.
 */
#include <string.h>

#include "internal.h"

/* NVTX's loader casts dlsym's result to a function pointer, which ISO C
 * does not promise (POSIX does): not our code to change. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

static nvtxDomainHandle_t kstub_domain;
static pthread_once_t domain_once = PTHREAD_ONCE_INIT;

static void domain_create(void)
{
    kstub_domain = nvtxDomainCreateA("kstub");
}

static nvtxDomainHandle_t domain(void)
{
    pthread_once(&domain_once, domain_create);
    return kstub_domain;
}

static ks_status nvtx_before(const ks__checked *c)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = ks__kernel_name(c->k);
    nvtxDomainRangePushEx(domain(), &a);
    return KS_OK;
}

static ks_status nvtx_after(const ks__checked *c, ks_status st)
{
    (void)c;
    nvtxDomainRangePop(domain());
    return st;
}

const ks__check ks__check_nvtx = {nvtx_before, nvtx_after};
