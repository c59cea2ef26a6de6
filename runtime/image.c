/*
 * image.c — an image's state and the bytes the driver gets: the embedded
 * data (checked), a file (file.c), or CUDA source compiled with NVRTC
 * (nvrtc.c); the per-image configuration (ks_image_set_file,
 * ks_image_set_nvrtc_options), what ks_image_info_get reports, the
 * descriptor-layout version check, and what the two loaders share (a
 * failed load's report, the list of an image's kernels).
 *
 * Everything that touches an image's state runs under the load lock
 * (ks__load_lock, defined here because image state is what it guards; load.c
 * holds it while it loads, resolves and unloads); the state pointer itself
 * is published with a release store for ks_image_is_loaded, which reads it
 * without the lock.
 */
#include <stdlib.h>
#include <string.h>

#include "image_kind.h"
#include "internal.h"

pthread_mutex_t ks__load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Cheap sanity checks so a wrong pointer gives a clear error, not a driver crash. */
static ks_status check_image(const ks_image *img, const char *kernel)
{
    const char *src = ks__source_name(img);
    const unsigned char *p = img->data;
    if (p == NULL)
        return ks__error(KS_ERR_INVALID_IMAGE, kernel, "the %s image of '%s' has no data",
                         img->kind == KS_IMAGE_SOURCE ? "source" : "embedded", src);
    switch (img->kind) {
    case KS_IMAGE_PTX:
    case KS_IMAGE_SOURCE:
        /* size counts the bytes; the driver and NVRTC read up to the NUL. */
        if (img->size == 0 || memchr(p, '\0', img->size) == NULL)
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the %s image of '%s' is not NUL-terminated within its %zu bytes",
                             img->kind == KS_IMAGE_PTX ? "PTX" : "source", src, img->size);
        return KS_OK;
    case KS_IMAGE_CUBIN:
        if (ks__image_kind(p, img->size) != KS__BYTES_CUBIN)
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the cubin image of '%s' does not start with the ELF magic", src);
        return KS_OK;
    case KS_IMAGE_FATBIN:
        if (ks__image_kind(p, img->size) != KS__BYTES_FATBIN)
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the fatbin image of '%s' does not start with the fatbin magic 0x%08X",
                             src, 0xBA55ED50u);
        return KS_OK;
    default:
        return ks__error(KS_ERR_INVALID_IMAGE, kernel, "the image of '%s' has unknown kind %d",
                         src, (int)img->kind);
    }
}

ks_status ks__check_versions(const ks_image *img, const ks_kernel *k, const char *kernel)
{
    /* Objects generated before descriptors carried a version read 0 here:
     * the field sits where their structs had zeroed padding. */
    if (k != NULL && k->desc_version != KS_DESC_VERSION)
        return ks__error(KS_ERR_VERSION, kernel,
                         "the descriptor of kernel '%s' was compiled for descriptor layout version %u, "
                         "but this libkstub (%s) reads layout version %u: regenerate the stubs with this "
                         "kstub and rebuild them against its kstub.h",
                         k->symbol, k->desc_version, ks_version(), (unsigned)KS_DESC_VERSION);
    if (img != NULL && img->desc_version != KS_DESC_VERSION)
        return ks__error(KS_ERR_VERSION, kernel,
                         "the image descriptor of '%s' was compiled for descriptor layout version %u, "
                         "but this libkstub (%s) reads layout version %u: regenerate the stubs with this "
                         "kstub and rebuild them against its kstub.h",
                         ks__source_name(img), img->desc_version, ks_version(), (unsigned)KS_DESC_VERSION);
    return KS_OK;
}

ks__image_state *ks__image_state_get(ks_image *img, const char *kernel)
{
    ks__image_state *s = img->ks__state;
    if (s == NULL) {
        s = calloc(1, sizeof *s);
        if (s == NULL) {
            ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory loading '%s'", ks__source_name(img));
            return NULL;
        }
        __atomic_store_n(&img->ks__state, (void *)s, __ATOMIC_RELEASE);
    }
    return s;
}

void ks__image_unprepare(ks__image_state *s)
{
    free(s->owned);
    free(s->path);
    free(s->jit_log);
    s->owned = NULL;
    s->path = NULL;
    s->jit_log = NULL;
    s->bytes = NULL;
    s->nbytes = 0;
    s->origin = s->kind = KS_IMAGE_NONE;
    s->arch = s->from_cache = 0;
}

