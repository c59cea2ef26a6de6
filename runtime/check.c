/*
 * check.c — checked launches: which checks are on (KSTUB_CHECK,
 * ks_checks_set), the table of checks a checked launch runs around the
 * driver call, and the sync check.
 *
 * launch.c pays for all of this with one relaxed load of ks__checks and one
 * predictable branch; everything here runs only when a check is on. Each
 * check fills a ks__check (before, after) in its own file, as the loaders
 * fill a ks__loader: this file knows their order, not their insides.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"


/* ks_checks_set was called: the environment no longer decides. */
static int chosen_by_api;
/* The KSTUB_CHECK word that could not be parsed, for the launches' error. */
static char bad_env[320];

static const struct { const char *word; unsigned bits; } words[] = {
    {"sync", KS_CHECK_SYNC},       {"pointers", KS_CHECK_POINTERS}, {"extents", KS_CHECK_EXTENTS},
    {"nvtx", KS_CHECK_NVTX},       {"trace", KS_CHECK_TRACE},       {"all", KS_CHECK_ALL},
    {"1", KS_CHECK_ALL},           {"0", 0},                        {"none", 0},
    {"races", KS_CHECK_RACES},
};

/* Parse into *checks; on an unknown word copy it into bad (when not NULL) and return -1. */
static int parse(const char *spec, unsigned *checks, char *bad, size_t cap)
{
    unsigned bits = 0;
    const char *p = spec;
    while (*p) {
        size_t n = strcspn(p, ", \t");
        if (n > 0) {
            size_t i;
            for (i = 0; i < sizeof words / sizeof words[0]; i++)
                if (strlen(words[i].word) == n && strncmp(words[i].word, p, n) == 0)
                    break;
            if (i == sizeof words / sizeof words[0]) {
                if (bad)
                    ks__escape_word(bad, cap, p, n > 64 ? 64 : n);
                return -1;
            }
            bits |= words[i].bits;
        }
        p += n;
        p += strspn(p, ", \t");
    }
    *checks = bits;
    return 0;
}

KS__API ks_status ks_checks_parse(const char *spec, unsigned *checks)
{
    char bad[320];
    if (spec == NULL || checks == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_checks_parse: %s is NULL",
                         spec == NULL ? "the text" : "the result");
    if (parse(spec, checks, bad, sizeof bad) != 0)
        return ks__error(KS_ERR_INVALID_VALUE, NULL,
                         "unknown check '%s' (known: sync, pointers, extents, nvtx, trace, races, all)", bad);
    return KS_OK;
}

KS__API ks_status ks_checks_set(unsigned checks)
{
    if (checks & ~KS__CHECK_KNOWN)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_checks_set: unknown check bits 0x%x",
                         checks & ~KS__CHECK_KNOWN);
    if (checks & KS_CHECK_RACES)
        ks__races_start();       /* now, to see the streams made before the first launch */
    if (checks & (KS_CHECK_POINTERS | KS_CHECK_EXTENTS))
        ks__watch_start();       /* the free watch of their allocation cache (watch.c) */
    __atomic_store_n(&chosen_by_api, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ks__checks, checks, __ATOMIC_RELAXED);
    return KS_OK;
}

KS__API unsigned ks_checks_get(void)
{
    return __atomic_load_n(&ks__checks, __ATOMIC_RELAXED) & KS__CHECK_KNOWN;
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void from_env(void)
{
    if (__atomic_load_n(&chosen_by_api, __ATOMIC_RELAXED))
        return;
    unsigned bits = 0;
    const char *spec = ks__getenv("KSTUB_CHECK");
    if (spec != NULL && parse(spec, &bits, bad_env, sizeof bad_env) != 0)
        bits = KS__CHECK_BAD_ENV;
    /* KSTUB_TRACE: "0" turns the trace off (also when KSTUB_CHECK names it);
     * "1" or a path turns it on; empty is as unset. */
    const char *trace = ks__getenv("KSTUB_TRACE");
    if (trace != NULL && strcmp(trace, "0") == 0 && bits != KS__CHECK_BAD_ENV)
        bits &= ~(unsigned)KS_CHECK_TRACE;
    else if (trace != NULL && trace[0] != '\0' && bits != KS__CHECK_BAD_ENV)
        bits |= KS_CHECK_TRACE;
    __atomic_store_n(&ks__checks, bits, __ATOMIC_RELAXED);
}

void ks__checks_from_env(void)
{
    pthread_once(&env_once, from_env);
}

/* The refusal of every launch while KSTUB_CHECK holds an unknown word. */
static ks_status bad_env_error(ks_kernel *k, const char *file, int line) __attribute__((noinline, cold));
static ks_status bad_env_error(ks_kernel *k, const char *file, int line)
{
    ks__error(KS_ERR_INVALID_VALUE, ks__kernel_name(k),
              "not launched: KSTUB_CHECK names an unknown check '%s' "
              "(known: sync, pointers, extents, nvtx, trace, races, all)", bad_env);
    ks__error_site(file, line);
    return KS_ERR_INVALID_VALUE;
}

ks_status ks__checks_refuse(ks_kernel *k, const char *file, int line)
{
    ks__checks_from_env();
    if (__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) == KS__CHECK_BAD_ENV)
        return bad_env_error(k, file, line);
    return KS_OK;
}

