/*
 * check_cli.h — what check-cli's suites share (check_cli.c defines it): the
 * programs under test, a scratch folder per case, the two-kernel input and
 * its stubs' prototypes, and each suite.
 */
#ifndef KSTUB_CHECK_CLI_H
#define KSTUB_CHECK_CLI_H

#include <check.h>
#include <limits.h>

const char *kstub_bin(void);   /* $KSTUB made absolute, else build/bin/kstub */
const char *nvcc_bin(void);    /* $NVCC, else /usr/local/cuda/bin/nvcc */
const char *cuda_path(void);   /* $CUDA_PATH, else /usr/local/cuda */

/* make_tmpdir() makes tmpdir and notes the working directory in cwd. */
extern char tmpdir[PATH_MAX];
extern char cwd[PATH_MAX];
void make_tmpdir(void);
void remove_tmpdir(void);
/* Writes text to tmpdir/name. */
void write_file(const char *name, const char *text);
/* The names in tmpdir, sorted, one a line (malloc'd). */
char *tree(void);

/* Two kernels, one C++ (mangled) and one extern "C"; the first alone; the
 * two stubs' prototypes as the header declares them. */
extern const char two_cu[];
extern const char one_cu[];
extern const char *const two_protos[2];

Suite *cli_list_suite(void);    /* check_cli.c: --list, -o and the output folders */
Suite *cli_embed_suite(void);   /* check_cli_embed.c: --embed of nvcc images */
Suite *cli_build_suite(void);   /* check_cli_build.c: kstub.mk, _n, KS_CHECK, the prelude's line, the README */

#endif
