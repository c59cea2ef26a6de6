/*
 * check_base.c — the generator's base (generator/base/): how a run reads its
 * files and writes its outputs, and what its diagnostics print.
 *
 *  - outputs are written all or nothing: when any file-system call of the
 *    write fails (fault injection: tests/support/fault_inject.c, an
 *    LD_PRELOAD library), every output is put back byte for byte, with no
 *    temporary or backup file and no folder left (issue 10 #6);
 *  - a FIFO anywhere kstub or libclang would read (the .cu, a header, the
 *    database, an options file, a template, the image, a manifest for check
 *    or diff, an existing output) is refused at once instead of blocking;
 *    every kstub here runs under timeout(1), so a regression fails (exit
 *    124) rather than hanging the suite (issue 19 #8); a FIFO or a device
 *    reached by any spelling clang opens a file by (issue 41 #9);
 *  - a file name with control characters in it cannot start a line of its
 *    own in the diagnostics (issue 19 #14).
 *
 * Run from the repository root (make check-base does) with KSTUB and
 * FAULT_LIB (tests/support/fault_inject.c built) set.
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
#include <time.h>
#include <unistd.h>

static char kstub_path[PATH_MAX], fault_path[PATH_MAX];

/* Every kstub of the FIFO and diagnostics cases: in scratch_dir, without the
 * prelude cache, and killed after a minute (a blocked open is a failure,
 * exit 124). */
#define KSTUB "cd '%s' && timeout -s KILL 60 '%s' --no-cache"

static void setup(void)
{
    env_path("KSTUB", "build/bin/kstub", kstub_path);
    env_path("FAULT_LIB", "build/tests/fault_inject.so", fault_path);
    scratch_make("base");
}

static void teardown(void)
{
    scratch_remove();
}

static const char plain_kernel[] = "__global__ void k(int n, float *out) { out[0] = n; }\n";

/* ---- #6: every output put back when any call of the write fails ----------------------------- */

/* The outputs of one run, with what each held before (NULL: none). */
static const char *const fault_outputs[] = {"out/o.h", "out/o.c", "out/o.json", "out/o.d"};
#define NOUT (sizeof fault_outputs / sizeof fault_outputs[0])

static int fault_fired(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/fired", scratch_dir);
    return access(path, F_OK) == 0;
}

/* Nothing of a failed run may remain: no temporary file, no backup link. */
static void no_leftovers(const char *what)
{
    char *out;
    int rc = run(&out, "cd '%s' && find . -name '*.tmp.*' -o -name '*.bak.*'", scratch_dir);
    ck_assert_msg(rc == 0 && out[0] == '\0', "%s left behind:\n%s", what, out);
    free(out);
}

/* The prelude cache the sweep's runs share, warmed once: outside scratch_dir, so
 * none of its file-system calls is one the fault library counts (it counts
 * only paths under KSTUB_FAULT_DIR), and each run parses in a fraction of
 * the time --no-cache takes. */
static char fault_cache[64];

/* For each call the write makes (mkdir, mkstemp, fclose, chmod, link,
 * rename) and each of its occurrences in turn, make that one call fail:
 * kstub must exit 1 and leave every output exactly as it was (the old bytes,
 * or no file), no temporary or backup file, and no folder it made. The
 * renames are the case #6 named: an output already replaced is put back
 * from its backup link. `fresh`: the outputs' folder does not exist yet. */
