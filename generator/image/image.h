/*
 * image.h — kernel images the generator embeds: reading one (image.c: an
 * nvcc-built PTX, cubin or fatbin, told apart by content, or the input
 * itself for NVRTC), and the kernel entry and variable names it defines,
 * checked against the input's kernels and device variables before --embed
 * puts it in the stubs (image_entries.c).
 */
#ifndef KSTUB_IMAGE_H
#define KSTUB_IMAGE_H

#include "model/model.h"
#include "base/options.h"
#include "base/util.h"

typedef struct ks_image_blob {
    unsigned char *data;
    size_t size;               /* bytes including a trailing NUL for PTX */
    const char *kind;          /* "PTX", "CUBIN" or "FATBIN" */
    const char *name;          /* basename of the embedded file */
} ks_image_blob;

/* ---- image.c ---- */
/* Reads an nvcc-built image and tells PTX, cubin and fatbin apart by content.
 * Returns 0, or -1 after printing an error. */
int ks_image_read(const char *path, ks_image_blob *blob);

/* The input .cu itself as a KS_IMAGE_SOURCE image, compiled by libkstub with
 * NVRTC at run time (--embed-source). Returns 0, or -1 after an error. */
int ks_source_read(const char *path, ks_image_blob *blob);

/* ---- image_entries.c ---- */
/* A module-scope variable an image names: a PTX .global/.const
 * declaration, or a cubin's object symbol. */
typedef struct ks_image_var {
    char *name;                /* its device symbol */
    long long size;            /* bytes (PTX: elements times the type's width, ELF:
                                * st_size); -1 when the image does not say */
    int defined;               /* 0: only declared (PTX .extern, an undefined ELF
                                * symbol): its definition is in another image (-rdc) */
} ks_image_var;

/* One kernel entry's parameters as an image states them: n of them, each
 * one's size and offset in bytes; n is -1 when the image does not say (or
 * kstub cannot read it). */
typedef struct ks_image_params {
    long n;
    long *size, *offset;
    int offsets_known;         /* 1: offsets in the launch's buffer (PTX); 0: a
                                * cubin's constant-bank places, not compared */
} ks_image_params;

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
    ks_image_params *params;   /* each entry's parameters, beside entries */
    ks_image_var *vars;        /* module-scope variables, in file order */
    size_t nvars;
} ks_image_member;

typedef struct ks_image_entries {
    ks_image_member *members;
    size_t nmembers;
} ks_image_entries;

/* Lists the kernel entries and variables of the image bytes: a PTX text's
 * .entry directives and module-scope .global/.const declarations, a cubin's
 * ELF function symbols marked as entries and its object symbols, and those
 * of every PTX and cubin member of a fatbin (compressed members are
 * decompressed: LZ4 by kstub itself, zstd through libzstd when it can be
 * loaded; otherwise the member is marked unreadable, never guessed). */
void ks_image_entries_read(const unsigned char *data, size_t size, ks_image_entries *out);
void ks_image_entries_free(ks_image_entries *e);

/* Refuses an image that is corrupt (a fatbin or cubin whose sizes or
 * offsets point past its end, compressed data that does not decompress):
 * an error naming the image and what is wrong; or that does not define the
 * input's kernels and device variables: an error at a kernel or variable
 * that no readable member defines (naming what the image defines; for a
 * variable, why it may be missing: const and folded away, -rdc's prefix on
 * an internal-linkage one, only declared there), an error at a variable
 * whose size in the image differs from its type's, a warning for one
 * missing from some members only, and a warning for each member that could
 * not be read for want of a decompressor (nothing is claimed about it).
 * With stale not NULL (kstub check), kernels and variables that no readable
 * member defines, and variables of another size, are not errors: *stale
 * gets one message naming them (the image is older than the source), or
 * stays NULL. Returns 0, or -1 after errors. */
int ks_image_check(const char *image_path, const ks_image_blob *image,
                           const ks_options *opts, const ks_model *m, char **stale);

/* ---- image_params.c ---- */
/* The parameter list after a PTX ".entry NAME" (p[i] where the name ends). */
void ks__ptx_params(const unsigned char *p, size_t n, size_t i, ks_image_params *ps);
/* Each entry's parameters from a cubin's .nv.info.NAME sections. */
void ks__elf_params(const unsigned char *p, size_t n, ks_image_member *m);
/* An error at each kernel whose parameters (count, each one's size and
 * offset) differ from those an entry it matches in a readable member
 * states, naming the kernel, the parameter and both sizes; with stale not
 * NULL (kstub check), the differences are appended to it instead. Returns 0,
 * or -1 after errors. */
int ks__image_check_params(const char *image_path, const ks_image_entries *e, const ks_options *opts,
                           const ks_model *m, ks_buf *stale);

#endif /* KSTUB_IMAGE_H */
