/*
 * nvrtc.c — run-time compilation of an image's CUDA source with NVRTC.
 *
 * libnvrtc is found with dlopen, like libcuda, so programs that never
 * compile at run time do not need it: KSTUB_LIBNVRTC if set, else
 * libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so. The source is compiled for
 * the current device's own architecture (--gpu-architecture=sm_XY) to a
 * cubin, through the disk cache (cache.c). C++ kernels need nothing special:
 * the cubin keeps the mangled names that ks_kernel.symbol already holds.
 *
 * A warm cache must not pay for loading libnvrtc (a 30+ MiB library: about
 * 5 ms on an H200 host). So the library file is first located the way the
 * loader would look (KSTUB_LIBNVRTC as a path, LD_LIBRARY_PATH, the
 * directories of /etc/ld.so.conf.d, the system's), and its identity (real
 * path, size, modification time: stricter than its version) keys the cache;
 * that exact file is what gets loaded on a miss. Only when it cannot be
 * located is it loaded by name and its nvrtcVersion() used instead.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* nvrtc.h tests macros it does not define. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#include <nvrtc.h>
#pragma GCC diagnostic pop

#include "internal.h"
#include "sha256.h"

#define KS__NVRTC_ENV "KSTUB_LIBNVRTC"
/* Bump when anything that shapes a cache entry changes here. */
#define KS__CACHE_FORMAT "kstub-nvrtc-1"

static struct {
    nvrtcResult (*Version)(int *major, int *minor);
    const char *(*GetErrorString)(nvrtcResult result);
    nvrtcResult (*CreateProgram)(nvrtcProgram *prog, const char *src, const char *name, int nheaders,
                                 const char *const *headers, const char *const *include_names);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *prog);
    nvrtcResult (*CompileProgram)(nvrtcProgram prog, int nopts, const char *const *opts);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char *log);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char *cubin);
    int major, minor;
    ks_status status;            /* of the one-time load */
    char detail[512];
} nv;

static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static const char *const nv_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

/* The libnvrtc file that will be loaded, found without loading it. */
static struct {
    char path[PATH_MAX];         /* "" when not found */
    char id[PATH_MAX + 64];      /* "<real path> <size> <mtime>" */
} where;
static pthread_once_t where_once = PTHREAD_ONCE_INIT;

static int try_file(const char *path)
{
    struct stat st;
    char real[PATH_MAX];
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || realpath(path, real) == NULL)
        return 0;
    snprintf(where.path, sizeof where.path, "%s", path);
    snprintf(where.id, sizeof where.id, "%s %lld %lld.%09ld", real, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    return 1;
}

static int try_dir(const char *dir, size_t len)
{
    char path[PATH_MAX];
    if (len == 0 || len >= sizeof path - 32)
        return 0;
    for (size_t i = 0; i < sizeof nv_names / sizeof nv_names[0]; i++) {
        snprintf(path, sizeof path, "%.*s/%s", (int)len, dir, nv_names[i]);
        if (try_file(path))
            return 1;
    }
    return 0;
}

static int try_dir_list(const char *list)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (try_dir(p, len))
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* Each directory named in /etc/ld.so.conf.d/ *.conf, in name order. */
static int try_ld_conf(void)
{
    struct dirent **ents = NULL;
    int n = scandir("/etc/ld.so.conf.d", &ents, NULL, alphasort);
    int found = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(ents[i]->d_name);
        if (!found && len > 5 && strcmp(ents[i]->d_name + len - 5, ".conf") == 0) {
            char path[PATH_MAX], line[PATH_MAX];
            snprintf(path, sizeof path, "/etc/ld.so.conf.d/%s", ents[i]->d_name);
            FILE *f = fopen(path, "r");
            while (f && !found && fgets(line, sizeof line, f)) {
                line[strcspn(line, "\r\n#")] = '\0';
                if (line[0] == '/')
                    found = try_dir(line, strlen(line));
            }
            if (f)
                fclose(f);
        }
        free(ents[i]);
    }
    free(ents);
    return found;
}

static void locate_nvrtc(void)
{
    const char *env = ks__getenv(KS__NVRTC_ENV);
    if (env && env[0]) {
        if (strchr(env, '/'))
            try_file(env);       /* a bare name is left to dlopen (and nvrtcVersion) */
        return;
    }
    if (try_dir_list(ks__getenv("LD_LIBRARY_PATH")) || try_ld_conf())
        return;
    try_dir_list("/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib");
}

