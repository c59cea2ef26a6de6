/*
 * check_options.c — kstub's options as the one table (generator/cli/
 * optable.c) gives them, and the subcommands' edges (issue 39 #5, #13, #14):
 *
 *  - nvcc's architecture spellings (-arch=sm_90, -arch sm_80,
 *    --gpu-architecture[=], --arch compute_NN, -code, -gencode) parse for
 *    the architecture named, as -p maps them; native or all is refused;
 *  - kstub check --help prints check's own options; kstub version prints
 *    the version and is never read as an input file;
 *  - kstub cache: --max-size without --prune is a usage error; --stats,
 *    --prune and --clear of a directory that does not exist create none;
 *  - kstub --list --all lists the typed device variables' accessors,
 *    spelled as the header declares them;
 *  - --target NAME: kstub's own template sets by name (python: what -T
 *    <templates>/python writes; c: the default); an unknown name refused
 *    naming the known ones; -T with --target refused.
 *
 * Run from the repository root (make check-options does) with KSTUB and
 * SRCDIR set; needs only the generator.
 */
#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char kstub_path[PATH_MAX];
static const char *srcdir;

/* Every kstub of this suite: in scratch_dir, killed after a minute. */
#define KSTUB "cd '%s' && timeout -s KILL 60 '%s'"

static void setup(void)
{
    const char *k = getenv("KSTUB");
    if (!realpath(k && *k ? k : "build/bin/kstub", kstub_path))
        ck_abort_msg("no kstub at %s", k && *k ? k : "build/bin/kstub");
    srcdir = getenv("SRCDIR") && *getenv("SRCDIR") ? getenv("SRCDIR") : ".";
    scratch_make("options");
}

static void teardown(void)
{
    scratch_remove();
}

/* A kernel whose parse differs by architecture: its parameter's type is
 * int below sm_80 and float from it on, so --list shows which one parsed. */
static const char arch_cu[] =
    "#if __CUDA_ARCH__ >= 900\ntypedef double T;\n#elif __CUDA_ARCH__ >= 800\ntypedef float T;\n"
    "#else\ntypedef int T;\n#endif\n__global__ void k(T *p) { *p = 0; }\n";

static const struct {
    const char *args;
    const char *type;      /* the parameter's type parsed for that architecture */
} nvcc_spellings[] = {
    {"-arch=sm_80", "float"},
    {"-arch sm_80", "float"},
    {"--gpu-architecture=sm_80", "float"},
    {"--gpu-architecture sm_80", "float"},
    {"--arch compute_80", "float"},
    {"--arch=sm_75", "int"},
    {"-code=sm_80", "float"},
    {"--gpu-code sm_80", "float"},
    {"-gencode arch=compute_80,code=sm_80", "float"},
    {"--generate-code=arch=compute_75,code=[sm_75,compute_75]", "int"},
    {"-arch=sm_80 --arch sm_90", "double"},   /* the last one given wins */
    {"", "double"},                           /* the default, sm_90 */
};

START_TEST(nvcc_architecture_spellings)
{
    scratch_write("a.cu", arch_cu);
    char *out;
    int rc = run(&out, KSTUB " %s --list a.cu", scratch_dir, kstub_path, nvcc_spellings[_i].args);
    char want[128];
    snprintf(want, sizeof want, "ks_status k(ks_launch launch, %s *p);\n", nvcc_spellings[_i].type);
    ck_assert_msg(rc == 0 && strstr(out, want), "kstub %s --list: exit %d\n%s", nvcc_spellings[_i].args,
                  rc, out);
    free(out);
}
END_TEST

START_TEST(architectures_that_are_not_one_are_refused)
{
    scratch_write("a.cu", arch_cu);
    static const char *const bad[] = {"--arch native", "-arch=all", "--gpu-architecture=sm_xy",
                                      "-gencode code=lto_80", "-arch"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out;
        int rc = run(&out, KSTUB " a.cu --list %s", scratch_dir, kstub_path, bad[i]);
        ck_assert_msg(rc == 2 && strstr(out, "kstub: error: ") &&
                      (strstr(out, "takes one architecture") || strstr(out, "needs a value")),
                      "kstub --list %s: exit %d\n%s", bad[i], rc, out);
        free(out);
    }
}
END_TEST

