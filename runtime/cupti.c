/*
 * cupti.c — libcupti, loaded once, and the process's one CUPTI subscription,
 * shared by the checks that follow the program's own driver calls: the races
 * check (races_check.c) and the pointers check's free watch (watch.c).
 *
 * CUPTI allows one subscriber per process (a second cuptiSubscribe fails with
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), so neither check
 * subscribes itself: each names here the callbacks it needs and the function
 * that gets them (ks__cupti_want), turns them off the same way, and gets only
 * its own. A callback both need is on while either does; the one callback
 * CUPTI calls hands each call to the clients that asked for it, entry and
 * exit alike (a client looks at the site itself).
 *
 * CUPTI is found as KSTUB_CUPTI names it, else libcupti.so.<CUDA major>,
 * libcupti.so, then under /usr/local/cuda (extras/CUPTI/lib64, lib64). It is
 * loaded the first time a client asks, never otherwise: a program with
 * neither check on never loads it. The subscription, once made, lasts for
 * the process (a client done with it turns its callbacks off).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#if !__has_include(<cupti.h>)
/* A toolkit without CUPTI's headers (they ship apart, e.g. cuda-cupti-dev):
 * libkstub still builds, and the checks that need CUPTI say why they cannot. */
int ks__cupti_want(unsigned client, ks__cupti_fn fn, const ks__cupti_id *ids, size_t n, int on,
                   char *why, size_t cap)
{
    (void)client, (void)fn, (void)ids, (void)n, (void)on;
    snprintf(why, cap, "this libkstub was built without cupti.h (install CUPTI's headers and rebuild)");
    return -1;
}
#else

/* cupti.h (its activity header has enumerators past int's range: -Wpedantic's business). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <cupti.h>
#pragma GCC diagnostic pop

_Static_assert(KS__CUPTI_DRIVER == CUPTI_CB_DOMAIN_DRIVER_API, "internal.h's domain numbers are CUPTI's");
_Static_assert(KS__CUPTI_RUNTIME == CUPTI_CB_DOMAIN_RUNTIME_API, "internal.h's domain numbers are CUPTI's");

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*enable_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
typedef CUptiResult (*result_fn)(CUptiResult, const char **);

/* Callback ids below this in each domain (the driver's reach about 830). */
#define KS__CUPTI_IDS 2048

/* Everything below is written under lock, which is never held while a
 * callback runs a client: the callback reads wants and clients atomically. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started;                        /* 1: subscribed; -1: failed (why says why) */
static char why_text[512];
static CUpti_SubscriberHandle sub;
static enable_fn enable;
static result_fn result;
/* Per domain and id, the clients that want it (bit 1 << client). */
static unsigned char wants[2][KS__CUPTI_IDS];
static ks__cupti_fn clients[KS__CUPTI_CLIENTS];

static void CUPTIAPI callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)user;
    if ((domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) || cbid >= KS__CUPTI_IDS)
        return;
    unsigned w = __atomic_load_n(&wants[domain - 1][cbid], __ATOMIC_ACQUIRE);
    for (unsigned c = 0; w != 0 && c < KS__CUPTI_CLIENTS; c++)
        if (w & (1u << c)) {
            ks__cupti_fn fn = __atomic_load_n(&clients[c], __ATOMIC_ACQUIRE);
            if (fn)
                fn((int)domain, (unsigned)cbid, data);
        }
}

static void *cupti_open(char *tried, size_t cap)
{
    const char *env = ks__getenv("KSTUB_CUPTI");
    if (env && env[0]) {
        snprintf(tried, cap, "%s", env);
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    }
    char major[32];
    snprintf(major, sizeof major, "libcupti.so.%d", CUDA_VERSION / 1000);
    const char *const names[] = {
        major, "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so",
    };
    size_t used = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
        int w = snprintf(tried + used, cap - used, "%s%s", i ? ", " : "", names[i]);
        if (w > 0 && (size_t)w < cap - used)
            used += (size_t)w;
    }
    return NULL;
}

static const char *result_text(CUptiResult r)
{
    const char *text = NULL;
    if (result == NULL || result(r, &text) != CUPTI_SUCCESS || text == NULL)
        return "error";
    return text;
}

/* Under lock: load and subscribe; 0 or -1 with why_text set. */
static int subscribe_once(void)
{
    char tried[400];
    void *lib = cupti_open(tried, sizeof tried);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(why_text, sizeof why_text,
                 "libcupti could not be loaded (tried %s: %s); set KSTUB_CUPTI to its path", tried,
                 e ? e : "not found");
        return -1;
    }
    subscribe_fn subscribe = (subscribe_fn)(uintptr_t)dlsym(lib, "cuptiSubscribe");
    enable = (enable_fn)(uintptr_t)dlsym(lib, "cuptiEnableCallback");
    result = (result_fn)(uintptr_t)dlsym(lib, "cuptiGetResultString");
    if (subscribe == NULL || enable == NULL) {
        snprintf(why_text, sizeof why_text, "libcupti lacks cuptiSubscribe or cuptiEnableCallback");
        return -1;
    }
    CUptiResult r = subscribe(&sub, callback, NULL);
    if (r != CUPTI_SUCCESS) {
        snprintf(why_text, sizeof why_text, "cuptiSubscribe failed: %s (%d)%s", result_text(r), (int)r,
                 r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                     ? "; another tool (a profiler, compute-sanitizer) holds CUPTI" : "");
        return -1;
    }
    return 0;
}

int ks__cupti_want(unsigned client, ks__cupti_fn fn, const ks__cupti_id *ids, size_t n, int on,
                   char *why, size_t cap)
{
    pthread_mutex_lock(&lock);
    if (started == 0)
        started = subscribe_once() == 0 ? 1 : -1;
    int ret = started > 0 && client < KS__CUPTI_CLIENTS ? 0 : -1;
    if (started > 0 && client >= KS__CUPTI_CLIENTS)
        snprintf(why_text, sizeof why_text, "no CUPTI client %u", client);
    if (ret == 0 && on)
        __atomic_store_n(&clients[client], fn, __ATOMIC_RELEASE);
    unsigned char bit = (unsigned char)(1u << (client & 7));
    for (size_t i = 0; ret == 0 && i < n; i++) {
        const ks__cupti_id *id = &ids[i];
        if ((id->domain != KS__CUPTI_DRIVER && id->domain != KS__CUPTI_RUNTIME) || id->cbid >= KS__CUPTI_IDS) {
            snprintf(why_text, sizeof why_text, "callback %s is out of range", id->name);
            ret = -1;
            break;
        }
        unsigned char *w = &wants[id->domain - 1][id->cbid];
        unsigned char was = *w, now = on ? (unsigned char)(was | bit) : (unsigned char)(was & ~bit);
        /* On: wanted before CUPTI calls; off: no longer handed over before it stops. */
        __atomic_store_n(w, now, __ATOMIC_RELEASE);
        if ((was != 0) == (now != 0))
            continue;
        CUptiResult r = enable(now != 0, sub, (CUpti_CallbackDomain)id->domain, (CUpti_CallbackId)id->cbid);
        if (r != CUPTI_SUCCESS) {
            snprintf(why_text, sizeof why_text, "cuptiEnableCallback(%s) failed: %s (%d)", id->name,
                     result_text(r), (int)r);
            ret = -1;
        }
    }
    if (ret != 0)
        snprintf(why, cap, "%s", why_text);
    pthread_mutex_unlock(&lock);
    return ret;
}

#endif /* __has_include(<cupti.h>) */
