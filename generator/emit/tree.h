/*
 * tree.h — the tree of values a template is filled from (tree.c), as the
 * renderer (render.c) reads it. Everything else builds it through render.h's
 * ks_tn_* and never sees inside.
 */
#ifndef KSTUB_TREE_H
#define KSTUB_TREE_H

#include "emit/render.h"

#include <stddef.h>

struct ks_tval {
    char *key;
    size_t keylen;
    char *str;          /* a value, or NULL for a list */
    ks_tnode **items;
    size_t nitems;
    int borrowed;       /* items pushed with ks_tn_push_ref: owned elsewhere */
};

struct ks_tnode {
    ks_tval **vals;            /* each allocated alone: a list stays put while values are added */
    size_t nvals;
    const ks_tnode *parent;
};

/* The value named key (keylen bytes) in n or the nearest scope above it, or NULL. */
const ks_tval *ks__tn_find(const ks_tnode *n, const char *key, size_t keylen);

#endif /* KSTUB_TREE_H */
