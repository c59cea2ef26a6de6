/*
 * warm.h — `kstub cache --warm [options]`: the base prelude for a toolkit
 * and options built ahead of the first file (warm.c).
 */
#ifndef KSTUB_WARM_H
#define KSTUB_WARM_H


/* Runs `kstub cache --warm OPTIONS...`: 0 built or already there, 1 it
 * could not be built (kstub's own messages say why), 2 usage error. */
int ks_cache_warm(int argc, char **argv);

#endif
