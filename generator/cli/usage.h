/*
 * usage.h — kstub's help texts (usage.c).
 */
#ifndef KSTUB_USAGE_H
#define KSTUB_USAGE_H

#include <stdio.h>

/* kstub --help: the synopses, every option, depfiles, exit status. */
void ks_usage(FILE *f);
/* kstub check --help: check's own options and exit status. */
void ks_check_usage(FILE *f);

#endif /* KSTUB_USAGE_H */
