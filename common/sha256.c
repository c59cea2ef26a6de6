/*
 * sha256.c — a compact SHA-256 (FIPS 180-4, section 6.2), used to key the
 * NVRTC disk cache and to check each entry before it is loaded.
 *
 * Why not a library's: libkstub is linked into applications that may ship
 * their own libcrypto (OpenSSL 1.1 vs 3, BoringSSL, ...), and Debian's
 * libcrypto/libgcrypt/nettle would add a run-time dependency and a symbol
 * clash risk for ~100 lines of well-specified code. The runtime depends on
 * libc, libdl and libpthread only. tests/runtime/check_runtime.c checks this against
 * the FIPS 180-4 example vectors (and the million-'a' message).
 */
#include <string.h>

#include "sha256.h"

static const uint32_t k256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void compress(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + k256[i] + w[i];
        uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void ks__sha256_init(ks__sha256_ctx *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->used = 0;
}

void ks__sha256_update(ks__sha256_ctx *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->bytes += n;
    if (s->used) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, p, take);
        s->used += take, p += take, n -= take;
        if (s->used < 64)
            return;
        compress(s->h, s->block);
        s->used = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
        compress(s->h, p);
    memcpy(s->block, p, n);
    s->used = n;
}

void ks__sha256_final(ks__sha256_ctx *s, unsigned char out[KS__SHA256_BYTES])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad[72] = {0x80};
    /* Pad to 56 mod 64, then the 64-bit big-endian length. */
    size_t npad = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++)
        pad[npad + i] = (unsigned char)(bits >> (56 - 8 * i));
    ks__sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void ks__sha256(const void *data, size_t n, unsigned char out[KS__SHA256_BYTES])
{
    ks__sha256_ctx s;
    ks__sha256_init(&s);
    ks__sha256_update(&s, data, n);
    ks__sha256_final(&s, out);
}

void ks__sha256_field(ks__sha256_ctx *s, const char *tag, const void *data, size_t n)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    ks__sha256_update(s, tag, strlen(tag) + 1);
    ks__sha256_update(s, len, sizeof len);
    ks__sha256_update(s, data, n);
}

void ks__sha256_hex(const unsigned char digest[KS__SHA256_BYTES], char hex[2 * KS__SHA256_BYTES + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < KS__SHA256_BYTES; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[2 * KS__SHA256_BYTES] = '\0';
}