void ks__image_release_idle(ks_image *img)
{
    ks__image_state *s = img->ks__state;
    if (s == NULL || s->file != NULL || s->nvrtc_noptions != 0 || s->modules != NULL ||
        img->ks__library != NULL)
        return;
    ks__image_unprepare(s);
    free(s->nvrtc_options);
    __atomic_store_n(&img->ks__state, NULL, __ATOMIC_RELEASE);
    free(s);
}

ks_status ks__image_prepare(ks_image *img, ks__image_state *s, const char *kernel)
{
    if (s->bytes != NULL)
        return KS_OK;
    ks_status st;
    if (s->file != NULL || (img->kind == KS_IMAGE_NONE && img->data == NULL)) {
        void *bytes = NULL;
        size_t n = 0;
        st = ks__file_read(img, s->file, kernel, &bytes, &n, &s->path, &s->origin);
        if (st != KS_OK)
            return st;
        s->owned = bytes;
        s->bytes = bytes;
        s->nbytes = n;
    } else {
        st = check_image(img, kernel);
        if (st != KS_OK)
            return st;
        s->bytes = img->data;
        s->nbytes = img->size;
        s->origin = img->kind;
    }
    s->kind = s->origin;
    if (s->origin == KS_IMAGE_SOURCE) {
        int arch = 0;
        void *cubin = NULL;
        size_t n = 0;
        const char *name = s->path ? s->path : ks__source_name(img);
        const char *base = strrchr(name, '/');
        st = ks__device_arch(kernel, &arch);
        if (st == KS_OK)
            st = ks__nvrtc_compile(s->bytes, base ? base + 1 : name, s->nvrtc_options, s->nvrtc_noptions,
                                   arch, kernel, &cubin, &n, &s->from_cache);
        if (st != KS_OK) {
            ks__image_unprepare(s);
            return st;
        }
        free(s->owned);
        s->owned = cubin;
        s->bytes = cubin;
        s->nbytes = n;
        s->kind = KS_IMAGE_CUBIN;
        s->arch = arch;
    }
    return KS_OK;
}

/* ---- configuration and description ---------------------------------------------- */

KS__API ks_status ks_image_set_file(ks_image *img, const char *path)
{
    if (img == NULL || (path != NULL && path[0] == '\0'))
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_set_file: %s",
                         img == NULL ? "image is NULL" : "empty path");
    char *copy = path ? strdup(path) : NULL;
    if (path != NULL && copy == NULL)
        return ks__error(KS_ERR_NO_MEMORY, NULL, "ks_image_set_file: out of memory");
    pthread_mutex_lock(&ks__load_lock);
    ks__image_state *s = ks__image_state_get(img, NULL);
    if (s != NULL) {
        free(s->file);
        s->file = copy;
        /* The bytes of an image not loaded anywhere are not kept for later. */
        if (img->ks__library == NULL && s->modules == NULL)
            ks__image_unprepare(s);
    }
    pthread_mutex_unlock(&ks__load_lock);
    if (s == NULL)
        free(copy);
    return s ? KS_OK : KS_ERR_NO_MEMORY;
}

KS__API ks_status ks_image_set_nvrtc_options(ks_image *img, const char *const *options, unsigned n)
{
    if (img == NULL || (n != 0 && options == NULL))
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_set_nvrtc_options: %s is NULL",
                         img == NULL ? "the image" : "the option array");
    char **copy = n ? calloc(n, sizeof *copy) : NULL;
    int ok = n == 0 || copy != NULL;
    for (unsigned i = 0; ok && i < n; i++) {
        if (options[i] == NULL) {
            for (unsigned j = 0; j < i; j++)
                free(copy[j]);
            free(copy);
            return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_set_nvrtc_options: option %u is NULL", i);
        }
        ok = (copy[i] = strdup(options[i])) != NULL;
    }
    pthread_mutex_lock(&ks__load_lock);
    ks__image_state *s = ok ? ks__image_state_get(img, NULL) : NULL;
    if (s != NULL) {
        char **old = s->nvrtc_options;
        unsigned nold = s->nvrtc_noptions;
        s->nvrtc_options = copy;
        s->nvrtc_noptions = n;
        copy = old;
        n = nold;
        if (img->ks__library == NULL && s->modules == NULL)
            ks__image_unprepare(s);
    }
    pthread_mutex_unlock(&ks__load_lock);
    for (unsigned i = 0; copy != NULL && i < n; i++)
        free(copy[i]);
    free(copy);
    if (s == NULL)
        return ks__error(KS_ERR_NO_MEMORY, NULL, "ks_image_set_nvrtc_options: out of memory");
    return KS_OK;
}

