/*
 * cli.h — what the command line (main.c) uses beyond the components'
 * own headers: the version.
 */
#ifndef KSTUB_CLI_H
#define KSTUB_CLI_H

#include "emit/emit.h"
#include "drift/manifest.h"
#include "model/model.h"
#include "base/options.h"

/* kstub's version, "MAJOR.MINOR.PATCH": include/kstub/kstub.h's KSTUB_VERSION_*
 * numbers, the one place the version is written; the Makefile passes it
 * (GEN_INC). */
#ifndef KSTUB_VERSION_TEXT
#error "KSTUB_VERSION_TEXT comes from include/kstub/kstub.h through the Makefile (GEN_INC)"
#endif

/* `kstub trace FILE` (trace_cmd.c): a trace file as JSON lines. */
int ks_trace_main(int argc, char **argv);

#endif /* KSTUB_CLI_H */
