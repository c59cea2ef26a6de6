/*
 * check_cli.c — check-cli: the kstub command line's edges (issue 14), as a
 * user meets them, in three suites (check_cli.h): this file's --list (text
 * and json, parse only, nothing written), what -o names (x.h, x.c, a folder
 * refused), missing output folders created for -o, --manifest and -MF and
 * none left behind by a failed run; check_cli_embed.c's --embed of nvcc
 * images; check_cli_build.c's builds (kstub.mk, <kernel>_n, KS_CHECK, the
 * prelude's line, the README's commands). It holds what they share.
 *
 *   KSTUB=build/bin/kstub NVCC=nvcc KSTUB_LIBDIR=build/lib KSTUB_BUILD=build build/tests/check_cli
 *
 * Run from the repository root (make check-cli does); CK_RUN_SUITE=cli,
 * cli-embed or cli-build runs one suite.
 */
#include "check_cli.h"
#include "testutil.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *kstub_bin(void)
{
    static char abs[PATH_MAX];
    const char *k = getenv("KSTUB") ? getenv("KSTUB") : "build/bin/kstub";
    return realpath(k, abs) ? abs : k;
}

const char *nvcc_bin(void)
{
    return getenv("NVCC") ? getenv("NVCC") : "/usr/local/cuda/bin/nvcc";
}

const char *cuda_path(void)
{
    return getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
}

char tmpdir[PATH_MAX];
char cwd[PATH_MAX];

void make_tmpdir(void)
{
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/kstub-cli-XXXXXX", t);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
}

void remove_tmpdir(void)
{
    char *out;
    run(&out, "rm -rf '%s'", tmpdir);
    free(out);
}

/* Two kernels, one C++ (mangled) and one extern "C", with a restrict
 * pointer and an unsigned: their stubs' prototypes are known exactly,
 * spelled as the header declares them (KS_RESTRICT, not restrict: issue 20). */
const char two_cu[] =
    "__global__ void fill(int *p, int v, unsigned n) { unsigned i = threadIdx.x; if (i < n) p[i] = v; }\n"
    "extern \"C\" __global__ void scale(const float *__restrict__ x, float *y, float s)\n"
    "{ y[threadIdx.x] = s * x[threadIdx.x]; }\n";
/* The first of them alone: an image of it lacks 'scale'. */
const char one_cu[] =
    "__global__ void fill(int *p, int v, unsigned n) { unsigned i = threadIdx.x; if (i < n) p[i] = v; }\n";

const char *const two_protos[2] = {
    "ks_status fill(ks_launch launch, int *p, int v, unsigned int n)",
    "ks_status scale(ks_launch launch, const float *KS_RESTRICT x, float *y, float s)",
};

