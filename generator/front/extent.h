/*
 * extent.h — "kstub:extent(PTR, EXPR)" hints (extent.c).
 */
#ifndef KSTUB_EXTENT_H
#define KSTUB_EXTENT_H

#include "front/source.h"
#include "model/model.h"

/* Attach each hint of src to the next kernel of the input at or after it
 * (ks_param.extent, .extent_ops), checking names and types. Returns 0, or
 * -1 after errors. */
int ks_extents_apply(const char *input, const ks_source *src, ks_model *m);

#endif /* KSTUB_EXTENT_H */