static int sweep_faults(int fresh)
{
    static const char *const calls[] = {"mkdir", "mkstemp", "fclose", "chmod", "link", "rename"};
    static const char *const old[NOUT] = {"old header\n", "old source\n", "{\"old\": 1}\n",
                                          "old: depfile\n"};
    int injected = 0;
    char *out;
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        for (int nth = 1;; nth++) {
            run(NULL, "cd '%s' && rm -rf out fired%s", scratch_dir, fresh ? "" : " && mkdir out");
            if (!fresh)
                for (size_t i = 0; i < NOUT; i++)
                    scratch_write(fault_outputs[i], old[i]);
            int rc = run(&out, "cd '%s' && KSTUB_FAULT=%s:%d KSTUB_FAULT_DIR='%s' "
                         "KSTUB_FAULT_FIRED='%s/fired' KSTUB_CACHE_DIR='%s' LD_PRELOAD='%s' %s x.cu "
                         "-o out/o --manifest out/o.json -MD", scratch_dir, calls[c], nth,
                         scratch_dir, scratch_dir, fault_cache, fault_path, kstub_path);
            if (!fault_fired()) {
                /* past the last call of this kind: the run is a plain success */
                ck_assert_msg(rc == 0, "%s, no fault: exit %d:\n%s", calls[c], rc, out);
                free(out);
                if (!fresh)   /* an existing folder: mkdir is never called there */
                    ck_assert_msg(nth > 1 || strcmp(calls[c], "mkdir") == 0,
                                  "%s was never called", calls[c]);
                break;
            }
            injected++;
            ck_assert_msg(rc == 1, "%s #%d failed: exit %d:\n%s", calls[c], nth, rc, out);
            expect_has(out, "error: ");
            free(out);
            for (size_t i = 0; i < NOUT; i++) {
                char *now = scratch_read(fault_outputs[i]);
                if (fresh)
                    ck_assert_msg(now == NULL, "%s #%d failed: %s was written", calls[c], nth,
                                  fault_outputs[i]);
                else
                    ck_assert_msg(now && strcmp(now, old[i]) == 0,
                                  "%s #%d failed: %s holds\n%s\ninstead of its old bytes",
                                  calls[c], nth, fault_outputs[i], now ? now : "(no file)");
                free(now);
            }
            if (fresh) {
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/out", scratch_dir);
                ck_assert_msg(access(path, F_OK) != 0, "%s #%d failed: out/ was left", calls[c],
                              nth);
            }
            no_leftovers(calls[c]);
        }
    }
    return injected;
}