START_TEST(check_help_is_checks_own)
{
    char *out;
    int rc = run(&out, KSTUB " check --help", scratch_dir, kstub_path);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strncmp(out, "usage: kstub check ", 19) == 0, "%s", out);
    ck_assert_msg(strstr(out, "--fix-command") && strstr(out, "--format=F") && strstr(out, "--manifest"), "%s",
                  out);
    ck_assert_msg(!strstr(out, "\n  --list") && !strstr(out, "\n  --all") && !strstr(out, "kstub diff"), "%s", out);
    free(out);
    /* The global help stays the global one, and names check's. */
    rc = run(&out, KSTUB " --help", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0 && strncmp(out, "usage: kstub [options]", 22) == 0 &&
                  strstr(out, "see kstub check --help") &&
                  strstr(out, "kstub cache [--stats | --clear | --prune [--max-size SIZE] | --warm ...] [--cache-dir DIR]\n"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(version_is_a_subcommand_not_an_input)
{
    scratch_write("version", "__global__ void k(int *p) { *p = 0; }\n");
    char *out, *want;
    int rc = run(&want, KSTUB " --version", scratch_dir, kstub_path);
    ck_assert_int_eq(rc, 0);
    rc = run(&out, KSTUB " version", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0 && strcmp(out, want) == 0 && strncmp(out, "kstub ", 6) == 0, "%s", out);
    free(out);
    rc = run(&out, KSTUB " version -o x", scratch_dir, kstub_path);
    ck_assert_msg(rc == 2 && strstr(out, "kstub version takes no arguments"), "exit %d\n%s", rc, out);
    ck_assert(!scratch_exists("x.h"));
    free(out);
    free(want);
}
END_TEST

START_TEST(cache_max_size_is_for_prune)
{
    char *out;
    int rc = run(&out, KSTUB " cache --cache-dir c --max-size 10M", scratch_dir, kstub_path);
    ck_assert_msg(rc == 2 && strstr(out, "--max-size is for --prune") && !strstr(out, "cache directory"),
                  "exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, KSTUB " cache --stats --max-size 10M --cache-dir c", scratch_dir, kstub_path);
    ck_assert_msg(rc == 2 && strstr(out, "--max-size is for --prune"), "exit %d\n%s", rc, out);
    free(out);
    ck_assert(!scratch_exists("c"));
    rc = run(&out, "mkdir '%s/c' && " KSTUB " cache --prune --max-size 10M --cache-dir c", scratch_dir,
             scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    free(out);
}
END_TEST

START_TEST(cache_commands_create_no_directory)
{
    static const char *const actions[] = {"--stats", "--clear", "--prune", ""};
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++) {
        char *out;
        int rc = run(&out, KSTUB " cache %s --cache-dir new/cache", scratch_dir, kstub_path, actions[i]);
        ck_assert_msg(rc == 0, "kstub cache %s: exit %d\n%s", actions[i], rc, out);
        ck_assert_msg(!scratch_exists("new"), "kstub cache %s created the directory:\n%s", actions[i], out);
        ck_assert_msg(strstr(out, "new/cache"), "%s", out);
        free(out);
        /* KSTUB_CACHE_DIR names it the same way. */
        rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR='%s/env' timeout -s KILL 60 '%s' cache %s", scratch_dir,
                 scratch_dir, kstub_path, actions[i]);
        ck_assert_msg(rc == 0 && !scratch_exists("env"), "KSTUB_CACHE_DIR, cache %s: exit %d\n%s", actions[i],
                      rc, out);
        free(out);
    }
}
END_TEST

/* Device variables of each accessor shape: a scalar, an array, a record. */
static const char vars_cu[] =
    "struct P { float x, y; };\n"
    "__device__ float scale;\n"
    "__device__ int table[16];\n"
    "__constant__ P origin;\n"
    "__global__ void k(float *p) { *p = scale * table[0] + origin.x; }\n";

START_TEST(list_all_lists_the_variables_accessors)
{
    scratch_write("v.cu", vars_cu);
    char *out;
    /* Every ks_status the header declares (ks__ helpers aside) is listed,
     * and each listed line redeclares the header's declaration as it is. */
    int rc = run(&out, KSTUB " --no-cache --list --all v.cu > all.txt && '%s' --no-cache v.cu -o v && "
                 "grep -o '^ks_status [a-z][a-z0-9_]*(' v.h | grep -v ' ks__' | sort -u > declared && "
                 "grep -o '^ *ks_status [a-z][a-z0-9_]*(' all.txt | sed 's/^ *//' | sort > listed && "
                 "diff declared listed && { echo '#include \"v.h\"'; grep '^ *ks_status' all.txt; } > redecl.c && "
                 "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -DKSTUB_PLAIN_CALLS -I'%s/include/kstub' "
                 "-fsyntax-only redecl.c && grep -c '^ks_status \\(scale\\|table\\|origin\\)_' all.txt",
                 scratch_dir, kstub_path, kstub_path, srcdir);
    /* scale: set get address node; table: write read set get address node; origin: as scale */
    ck_assert_msg(rc == 0 && strcmp(out, "14\n") == 0, "exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && grep -c 'ks_status table_write(size_t ks__first, const int \\*ks__src' all.txt && "
             "timeout -s KILL 60 '%s' --no-cache --list --all --format=json v.cu | grep -c '\"entry_points\"' && "
             "timeout -s KILL 60 '%s' --no-cache --list v.cu | grep -c '_set('",
             scratch_dir, kstub_path, kstub_path);
    /* one kernel and three variables have entry points; --list alone lists no accessor */
    ck_assert_msg(strcmp(out, "1\n4\n0\n") == 0, "%s", out);
    free(out);
}
END_TEST

/* --target NAME picks kstub's own template sets by name: --target python
 * writes what -T <templates>/python writes, byte for byte, and --target c
 * what no option writes; an unknown name is refused naming the known ones,
 * and -T with --target is refused, each with nothing written. */
static const char target_cu[] = "struct P { float x; int n; };\n"
                                "__global__ void k(P p, const float *x, float *y) { y[0] = x[0] * p.x; }\n";

START_TEST(target_names_an_installed_template_set)
{
    scratch_write("t.cu", target_cu);
    char *out;
    int rc = run(&out, KSTUB " --no-cache t.cu --target python -o py/t && '%s' --no-cache t.cu "
                 "-T '%s/templates/python' -o tdir/t && for f in t.h t.c t_module.c t.pyi; do "
                 "cmp py/$f tdir/$f || exit 1; done && ls py | LC_ALL=C sort | tr '\\n' ' ' && '%s' --no-cache t.cu "
                 "--target=c -o c/t && '%s' --no-cache t.cu -o plain/t && cmp c/t.h plain/t.h && "
                 "cmp c/t.c plain/t.c && ls c | LC_ALL=C sort | tr '\\n' ' '",
                 scratch_dir, kstub_path, kstub_path, srcdir, kstub_path, kstub_path);
    ck_assert_msg(rc == 0 && strcmp(out, "t.c t.h t.pyi t_module.c t.c t.h ") == 0, "exit %d\n%s", rc, out);
    free(out);
    /* check takes it too: no drift against what --target python wrote. */
    rc = run(&out, KSTUB " check --no-cache t.cu --target python -o py/t", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    free(out);
}
END_TEST

START_TEST(an_unknown_target_is_refused_naming_the_known_ones)
{
    static const char *const bad[] = {"cuda", "C", "../templates", "python/", "."};
    scratch_write("t.cu", target_cu);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out;
        int rc = run(&out, KSTUB " --no-cache t.cu --target '%s' -o out/t", scratch_dir, kstub_path, bad[i]);
        char want[256];
        snprintf(want, sizeof want, "kstub: error: unknown target '%s'; the targets: c, python "
                 "(or -T DIR for templates of your own)\n", bad[i]);
        ck_assert_msg(rc == 2 && strcmp(out, want) == 0, "--target %s: exit %d\n%s", bad[i], rc, out);
        ck_assert(!scratch_exists("out"));
        free(out);
    }
    char *out;
    int rc = run(&out, KSTUB " --no-cache t.cu -T '%s/templates/python' --target python -o out/t", scratch_dir,
                 kstub_path, srcdir);
    ck_assert_msg(rc == 2 && strstr(out, "-T and --target both choose the templates; give one"), "exit %d\n%s",
                  rc, out);
    ck_assert(!scratch_exists("out"));
    free(out);
}
END_TEST

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("nvcc");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, nvcc_architecture_spellings, 0,
                        (int)(sizeof nvcc_spellings / sizeof nvcc_spellings[0]));
    tcase_add_test(tc, architectures_that_are_not_one_are_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("subcommands");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, check_help_is_checks_own);
    tcase_add_test(tc, version_is_a_subcommand_not_an_input);
    tcase_add_test(tc, cache_max_size_is_for_prune);
    tcase_add_test(tc, cache_commands_create_no_directory);
    suite_add_tcase(s, tc);
    tc = tcase_create("list");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, list_all_lists_the_variables_accessors);
    suite_add_tcase(s, tc);
    tc = tcase_create("target");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, target_names_an_installed_template_set);
    tcase_add_test(tc, an_unknown_target_is_refused_naming_the_known_ones);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(options_suite(), CK_FORK_GETENV);
}
