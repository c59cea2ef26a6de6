/*
 * compdb.h — options from compile_commands.json (compdb.c, -p BUILD_DIR).
 */
#ifndef KSTUB_COMPDB_H
#define KSTUB_COMPDB_H

#include <stddef.h>

/* What a compile command contributes; strings are owned here. */
typedef struct ks_compdb {
    char **includes;           /* -I and -isystem directories, made absolute */
    size_t nincludes;
    char **system_dirs;        /* the -isystem ones again, for -MMD */
    size_t nsystem_dirs;
    char **defines;            /* "-DX=1" / "-UX", in order */
    size_t ndefines;
    char *std;                 /* e.g. "c++17", or NULL */
    char *arch;                /* e.g. "sm_80", or NULL */
    int rdc;                   /* -rdc=true, -dc or -fgpu-rdc seen */
    char *directory;           /* the entry's "directory" */
} ks_compdb;

/* Translates one nvcc (or clang) command line, argv[0] being the compiler,
 * into *db; flags that only shape code generation are dropped. Relative
 * paths are taken from directory; an argument dropped is a warning. Returns
 * 0, or -1 after an error (an option without its value, an unterminated
 * quote). */
int ks_compdb_translate(const char *directory, const char *const *argv, size_t argc,
                        ks_compdb *db);
/* Reads BUILD_DIR/compile_commands.json and translates the entry for input.
 * Returns 0, or -1 after printing an error. */
int ks_compdb_load(const char *build_dir, const char *input, ks_compdb *db);
void ks_compdb_free(ks_compdb *db);

/* The architecture kstub parses for, "sm_NN" (newly allocated), from an
 * -arch/--gpu-architecture value ("sm_90", "compute_90", "sm_90a") or a
 * -gencode value ("arch=compute_80,code=sm_80": code= first); NULL for
 * what names no one architecture (native, all, lto_NN). kstub's own
 * command line maps nvcc's spellings with these, as -p does. */
char *ks_compdb_arch_of(const char *v);
char *ks_compdb_arch_of_gencode(const char *v);

#endif /* KSTUB_COMPDB_H */
