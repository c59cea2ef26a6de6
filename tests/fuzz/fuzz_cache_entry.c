/*
 * fuzz_cache_entry.c — libFuzzer target for the NVRTC cache-entry reader
 * (runtime/cache.c): ks__cache_entry_check on the bytes as they are, then
 * the same bytes as an entry file read back through ks__cache_get (open
 * relative to the directory, regular-file check, read, verify). Whatever
 * the bytes, the reader must not crash, leak, or accept an entry whose
 * payload does not hash to what its header says.
 *
 *   make fuzz-runtime FUZZ_SECONDS=60      (tests/runtime/sanitize.mk)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int dirfd_ = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (dirfd_ < 0) {
        char tmpl[] = "/tmp/kstub-fuzz-cache-XXXXXX";
        if (mkdtemp(tmpl) == NULL)
            abort();
        dirfd_ = open(tmpl, O_RDONLY | O_DIRECTORY);
        if (dirfd_ < 0)
            abort();
    }
    /* The key the entry claims, so the fuzzer can reach the length and hash checks. */
    unsigned char key[32] = {0};
    if (size >= 40)
        memcpy(key, data + 8, 32);

    long long len = ks__cache_entry_check(data, size, key);
    if (len >= 0) {
        unsigned char digest[32];
        if ((size_t)len + KS__CACHE_HEADER_BYTES != size)
            abort();
        ks__sha256(data + KS__CACHE_HEADER_BYTES, (size_t)len, digest);
        if (memcmp(digest, data + 48, 32) != 0)
            abort();            /* accepted a payload that is not what its header hashes */
    }

    /* Through the file reader, under the entry's own name. */
    char hex[65], name[80];
    ks__sha256_hex(key, hex);
    snprintf(name, sizeof name, "%s.nvrtc", hex);
    int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        abort();
    if (size > 0 && write(fd, data, size) != (ssize_t)size)
        abort();
    close(fd);
    void *payload = NULL;
    size_t n = 0;
    int got = ks__cache_get(dirfd_, key, &payload, &n);
    if (got != (len >= 0))
        abort();                /* the file reader and the check disagree */
    if (got && (n != (size_t)len || (n > 0 && memcmp(payload, data + KS__CACHE_HEADER_BYTES, n) != 0)))
        abort();
    free(payload);
    unlinkat(dirfd_, name, 0);
    return 0;
}
