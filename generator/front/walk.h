/*
 * walk.h — the front end's door (walk.c): parse one .cu file into the
 * model. What lies behind it (libclang session, raw-text scanner, type
 * mapping) is the other front/ headers' (session.h, source.h, typemap.h,
 * one per file or small group). The front end names nothing for any
 * output language: naming.h's stage does, after it.
 */
#ifndef KSTUB_WALK_H
#define KSTUB_WALK_H

#include "model/model.h"
#include "base/options.h"

/* Parses opts->input and fills *model: kernels, parameters, types, layout,
 * "kstub:" directives; no generated names (naming.h). Reports every
 * diagnostic through the sink (util.h). Returns 0, or -1 after errors. */
int ks_parse(const ks_options *opts, ks_model *model);

#endif /* KSTUB_WALK_H */
