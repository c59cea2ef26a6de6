/*
 * check_gen.c — check-gen: runs the generator's suites, one per stage
 * (check_gen_model.c, check_gen_output.c, check_gen_compile.c,
 * check_gen_cli.c; CK_RUN_SUITE=gen-model & co. picks one), and holds what
 * they share (check_gen.h): the kstub under test, a scratch folder, the
 * compilers the generated code must compile in.
 *
 * Run from the repository root (make check-gen does). The model tests link
 * the generator's objects; the rest run build/bin/kstub as a user would.
 * To re-bless the golden files after an intended change: make bless
 */
#include "check_gen.h"
#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *kstub_bin(void)
{
    const char *k = getenv("KSTUB");
    return k ? k : "build/bin/kstub";
}

const char *cuda_path(void)
{
    const char *c = getenv("CUDA_PATH");
    return c && *c ? c : "/usr/local/cuda";
}

char tmpdir[64];

void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kstub-check-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

void remove_tmpdir(void)
{
    char *out;
    run(&out, "rm -rf '%s'", tmpdir);
    free(out);
}

int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

const struct gen_compiler compilers[] = {
    {"gcc", "-x c -std=c99"},
    {"gcc", "-x c -std=c11"},
    {"clang", "-x c -std=c99"},
    {"clang", "-x c -std=c11"},
    {"g++", "-x c++ -std=c++17"},
    {"clang++", "-x c++ -std=c++17"},
    /* GNU modes, the compilers' default: they predefine unix and linux
     * (issue 26 #11), which the generated code must not use as names. */
    {"gcc", "-x c -std=gnu17"},
    {"g++", "-x c++ -std=gnu++17"},
};
const size_t gen_ncompilers = sizeof compilers / sizeof compilers[0];

int modern(const char *lang)
{
    return strstr(lang, "c11") || strstr(lang, "c++17") || strstr(lang, "gnu17") || strstr(lang, "gnu++17");
}

int compile(char **out, int i, const char *file, const char *incdir)
{
    return run(out, "%s %s -Wall -Wextra -Wpedantic -Werror -Iinclude/kstub -I%s/include -I%s -c %s "
               "-o /dev/null", compilers[i].compiler, compilers[i].lang, cuda_path(), incdir, file);
}

int compile_lenient(char **out, int i, const char *file, const char *incdir)
{
    return run(out, "%s %s -Wall -Iinclude/kstub -I%s/include -I%s -c %s -o /dev/null", compilers[i].compiler,
               compilers[i].lang, cuda_path(), incdir, file);
}

/* Each golden input and its image (NULL: none embedded); make bless writes
 * their outputs (tests/generator/gen.mk's GOLDEN_PLAIN lists the ones without an image).
 * in_dir: generated from its own folder with its header NAME.hpp beside it
 * (gen.mk's GOLDEN_IN_DIR), so the header's #include is "NAME.hpp". */
const struct gen_golden goldens[] = {
    {"basic", "tests/golden/basic.ptx", 0},  /* the shapes of signature */
    {"records", NULL, 0},                    /* records, enums, halves, by value and through pointers */
    {"templates", NULL, 0},                  /* template instances, specializations, tags, arrays */
    {"internal", NULL, 0},                   /* static and anonymous-namespace kernels */
    {"globals", NULL, 0},                    /* device variables' accessors (issue 29) */
    {"cxx_types", NULL, 1},                  /* the application's own types in C++ (issue 30 #6) */
};
const size_t gen_ngoldens = sizeof goldens / sizeof goldens[0];

int main(void)
{
    SRunner *sr = srunner_create(gen_model_suite());
    srunner_add_suite(sr, gen_output_suite());
    srunner_add_suite(sr, gen_compile_suite());
    srunner_add_suite(sr, gen_cli_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