static void load_nvrtc(void)
{
    const char *env = ks__getenv(KS__NVRTC_ENV);
    void *lib = NULL;
    const char *why = NULL;
    pthread_once(&where_once, locate_nvrtc);
    if (where.path[0]) {
        lib = dlopen(where.path, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            why = dlerror();
    } else if (env && env[0]) {
        lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            why = dlerror();
    } else {
        for (size_t i = 0; i < sizeof nv_names / sizeof nv_names[0] && lib == NULL; i++)
            lib = dlopen(nv_names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            why = dlerror();
    }
    if (lib == NULL) {
        nv.status = KS_ERR_NO_NVRTC;
        snprintf(nv.detail, sizeof nv.detail, "cannot load NVRTC (%.200s): %.250s",
                 where.path[0] ? where.path
                 : env && env[0] ? env : "libnvrtc.so.13, .so.12 or .so; set KSTUB_LIBNVRTC",
                 why ? why : "unknown dlopen error");
        return;
    }
    static const struct { const char *name; size_t offset; } entries[] = {
#define E(field, name) {name, offsetof(__typeof__(nv), field)}
        E(Version, "nvrtcVersion"), E(GetErrorString, "nvrtcGetErrorString"),
        E(CreateProgram, "nvrtcCreateProgram"), E(DestroyProgram, "nvrtcDestroyProgram"),
        E(CompileProgram, "nvrtcCompileProgram"), E(GetProgramLogSize, "nvrtcGetProgramLogSize"),
        E(GetProgramLog, "nvrtcGetProgramLog"), E(GetCUBINSize, "nvrtcGetCUBINSize"),
        E(GetCUBIN, "nvrtcGetCUBIN"),
#undef E
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *p = dlsym(lib, entries[i].name);
        if (p == NULL) {
            nv.status = KS_ERR_NO_NVRTC;
            snprintf(nv.detail, sizeof nv.detail, "NVRTC (%s) lacks %s (NVRTC 11.1 or newer is needed)",
                     env && env[0] ? env : "libnvrtc", entries[i].name);
            memset(&nv, 0, offsetof(__typeof__(nv), status));
            return;
        }
        memcpy((char *)&nv + entries[i].offset, &p, sizeof p);
    }
    if (nv.Version(&nv.major, &nv.minor) != NVRTC_SUCCESS)
        nv.major = nv.minor = 0;
    nv.status = KS_OK;
}

static ks_status nvrtc_fail(const char *kernel, const char *call, nvrtcResult r, const char *what)
{
    return ks__error_nvrtc(r == NVRTC_ERROR_OUT_OF_MEMORY ? KS_ERR_NO_MEMORY : KS_ERR_COMPILE, kernel,
                           call, (int)r, nv.GetErrorString ? nv.GetErrorString(r) : NULL, "%s", what);
}

/* The key: everything that decides what NVRTC and the driver make of it.
 * 0, or -1: the source's includes cannot be followed, so it is not cached. */
static int cache_key(unsigned char key[32], const char *src, const char *name, char *const *opts,
                      unsigned nopts, int arch)
{
    char line[128];
    ks__sha256_ctx s;
    ks__sha256_init(&s);
    ks__sha256_update(&s, KS__CACHE_FORMAT, sizeof KS__CACHE_FORMAT);
    ks__sha256_update(&s, name, strlen(name) + 1);
    ks__sha256_update(&s, src, strlen(src) + 1);
    for (unsigned i = 0; i < nopts; i++)
        ks__sha256_update(&s, opts[i], strlen(opts[i]) + 1);
    if (ks__includes_hash(&s, src, opts, nopts) != 0)
        return -1;
    int len;
    if (where.id[0]) {
        len = snprintf(line, sizeof line, "%u options; sm_%d; driver %d; nvrtc file ", nopts, arch,
                       ks__cu.version);
        ks__sha256_update(&s, line, (size_t)len);
        ks__sha256_update(&s, where.id, strlen(where.id));
    } else {
        len = snprintf(line, sizeof line, "%u options; sm_%d; nvrtc %d.%d; driver %d", nopts, arch,
                       nv.major, nv.minor, ks__cu.version);
        ks__sha256_update(&s, line, (size_t)len);
    }
    ks__sha256_final(&s, key);
    return 0;
}

ks_status ks__nvrtc_compile(const char *src, const char *name, char *const *opts, unsigned nopts,
                            int arch, const char *kernel, void **cubin, size_t *n, int *from_cache)
{
    /* Located, the library keys the cache by its file; else it must be
     * loaded to tell its version. */
    pthread_once(&where_once, locate_nvrtc);
    if (!where.id[0]) {
        pthread_once(&nv_once, load_nvrtc);
        if (nv.status != KS_OK)
            return ks__error(nv.status, kernel, "compiling '%s': %s", name, nv.detail);
    }
    for (unsigned i = 0; i < nopts; i++)
        if (strncmp(opts[i], "--gpu-architecture", 18) == 0 || strncmp(opts[i], "-arch", 5) == 0)
            return ks__error(KS_ERR_INVALID_VALUE, kernel,
                             "NVRTC option '%s' for '%s': libkstub chooses the device's own "
                             "architecture (sm_%d); leave it out", opts[i], name, arch);

    unsigned char key[32];
    int dir = -1;
    char why[64];               /* the reason is for ks_cache_check(); here the cache is simply not used */
    if (cache_key(key, src, name, opts, nopts, arch) == 0)
        ks__cache_open(&dir, why, sizeof why);
    *from_cache = 0;
    if (dir >= 0 && ks__cache_get(dir, key, cubin, n)) {
        close(dir);
        *from_cache = 1;
        return KS_OK;
    }

    pthread_once(&nv_once, load_nvrtc);
    if (nv.status != KS_OK) {
        if (dir >= 0)
            close(dir);
        return ks__error(nv.status, kernel, "compiling '%s': %s", name, nv.detail);
    }
    const char **argv = malloc((nopts + 1) * sizeof *argv);
    if (argv == NULL) {
        if (dir >= 0)
            close(dir);
        return ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory compiling '%s'", name);
    }
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d", arch);
    for (unsigned i = 0; i < nopts; i++)
        argv[i] = opts[i];
    argv[nopts] = archopt;

    ks_status st = KS_OK;
    nvrtcProgram prog = NULL;
    nvrtcResult r = nv.CreateProgram(&prog, src, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        st = nvrtc_fail(kernel, "nvrtcCreateProgram", r, name);
        goto out;
    }
    r = nv.CompileProgram(prog, (int)nopts + 1, argv);
    if (r != NVRTC_SUCCESS) {
        size_t logn = 0;
        char *log = NULL;
        if (nv.GetProgramLogSize(prog, &logn) == NVRTC_SUCCESS && logn > 0 && (log = malloc(logn + 1))) {
            if (nv.GetProgramLog(prog, log) != NVRTC_SUCCESS)
                log[0] = '\0';
            log[logn] = '\0';
        }
        char what[300];
        snprintf(what, sizeof what, "compiling '%s' for sm_%d", name, arch);
        st = nvrtc_fail(kernel, "nvrtcCompileProgram", r, what);
        if (st == KS_ERR_COMPILE)
            ks__error_log(log);
        free(log);
        goto out;
    }
    size_t size = 0;
    r = nv.GetCUBINSize(prog, &size);
    if (r == NVRTC_SUCCESS && size == 0)
        r = NVRTC_ERROR_INVALID_INPUT;
    if (r != NVRTC_SUCCESS) {
        st = nvrtc_fail(kernel, "nvrtcGetCUBINSize", r, name);
        goto out;
    }
    char *bin = malloc(size);
    if (bin == NULL) {
        st = ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory compiling '%s'", name);
        goto out;
    }
    r = nv.GetCUBIN(prog, bin);
    if (r != NVRTC_SUCCESS) {
        free(bin);
        st = nvrtc_fail(kernel, "nvrtcGetCUBIN", r, name);
        goto out;
    }
    if (dir >= 0)
        ks__cache_put(dir, key, bin, size);
    *cubin = bin;
    *n = size;
out:
    if (prog != NULL)
        nv.DestroyProgram(&prog);
    free(argv);
    if (dir >= 0)
        close(dir);
    return st;
}
