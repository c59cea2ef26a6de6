/*
 * fake_nvrtc.c — a fake libnvrtc for the runtime's CPU tests of what real
 * NVRTC cannot be made to do on demand: fail each call in turn, count
 * compiles, and be slow. (The compile-and-cache tests use the real libnvrtc,
 * which works without a GPU.) Built as build/tests/libnvrtc_fake.so and named
 * by KSTUB_LIBNVRTC.
 *
 * Model: source containing "#error" fails to compile with a log; any other
 * compiles to a "cubin": the ELF magic followed by the source text.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#include <nvrtc.h>
#pragma GCC diagnostic pop

#define FAKE_API __attribute__((visibility("default")))

FAKE_API void fake_nvrtc_reset(void);
FAKE_API void fake_nvrtc_fail(const char *entry, nvrtcResult result, int nth);
FAKE_API int fake_nvrtc_calls(const char *entry);
FAKE_API const char *fake_nvrtc_option(int i);
FAKE_API void fake_nvrtc_delay_compile(unsigned microseconds);

#define ENTRIES(X) X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcGetCUBINSize) \
    X(nvrtcGetCUBIN) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcDestroyProgram)
enum {
#define X(n) E_##n,
    ENTRIES(X)
#undef X
    E_COUNT
};
static const char *const names[E_COUNT] = {
#define X(n) #n,
    ENTRIES(X)
#undef X
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int calls[E_COUNT];
    struct { int entry; nvrtcResult result; int left; } fails[8];
    int nfails;
    char options[8][128];
    int noptions;
    unsigned delay_us;
    int live;                   /* programs created and not destroyed */
} st;

typedef struct prog { char *src; int ok; } prog;

static nvrtcResult enter(int e)
{
    pthread_mutex_lock(&lock);
    st.calls[e]++;
    nvrtcResult r = NVRTC_SUCCESS;
    for (int i = 0; i < st.nfails; i++) {
        if (st.fails[i].entry == e && --st.fails[i].left == 0) {
            r = st.fails[i].result;
            st.fails[i] = st.fails[--st.nfails];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}
#define ENTER(name)                          \
    do {                                     \
        nvrtcResult r_ = enter(E_##name);    \
        if (r_ != NVRTC_SUCCESS)             \
            return r_;                       \
    } while (0)

FAKE_API nvrtcResult nvrtcVersion(int *major, int *minor)
{
    *major = 12, *minor = 8;
    return NVRTC_SUCCESS;
}

FAKE_API const char *nvrtcGetErrorString(nvrtcResult r)
{
    switch (r) {
    case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
    case NVRTC_ERROR_INTERNAL_ERROR: return "NVRTC_ERROR_INTERNAL_ERROR";
    default: return "NVRTC_ERROR unknown";
    }
}

FAKE_API nvrtcResult nvrtcCreateProgram(nvrtcProgram *out, const char *src, const char *name, int nh,
                                        const char *const *h, const char *const *hn)
{
    (void)name, (void)nh, (void)h, (void)hn;
    ENTER(nvrtcCreateProgram);
    prog *p = calloc(1, sizeof *p);
    if (p == NULL || (p->src = strdup(src)) == NULL) {
        free(p);
        return NVRTC_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&lock);
    st.live++;
    pthread_mutex_unlock(&lock);
    *out = (nvrtcProgram)p;
    return NVRTC_SUCCESS;
}

FAKE_API nvrtcResult nvrtcDestroyProgram(nvrtcProgram *pp)
{
    ENTER(nvrtcDestroyProgram);
    prog *p = (prog *)*pp;
    free(p->src);
    free(p);
    *pp = NULL;
    pthread_mutex_lock(&lock);
    st.live--;
    pthread_mutex_unlock(&lock);
    return NVRTC_SUCCESS;
}

FAKE_API nvrtcResult nvrtcCompileProgram(nvrtcProgram pp, int n, const char *const *opts)
{
    if (st.delay_us)
        usleep(st.delay_us);
    ENTER(nvrtcCompileProgram);
    prog *p = (prog *)pp;
    pthread_mutex_lock(&lock);
    st.noptions = n < 8 ? n : 8;
    for (int i = 0; i < st.noptions; i++) {
        strncpy(st.options[i], opts[i], sizeof st.options[i] - 1);
        st.options[i][sizeof st.options[i] - 1] = '\0';
    }
    pthread_mutex_unlock(&lock);
    p->ok = strstr(p->src, "#error") == NULL;
    return p->ok ? NVRTC_SUCCESS : NVRTC_ERROR_COMPILATION;
}

static const char compile_log[] = "fake.cu(3): error: #error directive: \"broken on purpose\"\n"
                                  "1 error detected in the compilation of \"fake.cu\".\n";

FAKE_API nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram pp, size_t *n)
{
    ENTER(nvrtcGetProgramLogSize);
    *n = ((prog *)pp)->ok ? 1 : sizeof compile_log;
    return NVRTC_SUCCESS;
}

FAKE_API nvrtcResult nvrtcGetProgramLog(nvrtcProgram pp, char *log)
{
    ENTER(nvrtcGetProgramLog);
    if (((prog *)pp)->ok)
        log[0] = '\0';
    else
        memcpy(log, compile_log, sizeof compile_log);
    return NVRTC_SUCCESS;
}

FAKE_API nvrtcResult nvrtcGetCUBINSize(nvrtcProgram pp, size_t *n)
{
    ENTER(nvrtcGetCUBINSize);
    *n = 4 + strlen(((prog *)pp)->src);
    return NVRTC_SUCCESS;
}

FAKE_API nvrtcResult nvrtcGetCUBIN(nvrtcProgram pp, char *out)
{
    ENTER(nvrtcGetCUBIN);
    const char *src = ((prog *)pp)->src;
    memcpy(out, "\x7f" "ELF", 4);
    memcpy(out + 4, src, strlen(src));
    return NVRTC_SUCCESS;
}

/* ---- control ---------------------------------------------------------------- */

FAKE_API void fake_nvrtc_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(&st, 0, sizeof st);
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_nvrtc_fail(const char *entry, nvrtcResult result, int nth)
{
    pthread_mutex_lock(&lock);
    for (int e = 0; e < E_COUNT; e++) {
        if (strcmp(names[e], entry) == 0 && st.nfails < 8) {
            st.fails[st.nfails].entry = e;
            st.fails[st.nfails].result = result;
            st.fails[st.nfails].left = nth;
            st.nfails++;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* Calls of \p entry; "live" gives the programs not yet destroyed. */
FAKE_API int fake_nvrtc_calls(const char *entry)
{
    pthread_mutex_lock(&lock);
    int n = -1;
    if (strcmp(entry, "live") == 0)
        n = st.live;
    for (int e = 0; e < E_COUNT; e++)
        if (strcmp(names[e], entry) == 0)
            n = st.calls[e];
    pthread_mutex_unlock(&lock);
    return n;
}

/* The ith option of the last compile, or NULL. */
FAKE_API const char *fake_nvrtc_option(int i)
{
    return i >= 0 && i < st.noptions ? st.options[i] : NULL;
}

FAKE_API void fake_nvrtc_delay_compile(unsigned microseconds)
{
    st.delay_us = microseconds;
}
