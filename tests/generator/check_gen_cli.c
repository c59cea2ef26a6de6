/*
 * check_gen_cli.c — the generator's command line: --help, --version and
 * misuse, -D/-I reaching the parse, an installed kstub finding its templates.
 *
 * Part of check-gen (tests/generator/gen.mk; check_gen.c runs every part,
 * CK_RUN_SUITE=gen-cli this one). Run from the repository root.
 * To re-bless the golden files after an intended change: make bless
 */
#include "model/model.h"
#include "base/inputs.h"
#include "base/util.h"
#include "cli/cli.h"
#include "emit/emit.h"
#include "image/image.h"
#include "model/naming.h"
#include "front/walk.h"

#include "check_gen.h"
#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- command line and images ------------------------------------------------------------------ */

START_TEST(cli_help_version_and_misuse)
{
    char *out;
    ck_assert_int_eq(run(&out, "%s --help", kstub_bin()), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: kstub"));
    free(out);
    ck_assert_int_eq(run(&out, "%s --version", kstub_bin()), 0);
    ck_assert_ptr_nonnull(strstr(out, "kstub " KSTUB_VERSION_TEXT));
    free(out);
    ck_assert_int_eq(run(&out, "%s --frobnicate x.cu -o y", kstub_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown option '--frobnicate'"));
    free(out);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu", kstub_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "use -o OUTBASE"));
    free(out);
    ck_assert_int_eq(run(&out, "%s -o /tmp/x", kstub_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "no input file"));
    free(out);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu -o /tmp/x -std=c11", kstub_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "use -std=c++NN"));
    free(out);
    ck_assert_int_eq(run(&out, "%s tests/no/such.cu -o /tmp/kstub-never", kstub_bin()), 1);
    ck_assert_ptr_nonnull(strstr(out, "tests/no/such.cu: error: cannot open"));
    free(out);
}
END_TEST

START_TEST(macros_and_includes_reach_the_parse)
{
    make_tmpdir();
    char *out;
    FILE *f;
    char path[128];
    snprintf(path, sizeof path, "%s/inc", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/inc/real.h", tmpdir);
    f = fopen(path, "w");
    fputs("typedef REAL real_t;\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/m.cu", tmpdir);
    f = fopen(path, "w");
    fputs("#include \"real.h\"\n#ifndef GONE\nextern \"C\" __global__ void k(real_t *x) {}\n"
          "#endif\n", f);
    fclose(f);
    int rc = run(&out, "%s %s -I %s/inc -DREAL=double -DGONE -UGONE -o %s/m --manifest %s/m.json",
                 kstub_bin(), path, tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/m.json", tmpdir);
    char *json = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(json);
    ck_assert_msg(strstr(json, "\"c_type\": \"double *\"") != NULL, "%s", json);
    free(json);
    remove_tmpdir();
}
END_TEST

START_TEST(installed_kstub_uses_installed_templates)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "make --no-print-directory install DESTDIR=%s PREFIX=/opt/kstub", tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    /* Mark the installed template: the output must come from it. */
    rc = run(&out, "printf '/* installed */\\n' >> %s/opt/kstub/share/kstub/templates/header.h.in && "
             "%s/opt/kstub/bin/kstub kernels/vector_ops.cu -o %s/v && grep -c 'installed' %s/v.h "
             "&& test -f %s/opt/kstub/include/kstub.h && test -f %s/opt/kstub/lib/libkstub.a && "
             "test -f %s/opt/kstub/share/kstub/kstub.mk",
             tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

Suite *gen_cli_suite(void)
{
    Suite *s = suite_create("gen-cli");
    TCase *tc;
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cli_help_version_and_misuse);
    tcase_add_test(tc, macros_and_includes_reach_the_parse);
    tcase_add_test(tc, installed_kstub_uses_installed_templates);
    suite_add_tcase(s, tc);
    return s;
    return s;
}