/* ---- the sync check ------------------------------------------------------------ */

/* Errors after which the context cannot be used again (the driver's documentation
 * of each says the process must be restarted). */
static int sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
        return 1;
    default:
        return 0;
    }
}

static const char *sticky_text(CUresult r)
{
    return sticky(r) ? "; the CUDA context is now unusable (a sticky error): every later call on it "
                       "fails the same way, so end the process (compute-sanitizer finds the faulting access)"
                     : "";
}

static ks_status sync_unsupported(const ks__checked *c)
{
    return ks__error(KS_ERR_UNSUPPORTED, ks__kernel_name(c->k),
                     "the sync check needs cuStreamSynchronize, which the driver lacks");
}

/* Work already queued on the stream must not have its fault blamed on this kernel. */
static ks_status sync_before(const ks__checked *c)
{
    if (ks__cu.StreamSynchronize == NULL)
        return sync_unsupported(c);
    CUresult r = ks__cu.StreamSynchronize((CUstream)c->l->stream);
    if (r == CUDA_SUCCESS)
        return KS_OK;
    return ks__error_cu(KS_ERR_FAULT, ks__kernel_name(c->k), "cuStreamSynchronize", r,
                        "not launched: earlier work on stream %p (not this kernel) had already failed%s",
                        (void *)c->l->stream, sticky_text(r));
}

static ks_status sync_after(const ks__checked *c, ks_status st)
{
    if (st != KS_OK)
        return st;
    CUresult r = ks__cu.StreamSynchronize((CUstream)c->l->stream);
    if (r == CUDA_SUCCESS)
        return KS_OK;
    const ks_launch *l = c->l;
    return ks__error_cu(KS_ERR_FAULT, ks__kernel_name(c->k), "cuStreamSynchronize", r,
                        "faulted while running (grid (%u, %u, %u), block (%u, %u, %u), %u shared bytes, "
                        "stream %p)%s",
                        l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z,
                        l->shared_bytes, (void *)l->stream, sticky_text(r));
}

const ks__check ks__check_sync = {sync_before, sync_after};

/* ---- the checked launch -------------------------------------------------------- */

/* In this order before the launch, in the reverse order after it: the NVTX
 * range encloses everything; the trace records refusals, faults and races; a
 * pointer refusal comes before waiting on the stream. Each with the
 * KS_CHECK_* bits that turn it on, all in one cache line: a checked launch
 * reads it before and after the driver call, and a real launch evicts the
 * caches in between (bench/cold.mk). */
#define NCHECKS 5
static const struct {
    const ks__check *check[NCHECKS];
    unsigned bits[NCHECKS];
} table __attribute__((aligned(64))) = {
    {&ks__check_nvtx, &ks__check_trace, &ks__check_pointers, &ks__check_races, &ks__check_sync},
    {KS_CHECK_NVTX, KS_CHECK_TRACE, KS_CHECK_POINTERS | KS_CHECK_EXTENTS, KS_CHECK_RACES, KS_CHECK_SYNC},
};
_Static_assert(sizeof table <= 64, "the checks' table fits one cache line");

ks_status ks__checks_before(ks__checked *c, size_t *ran)
{
    *ran = 0;
    c->checks = __atomic_load_n(&ks__checks, __ATOMIC_RELAXED);
    if (c->checks == KS__CHECK_BAD_ENV)
        return bad_env_error(c->k, c->file, c->line);
    ks_status st = KS_OK;
    size_t i = 0;
    for (; i < NCHECKS && st == KS_OK; i++)
        if (table.bits[i] & c->checks)
            st = table.check[i]->before(c);
    *ran = i;
    return st;
}

ks_status ks__checks_after(const ks__checked *c, size_t ran, ks_status st)
{
    if (c->checks == KS__CHECK_BAD_ENV)
        return st;                   /* refused before any check ran, the site named */
    while (ran-- > 0)
        if (table.bits[ran] & c->checks)
            st = table.check[ran]->after(c, st);
    if (st != KS_OK)
        ks__error_site(c->file, c->line);
    return st;
}
