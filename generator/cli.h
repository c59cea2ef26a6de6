/*
 * cli.h — what the command line (main.c) uses beyond model.h: a kernel's C
 * prototype and the --list document (manifest.c), and the kernel entry
 * names an nvcc image defines, checked against the input's kernels before
 * --embed puts the image in the stubs (image_entries.c).
 */
#ifndef KSTUB_CLI_H
#define KSTUB_CLI_H

#include "model.h"

/* ---- manifest.c ---- */
/* The stub's C prototype on one line, without the ';':
 * "ks_status saxpy(ks_launch launch, float a, const float *restrict x)". */
char *ks_kern_c_prototype(const ks_model *m, const ks_kern *k);

/* kstub --list --format=json: the manifest's document, each kernel also
 * carrying its stub's "prototype". */
char *ks_list_json(const ks_options *opts, const ks_model *m);

/* ---- image_entries.c ---- */
/* One piece of code in an image: PTX text or a cubin, alone or as a member
 * of a fatbin. */
typedef struct ks_image_member {
    char *what;                /* "sm_90 cubin", "compute_90 PTX", "PTX" ... */
    int readable;              /* 0: its entry names could not be read */
    int corrupt;               /* ... because its bytes contradict themselves (sizes or
                                * offsets beyond the end, bad compressed data): the
                                * image is refused, not embedded */
    char *why;                 /* ... and why (for the warning or the error) */
    char **entries;            /* kernel entry names (device symbols), in file order */
    size_t nentries;
} ks_image_member;

typedef struct ks_image_entries {
    ks_image_member *members;
    size_t nmembers;
} ks_image_entries;

/* Lists the kernel entries of the image bytes: a PTX text's .entry
 * directives, a cubin's ELF function symbols marked as entries, and those of
 * every PTX and cubin member of a fatbin (compressed members are
 * decompressed: LZ4 by kstub itself, zstd through libzstd when it can be
 * loaded; otherwise the member is marked unreadable, never guessed). */
void ks_image_entries_read(const unsigned char *data, size_t size, ks_image_entries *out);
void ks_image_entries_free(ks_image_entries *e);

/* Refuses an image that is corrupt (a fatbin or cubin whose sizes or
 * offsets point past its end, compressed data that does not decompress):
 * an error naming the image and what is wrong; or that does not define the
 * input's kernels: an error at a kernel that no readable member defines
 * (naming what the image defines), a warning for one missing from some
 * members only, and a warning for each member that could not be read for
 * want of a decompressor (nothing is claimed about it). Returns 0, or -1
 * after errors. */
int ks_image_check_kernels(const char *image_path, const ks_image_blob *image,
                           const ks_options *opts, const ks_model *m);

#endif /* KSTUB_CLI_H */
