/*
 * check_outputs.c — what the command line lets a run write (issue 19):
 *
 *  - no output replaces a file the run read, compared by device and inode:
 *    a header beside the input or found through -I, compile_commands.json
 *    and an options file of -p, a -T template, a hard link to a header;
 *  - -o never names a header that shadows one the generated header
 *    includes (<kstub.h>, <kstub_types.h>, ...).
 *
 * Every kstub here runs under timeout(1). Run from the repository root
 * (make check-outputs does) with KSTUB and SRCDIR set.
 */
#include "model/model.h"
#include "base/util.h"

#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char kstub_path[PATH_MAX];

/* Every kstub of this suite: in scratch_dir, without the prelude cache, and
 * killed after a minute. */
#define KSTUB "cd '%s' && timeout -s KILL 60 '%s' --no-cache"

static void setup(void)
{
    const char *k = getenv("KSTUB");
    if (!realpath(k && *k ? k : "build/bin/kstub", kstub_path))
        ck_abort_msg("no kstub at %s", k && *k ? k : "build/bin/kstub");
    scratch_make("outputs");
}

static void teardown(void)
{
    scratch_remove();
}

/* The file still holds what the test wrote. */
static void expect_kept(const char *name, const char *text)
{
    char *now = scratch_read(name);
    ck_assert_msg(now && strcmp(now, text) == 0, "%s was changed:\n%s", name, now ? now : "(gone)");
    free(now);
}

static const char header_text[] = "#pragma once\nstruct P { int a; float b; };\n";
static const char kernel_text[] = "#include \"x.h\"\n__global__ void k(P p, int *out) { *out = p.a; }\n";
static const char plain_kernel[] = "__global__ void k(int n, float *out) { out[0] = n; }\n";

/* ---- item 1: no output is a file the run read ------------------------------------------------ */

