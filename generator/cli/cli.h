/*
 * cli.h — what the command line (main.c) uses beyond the components'
 * own headers: the version, and the --list document (manifest.c).
 */
#ifndef KSTUB_CLI_H
#define KSTUB_CLI_H

#include "emit.h"
#include "model.h"
#include "options.h"

#define KSTUB_VERSION "0.2.0"

/* ---- manifest.c ---- */
/* kstub --list --format=json: the manifest's document, each kernel also
 * carrying its stub's "prototype" (sp: the header's spellings). */
char *ks_list_json(const ks_options *opts, const ks_model *m, const ks_spellings *sp);

#endif /* KSTUB_CLI_H */
