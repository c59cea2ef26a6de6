/*
 * check_compdb.c — Check suite for reading a build's compile_commands.json
 * (generator/cli/compdb.c, -p BUILD_DIR) and for the depfile's quoting
 * (generator/cli/depfile.c): nvcc options files and @response files, a relative
 * "directory", unterminated quotes, and ':' and newlines in depfile paths.
 *
 * Links the generator's objects and calls them directly; run from the
 * repository root (make check-compdb does). Needs GNU make for the depfile
 * round trip.
 */
#include "model/model.h"
#include "base/util.h"
#include "cli/compdb.h"
#include "cli/depfile.h"

#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kstub-compdb-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    run(NULL, "rm -rf '%s'", tmpdir);
}

/* Writes tmpdir/rel (text as given). */
static void put(const char *rel, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void sub(const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    ck_assert_int_eq(mkdir(path, 0700), 0);
}

static int has(char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

/* ---- options files (#14) ------------------------------------------------------------------ */

START_TEST(options_files_are_read_and_translated)
{
    /* CMake + Ninja + nvcc: "--options-file CMakeFiles/k.dir/includes_CUDA.rsp". */
    put("a.rsp", "-I inc \"-DA=a b\"\n-isystem 'sys dir' @b.rsp\n");
    put("b.rsp", "-DNESTED --std=c++17\n");
    put("c.rsp", "-Ic_inc\n");
    put("d.rsp", "-Id_inc -arch=sm_75\n");
    put("e.rsp", "-UE\n");
    char abs[PATH_MAX + 16];
    snprintf(abs, sizeof abs, "%s/e.rsp", tmpdir);
    const char *argv[] = {"nvcc", "--options-file", "a.rsp", "-optf=c.rsp,d.rsp", "@" /* alone: an input */,
                          "-c", "k.cu", "--options-file=", "-o", "k.o"};
    ks_compdb db;
    memset(&db, 0, sizeof db);
    /* "--options-file=" with nothing names no file: an error. */
    ck_assert_int_lt(ks_compdb_translate(tmpdir, argv, 10, &db), 0);
    ks_compdb_free(&db);

    ck_assert_int_eq(ks_compdb_translate(tmpdir, argv, 7, &db), 0);
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/inc", tmpdir);
    ck_assert_msg(has(db.includes, db.nincludes, p), "no %s", p);
    snprintf(p, sizeof p, "%s/sys dir", tmpdir);
    ck_assert_msg(has(db.system_dirs, db.nsystem_dirs, p), "no %s", p);
    snprintf(p, sizeof p, "%s/c_inc", tmpdir);
    ck_assert_msg(has(db.includes, db.nincludes, p), "no %s", p);
    snprintf(p, sizeof p, "%s/d_inc", tmpdir);
    ck_assert_msg(has(db.includes, db.nincludes, p), "no %s", p);
    ck_assert_msg(has(db.defines, db.ndefines, "-DA=a b"), "no -DA=a b");
    ck_assert_msg(has(db.defines, db.ndefines, "-DNESTED"), "nested @file not read");
    ck_assert_str_eq(db.std, "c++17");
    ck_assert_str_eq(db.arch, "sm_75");
    ks_compdb_free(&db);

    /* An absolute @file, as gcc and clang write them. */
    char at[PATH_MAX + 32];
    snprintf(at, sizeof at, "@%s", abs);
    const char *argv2[] = {"clang", at, "k.cu"};
    ck_assert_int_eq(ks_compdb_translate("/elsewhere", argv2, 3, &db), 0);
    ck_assert_msg(has(db.defines, db.ndefines, "-UE"), "absolute @file not read");
    ks_compdb_free(&db);
}
END_TEST

START_TEST(options_file_errors)
{
    ks_compdb db;
    memset(&db, 0, sizeof db);
    const char *missing[] = {"nvcc", "-optf", "nope.rsp", "k.cu"};
    ck_assert_int_lt(ks_compdb_translate(tmpdir, missing, 4, &db), 0);
    ks_compdb_free(&db);
    const char *bare[] = {"nvcc", "k.cu", "--options-file"};
    ck_assert_int_lt(ks_compdb_translate(tmpdir, bare, 3, &db), 0);
    ks_compdb_free(&db);
    put("loop.rsp", "-Iloop @loop.rsp\n");
    const char *loop[] = {"nvcc", "@loop.rsp"};
    ck_assert_int_lt(ks_compdb_translate(tmpdir, loop, 2, &db), 0);
    ks_compdb_free(&db);
    put("open.rsp", "-I 'inc\n");
    const char *open[] = {"nvcc", "@open.rsp"};
    ck_assert_int_lt(ks_compdb_translate(tmpdir, open, 2, &db), 0);
    ks_compdb_free(&db);
}
END_TEST

START_TEST(load_reads_options_file_from_entry_directory)
{
    sub("build");
    sub("build/CMakeFiles");
    put("k.cu", "");
    put("build/CMakeFiles/includes_CUDA.rsp", "-I../inc\n");
    char json[4 * PATH_MAX];
    snprintf(json, sizeof json,
             "[{\"directory\": \"%s/build\", \"file\": \"%s/k.cu\", \"command\": "
             "\"/usr/local/cuda/bin/nvcc --options-file CMakeFiles/includes_CUDA.rsp -x cu -c "
             "%s/k.cu -o k.o\"}]",
             tmpdir, tmpdir, tmpdir);
    put("build/compile_commands.json", json);
    char build[PATH_MAX], input[PATH_MAX];
    snprintf(build, sizeof build, "%s/build", tmpdir);
    snprintf(input, sizeof input, "%s/k.cu", tmpdir);
    ks_compdb db;
    memset(&db, 0, sizeof db);
    ck_assert_int_eq(ks_compdb_load(build, input, &db), 0);
    ck_assert_uint_eq(db.nincludes, 1);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/build/../inc", tmpdir);
    ck_assert_str_eq(db.includes[0], want);
    ks_compdb_free(&db);
}
END_TEST

/* ---- #17: relative directory, unterminated quotes ------------------------------------------ */

START_TEST(relative_directory_is_taken_from_the_database)
{
    sub("build");
    sub("src");
    put("src/k.cu", "");
    put("build/compile_commands.json",
        "[{\"directory\": \"../src\", \"file\": \"k.cu\", "
        "\"arguments\": [\"nvcc\", \"-Iinc\", \"-c\", \"k.cu\"]}]");
    char build[PATH_MAX], input[PATH_MAX];
    snprintf(build, sizeof build, "%s/build", tmpdir);
    snprintf(input, sizeof input, "%s/src/k.cu", tmpdir);
    /* Run from elsewhere: the working directory must not matter. */
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir("/"), 0);
    ks_compdb db;
    memset(&db, 0, sizeof db);
    int rc = ks_compdb_load(build, input, &db);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_int_eq(rc, 0);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/build/../src", tmpdir);
    ck_assert_str_eq(db.directory, want);
    ck_assert_uint_eq(db.nincludes, 1);
    snprintf(want, sizeof want, "%s/build/../src/inc", tmpdir);
    ck_assert_str_eq(db.includes[0], want);
    ks_compdb_free(&db);
}
END_TEST

START_TEST(unterminated_quote_is_an_error)
{
    put("k.cu", "");
    const char *commands[] = {
        "nvcc -I'inc -c k.cu",
        "nvcc \\\"-DA=1 -c k.cu",        /* JSON \" : a shell double quote */
        "nvcc -c k.cu '",
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char json[2 * PATH_MAX];
        snprintf(json, sizeof json,
                 "[{\"directory\": \"%s\", \"file\": \"k.cu\", \"command\": \"%s\"}]",
                 tmpdir, commands[i]);
        put("compile_commands.json", json);
        char input[PATH_MAX];
        snprintf(input, sizeof input, "%s/k.cu", tmpdir);
        ks_compdb db;
        memset(&db, 0, sizeof db);
        ck_assert_msg(ks_compdb_load(tmpdir, input, &db) == -1, "accepted: %s", commands[i]);
        ks_compdb_free(&db);
    }
    /* Closed quotes still read as one word each. */
    put("compile_commands.json",
        "[{\"directory\": \".\", \"file\": \"k.cu\", \"command\": "
        "\"nvcc -I'a b' \\\"-DX=\\\\\\\"s\\\\\\\"\\\" -c k.cu\"}]");
    char input[PATH_MAX];
    snprintf(input, sizeof input, "%s/k.cu", tmpdir);
    ks_compdb db;
    memset(&db, 0, sizeof db);
    ck_assert_int_eq(ks_compdb_load(tmpdir, input, &db), 0);
    ck_assert_uint_eq(db.ndefines, 1);
    ck_assert_str_eq(db.defines[0], "-DX=\"s\"");
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/a b", tmpdir);
    ck_assert_str_eq(db.includes[0], want);
    ks_compdb_free(&db);
}
END_TEST

/* ---- #17: ':' and newlines in depfiles ------------------------------------------------------ */

START_TEST(colon_is_escaped_newline_refused)
{
    char *q = ks_make_quote("c:/dir/a:b.h");
    ck_assert_str_eq(q, "c\\:/dir/a\\:b.h");
    free(q);
    q = ks_make_quote("x\\:y");
    ck_assert_str_eq(q, "x\\\\\\:y");
    free(q);
    ck_assert_ptr_null(ks_make_quote("a\nb.h"));
    ck_assert_ptr_null(ks_make_quote("a\rb.h"));

    ks_deps d;
    memset(&d, 0, sizeof d);
    ks_deps_add(&d, "k.cu");
    ks_deps_add(&d, "in\nc.h");
    const char *targets[] = {"k.kstub.c"};
    ck_assert_ptr_null(ks_depfile_text(&d, targets, 1, 0, NULL, 0));
    ks_deps_free(&d);

    memset(&d, 0, sizeof d);
    ks_deps_add(&d, "k.cu");
    const char *bad[] = {"a\nb"};
    ck_assert_ptr_null(ks_depfile_text(&d, bad, 1, 0, NULL, 0));
    ks_deps_free(&d);
}
END_TEST

/* make itself reads each path back from a depfile with ':', ' ', '#', '$'
 * and backslashes in its names: with the target newer than everything make is
 * up to date (a misread name would be a missing file, always out of date),
 * and touching any one header makes the target out of date. */
START_TEST(depfile_reads_back_through_make)
{
    const char *names[] = {"k.cu", "a:b.h", "c d.h", "e#f.h", "g$h.h", "i\\:j.h", "k\\ l.h",
                           "m\\#n.h"};
    ks_deps d;
    memset(&d, 0, sizeof d);
    size_t nnames = sizeof names / sizeof names[0];
    for (size_t i = 0; i < nnames; i++) {
        put(names[i], "");
        ks_deps_add(&d, names[i]);
    }
    char *t = ks_make_quote("out:k.c");
    const char *targets[] = {t};
    char *text = ks_depfile_text(&d, targets, 1, 0, NULL, 0);
    ck_assert_ptr_nonnull(text);
    put("k.d", text);
    put("Makefile", "out\\:k.c:\n\ttouch 'out:k.c'\ninclude k.d\n");
    put("out:k.c", "");
    for (size_t i = 0; i < nnames; i++) {
        char *out = NULL;
        int rc = run(&out, "cd '%s' && touch -d @1000000000 * && touch -d @1000000100 'out:k.c' "
                     "&& make -q", tmpdir);
        ck_assert_msg(rc == 0, "make -q with the target newest: %d %s\n%s", rc, out, text);
        free(out);
        rc = run(&out, "cd '%s' && touch -d @1000000200 '%s' && make -q", tmpdir, names[i]);
        ck_assert_msg(rc == 1, "make -q after touching '%s': %d %s\n%s", names[i], rc, out, text);
        free(out);
    }
    /* A deleted header still does not stop make (the -MP rules parse). */
    run(NULL, "rm '%s/a:b.h'", tmpdir);
    char *out = NULL;
    int rc = run(&out, "cd '%s' && make -s", tmpdir);
    ck_assert_msg(rc == 0, "make after rm: %s", out);
    free(out);
    free(text);
    free(t);
    ks_deps_free(&d);
}
END_TEST

static Suite *compdb_suite(void)
{
    Suite *s = suite_create("compdb");
    TCase *tc = tcase_create("options_files");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, options_files_are_read_and_translated);
    tcase_add_test(tc, options_file_errors);
    tcase_add_test(tc, load_reads_options_file_from_entry_directory);
    suite_add_tcase(s, tc);
    tc = tcase_create("database");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, relative_directory_is_taken_from_the_database);
    tcase_add_test(tc, unterminated_quote_is_an_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("depfile");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, colon_is_escaped_newline_refused);
    tcase_add_test(tc, depfile_reads_back_through_make);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(compdb_suite(), CK_FORK_GETENV);
}