START_TEST(outputs_restored_byte_for_byte_when_any_write_call_fails)
{
    scratch_write("x.cu", "extern \"C\" __global__ void k(int a) {}\n"
                     "extern \"C\" __global__ void k2(float *x, int n) {}\n");
    char *out;
    strcpy(fault_cache, "/tmp/kstub-hcache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(fault_cache));
    int rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR='%s' KSTUB_DEBUG_PCH=1 %s x.cu -o warm", scratch_dir,
                 fault_cache, kstub_path);
    ck_assert_msg(rc == 0 && strstr(out, "prelude cache: built"), "%s", out);
    free(out);
    run(NULL, "rm -f '%s'/warm.*", scratch_dir);
    int existing = sweep_faults(0);
    int fresh = sweep_faults(1);
    run(NULL, "rm -rf '%s'", fault_cache);
    fprintf(stderr, "check_base: %d faults injected into writes over existing outputs, "
                    "%d into writes into a new folder\n", existing, fresh);
    /* 4 outputs: 4 mkstemp for temporaries + 4 for backup names, 4 fclose,
     * 4 chmod, 4 link, 4 rename at least */
    ck_assert_int_ge(existing, 24);
    ck_assert_int_ge(fresh, 17);
    /* And with no fault, the same command writes every output. */
    rc = run(&out, "cd '%s' && rm -rf out && %s --no-cache x.cu -o out/o --manifest "
                 "out/o.json -MD", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char *h = scratch_read("out/o.h");
    expect_has(h, "ks_status k2(");
    free(h);
}
END_TEST

/* ---- item 8: a FIFO is refused, never waited on ---------------------------------------------- */

/* Runs a kstub command line that meets a FIFO: it must end at once with
 * exit 1 (timeout's 137 is the regression) and name the FIFO. */
static void expect_fifo_refused(const char *args, const char *needle)
{
    char *out = NULL;
    int rc = run(&out, "cd '%s' && timeout -s KILL 60 '%s' %s", scratch_dir, kstub_path, args);
    ck_assert_msg(rc != 137 && rc != 124, "kstub %s blocked on the FIFO (killed by timeout)", args);
    ck_assert_msg(rc == 1, "kstub %s: exit %d:\n%s", args, rc, out);
    expect_has(out, needle);
    free(out);
}

START_TEST(fifo_as_the_input_is_refused)
{
    scratch_fifo("f.cu");
    expect_fifo_refused("--no-cache f.cu -o x", "f.cu: error: cannot open: not a regular file (a FIFO)");
    expect_fifo_refused("--list --no-cache f.cu", "not a regular file (a FIFO)");
    expect_fifo_refused("--no-cache f.cu -o x --embed-source", "not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_an_included_header_is_refused)
{
    scratch_fifo("f.h");
    scratch_write("a.cu", "#include \"f.h\"\n__global__ void k(int n) {}\n");
    expect_fifo_refused("--no-cache a.cu -o x", "a.cu:1:10: error: 'f.h' is a FIFO; kstub reads only regular files");
    /* through -I, <...>, and a header that includes it */
    scratch_write("inc/.keep", "");
    scratch_fifo("inc/g.h");
    scratch_write("inc/mid.h", "#pragma once\n  /* c */ # include <g.h>\n");
    scratch_write("b.cu", "#include \"mid.h\"\n__global__ void k(int n) {}\n");
    expect_fifo_refused("--no-cache b.cu -I inc -o x", "inc/mid.h:2:21: error: 'inc/g.h' is a FIFO; kstub reads "
                                                       "only regular files");
    expect_fifo_refused("--list --no-cache b.cu -I inc", "a FIFO");
    ck_assert(!scratch_exists("x.h"));
}
END_TEST

/* Issue 41 #9: every way clang opens a file meets the guard where the file
 * is opened (generator/front/fileguard.c), not a scan of #include lines: a
 * macro-computed #include, %:include, a directive spliced by a backslash,
 * __has_include (in a body too), #pragma GCC dependency and #embed, each of
 * a FIFO (which blocked the parse forever) and of /dev/zero (which grew
 * without end), with the prelude cache and without: exit 1 at once, the
 * error at the line, nothing written. */
START_TEST(fifo_or_device_in_any_spelling_is_refused)
{
    static const char *const spelling[] = {
        "#define H \"%s\"\n#include H\n",
        "%%:include \"%s\"\n",
        "#inc\\\nlude \"%s\"\n",
        "#if __has_include(\"%s\")\n#endif\n",
        "#pragma GCC dependency \"%s\"\n",
        "const char e[] = {\n#embed \"%s\"\n};\n",
        "void f() {\n#if __has_include(\"%s\")\n#endif\n}\n",     /* in a body: an error still */
    };
    static const char *const target[][2] = {{"ff.h", "'ff.h' is a FIFO; kstub reads only regular files"},
                                            {"/dev/zero", "'/dev/zero' is a character device; kstub reads only "
                                                          "regular files"}};
    scratch_fifo("ff.h");
    char cache[256];
    snprintf(cache, sizeof cache, "%s/cache", scratch_dir);
    setenv("KSTUB_CACHE_DIR", cache, 1);
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof spelling / sizeof spelling[0]; i++) {
            char text[512], name[32], args[96];
            int n = snprintf(text, sizeof text, spelling[i], target[t][0]);
            snprintf(text + n, sizeof text - (size_t)n, "%s", plain_kernel);
            snprintf(name, sizeof name, "s%zu_%zu.cu", t, i);
            scratch_write(name, text);
            /* with the prelude cache, and without */
            snprintf(args, sizeof args, i % 2 ? "--no-cache %s -o out_%s" : "%s -o out_%s", name, name);
            char needle[160];
            snprintf(needle, sizeof needle, "%s:", name);
            expect_fifo_refused(args, needle);
            expect_fifo_refused(args, target[t][1]);
            snprintf(name, sizeof name, "out_s%zu_%zu.cu.h", t, i);
            ck_assert_msg(!scratch_exists(name), "%s written", name);
        }
}
END_TEST

START_TEST(fifo_as_the_compile_database_or_an_options_file_is_refused)
{
    scratch_write("x.cu", plain_kernel);
    scratch_write("build/.keep", "");
    scratch_fifo("build/compile_commands.json");
    expect_fifo_refused("--no-cache -p build x.cu -o x",
                        "build/compile_commands.json: error: cannot read the compilation database: "
                        "not a regular file (a FIFO)");
    char db[PATH_MAX * 2];
    snprintf(db, sizeof db,
             "[{\"directory\": \"%s\", \"file\": \"x.cu\",\n"
             "  \"command\": \"nvcc @opts.rsp -c x.cu\"}]\n", scratch_dir);
    scratch_write("b2/compile_commands.json", db);
    scratch_fifo("opts.rsp");
    expect_fifo_refused("--no-cache -p b2 x.cu -o x",
                        "cannot read the compile command's options file: not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_a_template_or_the_image_is_refused)
{
    scratch_write("x.cu", plain_kernel);
    scratch_write("tpl/source.c.in", "x\n");
    scratch_fifo("tpl/header.h.in");
    expect_fifo_refused("--no-cache x.cu -T tpl -o x",
                        "tpl/header.h.in: error: cannot read template: not a regular file (a FIFO)");
    scratch_fifo("k.fatbin");
    expect_fifo_refused("--no-cache x.cu --embed k.fatbin -o x",
                        "k.fatbin: error: cannot read the image to embed: not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_a_manifest_for_check_or_diff_is_refused)
{
    scratch_write("x.cu", plain_kernel);
    char *out = NULL;
    int rc = run(&out, KSTUB " x.cu -o x --manifest x.json", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    scratch_fifo("f.json");
    expect_fifo_refused("diff f.json x.json", "f.json: error: cannot read: not a regular file (a FIFO)");
    expect_fifo_refused("diff x.json f.json", "not a regular file (a FIFO)");
    /* check: the outputs are stale, so it reads the on-disk manifest */
    scratch_write("y.cu", "__global__ void k(long n, float *out) {}\n");
    ck_assert_int_eq(run(NULL, "cd '%s' && cp x.h y.h && cp x.c y.c && mkfifo y.json", scratch_dir), 0);
    expect_fifo_refused("check --no-cache y.cu -o y --manifest y.json",
                        "y.json: error: cannot read: not a regular file (a FIFO)");
}
END_TEST

START_TEST(fifo_as_an_existing_output_is_refused)
{
    scratch_write("x.cu", plain_kernel);
    scratch_fifo("x.d");
    expect_fifo_refused("--no-cache x.cu -o x -MD",
                        "x.d: error: cannot write: not a regular file (a FIFO); kstub replaces only "
                        "regular files");
    scratch_fifo("m.json");
    expect_fifo_refused("--no-cache x.cu -o x --manifest m.json", "m.json: error: cannot write");
    ck_assert(!scratch_exists("x.h") && !scratch_exists("x.c"));
    struct stat st;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/x.d", scratch_dir);
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
    scratch_write(name, "__global__ void k(int &r) {}\n");       /* refused by kstub: a reference */
    snprintf(name, sizeof name, "%s/bad.cu", dir);
    scratch_write(name, "__global__ void k(int n) { undeclared_thing(; }\nint x = ;\n"); /* libclang's errors */
    char *out = NULL;
    int rc = run(&out, KSTUB " 'x\n::error::evil/ok.cu' -o gen/o", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_no_injected_line(out);
    free(out);
    rc = run(&out, KSTUB " 'x\n::error::evil/bad.cu' -o gen/o", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_no_injected_line(out);
    free(out);
    rc = run(&out, KSTUB " 'x\n::error::evil/missing.cu' -o gen/o", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_no_injected_line(out);
    expect_has(out, "missing.cu: error: cannot open");
    free(out);
    /* an output that is the input, named with the control characters */
    rc = run(&out, KSTUB " 'x\n::error::evil/ok.cu' -o 'x\n::error::evil/ok.c' "
                   "--manifest 'x\n::error::evil/ok.cu'", scratch_dir, kstub_path);
    ck_assert_int_eq(rc, 1);
    for (const char *l = out; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        ck_assert_msg(strncmp(l, "::", 2) != 0, "a line was injected:\n%s", out);
    free(out);
}
END_TEST

/* Issue 41 #12: temporaries a killed run left beside its outputs
 * ("OUT.tmp.PID.XXXXXX", or "OUT.tmp.XXXXXX" of an older kstub) are removed
 * by the next run that writes that output, once ten minutes old (or dated
 * as far ahead) with their writer gone; a live writer's, a fresh one and
 * another output's stay. */
START_TEST(stale_output_temporaries_are_removed)
{
    scratch_write("x.cu", "extern \"C\" __global__ void k(int a) {}\n");
    char live[64];
    snprintf(live, sizeof live, "o.h.tmp.%ld.aB3dE6", (long)getpid());
    static const char *const gone[] = {"o.h.tmp.99999999.aB3dE6", "o.c.tmp.99999999.Zz0011", "o.h.tmp.QwErTy",
                                       "o.c.tmp.99999999.fUtUre"};
    static const char *const kept[] = {"o.h.tmp.99999999.fresh1", "p.h.tmp.99999999.aB3dE6", "o.h.tmp.toolong7",
                                       "o.h.tmp.99999999.a"};
    for (size_t i = 0; i < 4; i++) {
        scratch_write(gone[i], "left by a kill\n");
        scratch_write(kept[i], "not stale\n");
        run(NULL, "cd '%s' && touch -d '@%ld' '%s'", scratch_dir,
            (long)time(NULL) + (i == 3 ? 365L * 24 * 3600 : -3600), gone[i]);
        if (i != 0)
            run(NULL, "cd '%s' && touch -d '@%ld' '%s'", scratch_dir, (long)time(NULL) - 3600, kept[i]);
    }
    scratch_write(live, "a live writer's\n");
    run(NULL, "cd '%s' && touch -d '@%ld' '%s'", scratch_dir, (long)time(NULL) - 3600, live);
    char *out;
    int rc = run(&out, KSTUB " x.cu -o o", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    for (size_t i = 0; i < 4; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", scratch_dir, gone[i]);
        ck_assert_msg(access(path, F_OK) != 0, "%s is left", gone[i]);
        snprintf(path, sizeof path, "%s/%s", scratch_dir, kept[i]);
        ck_assert_msg(access(path, F_OK) == 0, "%s is removed", kept[i]);
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, live);
    ck_assert_msg(access(path, F_OK) == 0, "a live writer's temporary is removed");
    ck_assert_int_eq(run(&out, "cd '%s' && ls | grep -c '^o\\..\\.tmp\\.'", scratch_dir), 0);
    ck_assert_int_eq(atoi(out), 4);   /* o.h's fresh, too long and too short ones, the live one */
    free(out);
}
END_TEST

static Suite *base_suite(void)
{
    Suite *s = suite_create("base");
    TCase *tc;

    tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, outputs_restored_byte_for_byte_when_any_write_call_fails);
    suite_add_tcase(s, tc);

    tc = tcase_create("fifos");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, fifo_as_the_input_is_refused);
    tcase_add_test(tc, fifo_as_an_included_header_is_refused);
    tcase_add_test(tc, fifo_or_device_in_any_spelling_is_refused);
    tcase_add_test(tc, fifo_as_the_compile_database_or_an_options_file_is_refused);
    tcase_add_test(tc, fifo_as_a_template_or_the_image_is_refused);
    tcase_add_test(tc, fifo_as_a_manifest_for_check_or_diff_is_refused);
    tcase_add_test(tc, fifo_as_an_existing_output_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("diagnostics");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, control_characters_in_paths_are_escaped);
    tcase_add_test(tc, stale_output_temporaries_are_removed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(base_suite(), CK_FORK_GETENV);
}
