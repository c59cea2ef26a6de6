/*
 * check_inputs.c — what a run reads and what it may write (issue 19):
 *
 *  - no output replaces a file the run read, compared by device and inode:
 *    a header beside the input or found through -I, compile_commands.json
 *    and an options file of -p, a -T template, a hard link to a header;
 *  - -o never names a header that shadows one the generated header
 *    includes (<kstub.h>, <kstub_types.h>, ...);
 *  - a FIFO anywhere kstub or libclang would read (the .cu, a header, the
 *    database, an options file, a template, the image, a manifest for check
 *    or diff, an existing output) is refused at once instead of blocking;
 *    every kstub here runs under timeout(1), so a regression fails (exit
 *    124) rather than hanging the suite;
 *  - a file name with control characters in it cannot start a line of its
 *    own in the diagnostics.
 *
 * Run from the repository root (make check-inputs does) with KSTUB set.
 */
#include "model.h"
#include "util.h"

#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char kstub_path[PATH_MAX], tmpdir[128];

/* Every kstub of this suite: in tmpdir, without the prelude cache, and
 * killed after a minute (a blocked open is a failure, exit 124). */
#define KSTUB "cd '%s' && timeout -s KILL 60 '%s' --no-cache"

static void setup(void)
{
    const char *k = getenv("KSTUB");
    if (!realpath(k && *k ? k : "build/bin/kstub", kstub_path))
        ck_abort_msg("no kstub at %s", k && *k ? k : "build/bin/kstub");
    char t[] = "/tmp/kstub-inputs-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(t));
    ck_assert_uint_lt(strlen(t), sizeof tmpdir);
    strcpy(tmpdir, t);
}

static void teardown(void)
{
    run(NULL, "rm -rf '%s'", tmpdir);
}

static void write_at(const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    run(NULL, "mkdir -p '%s'", path);
    write_text_in(tmpdir, name, text);
}

static char *read_at(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return ks_peek_file(path, NULL);
}

static int exists_at(const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return lstat(path, &st) == 0;
}

static void fifo_at(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    ck_assert_msg(mkfifo(path, 0600) == 0, "mkfifo %s", path);
}

/* The file still holds what the test wrote. */
static void expect_kept(const char *name, const char *text)
{
    char *now = read_at(name);
    ck_assert_msg(now && strcmp(now, text) == 0, "%s was changed:\n%s", name, now ? now : "(gone)");
    free(now);
}

static const char header_text[] = "#pragma once\nstruct P { int a; float b; };\n";
static const char kernel_text[] = "#include \"x.h\"\n__global__ void k(P p, int *out) { *out = p.a; }\n";
static const char plain_kernel[] = "__global__ void k(int n, float *out) { out[0] = n; }\n";

/* ---- item 1: no output is a file the run read ------------------------------------------------ */

