/*
 * sigtable.h — an open-addressing hash table of a manifest's kernels, keyed
 * by name, or by name and device symbol (what identifies a kernel): the
 * manifest reader finds repeated kernels with it, kstub diff pairs old and
 * new kernels. A slot points at the kernel that first gave the key (nothing
 * is copied) and holds the few counters those two need.
 */
#ifndef KSTUB_SIGTABLE_H
#define KSTUB_SIGTABLE_H

#include <stdint.h>

#include "drift/manifest.h"

typedef struct ks_sigslot {
    const ks_sig_kern *k;    /* the key's kernel; NULL: empty */
    uint32_t hash;           /* of the key, compared before the strings */
    int32_t shared;          /* name table: kernels of the name have different symbols */
    int32_t n_old, n_new;    /* name table: unmatched kernels of the name on each side */
    long idx;                /* -1 when inserted; then a kernel's index: the repeated one
                              * (manifest.c); pair table: the first unpaired new kernel
                              * of the pair; name table: the last unmatched new kernel
                              * of the name (drift.c) */
} ks_sigslot;

typedef struct ks_sigtable {
    ks_sigslot *v;
    size_t mask;             /* slots - 1 (a power of two minus one) */
    int by_pair;             /* the key includes the symbol */
} ks_sigtable;

/* A table with room for entries kernels; free with ks_sigtable_free. */
void ks_sigtable_init(ks_sigtable *t, size_t entries, int by_pair);
void ks_sigtable_free(ks_sigtable *t);

/* The slot of k's key: the existing one, a fresh one (insert), or NULL. */
ks_sigslot *ks_sigtable_slot(const ks_sigtable *t, const ks_sig_kern *k, int insert);

#endif /* KSTUB_SIGTABLE_H */
