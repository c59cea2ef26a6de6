/*
 * check_gen.h — what check-gen's parts share (check_gen.c defines it): the
 * kstub under test, the CUDA headers, a scratch folder, the compilers the
 * generated code is compiled with, and each part's Check suite.
 */
#ifndef KSTUB_CHECK_GEN_H
#define KSTUB_CHECK_GEN_H

#include <check.h>
#include <stddef.h>

const char *kstub_bin(void);   /* $KSTUB, else build/bin/kstub */
const char *cuda_path(void);   /* $CUDA_PATH, else /usr/local/cuda */

/* One scratch folder per test: make_tmpdir() names it in tmpdir. */
extern char tmpdir[64];
void make_tmpdir(void);
void remove_tmpdir(void);
int exists(const char *path);

/* The compilers and languages the generated code must compile in. */
struct gen_compiler {
    const char *compiler;
    const char *lang;     /* flags choosing the language */
};
extern const struct gen_compiler compilers[];
extern const size_t gen_ncompilers;
#define NCOMPILERS gen_ncompilers

/* The golden inputs (tests/golden/NAME.cu) and the image each embeds (NULL:
 * none); in_dir: generated from its own folder (make bless writes them). */
struct gen_golden {
    const char *name, *embed;
    int in_dir;
};
extern const struct gen_golden goldens[];
extern const size_t gen_ngoldens;

/* C11 or later, or C++17 (strict mode needs one of them). */
int modern(const char *lang);
/* FILE compiled by compilers[i] with -Werror (compile) or as a user's
 * default build, warnings staying warnings (compile_lenient); its output in
 * *out (the caller frees it); the compiler's exit status. */
int compile(char **out, int i, const char *file, const char *incdir);
int compile_lenient(char **out, int i, const char *file, const char *incdir);

/* The parts, by stage. */
Suite *gen_model_suite(void);     /* check_gen_model.c: the type model and refusals */
Suite *gen_output_suite(void);    /* check_gen_output.c: golden output, templates, images */
Suite *gen_compile_suite(void);   /* check_gen_compile.c: the generated code as callers meet it */
Suite *gen_cli_suite(void);       /* check_gen_cli.c: the command line */

#endif
