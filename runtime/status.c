/*
 * status.c — status names and strings (generated from KS_STATUS_MAP) and
 * the per-thread record of the last failure.
 *
 * A successful call does NOT clear the record: ks_last_error() describes the
 * last failure on this thread, as errno does. Callers look at it only after a
 * call returned something other than KS_OK.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

KS__API const char *ks_status_name(ks_status status)
{
    switch (status) {
#define KS__NAME_CASE(name, text) case KS_##name: return "KS_" #name;
        KS_STATUS_MAP(KS__NAME_CASE)
#undef KS__NAME_CASE
    default: return "KS_UNKNOWN";
    }
}

KS__API const char *ks_status_string(ks_status status)
{
    switch (status) {
#define KS__STRING_CASE(name, text) case KS_##name: return text;
        KS_STATUS_MAP(KS__STRING_CASE)
#undef KS__STRING_CASE
    default: return "unknown status";
    }
}

/*
 * Fixed-size buffers so that reporting a failure never allocates and never
 * fails itself; long texts are truncated. The public struct points into them.
 */
typedef struct ks__error_state {
    ks_error pub;
    char kernel[256];
    char call[64];
    char cu_name[64];
    char cu_string[256];
    char message[1024];
    char log[16384];            /* JIT/NVRTC log */
    char file[256];             /* a checked launch's call site */
} ks__error_state;

static _Thread_local ks__error_state ks__err;

KS__API const ks_error *ks_last_error(void)
{
    /* A thread-local address is no constant, so "" is set on first use. */
    if (ks__err.pub.message == NULL)
        ks__err.pub.message = "";
    return &ks__err.pub;
}

KS__API const char *ks_last_error_message(void)
{
    return ks_last_error()->message;
}

/* strncpy that always terminates and returns dst (NULL src gives NULL). */
static const char *copy(char *dst, size_t cap, const char *src)
{
    if (src == NULL)
        return NULL;
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return dst;
}

/* Clear the record and fill the fields every failure has. */
static void reset(ks_status status, const char *kernel)
{
    ks__error_state *e = &ks__err;
    memset(&e->pub, 0, sizeof e->pub);
    e->pub.status = status;
    e->pub.kernel = copy(e->kernel, sizeof e->kernel, kernel);
    e->message[0] = '\0';
    e->pub.message = e->message;
}

/* Append to the message; snprintf truncates safely. */
static void append(const char *fmt, ...) KS__PRINTF(1, 2);
static void append(const char *fmt, ...)
{
    ks__error_state *e = &ks__err;
    size_t used = strlen(e->message);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message + used, sizeof e->message - used, fmt, ap);
    va_end(ap);
}

static void append_v(const char *fmt, va_list ap)
{
    ks__error_state *e = &ks__err;
    size_t used = strlen(e->message);
    vsnprintf(e->message + used, sizeof e->message - used, fmt, ap);
}

ks_status ks__error(ks_status status, const char *kernel, const char *fmt, ...)
{
    reset(status, kernel);
    if (kernel)
        append("kernel '%s': ", kernel);
    va_list ap;
    va_start(ap, fmt);
    append_v(fmt, ap);
    va_end(ap);
    return status;
}

/* "kernel 'k': what was being done: " before a failed call's name; fmt may
 * be NULL. */
static void append_context(const char *kernel, const char *fmt, va_list ap)
{
    if (kernel)
        append("kernel '%s': ", kernel);
    if (fmt) {
        append_v(fmt, ap);
        append(": ");
    }
}

/* Who names CUresults: driver.c, once the driver is resolved (NULL before). */
static ks__cu_namer cu_namer;

void ks__status_cu_namer(ks__cu_namer namer)
{
    __atomic_store_n(&cu_namer, namer, __ATOMIC_RELEASE);
}

ks_status ks__error_cu(ks_status status, const char *kernel, const char *call, CUresult result,
                       const char *fmt, ...)
{
    ks__error_state *e = &ks__err;
    reset(status, kernel);
    e->pub.call = copy(e->call, sizeof e->call, call);
    e->pub.cu_result = (int)result;

    /* The driver names its own results; without it (or for codes it does
     * not know) fall back to the number. */
    const char *name = NULL, *text = NULL;
    ks__cu_namer namer = __atomic_load_n(&cu_namer, __ATOMIC_ACQUIRE);
    if (namer == NULL || namer((int)result, &name, &text) != 0)
        name = text = NULL;
    char number[32];
    if (name == NULL) {
        snprintf(number, sizeof number, "CUresult %d", (int)result);
        name = number;
    }
    e->pub.cu_name = copy(e->cu_name, sizeof e->cu_name, name);
    e->pub.cu_string = copy(e->cu_string, sizeof e->cu_string, text ? text : "unknown error");

    va_list ap;
    va_start(ap, fmt);
    append_context(kernel, fmt, ap);
    va_end(ap);
    append("%s failed: %s (%s)", call, e->cu_name, e->cu_string);
    return status;
}

void ks__error_log(const char *log)
{
    ks__error_state *e = &ks__err;
    if (log == NULL || log[0] == '\0')
        return;
    e->pub.log = copy(e->log, sizeof e->log, log);
    /* Keep the message one line: only the log's first line joins it. */
    size_t first = strcspn(log, "\r\n");
    const char *rest = log + first + strspn(log + first, " \t\r\n");
    append("; log: %.*s%s", (int)(first > 200 ? 200 : first), log,
           first > 200 || *rest != '\0' ? " ..." : "");
}

ks_status ks__error_nvrtc(ks_status status, const char *kernel, const char *call, int result,
                          const char *text, const char *fmt, ...)
{
    ks__error_state *e = &ks__err;
    reset(status, kernel);
    e->pub.call = copy(e->call, sizeof e->call, call);
    e->pub.cu_result = result;
    /* NVRTC has no separate names: nvrtcGetErrorString gives "NVRTC_ERROR_…". */
    char number[32];
    if (text == NULL) {
        snprintf(number, sizeof number, "nvrtcResult %d", result);
        text = number;
    }
    e->pub.cu_name = copy(e->cu_name, sizeof e->cu_name, text);
    e->pub.cu_string = copy(e->cu_string, sizeof e->cu_string, text);
    va_list ap;
    va_start(ap, fmt);
    append_context(kernel, fmt, ap);
    va_end(ap);
    append("%s failed: %s", call, e->cu_name);
    return status;
}

void ks__error_site(const char *file, int line)
{
    ks__error_state *e = &ks__err;
    if (file == NULL)
        return;
    e->pub.file = copy(e->file, sizeof e->file, file);
    e->pub.line = line;
    append(" (called at %s:%d)", file, line);
}

/* A word a user chose, for a message: control characters escaped as the
 * generator escapes them (\n, \r, \t, \xNN), so a message stays one line
 * and no terminal or CI log reads a byte of it as a command; at most n bytes
 * of src, cut before an escape that would not fit. */
void ks__escape_word(char *dst, size_t cap, const char *src, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n && src[i] != '\0'; i++) {
        unsigned char c = (unsigned char)src[i];
        char piece[5];
        if (c == '\n' || c == '\r' || c == '\t')
            snprintf(piece, sizeof piece, "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        else if (c < 0x20 || c == 0x7f)
            snprintf(piece, sizeof piece, "\\x%02x", c);
        else
            piece[0] = (char)c, piece[1] = '\0';
        size_t m = strlen(piece);
        if (len + m >= cap)
            break;
        memcpy(dst + len, piece, m);
        len += m;
    }
    if (cap)
        dst[len] = '\0';
}
