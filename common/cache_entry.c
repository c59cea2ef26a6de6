/*
 * cache_entry.c — an entry file of a kstub cache, read, checked and written
 * (cache_entry.h), and the rule that picks the cache directory. libkstub's
 * NVRTC cache (runtime/cache.c) and the generator's prelude cache
 * (generator/front/pch.c) both link it from common/, so the two caches in one
 * directory follow one set of rules from one copy of the code.
 *
 * Nothing here reports an error or allocates with anything but malloc: a
 * cache is an optimisation, and each caller decides what a miss means.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_entry.h"
#include "safefile.h"
#include "sha256.h"

int ks__cache_dir_path(const char *explicit_dir, const char *explicit_origin, char *path, size_t cap,
                       const char **origin)
{
    const char *env = ks__getenv("KSTUB_CACHE_DIR");
    const char *xdg = ks__getenv("XDG_CACHE_HOME");
    const char *home = ks__getenv("HOME");
    if (explicit_dir && explicit_dir[0]) {
        *origin = explicit_origin;
        return snprintf(path, cap, "%s", explicit_dir);
    }
    if (env && env[0]) {
        *origin = "KSTUB_CACHE_DIR";
        return snprintf(path, cap, "%s", env);
    }
    if (xdg && xdg[0] == '/') {       /* the XDG spec: relative values are ignored */
        *origin = "XDG_CACHE_HOME";
        return snprintf(path, cap, "%s/kstub", xdg);
    }
    if (home && home[0]) {
        *origin = "HOME";
        return snprintf(path, cap, "%s/.cache/kstub", home);
    }
    *origin = NULL;
    return -1;
}

int ks__cache_env_off(void)
{
    const char *off = ks__getenv("KSTUB_CACHE");
    return off != NULL && strcmp(off, "0") == 0;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

long long ks__entry_check(const unsigned char *buf, size_t size, const char *magic,
                          const unsigned char key[32])
{
    if (size < KS__ENTRY_HEADER_BYTES)
        return -1;
    uint64_t len = get_u64(buf + 40);
    if (memcmp(buf, magic, 8) != 0 || memcmp(buf + 8, key, 32) != 0 ||
        len != size - KS__ENTRY_HEADER_BYTES)
        return -1;
    unsigned char digest[32];
    ks__sha256(buf + KS__ENTRY_HEADER_BYTES, (size_t)len, digest);
    return memcmp(digest, buf + 48, 32) == 0 ? (long long)len : -1;
}

void *ks__entry_read(int dirfd, const char *name, const char *magic, const unsigned char key[32],
                     size_t max, size_t *n, const char **why)
{
    struct stat sb;
    /* Not a regular file of ours (a FIFO, a link, someone else's): no entry. */
    int fd = ks__open_regular(dirfd, name, 1, &sb);
    if (fd < 0) {
        *why = fd == KS__NOT_REGULAR ? "the entry is not a regular file" : "no entry";
        return NULL;
    }
    unsigned char *buf = NULL;
    size_t size = 0, got = 0;
    if (sb.st_uid == geteuid() && (sb.st_mode & (S_IWGRP | S_IWOTH)) == 0 &&
        sb.st_size >= KS__ENTRY_HEADER_BYTES && (unsigned long long)sb.st_size <= max) {
        size = (size_t)sb.st_size;
        buf = malloc(size + 1);
        while (buf != NULL && got < size) {
            ssize_t r = read(fd, buf + got, size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
    }
    close(fd);
    if (buf == NULL || got != size) {
        free(buf);
        *why = "the entry is not this user's alone, has an impossible size, or cannot be read";
        return NULL;
    }
    long long len = ks__entry_check(buf, size, magic, key);
    if (len < 0) {
        free(buf);
        *why = "the entry is corrupt or foreign (magic, key, length or SHA-256)";
        return NULL;
    }
    memmove(buf, buf + KS__ENTRY_HEADER_BYTES, (size_t)len);
    buf[len] = '\0';
    *n = (size_t)len;
    return buf;
}

int ks__write_all(int fd, const void *data, size_t n)
{
    const char *c = data;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

void ks__entry_tmp_name(const char *name, const char *suffix, char *tmp, size_t cap)
{
    static unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(tmp, cap, ".%.16s.%ld.%u.%lx%s", name, (long)getpid(),
             __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED), (unsigned long)ts.tv_nsec, suffix);
}

int ks__entry_tmp_open(int dirfd, const char *name, const char *suffix, char *tmp, size_t cap)
{
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
        ks__entry_tmp_name(name, suffix, tmp, cap);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    return fd;
}

int ks__entry_write(int dirfd, const char *name, const char *magic, const unsigned char key[32],
                    const void *payload, size_t n)
{
    char tmp[128];
    int fd = ks__entry_tmp_open(dirfd, name, ".tmp", tmp, sizeof tmp);
    if (fd < 0)
        return -1;
    unsigned char header[KS__ENTRY_HEADER_BYTES];
    memcpy(header, magic, 8);
    memcpy(header + 8, key, 32);
    put_u64(header + 40, n);
    ks__sha256(payload, n, header + 48);
    int ok = ks__write_all(fd, header, sizeof header) == 0 && ks__write_all(fd, payload, n) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dirfd, tmp, dirfd, name) != 0) {
        unlinkat(dirfd, tmp, 0);
        return -1;
    }
    return 0;
}