void write_file(const char *name, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The names in tmpdir, sorted, one a line (find's view of the tree). */
char *tree(void)
{
    char *out;
    int rc = run(&out, "cd '%s' && find . -mindepth 1 | LC_ALL=C sort", tmpdir);
    ck_assert_int_eq(rc, 0);
    return out;
}


/* ---- --list ------------------------------------------------------------------------------------ */

START_TEST(list_text_prints_prototypes_and_writes_nothing)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *before = tree(), *out;
    int rc = run(&out, "cd '%s' && %s --list two.cu 2>/dev/null", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "kstub --list failed (%d):\n%s", rc, out);
    char want[512];
    snprintf(want, sizeof want, "%s;\n%s;\n", two_protos[0], two_protos[1]);
    ck_assert_str_eq(out, want);
    char *after = tree();
    ck_assert_str_eq(after, before);
    free(out);
    /* -o and --manifest change nothing: --list still writes no file. */
    rc = run(&out, "cd '%s' && %s --list two.cu -o x --manifest m.json -MD", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(after);
    after = tree();
    ck_assert_str_eq(after, before);
    free(out);
    free(after);
    free(before);
    remove_tmpdir();
}
END_TEST

/* The prototype --list prints and the manifest's c_type are the header
 * template's pieces ({{*prototype}}, {{*manifest_c_type}}): a -T copy of the
 * templates that restyles them restyles both (they were built in C). */
START_TEST(list_and_c_type_follow_the_templates)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *out, tdir[PATH_MAX];
    ck_assert_ptr_nonnull(realpath("templates", tdir));
    int rc = run(&out, "cd '%s' && mkdir tpl && cp '%s'/*.in tpl/ && "
                 "sed -i 's/{{\\*prototype}}ks_status /{{*prototype}}KS_API ks_status /; "
                 "s/{{#restrict}}restrict{{\\/restrict}}/{{#restrict}}__restrict{{\\/restrict}}/' "
                 "tpl/header.h.in && %s --list -T tpl two.cu && %s -T tpl two.cu -o x --manifest x.json "
                 "&& grep -c '\"c_type\": \"const float \\*__restrict\"' x.json",
                 tmpdir, tdir, kstub_bin(), kstub_bin());
    ck_assert_msg(rc == 0, "kstub -T failed (%d):\n%s", rc, out);
    char want[512];
    snprintf(want, sizeof want, "KS_API %s;\nKS_API %s;\n1\n", two_protos[0], two_protos[1]);
    ck_assert_str_eq(out, want);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(list_json_carries_prototypes)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *before = tree(), *out;
    int rc = run(&out, "cd '%s' && %s --list --format=json two.cu 2>/dev/null", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "kstub --list --format=json failed (%d):\n%s", rc, out);
    json_error_t err;
    json_t *doc = json_loads(out, 0, &err);
    ck_assert_msg(doc != NULL, "not JSON (%s):\n%s", err.text, out);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "source")), "two.cu");
    json_t *ks = json_object_get(doc, "kernels");
    ck_assert_uint_eq(json_array_size(ks), 2);
    const char *symbols[] = {"_Z4fillPiij", "scale"};
    for (size_t i = 0; i < 2; i++) {
        json_t *k = json_array_get(ks, i);
        ck_assert_str_eq(json_string_value(json_object_get(k, "prototype")), two_protos[i]);
        ck_assert_str_eq(json_string_value(json_object_get(k, "symbol")), symbols[i]);
        ck_assert_uint_eq(json_array_size(json_object_get(k, "params")), 3);
    }
    json_decref(doc);
    char *after = tree();
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 30 #16: --list --all also prints each stub's other entry points
 * (_n when the kernel has one, _node, _node_set, _nodes_set) and the one
 * C name over a template's instances. Each printed prototype redeclares
 * the header's declaration exactly (a C11 compile of the header and the
 * lines together), every public declaration of the header is printed, and
 * each one name is a macro the header defines. JSON carries the same. */