START_TEST(output_is_not_the_header_beside_the_input)
{
    scratch_write("x.h", header_text);
    scratch_write("x.cu", kernel_text);
    char *out = NULL;
    int rc = run(&out, KSTUB " x.cu -o x", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'x.h' is the input './x.h'");
    expect_has(out, "nothing written");
    expect_kept("x.h", header_text);
    ck_assert(!scratch_exists("x.c"));
    free(out);

    /* another name for the same file: a hard link, a path through ".." */
    ck_assert_int_eq(run(NULL, "cd '%s' && mkdir d && ln x.h same.h", scratch_dir), 0);
    rc = run(&out, KSTUB " x.cu -o same", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'same.h' is the input './x.h'");
    free(out);
    rc = run(&out, KSTUB " x.cu -o d/../x.c", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'd/../x.h' is the input");
    expect_kept("x.h", header_text);
    free(out);

    /* as the depfile or the manifest too */
    rc = run(&out, KSTUB " x.cu -o gen/x -MD -MF x.h", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'x.h' is the input");
    ck_assert(!scratch_exists("gen"));
    free(out);
    rc = run(&out, KSTUB " x.cu -o gen/x --manifest ./x.h", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output './x.h' is the input");
    expect_kept("x.h", header_text);
    free(out);

    /* the same command with a harmless -o works (the refusal is the only change) */
    rc = run(&out, KSTUB " x.cu -o gen/x", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
}
END_TEST

START_TEST(output_is_not_a_header_found_through_an_include_dir)
{
    scratch_write("inc/p.h", header_text);
    scratch_write("src/k.cu", "#include \"p.h\"\n__global__ void k(P p) {}\n");
    char *out = NULL;
    int rc = run(&out, KSTUB " src/k.cu -I inc -o inc/p", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'inc/p.h' is the input 'inc/p.h'");
    expect_kept("inc/p.h", header_text);
    ck_assert(!scratch_exists("inc/p.c"));
    free(out);
}
END_TEST

START_TEST(output_is_not_the_compile_database_nor_its_options_file)
{
    scratch_write("x.h", header_text);
    scratch_write("x.cu", kernel_text);
    char db[PATH_MAX * 2];
    snprintf(db, sizeof db,
             "[{\"directory\": \"%s\", \"file\": \"x.cu\",\n"
             "  \"command\": \"nvcc -DA=1 @build/k.rsp -c x.cu -o x.o\"}]\n", scratch_dir);
    scratch_write("build/compile_commands.json", db);
    scratch_write("build/k.rsp", "-DB=2\n");
    char *out = NULL;
    int rc = run(&out, KSTUB " -p build x.cu -o gen/x --manifest build/compile_commands.json",
                 scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'build/compile_commands.json' is the input "
                    "'build/compile_commands.json'");
    expect_kept("build/compile_commands.json", db);
    ck_assert(!scratch_exists("gen"));
    free(out);

    rc = run(&out, KSTUB " -p build x.cu -o gen/x -MF build/k.rsp", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'build/k.rsp' is the input");
    expect_kept("build/k.rsp", "-DB=2\n");
    free(out);

    rc = run(&out, KSTUB " -p build x.cu -o gen/x", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
}
END_TEST

START_TEST(output_is_not_a_template)
{
    scratch_write("x.cu", plain_kernel);
    ck_assert_int_eq(run(NULL, "cp -r '%s/templates' '%s/tpl'", getenv("SRCDIR") ? getenv("SRCDIR")
                                                                              : ".", scratch_dir), 0);
    char *before = scratch_read("tpl/source.c.in");
    char *out = NULL;
    int rc = run(&out, KSTUB " x.cu -T tpl -o gen/x --manifest tpl/source.c.in", scratch_dir,
                 kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'tpl/source.c.in' is the input 'tpl/source.c.in'");
    expect_kept("tpl/source.c.in", before);
    free(out);
    /* through a link to the folder: another name, the same file */
    ck_assert_int_eq(run(NULL, "cd '%s' && ln -s tpl tl", scratch_dir), 0);
    rc = run(&out, KSTUB " x.cu -T tpl -o gen/x -MF tl/header.h.in", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'tl/header.h.in' is the input 'tpl/header.h.in'");
    expect_kept("tpl/source.c.in", before);
    free(out);
    free(before);
}
END_TEST

/* ---- item 6: no output shadows a header the stubs include ------------------------------------ */

START_TEST(outbase_that_shadows_a_runtime_header_is_refused)
{
    scratch_write("x.cu", plain_kernel);
    static const char *const names[] = {"kstub", "kstub_types", "gen/kstub", "kstub.h", "stdint"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *out = NULL;
        int rc = run(&out, KSTUB " x.cu -o %s", scratch_dir, kstub_path, names[i]);
        ck_assert_msg(rc == 1, "-o %s: exit %d:\n%s", names[i], rc, out);
        expect_has(out, "would shadow <");
        expect_has(out, "choose another name for -o");
        free(out);
    }
    ck_assert(!scratch_exists("kstub.h") && !scratch_exists("kstub.c") && !scratch_exists("gen"));
    ck_assert(!scratch_exists("kstub_types.h") && !scratch_exists("stdint.h"));
    /* check refuses it as well */
    char *out = NULL;
    int rc = run(&out, "cd '%s' && timeout -s KILL 60 '%s' check --no-cache x.cu -o kstub", scratch_dir,
                 kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    free(out);
    /* a name that only starts like one is fine */
    rc = run(&out, KSTUB " x.cu -o kstubs", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
}
END_TEST

static Suite *outputs_suite(void)
{
    Suite *s = suite_create("outputs");
    TCase *tc = tcase_create("outputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, output_is_not_the_header_beside_the_input);
    tcase_add_test(tc, output_is_not_a_header_found_through_an_include_dir);
    tcase_add_test(tc, output_is_not_the_compile_database_nor_its_options_file);
    tcase_add_test(tc, output_is_not_a_template);
    tcase_add_test(tc, outbase_that_shadows_a_runtime_header_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(outputs_suite(), CK_FORK_GETENV);
}