START_TEST(output_is_not_the_header_beside_the_input)
{
    write_at("x.h", header_text);
    write_at("x.cu", kernel_text);
    char *out = NULL;
    int rc = run(&out, KSTUB " x.cu -o x", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'x.h' is the input './x.h'");
    expect_has(out, "nothing written");
    expect_kept("x.h", header_text);
    ck_assert(!exists_at("x.c"));
    free(out);

    /* another name for the same file: a hard link, a path through ".." */
    ck_assert_int_eq(run(NULL, "cd '%s' && mkdir d && ln x.h same.h", tmpdir), 0);
    rc = run(&out, KSTUB " x.cu -o same", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'same.h' is the input './x.h'");
    free(out);
    rc = run(&out, KSTUB " x.cu -o d/../x.c", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'd/../x.h' is the input");
    expect_kept("x.h", header_text);
    free(out);

    /* as the depfile or the manifest too */
    rc = run(&out, KSTUB " x.cu -o gen/x -MD -MF x.h", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'x.h' is the input");
    ck_assert(!exists_at("gen"));
    free(out);
    rc = run(&out, KSTUB " x.cu -o gen/x --manifest ./x.h", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output './x.h' is the input");
    expect_kept("x.h", header_text);
    free(out);

    /* the same command with a harmless -o works (the refusal is the only change) */
    rc = run(&out, KSTUB " x.cu -o gen/x", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
}
END_TEST

START_TEST(output_is_not_a_header_found_through_an_include_dir)
{
    write_at("inc/p.h", header_text);
    write_at("src/k.cu", "#include \"p.h\"\n__global__ void k(P p) {}\n");
    char *out = NULL;
    int rc = run(&out, KSTUB " src/k.cu -I inc -o inc/p", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'inc/p.h' is the input 'inc/p.h'");
    expect_kept("inc/p.h", header_text);
    ck_assert(!exists_at("inc/p.c"));
    free(out);
}
END_TEST

START_TEST(output_is_not_the_compile_database_nor_its_options_file)
{
    write_at("x.h", header_text);
    write_at("x.cu", kernel_text);
    char db[PATH_MAX * 2];
    snprintf(db, sizeof db,
             "[{\"directory\": \"%s\", \"file\": \"x.cu\",\n"
             "  \"command\": \"nvcc -DA=1 @build/k.rsp -c x.cu -o x.o\"}]\n", tmpdir);
    write_at("build/compile_commands.json", db);
    write_at("build/k.rsp", "-DB=2\n");
    char *out = NULL;
    int rc = run(&out, KSTUB " -p build x.cu -o gen/x --manifest build/compile_commands.json",
                 tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'build/compile_commands.json' is the input "
                    "'build/compile_commands.json'");
    expect_kept("build/compile_commands.json", db);
    ck_assert(!exists_at("gen"));
    free(out);

    rc = run(&out, KSTUB " -p build x.cu -o gen/x -MF build/k.rsp", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'build/k.rsp' is the input");
    expect_kept("build/k.rsp", "-DB=2\n");
    free(out);

    rc = run(&out, KSTUB " -p build x.cu -o gen/x", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
}
END_TEST

START_TEST(output_is_not_a_template)
{
    write_at("x.cu", plain_kernel);
    ck_assert_int_eq(run(NULL, "cp -r '%s/templates' '%s/tpl'", getenv("SRCDIR") ? getenv("SRCDIR")
                                                                              : ".", tmpdir), 0);
    char *before = read_at("tpl/source.c.in");
    char *out = NULL;
    int rc = run(&out, KSTUB " x.cu -T tpl -o gen/x --manifest tpl/source.c.in", tmpdir,
                 kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "output 'tpl/source.c.in' is the input 'tpl/source.c.in'");
    expect_kept("tpl/source.c.in", before);
    free(out);
    /* through a link to the folder: another name, the same file */
    ck_assert_int_eq(run(NULL, "cd '%s' && ln -s tpl tl", tmpdir), 0);
    rc = run(&out, KSTUB " x.cu -T tpl -o gen/x -MF tl/header.h.in", tmpdir, kstub_path);
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
    write_at("x.cu", plain_kernel);
    static const char *const names[] = {"kstub", "kstub_types", "gen/kstub", "kstub.h", "stdint"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *out = NULL;
        int rc = run(&out, KSTUB " x.cu -o %s", tmpdir, kstub_path, names[i]);
        ck_assert_msg(rc == 1, "-o %s: exit %d:\n%s", names[i], rc, out);
        expect_has(out, "would shadow <");
        expect_has(out, "choose another name for -o");
        free(out);
    }
    ck_assert(!exists_at("kstub.h") && !exists_at("kstub.c") && !exists_at("gen"));
    ck_assert(!exists_at("kstub_types.h") && !exists_at("stdint.h"));
    /* check refuses it as well */
    char *out = NULL;
    int rc = run(&out, "cd '%s' && timeout -s KILL 60 '%s' check --no-cache x.cu -o kstub", tmpdir,
                 kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    free(out);
    /* a name that only starts like one is fine */
    rc = run(&out, KSTUB " x.cu -o kstubs", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
}
END_TEST

/* ---- item 8: a FIFO is refused, never waited on ---------------------------------------------- */

/* Runs a kstub command line that meets a FIFO: it must end at once with
 * exit 1 (timeout's 137 is the regression) and name the FIFO. */
static void expect_fifo_refused(const char *args, const char *needle)
{
    char *out = NULL;
    int rc = run(&out, "cd '%s' && timeout -s KILL 60 '%s' %s", tmpdir, kstub_path, args);
    ck_assert_msg(rc != 137 && rc != 124, "kstub %s blocked on the FIFO (killed by timeout)", args);
    ck_assert_msg(rc == 1, "kstub %s: exit %d:\n%s", args, rc, out);
    expect_has(out, needle);
    free(out);
}

START_TEST(fifo_as_the_input_is_refused)
{
    fifo_at("f.cu");
    expect_fifo_refused("--no-cache f.cu -o x", "f.cu: error: cannot open: not a regular file (a FIFO)");
    expect_fifo_refused("--list --no-cache f.cu", "not a regular file (a FIFO)");
    expect_fifo_refused("--no-cache f.cu -o x --embed-source", "not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_an_included_header_is_refused)
{
    fifo_at("f.h");
    write_at("a.cu", "#include \"f.h\"\n__global__ void k(int n) {}\n");
    expect_fifo_refused("--no-cache a.cu -o x", "a.cu:1:10: error: #include \"f.h\" is 'f.h', a FIFO");
    /* through -I, <...>, and a header that includes it */
    write_at("inc/.keep", "");
    fifo_at("inc/g.h");
    write_at("inc/mid.h", "#pragma once\n  /* c */ # include <g.h>\n");
    write_at("b.cu", "#include \"mid.h\"\n__global__ void k(int n) {}\n");
    expect_fifo_refused("--no-cache b.cu -I inc -o x", "inc/mid.h:2:21: error: #include <g.h> is "
                                                       "'inc/g.h', a FIFO");
    expect_fifo_refused("--list --no-cache b.cu -I inc", "a FIFO");
    ck_assert(!exists_at("x.h"));
}
END_TEST

START_TEST(fifo_as_the_compile_database_or_an_options_file_is_refused)
{
    write_at("x.cu", plain_kernel);
    write_at("build/.keep", "");
    fifo_at("build/compile_commands.json");
    expect_fifo_refused("--no-cache -p build x.cu -o x",
                        "build/compile_commands.json: error: cannot read the compilation database: "
                        "not a regular file (a FIFO)");
    char db[PATH_MAX * 2];
    snprintf(db, sizeof db,
             "[{\"directory\": \"%s\", \"file\": \"x.cu\",\n"
             "  \"command\": \"nvcc @opts.rsp -c x.cu\"}]\n", tmpdir);
    write_at("b2/compile_commands.json", db);
    fifo_at("opts.rsp");
    expect_fifo_refused("--no-cache -p b2 x.cu -o x",
                        "cannot read the compile command's options file: not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_a_template_or_the_image_is_refused)
{
    write_at("x.cu", plain_kernel);
    write_at("tpl/source.c.in", "x\n");
    fifo_at("tpl/header.h.in");
    expect_fifo_refused("--no-cache x.cu -T tpl -o x",
                        "tpl/header.h.in: error: cannot read template: not a regular file (a FIFO)");
    fifo_at("k.fatbin");
    expect_fifo_refused("--no-cache x.cu --embed k.fatbin -o x",
                        "k.fatbin: error: cannot read the image to embed: not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_a_manifest_for_check_or_diff_is_refused)
{
    write_at("x.cu", plain_kernel);
    char *out = NULL;
    int rc = run(&out, KSTUB " x.cu -o x --manifest x.json", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    fifo_at("f.json");
    expect_fifo_refused("diff f.json x.json", "f.json: error: cannot read: not a regular file (a FIFO)");
    expect_fifo_refused("diff x.json f.json", "not a regular file (a FIFO)");
    /* check: the outputs are stale, so it reads the on-disk manifest */
    write_at("y.cu", "__global__ void k(long n, float *out) {}\n");
    ck_assert_int_eq(run(NULL, "cd '%s' && cp x.h y.h && cp x.c y.c && mkfifo y.json", tmpdir), 0);
    expect_fifo_refused("check --no-cache y.cu -o y --manifest y.json",
                        "y.json: error: cannot read: not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_an_existing_output_is_refused)
{
    write_at("x.cu", plain_kernel);
    fifo_at("x.d");
    expect_fifo_refused("--no-cache x.cu -o x -MD",
                        "x.d: error: cannot write: not a regular file (a FIFO); kstub replaces only "
                        "regular files");
    fifo_at("m.json");
    expect_fifo_refused("--no-cache x.cu -o x --manifest m.json", "m.json: error: cannot write");
    ck_assert(!exists_at("x.h") && !exists_at("x.c"));
    struct stat st;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/x.d", tmpdir);
    ck_assert(stat(path, &st) == 0 && S_ISFIFO(st.st_mode));
}
END_TEST

/* ---- item 14: file names cannot inject lines into the diagnostics ---------------------------- */

/* No line of out starts with "::" (a GitHub workflow command), and the
 * escaped name is there. */
static void expect_no_injected_line(const char *out)
{
    for (const char *l = out; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        ck_assert_msg(strncmp(l, "::", 2) != 0, "a line was injected:\n%s", out);
    expect_has(out, "x\\n::error::evil/");
}

START_TEST(control_characters_in_paths_are_escaped)
{
    const char *dir = "x\n::error::evil";
    char name[PATH_MAX];
    snprintf(name, sizeof name, "%s/ok.cu", dir);
    write_at(name, "__global__ void k(int &r) {}\n");       /* refused by kstub: a reference */
    snprintf(name, sizeof name, "%s/bad.cu", dir);
    write_at(name, "__global__ void k(int n) { undeclared_thing(; }\nint x = ;\n"); /* libclang's errors */
    char *out = NULL;
    int rc = run(&out, KSTUB " 'x\n::error::evil/ok.cu' -o gen/o", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_no_injected_line(out);
    free(out);
    rc = run(&out, KSTUB " 'x\n::error::evil/bad.cu' -o gen/o", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_no_injected_line(out);
    free(out);
    rc = run(&out, KSTUB " 'x\n::error::evil/missing.cu' -o gen/o", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_no_injected_line(out);
    expect_has(out, "missing.cu: error: cannot open");
    free(out);
    /* an output that is the input, named with the control characters */
    rc = run(&out, KSTUB " 'x\n::error::evil/ok.cu' -o 'x\n::error::evil/ok.c' "
                   "--manifest 'x\n::error::evil/ok.cu'", tmpdir, kstub_path);
    ck_assert_int_eq(rc, 1);
    for (const char *l = out; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        ck_assert_msg(strncmp(l, "::", 2) != 0, "a line was injected:\n%s", out);
    free(out);
}
END_TEST

static Suite *inputs_suite(void)
{
    Suite *s = suite_create("inputs");
    TCase *tc = tcase_create("outputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, output_is_not_the_header_beside_the_input);
    tcase_add_test(tc, output_is_not_a_header_found_through_an_include_dir);
    tcase_add_test(tc, output_is_not_the_compile_database_nor_its_options_file);
    tcase_add_test(tc, output_is_not_a_template);
    tcase_add_test(tc, outbase_that_shadows_a_runtime_header_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("fifos");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, fifo_as_the_input_is_refused);
    tcase_add_test(tc, fifo_as_an_included_header_is_refused);
    tcase_add_test(tc, fifo_as_the_compile_database_or_an_options_file_is_refused);
    tcase_add_test(tc, fifo_as_a_template_or_the_image_is_refused);
    tcase_add_test(tc, fifo_as_a_manifest_for_check_or_diff_is_refused);
    tcase_add_test(tc, fifo_as_an_existing_output_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("diagnostics");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, control_characters_in_paths_are_escaped);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(inputs_suite(), CK_FORK_GETENV);
}