START_TEST(list_all_shows_every_entry_point)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "cp kernels/templates.cu '%s/t.cu' && printf '%%s\\n' "
                 "'__global__ void dyn(float *y) { extern __shared__ float s[]; s[0] = 1; y[0] = s[0]; }' "
                 ">> '%s/t.cu'", tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --list --all t.cu 2>/dev/null > all.txt && %s t.cu -o t 2>/dev/null && "
             "{ echo '#include \"t.h\"'; grep '^ *ks_status' all.txt; } > redecl.c && "
             "{ echo '#include \"t.h\"'; grep '^/\\* [a-z_]*(' all.txt | "
             "sed 's|^/\\* \\([a-z_]*\\)(.*|#ifndef \\1\\n#error \\1\\n#endif|'; } > generic.c && "
             "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -DKSTUB_PLAIN_CALLS -I%s/include/kstub -fsyntax-only redecl.c && "
             "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -I%s/include/kstub -fsyntax-only generic.c && "
             "grep -o '^ks_status [a-z][a-z0-9_]*(' t.h | grep -v ' ks__' | sort -u > declared && "
             "grep -o '^ *ks_status [a-z][a-z0-9_]*(' all.txt | sed 's/^ *//' | sort > listed && "
             "diff declared listed && wc -l < listed && grep -c '^/\\* ' all.txt && "
             "grep -c '_n(' all.txt && grep -c '^ks_status dyn_n(' t.h",
             tmpdir, kstub_bin(), kstub_bin(), cwd, cwd);
    /* templates.cu: 4 kernels, dyn without _n; fill and tmpl_axpy */
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, out);
    ck_assert_msg(strcmp(out, "24\n2\n4\n0\n") == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && grep -c 'fill(launch, out, value, n): one name over fill_int, fill_u16' all.txt && "
             "%s --list --all --format=json t.cu 2>/dev/null | grep -c '\"entry_points\"\\|\"generics\"' && "
             "%s --list --format=json t.cu 2>/dev/null | grep -c '\"entry_points\"\\|\"generics\"'",
             tmpdir, kstub_bin(), kstub_bin());
    ck_assert_msg(strcmp(out, "1\n6\n0\n") == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --all t.cu -o t", tmpdir, kstub_bin());
    ck_assert_msg(rc == 2 && strstr(out, "--all is for --list"), "exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* A file that does not parse: file:line:col errors, exit 1, nothing on stdout. */
START_TEST(list_errors_as_usual)
{
    make_tmpdir();
    write_file("bad.cu", "__global__ void k(int *p) { *p = 0; }\nint broken(;\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s --list bad.cu 2>&1 >stdout.txt; cat stdout.txt | wc -c", tmpdir,
                 kstub_bin());
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "bad.cu:2:") && strstr(out, ": error: "), "%s", out);
    ck_assert_msg(strstr(out, "nothing listed") && strstr(out, "\n0\n"), "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --list bad.cu", tmpdir, kstub_bin());
    ck_assert_int_eq(rc, 1);
    free(out);
    rc = run(&out, "cd '%s' && %s --list --format=github bad.cu", tmpdir, kstub_bin());
    ck_assert_int_eq(rc, 2);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- -o and the output folders ------------------------------------------------------------------ */

START_TEST(o_with_an_extension_names_the_stem)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s two.cu -o x.h && %s two.cu -o y.c && ls", tmpdir, kstub_bin(),
                 kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_str_eq(out, "two.cu\nx.c\nx.h\ny.c\ny.h\n");
    free(out);
    rc = run(&out, "cd '%s' && grep -c 'ks_status fill(' x.h y.h && grep -l '#include \"x.h\"' x.c",
             tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(o_naming_a_folder_is_refused)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *before = tree();
    const char *const bad[] = {"out/", "sub/.", "..", "."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *out;
        int rc = run(&out, "cd '%s' && %s two.cu -o '%s'", tmpdir, kstub_bin(), bad[i]);
        ck_assert_msg(rc == 2, "-o %s: exit %d\n%s", bad[i], rc, out);
        ck_assert_msg(strstr(out, "not a directory") != NULL, "-o %s:\n%s", bad[i], out);
        free(out);
        char *after = tree();
        ck_assert_str_eq(after, before);
        free(after);
    }
    free(before);
    remove_tmpdir();
}
END_TEST

START_TEST(missing_output_folders_are_created)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s two.cu -o gen/a/x --manifest meta/b/x.json -MF deps/c/x.d && "
                 "find gen meta deps -type f | LC_ALL=C sort", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_str_eq(out, "deps/c/x.d\ngen/a/x.c\ngen/a/x.h\nmeta/b/x.json\n");
    free(out);
    rc = run(&out, "cd '%s' && head -1 deps/c/x.d", tmpdir);
    ck_assert_msg(strstr(out, "gen/a/x.h gen/a/x.c meta/b/x.json:") == out, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* A run that fails creates no folder and leaves no file, whatever failed:
 * the parse, or the --embed check after it. */
START_TEST(failed_runs_create_nothing)
{
    make_tmpdir();
    write_file("bad.cu", "__global__ void k(int *p) { *p = 0; }\nint broken(;\n");
    write_file("two.cu", two_cu);
    write_file("other.ptx", "not an image\n");
    char *before = tree(), *out;
    int rc = run(&out, "cd '%s' && %s bad.cu -o gen/a/x --manifest meta/b/x.json -MF deps/c/x.d",
                 tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, out);
    ck_assert_msg(strstr(out, "nothing written"), "%s", out);
    free(out);
    char *after = tree();
    ck_assert_str_eq(after, before);
    free(after);
    rc = run(&out, "cd '%s' && %s two.cu --embed other.ptx -o gen/a/x --manifest meta/b/x.json -MD",
             tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, out);
    free(out);
    after = tree();
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    remove_tmpdir();
}
END_TEST

Suite *cli_list_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc;
    tc = tcase_create("list");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, list_text_prints_prototypes_and_writes_nothing);
    tcase_add_test(tc, list_json_carries_prototypes);
    tcase_add_test(tc, list_and_c_type_follow_the_templates);
    tcase_add_test(tc, list_errors_as_usual);
    tcase_add_test(tc, list_all_shows_every_entry_point);
    suite_add_tcase(s, tc);
    tc = tcase_create("outputs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, o_with_an_extension_names_the_stem);
    tcase_add_test(tc, o_naming_a_folder_is_refused);
    tcase_add_test(tc, missing_output_folders_are_created);
    tcase_add_test(tc, failed_runs_create_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_list_suite());
    srunner_add_suite(sr, cli_embed_suite());
    srunner_add_suite(sr, cli_build_suite());
    srunner_set_fork_status(sr, CK_FORK_GETENV);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