KS__API int ks_image_is_loaded(const ks_image *img)
{
    if (img == NULL)
        return 0;
    if (__atomic_load_n(&img->ks__library, __ATOMIC_ACQUIRE) != NULL)
        return 1;
    /* The state may be freed by a failed load or an unload: read it under the lock. */
    int loaded = 0;
    pthread_mutex_lock(&ks__load_lock);
    const ks__image_state *s = img->ks__state;
    const ks__module_node *m = s ? s->modules : NULL;
    CUcontext ctx = NULL;
    if (m != NULL && ks__cu.CtxGetCurrent != NULL && ks__cu.CtxGetCurrent(&ctx) == CUDA_SUCCESS)
        for (; m != NULL && !loaded; m = m->next)
            loaded = m->ctx == ctx;
    pthread_mutex_unlock(&ks__load_lock);
    return loaded;
}

KS__API ks_status ks_image_info_get(const ks_image *img, ks_image_info *out)
{
    if (img == NULL || out == NULL)
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_image_info_get: %s is NULL",
                         img == NULL ? "the image" : "the result");
    memset(out, 0, sizeof *out);
    out->loaded = ks_image_is_loaded(img);
    pthread_mutex_lock(&ks__load_lock);
    const ks__image_state *s = img->ks__state;
    if (out->loaded && s != NULL) {
        out->origin = s->origin;
        out->kind = s->kind;
        out->path = s->path;
        out->arch = s->arch;
        out->from_cache = s->from_cache;
        out->library = img->ks__library != NULL;
    }
    pthread_mutex_unlock(&ks__load_lock);
    return KS_OK;
}

/* ---- what both loaders report a failed load with (library.c, module.c) ---- */

#define KS__JIT_LOG_BYTES 16384

ks_status ks__load_failed(const ks_image *img, ks__image_state *s, const char *kernel, const char *call,
                          CUresult r)
{
    ks__error_cu(KS_ERR_LOAD, kernel, call, r, "loading the image of '%s'", ks__source_name(img));
    if (s->jit_log != NULL) {
        s->jit_log[KS__JIT_LOG_BYTES - 1] = '\0';
        ks__error_log(s->jit_log);
    }
    return KS_ERR_LOAD;
}

unsigned ks__jit_options(ks__image_state *s, CUjit_option opts[2], void *vals[2])
{
    if (s->jit_log == NULL && (s->jit_log = malloc(KS__JIT_LOG_BYTES)) == NULL)
        return 0;               /* no log then; the load itself may still work */
    s->jit_log[0] = '\0';
    opts[0] = CU_JIT_ERROR_LOG_BUFFER;
    vals[0] = s->jit_log;
    opts[1] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
    vals[1] = (void *)(size_t)KS__JIT_LOG_BYTES;
    return 2;
}

/* ---- the list of an image's kernels both loaders make (library.c, module.c) ---- */

CUresult ks__image_list(void *owner, CUresult (*count)(void *owner, unsigned *n), const char *count_call,
                        CUresult (*enumerate)(void *owner, void **all, unsigned n), const char *enum_call,
                        void ***handles, unsigned *n, const char **call)
{
    *handles = NULL;
    *n = 0;
    *call = count == NULL ? count_call : enum_call;
    if (count == NULL || enumerate == NULL)
        return CUDA_ERROR_NOT_SUPPORTED;
    unsigned found = 0;
    CUresult r = count(owner, &found);
    if (r != CUDA_SUCCESS) {
        *call = count_call;
        return r;
    }
    void **all = calloc(found ? found : 1, sizeof *all);
    if (all == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = found ? enumerate(owner, all, found) : CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) {
        free(all);
        return r;
    }
    *handles = all;
    *n = found;
    return CUDA_SUCCESS;
}

/* ---- the image's device globals (global.c fills them; an unload forgets them) ---- */

void ks__globals_forget(ks_image *img)
{
    ks__image_state *s = img->ks__state;
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nglobals; i++) {
        ks__addr_node *n = s->globals[i]->ks__addrs;
        __atomic_store_n((ks__addr_node **)&s->globals[i]->ks__addrs, NULL, __ATOMIC_RELEASE);
        while (n != NULL) {
            ks__addr_node *next = n->next;
            free(n);
            n = next;
        }
    }
    free(s->globals);
    s->globals = NULL;
    s->nglobals = 0;
}
