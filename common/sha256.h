/*
 * sha256.h — SHA-256 (FIPS 180-4) for the NVRTC cache's keys and entry
 * checks. Internal to libkstub; see sha256.c for why it is not a library's.
 */
#ifndef KS_SHA256_H
#define KS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define KS__SHA256_BYTES 32

typedef struct ks__sha256 {
    uint32_t h[8];               /* chaining state */
    uint64_t bytes;              /* message length so far */
    unsigned char block[64];     /* pending partial block */
    size_t used;                 /* bytes in block */
} ks__sha256_ctx;

void ks__sha256_init(ks__sha256_ctx *s);
void ks__sha256_update(ks__sha256_ctx *s, const void *data, size_t n);
void ks__sha256_final(ks__sha256_ctx *s, unsigned char out[KS__SHA256_BYTES]);
/* One-shot digest of \p n bytes at \p data. */
void ks__sha256(const void *data, size_t n, unsigned char out[KS__SHA256_BYTES]);
/* A key's field: \p tag (with its NUL), \p n as 8 little-endian bytes, then the \p n bytes,
 * so that no two different lists of fields hash the same bytes (the generator's cache keys). */
void ks__sha256_field(ks__sha256_ctx *s, const char *tag, const void *data, size_t n);
/* \p digest as 64 lowercase hex digits and a NUL. */
void ks__sha256_hex(const unsigned char digest[KS__SHA256_BYTES], char hex[2 * KS__SHA256_BYTES + 1]);

#endif /* KS_SHA256_H */
