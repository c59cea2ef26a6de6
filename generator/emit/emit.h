/*
 * emit.h — the model to text through a target's templates (emit.c): the
 * values every template sees, the outputs, and the spellings other
 * documents take from the templates' named pieces (the manifest's c_type,
 * the --list prototype), so that -T restyles them too.
 */
#ifndef KSTUB_EMIT_H
#define KSTUB_EMIT_H

#include "image/image.h"
#include "model/model.h"
#include "base/options.h"
#include "model/target.h"

/* Renders the target's output number `output` with the model (named by
 * naming.h's stage for that target); *text malloc'd. Returns 0, or -1 after
 * errors (a template that cannot be read, or errors located in it). */
int ks_emit(const ks_target *target, size_t output, const ks_options *opts, const ks_model *model,
            const ks_image_blob *image, char **text);

/* What the header's named pieces say of each kernel: its stub's prototype
 * on one line ({{*prototype}}) and each parameter's C type as the manifest
 * writes it ({{*manifest_c_type}}, every parameter, fixed ones included). */
typedef struct ks_spellings {
    char **prototypes;         /* per kernel */
    char ***c_types;           /* per kernel, per parameter */
    size_t nkernels;
    char ***entry_points;      /* --list --all: per kernel, its other prototypes (_n, graph), NULL-ended */
    char **generics;           /* --list --all: a line per template's one C name, NULL-ended */
    char ***var_entry_points;  /* --list --all: per device variable, its accessors' prototypes, NULL-ended */
    size_t nvars;
} ks_spellings;

/* Fills *sp from the target's header template. Returns 0, or -1 after
 * errors. */
int ks_emit_spellings(const ks_target *target, const ks_options *opts, const ks_model *model,
                      ks_spellings *sp);
void ks_spellings_free(ks_spellings *sp);

/* Adds to *sp (filled by ks_emit_spellings) each kernel's other entry
 * points and the templates' one C names, from the header template's pieces
 * (n_prototype, node_prototype, node_set_prototype, nodes_set_prototype,
 * generic_line) and each typed device variable's accessors (var_prototypes). Returns 0, or -1 after errors. */
int ks_emit_entry_points(const ks_target *target, const ks_options *opts, const ks_model *model,
                         ks_spellings *sp);

/* Whether the generated header includes the application's header for def
 * instead of mirroring it: a complete type from a project header C can
 * include, under its own name, not named by "kstub:mirror", and whose by-value
 * members are such types too (an anonymous member follows its owner). */
int ks_def_uses_header(const ks_model *m, size_t def);

#endif /* KSTUB_EMIT_H */
