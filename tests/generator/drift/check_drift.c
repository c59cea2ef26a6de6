/*
 * check_drift.c — Check suite for kstub in the build and in CI: depfiles and
 * their escaping, write-if-changed, byte-identical output from any working
 * directory, kstub.mk under make -j on the sample project (tests/mkproj),
 * compile_commands.json translation (-p), and `kstub check` / `kstub diff`
 * with every change class, exit status and output format.
 *
 * Run from the repository root (make check-drift does). The translation
 * tests link the generator's objects; the rest run build/bin/kstub as a
 * user would. The sample project needs nvcc (no GPU).
 */
#include "model/model.h"
#include "base/inputs.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/compdb.h"
#include "cli/depfile.h"

#include "testutil.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *kstub_bin(void)
{
    static char abs[PATH_MAX];
    const char *k = getenv("KSTUB");
    k = k ? k : "build/bin/kstub";
    /* Some tests run from another directory. */
    return realpath(k, abs) ? abs : k;
}


static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kstub-drift-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    run(NULL, "rm -rf '%s'", tmpdir);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static char *read_tmp(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return ks_read_file(path, NULL);
}

/* ---- depfiles --------------------------------------------------------------------------------- */

/* A kernel file in a folder with a space, including a header from a folder
 * with a space and a '$', and <cstdint> (a system header). */
static void make_spaced_project(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/my src", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/my inc$1", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/my inc$1/types.h", tmpdir);
    write_file(path, "typedef float real_t;\n");
    snprintf(path, sizeof path, "%s/my src/k.cu", tmpdir);
    write_file(path, "#include <cstdint>\n#include \"types.h\"\n"
                     "extern \"C\" __global__ void k(real_t *x, int32_t n) {}\n");
}

START_TEST(depfile_lists_headers_with_escapes_and_phony_rules)
{
    make_tmpdir();
    make_spaced_project();
    char *out;
    int rc = run(&out, "cd '%s' && %s 'my src/k.cu' -I 'my inc$1' -o 'out k' --manifest m.json -MD",
                 tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char *d = read_tmp("out k.d");    /* -MD alone: OUTBASE.d */
    ck_assert_ptr_nonnull(d);
    /* Default targets: the outputs, quoted for make. */
    ck_assert_msg(strncmp(d, "out\\ k.h out\\ k.c m.json: \\\n", 28) == 0, "%s", d);
    expect_has(d, "  my\\ src/k.cu \\\n");
    expect_has(d, "  my\\ inc$$1/types.h");
    /* -MP: an empty rule per header, none for the input. */
    expect_has(d, "\nmy\\ inc$$1/types.h:\n");
    expect_lacks(d, "\nmy\\ src/k.cu:");
    /* -MD keeps system headers. */
    expect_has(d, "stdint.h");
    free(d);
    remove_tmpdir();
}
END_TEST

START_TEST(depfile_mmd_mf_mt_mq)
{
    make_tmpdir();
    make_spaced_project();
    char *out;
    /* -MF into a missing folder creates it, as every output's folder. */
    int rc = run(&out, "cd '%s' && %s 'my src/k.cu' -I 'my inc$1' -o o -MMD -MF deps/o.dep "
                 "-MT 'stamp file' -MQ 'q $x'", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char *d = read_tmp("deps/o.dep");
    ck_assert_ptr_nonnull(d);
    /* -MT as written, -MQ quoted. */
    ck_assert_msg(strncmp(d, "stamp file q\\ $$x: \\\n", 21) == 0, "%s", d);
    expect_has(d, "my\\ inc$$1/types.h");
    /* -MMD leaves out system headers (the C++ library, the CUDA toolkit). */
    expect_lacks(d, "stdint");
    expect_lacks(d, "cuda_runtime");
    free(d);
    char *o_d = read_tmp("o.d");
    ck_assert_msg(o_d == NULL, "-MF names the depfile; OUTBASE.d must not be written");
    remove_tmpdir();
}
END_TEST

START_TEST(make_quote_escapes)
{
    const struct { const char *in, *out; } cases[] = {
        {"plain/file.h", "plain/file.h"},
        {"a b.h", "a\\ b.h"},
        {"a\tb.h", "a\\\tb.h"},
        {"cost$.h", "cost$$.h"},
        {"hash#.h", "hash\\#.h"},
        {"back\\ slash.h", "back\\\\\\ slash.h"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *q = ks_make_quote(cases[i].in);
        ck_assert_str_eq(q, cases[i].out);
        free(q);
    }
}
END_TEST

/* ---- write-if-changed, determinism -------------------------------------------------------- */

START_TEST(unchanged_outputs_keep_mtime_changed_ones_are_replaced)
{
    make_tmpdir();
    char *out;
    char cu[PATH_MAX];
    snprintf(cu, sizeof cu, "%s/w.cu", tmpdir);
    write_file(cu, "extern \"C\" __global__ void k(float *x, int n) {}\n");
    const char *cmd = "%s %s -o %s/w --manifest %s/w.json -MD";
    ck_assert_int_eq(run(&out, cmd, kstub_bin(), cu, tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "touch -d '2001-01-01' %s/w.h %s/w.c %s/w.json %s/w.d", tmpdir,
                         tmpdir, tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, cmd, kstub_bin(), cu, tmpdir, tmpdir), 0);
    free(out);
    const char *names[] = {"w.h", "w.c", "w.json", "w.d"};
    for (int i = 0; i < 4; i++) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_msg(st.st_mtime < 1000000000 + 86400 * 365, "%s was rewritten", names[i]);
    }
    /* A real change replaces the files whose text changes, through a rename. */
    struct stat before, after;
    char h[PATH_MAX];
    snprintf(h, sizeof h, "%s/w.h", tmpdir);
    ck_assert_int_eq(stat(h, &before), 0);
    write_file(cu, "extern \"C\" __global__ void k(float *x, long n) {}\n");
    ck_assert_int_eq(run(&out, cmd, kstub_bin(), cu, tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(stat(h, &after), 0);
    ck_assert_msg(after.st_mtime > before.st_mtime, "w.h was not replaced");
    ck_assert_msg(after.st_ino != before.st_ino, "w.h was written in place, not renamed");
    ck_assert_int_eq(run(&out, "ls %s | grep -c tmp", tmpdir), 1);  /* no temporary left */
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(output_is_identical_from_any_directory)
{
    /* Relative input from the repository root; absolute input from another
     * directory, with another time zone, locale and SOURCE_DATE_EPOCH. */
    make_tmpdir();
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    char *out;
    int rc = run(&out, "mkdir %s/one %s/two && %s tests/golden/basic.cu --embed "
                 "tests/golden/basic.ptx -o %s/one/x --manifest %s/one/x.json", tmpdir, tmpdir,
                 kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "cd %s/two && TZ=Asia/Kolkata LC_ALL=C.UTF-8 SOURCE_DATE_EPOCH=1 %s "
             "%s/tests/golden/basic.cu --embed %s/tests/golden/basic.ptx -o x --manifest x.json",
             tmpdir, kstub_bin(), cwd, cwd);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    const char *names[] = {"x.h", "x.c", "x.json"};
    for (int i = 0; i < 3; i++) {
        char a[32], b[32];
        snprintf(a, sizeof a, "one/%s", names[i]);
        snprintf(b, sizeof b, "two/%s", names[i]);
        char *ta = read_tmp(a), *tb = read_tmp(b);
        ck_assert_ptr_nonnull(ta);
        ck_assert_ptr_nonnull(tb);
        ck_assert_msg(strcmp(ta, tb) == 0, "%s differs between the two runs", names[i]);
        /* No absolute path, no tool version. */
        expect_lacks(ta, cwd);
        expect_lacks(ta, tmpdir);
        expect_lacks(ta, "kstub " KSTUB_VERSION_TEXT);
        free(ta);
        free(tb);
    }
    remove_tmpdir();
}
END_TEST

/* ---- kstub.mk on the sample project -------------------------------------------------------------- */

START_TEST(kstub_mk_sample_project_under_make_j)
{
    make_tmpdir();
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    char *out;
    ck_assert_int_eq(run(&out, "cp -r tests/mkproj %s/proj", tmpdir), 0);
    free(out);
    const char *libdir_env = env_or("KSTUB_LIBDIR", NULL);
    char *libdir = libdir_env ? ks_xstrdup(libdir_env) : ks_xasprintf("%s/build/lib", cwd);
    /* The parent make's flags and variables must not leak into this build.
     * Under check-asan the libkstub it links is sanitized: the app links
     * with the same -fsanitize flags (SAN_FLAGS, from drift.mk). */
    const char *san = env_or("SAN_FLAGS", "");
    char *make = ks_xasprintf(
        "cd %s/proj && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j4 "
        "KSTUB_MK=%s/kstub.mk KSTUB=%s KSTUB_INCLUDE=%s/include/kstub KSTUB_LIBDIR=%s "
        "CUDA_PATH=%s NVCC=%s%s%s%s", tmpdir, cwd, kstub_bin(), cwd, libdir,
        env_or("CUDA_PATH", "/usr/local/cuda"), env_or("NVCC", "/usr/local/cuda/bin/nvcc"),
        *san ? " CC='cc " : "", san, *san ? "'" : "");
    free(libdir);

    int rc = run(&out, "%s", make);
    ck_assert_msg(rc == 0, "first build failed:\n%s", out);
    free(out);
    char app[PATH_MAX];
    snprintf(app, sizeof app, "%s/proj/app", tmpdir);
    ck_assert_msg(access(app, X_OK) == 0, "no app built");

    rc = run(&out, "%s", make);
    ck_assert_int_eq(rc, 0);
    expect_has(out, "is up to date");
    free(out);

    /* Touch the header the kernel file includes: kstub runs again, but the
     * stubs did not change, so nothing that includes them is rebuilt. */
    ck_assert_int_eq(run(&out, "sleep 1; touch %s/proj/kernels/scale_types.h", tmpdir), 0);
    free(out);
    rc = run(&out, "%s", make);
    ck_assert_msg(rc == 0, "%s", out);
    expect_has(out, "--embed out/kstub/kernels/scale.fatbin");
    expect_lacks(out, "main.o");
    free(out);
    rc = run(&out, "%s", make);
    ck_assert_int_eq(rc, 0);
    expect_has(out, "is up to date");
    free(out);

    /* A real change in the header reaches the stubs and main.o. */
    ck_assert_int_eq(run(&out, "sed -i 's/typedef int index_t/typedef long index_t/' "
                         "%s/proj/kernels/scale_types.h", tmpdir), 0);
    free(out);
    rc = run(&out, "%s", make);
    ck_assert_msg(rc == 0, "%s", out);
    expect_has(out, "main.o");
    free(out);
    char *h = read_tmp("proj/out/kstub/kernels/scale.kstub.h");
    expect_has(h, "long");
    free(h);

    /* The header removed from the kernel file and deleted: the depfile's
     * empty rule keeps make going. */
    ck_assert_int_eq(run(&out, "cd %s/proj && sed -i 's/#include \"scale_types.h\"/typedef float "
                         "real_t; typedef long index_t;/' kernels/scale.cu && "
                         "rm kernels/scale_types.h", tmpdir), 0);
    free(out);
    rc = run(&out, "%s", make);
    ck_assert_msg(rc == 0, "deleting a header broke the build:\n%s", out);
    free(out);
    rc = run(&out, "%s", make);
    expect_has(out, "is up to date");
    free(out);

    /* The stubs are up to date as far as kstub check is concerned. */
    rc = run(&out, "%s kstub-check", make);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    free(make);
    remove_tmpdir();
}
END_TEST

/* ---- compile_commands.json ------------------------------------------------------------------- */

START_TEST(compdb_translates_nvcc_flags)
{
    const char *argv[] = {
        "/usr/local/cuda/bin/nvcc", "-ccbin", "g++", "-Iinc", "-I", "/abs/inc", "-isystem",
        "third", "--include-path=more", "-DA=1", "-D", "B", "-UC", "--define-macro=E=2",
        "-arch=sm_80", "-gencode", "arch=compute_90,code=sm_90", "--gpu-architecture",
        "compute_70", "-Xcompiler", "-fPIC,-DHOST=1,-Ihost_inc,-Wall", "--compiler-options=-O2",
        "--expt-relaxed-constexpr", "--extended-lambda", "-G", "-lineinfo", "-rdc=true",
        "-O3", "-c", "-o", "x.o", "--std", "c++20", "-Xptxas", "-v", "-maxrregcount=32",
        "-x", "cu", "src/k.cu", "--use_fast_math", "-MD", "-MF", "x.d",
    };
    ks_compdb db;
    memset(&db, 0, sizeof db);
    ks_compdb_translate("/build", argv, sizeof argv / sizeof argv[0], &db);
    ck_assert_uint_eq(db.nincludes, 5);
    ck_assert_str_eq(db.includes[0], "/build/inc");
    ck_assert_str_eq(db.includes[1], "/abs/inc");
    ck_assert_str_eq(db.includes[2], "/build/third");
    ck_assert_str_eq(db.includes[3], "/build/more");
    ck_assert_str_eq(db.includes[4], "/build/host_inc");
    ck_assert_uint_eq(db.nsystem_dirs, 1);
    ck_assert_str_eq(db.system_dirs[0], "/build/third");
    ck_assert_uint_eq(db.ndefines, 5);
    ck_assert_str_eq(db.defines[0], "-DA=1");
    ck_assert_str_eq(db.defines[1], "-DB");
    ck_assert_str_eq(db.defines[2], "-UC");
    ck_assert_str_eq(db.defines[3], "-DE=2");
    ck_assert_str_eq(db.defines[4], "-DHOST=1");
    ck_assert_str_eq(db.std, "c++20");
    ck_assert_str_eq(db.arch, "sm_80");    /* the first architecture named */
    ks_compdb_free(&db);

    const char *argv2[] = {"nvcc", "-gencode=arch=compute_86,code=[sm_86,compute_86]",
                           "-std=c++17", "k.cu"};
    memset(&db, 0, sizeof db);
    ks_compdb_translate("/b", argv2, 4, &db);
    ck_assert_str_eq(db.arch, "sm_86");
    ck_assert_str_eq(db.std, "c++17");
    ks_compdb_free(&db);

    const char *argv3[] = {"nvcc", "-arch", "sm_90a", "-std", "c++14", "k.cu", "-arch=native"};
    memset(&db, 0, sizeof db);
    ks_compdb_translate("/b", argv3, 7, &db);
    ck_assert_str_eq(db.arch, "sm_90a");
    ck_assert_str_eq(db.std, "c++14");
    ck_assert_uint_eq(db.nincludes, 0);
    ks_compdb_free(&db);
}
END_TEST

START_TEST(compdb_drives_the_parse)
{
    make_tmpdir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/src", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/src/inc", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/build", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/src/inc/real.h", tmpdir);
    write_file(path, "typedef REAL real_t;\n");
    snprintf(path, sizeof path, "%s/src/k.cu", tmpdir);
    write_file(path, "#include \"real.h\"\n#ifndef GONE\n"
                     "extern \"C\" __global__ void k(real_t *x, [[maybe_unused]] int n) {}\n"
                     "#endif\n#if __cplusplus < 202002L\n#error not C++20\n#endif\n");
    /* A "command" string, as CMake writes it, with every nvcc-only flag. */
    snprintf(path, sizeof path, "%s/build/compile_commands.json", tmpdir);
    char *db = ks_xasprintf(
        "[\n{\"directory\": \"%s/build\", \"file\": \"%s/src/other.cu\", \"command\": "
        "\"nvcc -DREAL=int -c ../src/other.cu\"},\n"
        " {\"directory\": \"%s/build\", \"file\": \"../src/k.cu\", \"command\": "
        "\"/usr/local/cuda/bin/nvcc -ccbin /usr/bin/g++ -I../src/inc \\\"-DREAL=double\\\" "
        "-DGONE -UGONE -arch=sm_80 -gencode arch=compute_80,code=sm_80 -Xcompiler -fPIC,-Wall "
        "--expt-relaxed-constexpr --extended-lambda -G -lineinfo -rdc=true -O3 --std c++20 "
        "-x cu -c ../src/k.cu -o k.o\"}\n]\n",
        tmpdir, tmpdir, tmpdir);
    write_file(path, db);
    free(db);
    char *out;
    int rc = run(&out, "%s -p %s/build %s/src/k.cu -o %s/k --manifest %s/k.json", kstub_bin(),
                 tmpdir, tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char *json = read_tmp("k.json");
    expect_has(json, "\"c_type\": \"double *\"");
    free(json);
    /* Options on the command line come after the compile command's. */
    rc = run(&out, "%s -p %s/build %s/src/k.cu -DREAL=float -o %s/k --manifest %s/k.json",
             kstub_bin(), tmpdir, tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    json = read_tmp("k.json");
    expect_has(json, "\"c_type\": \"float *\"");
    free(json);
    /* A file the database does not know is an error, not a guess. */
    snprintf(path, sizeof path, "%s/src/lost.cu", tmpdir);
    write_file(path, "extern \"C\" __global__ void k(int) {}\n");
    rc = run(&out, "%s -p %s/build %s -o %s/l", kstub_bin(), tmpdir, path, tmpdir);
    ck_assert_int_eq(rc, 1);
    expect_has(out, "no compile command for");
    free(out);
    rc = run(&out, "%s -p %s/nowhere %s -o %s/l", kstub_bin(), tmpdir, path, tmpdir);
    ck_assert_int_eq(rc, 1);
    expect_has(out, "compile_commands.json");
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- kstub diff ----------------------------------------------------------------------------------- */

#define PARAM(name, ctype, size, align, offset)                                                  \
    "{\"name\": \"" name "\", \"type\": \"" ctype "\", \"c_type\": \"" ctype "\", \"size\": "   \
    #size ", \"align\": " #align ", \"offset\": " #offset "}"
#define KERNEL(name, c_name, symbol, line, bounds, params)                                       \
    "{\"name\": \"" name "\", \"c_name\": \"" c_name "\", \"symbol\": \"" symbol "\", "         \
    "\"line\": " #line ", \"launch_bounds\": " bounds ", \"params\": [" params "]}"

#define P_X PARAM("x", "float *", 8, 8, 0)
#define P_F PARAM("factor", "float", 4, 4, 8)
#define P_ROWS PARAM("rows", "int", 4, 4, 12)
#define SCALE(bounds, params) KERNEL("scale_rows", "scale_rows", "scale_rows", 3, bounds, params)
#define SCALE0 SCALE("null", P_X "," P_F "," P_ROWS)
#define CLAMP_F KERNEL("ns::clamp", "ns_clamp__floatp_float", "_ZN2ns5clampEPff", 7, "null",     \
                       PARAM("x", "float *", 8, 8, 0) "," PARAM("lo", "float", 4, 4, 8))
#define CLAMP_I KERNEL("ns::clamp", "ns_clamp__intp_int", "_ZN2ns5clampEPii", 8, "null",         \
                       PARAM("x", "int *", 8, 8, 0) "," PARAM("lo", "int", 4, 4, 8))
#define OTHER KERNEL("other", "other", "other", 12, "null", "")
#define BASE SCALE0 "," CLAMP_F "," CLAMP_I "," OTHER

static const struct diff_case {
    const char *what;
    const char *new_kernels;   /* against BASE */
    int status;
    const char *kind;          /* a finding that must be reported, or NULL */
    const char *message;       /* text that must appear, or NULL */
} diff_cases[] = {
    {"no change", BASE, 0, NULL, "no change"},
    {"overloads in another order, lines moved", SCALE0 "," CLAMP_I "," CLAMP_F "," OTHER, 0,
     NULL, "no change"},
    {"kernel added", BASE "," KERNEL("fresh", "fresh", "fresh", 20, "null", ""), 4,
     "kernel_added", "warning: kernel fresh added"},
    {"parameter renamed", SCALE("null", P_X "," P_F "," PARAM("n", "int", 4, 4, 12)) ","
     CLAMP_F "," CLAMP_I "," OTHER, 4, "param_renamed",
     "kernel scale_rows, parameter 3: renamed from 'rows' to 'n'"},
    {"launch bounds added", SCALE("[256, 0]", P_X "," P_F "," P_ROWS) "," CLAMP_F "," CLAMP_I
     "," OTHER, 12, "launch_bounds_tightened", NULL},   /* none -> 256 is a tightening */
    {"kernel removed", SCALE0 "," CLAMP_F "," CLAMP_I, 12, "kernel_removed",
     "kernel other removed"},
    {"overload removed", SCALE0 "," CLAMP_F "," OTHER, 12, "kernel_removed",
     "kernel ns::clamp [ns_clamp__intp_int] removed"},
    {"parameter added", SCALE("null", P_X "," P_F "," P_ROWS "," PARAM("cols", "int", 4, 4, 16))
     "," CLAMP_F "," CLAMP_I "," OTHER, 12, "param_added",
     "kernel scale_rows, parameter 4 'cols' (int): added"},
    {"parameter removed", SCALE("null", P_X "," P_F) "," CLAMP_F "," CLAMP_I "," OTHER, 12,
     "param_removed", "kernel scale_rows, parameter 3 'rows' (int): removed"},
    {"parameters reordered", SCALE("null", P_F "," P_X "," P_ROWS) "," CLAMP_F "," CLAMP_I ","
     OTHER, 12, "params_reordered", "parameters reordered from (x, factor, rows) to "
     "(factor, x, rows)"},
    {"type changed", SCALE("null", P_X "," P_F "," PARAM("rows", "long", 8, 8, 16)) "," CLAMP_F
     "," CLAMP_I "," OTHER, 12, "param_type_changed",
     "s.cu:3: error: kernel scale_rows, parameter 3 'rows': type changed from 'int' to 'long'"},
    {"size changed", SCALE("null", P_X "," P_F "," PARAM("rows", "int", 8, 4, 12)) "," CLAMP_F
     "," CLAMP_I "," OTHER, 12, "param_size_changed", "size changed from 4 to 8 bytes"},
    {"alignment changed", SCALE("null", P_X "," P_F "," PARAM("rows", "int", 4, 8, 16)) ","
     CLAMP_F "," CLAMP_I "," OTHER, 12, "param_align_changed",
     "alignment changed from 4 to 8 bytes"},
    {"C name changed", SCALE0 "," CLAMP_F "," CLAMP_I "," KERNEL("other", "other_v2", "other",
     12, "null", ""), 12, "c_name_changed", "C function renamed from 'other' to 'other_v2'"},
    {"overload's parameter type changed (symbol too)", SCALE0 "," CLAMP_F ","
     KERNEL("ns::clamp", "ns_clamp__intp_long", "_ZN2ns5clampEPil", 8, "null",
            PARAM("x", "int *", 8, 8, 0) "," PARAM("lo", "long", 8, 8, 8)) "," OTHER, 12,
     "param_type_changed", "parameter 2 'lo': type changed from 'int' to 'long'"},
};
#define NDIFF (sizeof diff_cases / sizeof diff_cases[0])

static void write_manifest(const char *name, const char *kernels)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    char *text = ks_xasprintf("{\"format\": 1, \"source\": \"s.cu\", \"kernels\": [%s]}\n",
                              kernels);
    write_file(path, text);
    free(text);
}

START_TEST(diff_classifies_each_change)
{
    const struct diff_case *c = &diff_cases[_i];
    make_tmpdir();
    write_manifest("old.json", BASE);
    write_manifest("new.json", c->new_kernels);
    char *out;
    int rc = run(&out, "%s diff %s/old.json %s/new.json", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == c->status, "%s: exit %d, expected %d:\n%s", c->what, rc, c->status, out);
    if (c->message)
        expect_has(out, c->message);
    free(out);
    if (c->kind) {
        rc = run(&out, "%s diff --format=json %s/old.json %s/new.json", kstub_bin(), tmpdir,
                 tmpdir);
        ck_assert_int_eq(rc, c->status);
        char kind[96];
        snprintf(kind, sizeof kind, "\"kind\": \"%s\"", c->kind);
        expect_has(out, kind);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

/* Issue 30 #12: a C++ kernel's parameter type change changes its mangled
 * symbol too; diff reports the one change once (the symbol follows from
 * it), and names the kernel once: "[c_name]" is for overloads, which
 * share a name on one side, not for one kernel whose symbol changed. */
START_TEST(diff_cxx_type_change_is_one_error)
{
    make_tmpdir();
    write_manifest("a.json", KERNEL("saxpy", "saxpy", "_Z5saxpyPfm", 3, "null",
                                    PARAM("y", "float *", 8, 8, 0) "," PARAM("n", "size_t", 8, 8, 8)));
    write_manifest("b.json", KERNEL("saxpy", "saxpy", "_Z5saxpyPfi", 3, "null",
                                    PARAM("y", "float *", 8, 8, 0) "," PARAM("n", "int", 4, 4, 8)));
    char *out;
    int rc = run(&out, "%s diff %s/a.json %s/b.json", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 12, "exit %d\n%s", rc, out);
    ck_assert_str_eq(out, "s.cu:3: error: kernel saxpy, parameter 2 'n': type changed from 'size_t' to 'int'\n"
                          "kstub diff: 1 breaking change, 0 compatible changes\n");
    free(out);
    /* Only the symbol changed (a namespace's name, say): that is the error. */
    write_manifest("c.json", KERNEL("saxpy", "saxpy", "_Z5saxpyPfl", 3, "null",
                                    PARAM("y", "float *", 8, 8, 0) "," PARAM("n", "size_t", 8, 8, 8)));
    rc = run(&out, "%s diff %s/a.json %s/c.json", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 12 && strstr(out, "error: kernel saxpy: device symbol changed from "
                                          "'_Z5saxpyPfm' to '_Z5saxpyPfl'"), "exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(diff_launch_bounds_both_ways)
{
    make_tmpdir();
    char *out;
    write_manifest("a.json", SCALE("[256, 2]", P_X "," P_F "," P_ROWS));
    write_manifest("b.json", SCALE("[128, 2]", P_X "," P_F "," P_ROWS));
    write_manifest("c.json", SCALE("null", P_X "," P_F "," P_ROWS));
    write_manifest("d.json", SCALE("[256, 4]", P_X "," P_F "," P_ROWS));
    ck_assert_int_eq(run(&out, "%s diff %s/a.json %s/b.json", kstub_bin(), tmpdir, tmpdir), 12);
    expect_has(out, "error: kernel scale_rows: __launch_bounds__ maximum block size tightened "
               "from 256 threads to 128 threads");
    free(out);
    ck_assert_int_eq(run(&out, "%s diff %s/b.json %s/a.json", kstub_bin(), tmpdir, tmpdir), 4);
    expect_has(out, "warning: kernel scale_rows: __launch_bounds__ maximum block size relaxed");
    free(out);
    ck_assert_int_eq(run(&out, "%s diff %s/a.json %s/c.json", kstub_bin(), tmpdir, tmpdir), 4);
    expect_has(out, "relaxed from 256 threads to none");
    free(out);
    ck_assert_int_eq(run(&out, "%s diff %s/a.json %s/d.json", kstub_bin(), tmpdir, tmpdir), 4);
    expect_has(out, "minimum blocks per multiprocessor changed from 2 to 4");
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(diff_tool_and_usage_errors)
{
    make_tmpdir();
    char *out;
    write_manifest("ok.json", BASE);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/bad.json", tmpdir);
    write_file(path, "{\"format\": 1, \"kernels\": [\n");
    snprintf(path, sizeof path, "%s/v2.json", tmpdir);
    write_file(path, "{\"format\": 2, \"kernels\": []}\n");
    ck_assert_int_eq(run(&out, "%s diff %s/ok.json %s/bad.json", kstub_bin(), tmpdir, tmpdir), 1);
    expect_has(out, "bad.json:");
    free(out);
    ck_assert_int_eq(run(&out, "%s diff %s/ok.json %s/v2.json", kstub_bin(), tmpdir, tmpdir), 1);
    expect_has(out, "not a kstub manifest of format 1 (\"format\" is 2)");   /* the value found (issue 39 #11) */
    free(out);
    snprintf(path, sizeof path, "%s/vs.json", tmpdir);
    write_file(path, "{\"format\": \"1.0\", \"kernels\": []}\n");
    ck_assert_int_eq(run(&out, "%s diff %s/ok.json %s/vs.json", kstub_bin(), tmpdir, tmpdir), 1);
    expect_has(out, "(\"format\" is \"1.0\")");
    free(out);
    /* Manifests of different sources: compared, with a note saying so (issue 39 #11). */
    snprintf(path, sizeof path, "%s/other.json", tmpdir);
    char *text = ks_xasprintf("{\"format\": 1, \"source\": \"t.cu\", \"kernels\": [%s]}\n", BASE);
    write_file(path, text);
    free(text);
    ck_assert_int_eq(run(&out, "%s diff %s/ok.json %s/other.json", kstub_bin(), tmpdir, tmpdir), 0);
    expect_has(out, "t.cu: note: the manifests are of different sources, 's.cu' (");
    expect_has(out, "kstub diff: no change");
    free(out);
    ck_assert_int_eq(run(&out, "%s diff %s/ok.json %s/ok.json", kstub_bin(), tmpdir, tmpdir), 0);
    expect_lacks(out, "different sources");
    free(out);
    ck_assert_int_eq(run(&out, "%s diff %s/ok.json %s/none.json", kstub_bin(), tmpdir, tmpdir), 1);
    free(out);
    ck_assert_int_eq(run(&out, "%s diff %s/ok.json", kstub_bin(), tmpdir), 2);
    free(out);
    ck_assert_int_eq(run(&out, "%s diff --format=xml a b", kstub_bin()), 2);
    free(out);
    ck_assert_int_eq(run(&out, "%s diff --help", kstub_bin()), 0);
    expect_has(out, "12 breaking changes");
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(diff_output_formats)
{
    make_tmpdir();
    char *out;
    write_manifest("old.json", BASE);
    write_manifest("new.json", SCALE("null", P_X "," P_F "," PARAM("rows", "long", 8, 8, 16))
                   "," CLAMP_F "," CLAMP_I "," OTHER "," KERNEL("fresh", "fresh", "fresh", 20,
                                                                    "null", ""));
    /* text: compiler style; --source names the real path. */
    ck_assert_int_eq(run(&out, "%s diff --source kernels/s.cu %s/old.json %s/new.json",
                         kstub_bin(), tmpdir, tmpdir), 12);
    expect_has(out, "kernels/s.cu:3: error: kernel scale_rows, parameter 3 'rows': type changed");
    expect_has(out, "kernels/s.cu:20: warning: kernel fresh added");
    expect_has(out, "kstub diff: 1 breaking change, 1 compatible change");
    free(out);

    /* github: workflow annotations, with properties escaped. */
    ck_assert_int_eq(run(&out, "%s diff --format=github --source 'a,b:c.cu' %s/old.json "
                         "%s/new.json", kstub_bin(), tmpdir, tmpdir), 12);
    expect_has(out, "::error file=a%2Cb%3Ac.cu,line=3,title=kstub diff::kernel scale_rows, "
               "parameter 3 'rows': type changed from 'int' to 'long'\n");
    expect_has(out, "::warning file=a%2Cb%3Ac.cu,line=20,title=kstub diff::kernel fresh added\n");
    free(out);

    /* json: one document; parse it. */
    ck_assert_int_eq(run(&out, "%s diff --format json %s/old.json %s/new.json 2>/dev/null",
                         kstub_bin(), tmpdir, tmpdir), 12);
    json_error_t err;
    json_t *root = json_loads(out, 0, &err);
    ck_assert_msg(root != NULL, "not JSON (%s):\n%s", err.text, out);
    ck_assert_str_eq(json_string_value(json_object_get(root, "result")), "breaking");
    ck_assert_int_eq(json_integer_value(json_object_get(root, "exit_status")), 12);
    json_t *f = json_object_get(root, "findings");
    ck_assert_uint_eq(json_array_size(f), 2);
    json_t *f0 = json_array_get(f, 0);
    ck_assert_str_eq(json_string_value(json_object_get(f0, "severity")), "error");
    ck_assert_str_eq(json_string_value(json_object_get(f0, "kind")), "param_type_changed");
    ck_assert_str_eq(json_string_value(json_object_get(f0, "kernel")), "scale_rows");
    ck_assert_str_eq(json_string_value(json_object_get(f0, "file")), "s.cu");
    ck_assert_int_eq(json_integer_value(json_object_get(f0, "line")), 3);
    json_decref(root);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- kstub check ---------------------------------------------------------------------------------- */

static const char check_cu_v1[] =
    "extern \"C\" __global__ void scale_rows(float *x, float factor, int rows) {}\n"
    "extern \"C\" __global__ void gone(int a) {}\n";
static const char check_cu_v2[] =
    "extern \"C\" __global__ void scale_rows(float *x, float factor, long rows) {}\n"
    "extern \"C\" __global__ void added(int a) {}\n";

START_TEST(check_fresh_stale_missing)
{
    make_tmpdir();
    char *out;
    char cu[PATH_MAX];
    snprintf(cu, sizeof cu, "%s/c.cu", tmpdir);
    write_file(cu, check_cu_v1);
    char args[2 * PATH_MAX + 64];
    snprintf(args, sizeof args, "%s -o %s/c --manifest %s/c.json", cu, tmpdir, tmpdir);

    /* missing */
    int rc = run(&out, "%s check %s", kstub_bin(), args);
    ck_assert_msg(rc == 4, "exit %d:\n%s", rc, out);
    expect_has(out, "/c.h: error: missing");
    expect_has(out, "/c.json: error: missing");
    expect_has(out, "to fix, run:");
    free(out);

    /* fresh, once generated with the same options */
    ck_assert_int_eq(run(&out, "%s %s", kstub_bin(), args), 0);
    free(out);
    rc = run(&out, "%s check %s", kstub_bin(), args);
    ck_assert_msg(rc == 0, "%s", out);
    expect_has(out, "up to date");
    free(out);
    /* check writes nothing */
    ck_assert_int_eq(run(&out, "ls %s | wc -l", tmpdir), 0);
    ck_assert_str_eq(out, "4\n");   /* c.cu c.h c.c c.json */
    free(out);

    /* stale: a parameter's type changed, a kernel removed, one added */
    write_file(cu, check_cu_v2);
    rc = run(&out, "%s check %s", kstub_bin(), args);
    ck_assert_msg(rc == 12, "exit %d:\n%s", rc, out);
    char line[PATH_MAX + 128];
    snprintf(line, sizeof line, "%s:1:28: error: kernel scale_rows, parameter 3 'rows': type "
             "changed from 'int' to 'long'", cu);
    expect_has(out, line);
    expect_has(out, "error: kernel gone removed");
    snprintf(line, sizeof line, "%s:2:28: warning: kernel added added", cu);
    expect_has(out, line);
    expect_has(out, "/c.h: error: out of date");
    /* The fix is the same command without "check"; running it fixes. */
    char *fix = ks_xasprintf("to fix, run:\n  %s %s\n", kstub_bin(), args);
    expect_has(out, fix);
    free(fix);
    free(out);
    ck_assert_int_eq(run(&out, "%s %s", kstub_bin(), args), 0);
    free(out);
    ck_assert_int_eq(run(&out, "%s check %s", kstub_bin(), args), 0);
    free(out);

    /* compatible only: a kernel added */
    write_file(cu, check_cu_v2);
    FILE *f = fopen(cu, "a");
    fputs("extern \"C\" __global__ void third(void) {}\n", f);
    fclose(f);
    rc = run(&out, "%s check %s", kstub_bin(), args);
    ck_assert_msg(rc == 4, "exit %d:\n%s", rc, out);
    expect_has(out, "warning: kernel third added");
    free(out);

    /* without --manifest: file-level report only */
    rc = run(&out, "%s check %s -o %s/c", kstub_bin(), cu, tmpdir);
    ck_assert_int_eq(rc, 4);
    expect_has(out, "/c.h: error: out of date");
    expect_lacks(out, "kernel third");
    free(out);

    /* same signatures, different text (another option): stale, not breaking */
    ck_assert_int_eq(run(&out, "%s %s", kstub_bin(), args), 0);
    free(out);
    rc = run(&out, "%s check %s -DUNUSED=1", kstub_bin(), args);
    ck_assert_msg(rc == 4, "exit %d:\n%s", rc, out);
    expect_has(out, "no kernel signature changed");
    free(out);

    /* a source that does not parse: tool error */
    write_file(cu, "extern \"C\" __global__ void broken(int x {}\n");
    rc = run(&out, "%s check %s", kstub_bin(), args);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 29: device variables in check and diff. A changed type, size,
 * memory space or a removed variable breaks callers; an added one does not;
 * a manifest from before variables were listed reads as having none. */
START_TEST(variables_drift)
{
    make_tmpdir();
    char *out;
    char cu[PATH_MAX];
    snprintf(cu, sizeof cu, "%s/v.cu", tmpdir);
    const char *v1 = "__constant__ float c_w[16];\n__device__ int g_count;\n__device__ double g_gone;\n"
                     "__device__ float g_space;\n__global__ void k(float *o) { o[0] = c_w[0]; }\n";
    const char *v2 = "__constant__ float c_w[8];\n__device__ long g_count;\n__device__ int g_new;\n"
                     "__constant__ float g_space;\n__global__ void k(float *o) { o[0] = c_w[0]; }\n";
    write_file(cu, v1);
    char args[2 * PATH_MAX + 64];
    snprintf(args, sizeof args, "%s -o %s/v --manifest %s/v.json", cu, tmpdir, tmpdir);
    ck_assert_int_eq(run(&out, "%s %s", kstub_bin(), args), 0);
    free(out);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/v.json", tmpdir);
    char *json = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(json);
    expect_has(json, "\"name\": \"c_w\",\n      \"c_name\": \"c_w\",\n      \"symbol\": \"c_w\",\n"
                     "      \"line\": 1,\n      \"col\": 20,\n      \"type\": \"float[16]\",\n"
                     "      \"space\": \"constant\",\n      \"size\": 64,\n      \"align\": 4,\n"
                     "      \"elem_size\": 4,\n      \"dims\": [\n        16\n      ]");
    free(json);
    char old[PATH_MAX + 16];
    snprintf(old, sizeof old, "%s/old.json", tmpdir);
    ck_assert_int_eq(rename(path, old), 0);
    write_file(cu, v2);
    int rc = run(&out, "%s check %s", kstub_bin(), args);
    ck_assert_msg(rc == 4, "exit %d:\n%s", rc, out);          /* the manifest is missing */
    free(out);
    ck_assert_int_eq(run(&out, "%s %s", kstub_bin(), args), 0);
    free(out);
    rc = run(&out, "%s diff %s %s", kstub_bin(), old, path);
    ck_assert_msg(rc == 12, "exit %d:\n%s", rc, out);
    expect_has(out, "error: variable c_w: type changed from 'float[16]' to 'float[8]'");
    expect_has(out, "error: variable c_w: 32 bytes 4-aligned, was 64 bytes 4-aligned");
    expect_has(out, "error: variable g_count: type changed from 'int' to 'long'");
    expect_has(out, "error: variable g_gone removed");
    expect_has(out, "error: variable g_space: memory space changed from __device__ to __constant__");
    expect_has(out, "warning: variable g_new added");
    free(out);
    rc = run(&out, "%s diff --format=json %s %s", kstub_bin(), old, path);
    ck_assert_int_eq(rc, 12);
    expect_has(out, "\"kind\": \"variable_space_changed\"");
    free(out);
    /* Only an addition: compatible. */
    char *v3 = ks_xasprintf("%s__managed__ int m_more;\n", v1);
    write_file(cu, v3);
    free(v3);
    char added[PATH_MAX + 16];
    snprintf(added, sizeof added, "%s/added.json", tmpdir);
    ck_assert_int_eq(run(&out, "%s %s -o %s/a --manifest %s", kstub_bin(), cu, tmpdir, added), 0);
    free(out);
    rc = run(&out, "%s diff %s %s", kstub_bin(), old, added);
    ck_assert_msg(rc == 4, "exit %d:\n%s", rc, out);
    expect_has(out, "warning: variable m_more added");
    free(out);
    write_file(cu, v2);
    /* kstub check sees a stale manifest's variables: the old one put back. */
    ck_assert_int_eq(rename(old, path), 0);
    rc = run(&out, "%s check %s", kstub_bin(), args);
    ck_assert_msg(rc == 12, "exit %d:\n%s", rc, out);
    expect_has(out, "variable g_gone removed");
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(check_output_formats)
{
    make_tmpdir();
    char *out;
    char cu[PATH_MAX];
    snprintf(cu, sizeof cu, "%s/c.cu", tmpdir);
    write_file(cu, check_cu_v1);
    char args[2 * PATH_MAX + 64];
    snprintf(args, sizeof args, "%s -o %s/c --manifest %s/c.json", cu, tmpdir, tmpdir);
    ck_assert_int_eq(run(&out, "%s %s", kstub_bin(), args), 0);
    free(out);
    write_file(cu, check_cu_v2);

    int rc = run(&out, "%s check --format=github %s", kstub_bin(), args);
    ck_assert_int_eq(rc, 12);
    char line[PATH_MAX + 160];
    snprintf(line, sizeof line, "::error file=%s,line=1,col=28,title=kstub check::kernel "
             "scale_rows, parameter 3 'rows': type changed from 'int' to 'long'\n", cu);
    expect_has(out, line);
    expect_has(out, "::warning file=");
    expect_has(out, "::error title=kstub check::to fix, run: ");
    expect_lacks(out, "--format");
    free(out);

    rc = run(&out, "%s check %s --format json 2>/dev/null", kstub_bin(), args);
    ck_assert_int_eq(rc, 12);
    json_error_t err;
    json_t *root = json_loads(out, 0, &err);
    ck_assert_msg(root != NULL, "not JSON (%s):\n%s", err.text, out);
    ck_assert_str_eq(json_string_value(json_object_get(root, "command")), "check");
    ck_assert_str_eq(json_string_value(json_object_get(root, "result")), "breaking");
    const char *fix = json_string_value(json_object_get(root, "fix"));
    ck_assert_ptr_nonnull(fix);
    ck_assert_ptr_null(strstr(fix, " check "));
    ck_assert_ptr_nonnull(strstr(fix, "--manifest"));
    int saw_missing = 0, saw_stale = 0;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(root, "findings"), i, f) {
        const char *kind = json_string_value(json_object_get(f, "kind"));
        saw_stale |= strcmp(kind, "file_out_of_date") == 0;
        saw_missing |= strcmp(kind, "file_missing") == 0;
    }
    ck_assert(saw_stale && !saw_missing);
    json_decref(root);
    free(out);

    /* Nothing to fix: "fix": null, as docs/ci.md shows (issue 39 #12). */
    ck_assert_int_eq(run(&out, "%s %s 2>&1", kstub_bin(), args), 0);
    free(out);
    ck_assert_int_eq(run(&out, "%s check %s --format=json", kstub_bin(), args), 0);
    root = json_loads(out, 0, &err);
    ck_assert_msg(root != NULL, "not JSON (%s):\n%s", err.text, out);
    ck_assert_str_eq(json_string_value(json_object_get(root, "result")), "none");
    ck_assert(json_is_null(json_object_get(root, "fix")));
    json_decref(root);
    free(out);

    ck_assert_int_eq(run(&out, "%s check %s --format=yaml", kstub_bin(), args), 2);
    free(out);
    ck_assert_int_eq(run(&out, "%s %s --format=json", kstub_bin(), args), 2);
    expect_has(out, "--format is for --list, kstub check and kstub diff");
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 39 #7: a tool error (a .cu that does not parse, a manifest that
 * cannot be read) is in --format=json and github too, with its place. */
START_TEST(tool_errors_in_every_format)
{
    make_tmpdir();
    char *out;
    char cu[PATH_MAX], man[PATH_MAX];
    snprintf(cu, sizeof cu, "%s/e.cu", tmpdir);
    write_file(cu, "__global__ void k(int *p) {}\nint x = ;\n");
    int rc = run(&out, "(cd %s && %s check e.cu -o e --format=json 2>/dev/null)", tmpdir, kstub_bin());
    ck_assert_int_eq(rc, 1);
    json_error_t err;
    json_t *root = json_loads(out, 0, &err);
    ck_assert_msg(root != NULL, "not JSON (%s):\n%s", err.text, out);
    ck_assert_str_eq(json_string_value(json_object_get(root, "result")), "error");
    ck_assert_int_eq(json_integer_value(json_object_get(root, "exit_status")), 1);
    json_t *f0 = json_array_get(json_object_get(root, "findings"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(f0, "kind")), "error");
    ck_assert_str_eq(json_string_value(json_object_get(f0, "file")), "e.cu");
    ck_assert_int_eq(json_integer_value(json_object_get(f0, "line")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(f0, "col")), 9);
    ck_assert_str_eq(json_string_value(json_object_get(f0, "message")), "expected expression");
    json_decref(root);
    free(out);
    rc = run(&out, "(cd %s && %s check e.cu -o e --format=github 2>/dev/null)", tmpdir, kstub_bin());
    ck_assert_int_eq(rc, 1);
    expect_has(out, "::error file=e.cu,line=2,col=9,title=kstub check::expected expression\n");
    free(out);
    /* a manifest that is no JSON: diff, and check reading the one on disk */
    snprintf(man, sizeof man, "%s/bad.json", tmpdir);
    write_file(man, "{\"format\": 1, \"kernels\": [\n");
    rc = run(&out, "(%s diff --format=github %s %s 2>/dev/null)", kstub_bin(), man, man);
    ck_assert_int_eq(rc, 1);
    expect_has(out, "/bad.json,line=2,col=1,title=kstub diff::invalid JSON: ");
    free(out);
    rc = run(&out, "(%s diff --format=json %s %s 2>/dev/null)", kstub_bin(), man, man);
    ck_assert_int_eq(rc, 1);
    root = json_loads(out, 0, &err);
    ck_assert_msg(root != NULL, "not JSON (%s):\n%s", err.text, out);
    ck_assert_str_eq(json_string_value(json_object_get(root, "result")), "error");
    json_decref(root);
    free(out);
    write_file(cu, "__global__ void k(int *p) {}\n");
    rc = run(&out, "(cd %s && %s e.cu -o e && echo changed >> e.h && %s check e.cu -o e --manifest bad.json "
             "--format=github 2>/dev/null)", tmpdir, kstub_bin(), kstub_bin());
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "::error file=bad.json,line=2,col=1,title=kstub check::invalid JSON: ");
    free(out);
    /* text: standard output stays empty, as before */
    rc = run(&out, "(%s diff %s %s 2>/dev/null)", kstub_bin(), man, man);
    ck_assert_int_eq(rc, 1);
    ck_assert_str_eq(out, "");
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(help_describes_build_and_ci)
{
    char *out;
    ck_assert_int_eq(run(&out, "%s --help", kstub_bin()), 0);
    expect_has(out, "kstub check");
    expect_has(out, "kstub diff");
    expect_has(out, "-MD");
    expect_has(out, "-MMD");
    expect_has(out, "-p BUILD_DIR");
    free(out);
}
END_TEST

/* ---- issue 10: hostile outputs, manifests and report text ---------------------------------------- */

static const char tiny_cu[] = "extern \"C\" __global__ void k(int a) {}\n";

/* Issue 10 #1: an output that is an input (by inode, whatever its name) or
 * another output is refused, and nothing is written. */
START_TEST(outputs_that_are_inputs_are_refused)
{
    make_tmpdir();
    char path[PATH_MAX], *out, *after;
    snprintf(path, sizeof path, "%s/x.cu", tmpdir);
    write_file(path, tiny_cu);
    snprintf(path, sizeof path, "%s/x.h", tmpdir);
    write_file(path, tiny_cu);
    static const char *const cmds[] = {
        "x.cu -o xo --manifest x.cu", "x.cu -o xo -MF ./x.cu", "x.h -o x",
        "x.cu -o xo --manifest ln.cu", "x.cu -o y --manifest y.h", "x.cu -o xo -MF xo.c",
    };
    run(NULL, "ln -s x.cu '%s/ln.cu'", tmpdir);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = run(&out, "cd '%s' && %s %s", tmpdir, kstub_bin(), cmds[i]);
        ck_assert_msg(rc == 1, "kstub %s: exit %d:\n%s", cmds[i], rc, out);
        expect_has(out, "kstub: error: ");
        free(out);
        after = read_tmp("x.cu");
        ck_assert_msg(after && strcmp(after, tiny_cu) == 0, "kstub %s overwrote x.cu", cmds[i]);
        free(after);
        after = read_tmp("x.h");
        ck_assert_msg(after && strcmp(after, tiny_cu) == 0, "kstub %s overwrote x.h", cmds[i]);
        free(after);
        after = read_tmp("xo.h");
        ck_assert_msg(after == NULL, "kstub %s wrote xo.h", cmds[i]);
        free(after);
    }
    remove_tmpdir();
}
END_TEST

/* Issue 10 #6: a destination that cannot be replaced (here a directory
 * named OUTBASE.c) fails the whole set before OUTBASE.h is replaced, and
 * no temporary or backup file is left behind. */
START_TEST(outputs_all_or_nothing_when_one_cannot_be_replaced)
{
    make_tmpdir();
    char path[PATH_MAX], *out;
    snprintf(path, sizeof path, "%s/x.cu", tmpdir);
    write_file(path, tiny_cu);
    snprintf(path, sizeof path, "%s/p.h", tmpdir);
    write_file(path, "old\n");
    snprintf(path, sizeof path, "%s/p.c", tmpdir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    int rc = run(&out, "cd '%s' && %s x.cu -o p --manifest m.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "p.c: error: cannot write: is a directory");
    free(out);
    char *h = read_tmp("p.h");
    ck_assert_msg(h && strcmp(h, "old\n") == 0, "p.h was replaced:\n%s", h ? h : "(none)");
    free(h);
    char *m = read_tmp("m.json");
    ck_assert_msg(m == NULL, "m.json was written");
    rc = run(&out, "cd '%s' && ls -a | grep -c -e '\\.tmp\\.' -e '\\.bak\\.'", tmpdir);
    ck_assert_msg(rc != 0, "left behind:\n%s", out);
    free(out);
    /* With the directory gone the same command writes everything. */
    rmdir(path);
    rc = run(&out, "cd '%s' && %s x.cu -o p --manifest m.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    h = read_tmp("p.h");
    expect_has(h, "generated by kstub");
    free(h);
    rc = run(&out, "cd '%s' && ls -a | grep -c -e '\\.tmp\\.' -e '\\.bak\\.'", tmpdir);
    ck_assert_msg(rc != 0, "left behind:\n%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 10 #8: a manifest string with a newline cannot start a line of its
 * own, so it cannot issue a workflow command (::error, ::add-mask…) in CI;
 * control characters are escaped in text, percent-encoded in github. */
START_TEST(diff_escapes_manifest_strings_in_every_format)
{
    make_tmpdir();
    char *out;
    write_manifest("old.json", KERNEL("evil\\n::error file=x::owned\\r\\u001b[31m", "evil",
                                      "evil", 3, "null", ""));
    write_manifest("new.json", "");
    const char *fmts[] = {"text", "github"};
    for (int i = 0; i < 2; i++) {
        int rc = run(&out, "%s diff --format=%s --source 'a\n::warning::src' %s/old.json "
                     "%s/new.json", kstub_bin(), fmts[i], tmpdir, tmpdir);
        ck_assert_msg(rc == 12, "%s: exit %d:\n%s", fmts[i], rc, out);
        ck_assert_msg(!strstr(out, "\n::error file=x") && !strstr(out, "\n::warning::src"),
                      "%s: a manifest string started a line:\n%s", fmts[i], out);
        ck_assert_msg(!strchr(out, '\r') && !strchr(out, '\033'),
                      "%s: raw control character in:\n%s", fmts[i], out);
        if (i == 0) {
            expect_has(out, "kernel evil\\n::error file=x::owned\\r\\x1b[31m removed");
            expect_has(out, "a\\n::warning::src: error: ");
        } else {
            expect_has(out, "::error file=a%0A%3A%3Awarning%3A%3Asrc,title=kstub diff::kernel "
                       "evil%0A::error file=x::owned%0D\\x1b[31m removed");
        }
        free(out);
    }
    /* json: escaped by the encoder, and still the same string once parsed. */
    run(&out, "%s diff --format=json %s/old.json %s/new.json", kstub_bin(), tmpdir, tmpdir);
    json_t *root = json_loads(out, 0, NULL);
    ck_assert_msg(root != NULL, "%s", out);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(root, "findings"), 0), "kernel")),
                     "evil\n::error file=x::owned\r\033[31m");
    json_decref(root);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 10 #9: kstub diff was quadratic (20,000 kernels took 65 s). Two
 * manifests of 100,000 kernels (13.7 MB each), the new one in reverse order
 * with one kernel removed, one added and one parameter type changed, half
 * of them overloads sharing a name: every change found, nothing else. How
 * long it takes is bench/drift_bench.sh's question (goal: under 1 s), not
 * this suite's (issue 19: a loaded or sanitized run must not fail it). */
#define BIG_KERNELS 100000

static void write_big_manifest(const char *name, int is_new)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"format\": 1, \"source\": \"big.cu\", \"kernels\": [\n", f);
    int first = 1;
    for (int n = 0; n < BIG_KERNELS; n++) {
        int i = is_new ? BIG_KERNELS - 1 - n : n;
        if (is_new && i == 0)
            continue;                               /* removed */
        /* even and odd kernels pair up as overloads of one name */
        /* a parameter on every tenth kernel: the pairing is what is tested */
        const char *type = is_new && i == 5 ? "long" : "int";
        fprintf(f, "%s{\"name\": \"ns::k%d\", \"c_name\": \"k%d\", \"symbol\": \"_Z2k%dv\", "
                "\"line\": %d, \"col\": 1, \"launch_bounds\": null, \"params\": [",
                first ? "" : ",", i / 2, i, i, i + 1);
        if (i % 10 == 5)
            fprintf(f, "{\"name\": \"a\", \"type\": \"%s\", \"c_type\": \"%s\", "
                    "\"size\": 4, \"align\": 4, \"offset\": 0}", type, type);
        fputs("]}\n", f);
        first = 0;
    }
    if (is_new)
        fputs(",{\"name\": \"fresh\", \"c_name\": \"fresh\", \"symbol\": \"fresh\", \"line\": 1, "
              "\"launch_bounds\": null, \"params\": []}\n", f);
    fputs("]}\n", f);
    fclose(f);
}

START_TEST(diff_of_100k_kernels_pairs_every_kernel)
{
    /* What is found, not how fast: bench/drift_bench.sh times the same
     * manifests against the 1 s goal and reports a miss. */
    make_tmpdir();
    write_big_manifest("old.json", 0);
    write_big_manifest("new.json", 1);
    char *out;
    int rc = run(&out, "%s diff %s/old.json %s/new.json", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 12, "exit %d:\n%.2000s", rc, out);
    expect_has(out, "kernel ns::k0 [k0] removed");
    expect_has(out, "kernel ns::k2 [k5], parameter 1 'a': type changed from 'int' to 'long'");
    expect_has(out, "kernel fresh added");
    expect_has(out, "kstub diff: 2 breaking changes, 1 compatible change");
    free(out);
    remove_tmpdir();
}
END_TEST

/* Each {old, new, message}: kstub diff old new refuses a malformed manifest
 * (exit 1) saying message, and calls nothing "added". */
static void diffs_refuse_malformed(const char *const cases[][3], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *out;
        int rc = run(&out, "cd '%s' && %s diff %s %s", tmpdir, kstub_bin(), cases[i][0],
                     cases[i][1]);
        ck_assert_msg(rc == 1, "diff %s %s: exit %d:\n%s", cases[i][0], cases[i][1], rc, out);
        expect_has(out, cases[i][2]);
        expect_lacks(out, "added");
        free(out);
    }
}

/* Issue 19 #13: a manifest that lists one kernel (name and symbol) twice is
 * malformed, an error naming the repeat (exit 1), on either side; it was
 * read, and diff reported "kernel added" (exit 4). Overloads (one name, two
 * symbols) are not repeats. */
START_TEST(manifest_listing_a_kernel_twice_is_malformed)
{
    make_tmpdir();
    char *out;
    write_manifest("base.json", BASE);
    write_manifest("twice.json", BASE "," OTHER);
    write_manifest("twice_overload.json", SCALE0 "," CLAMP_F "," CLAMP_I "," CLAMP_F "," OTHER);
    static const char *const cases[][3] = {
        {"base.json", "twice.json", "twice.json: error: kernel #5 repeats kernel #4 ('other', "
                                    "symbol 'other')"},
        {"twice.json", "base.json", "twice.json: error: kernel #5 repeats kernel #4"},
        {"base.json", "twice_overload.json", "twice_overload.json: error: kernel #4 repeats "
         "kernel #2 ('ns::clamp', symbol '_ZN2ns5clampEPff')"},
    };
    diffs_refuse_malformed(cases, sizeof cases / sizeof cases[0]);
    /* kstub check reads the same way: a manifest on disk with a repeat. */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/c.cu", tmpdir);
    write_file(path, tiny_cu);
    int rc = run(&out, "cd '%s' && %s c.cu -o c --manifest c.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && python3 -c 'import json; m = json.load(open(\"c.json\")); "
             "m[\"kernels\"] += m[\"kernels\"][:1]; json.dump(m, open(\"c.json\", \"w\"))' && "
             "%s check c.cu -o c --manifest c.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "check with a repeated kernel: exit %d:\n%s", rc, out);
    expect_has(out, "c.json: error: kernel #");
    expect_has(out, "repeats kernel #1");
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 26 #12: two kernels of different symbols (and names) with one C name
 * are a manifest the generator never writes: malformed (exit 1) on either
 * side of diff, naming both, where diff said "kernel added" (exit 4). An
 * overload pair keeps its own C names and is read. */
START_TEST(manifest_sharing_a_c_name_is_malformed)
{
    make_tmpdir();
    char *out;
    write_manifest("base.json", BASE);
    write_manifest("shared.json", BASE "," KERNEL("ns::other", "other", "_ZN2ns5otherEv", 14, "null", ""));
    write_manifest("shared_overload.json", SCALE0 "," CLAMP_F "," OTHER ","
                   KERNEL("ns::clamp", "ns_clamp__floatp_float", "_ZN2ns5clampEPdd", 9, "null",
                          PARAM("x", "double *", 8, 8, 0) "," PARAM("lo", "double", 8, 8, 8)));
    static const char *const cases[][3] = {
        {"base.json", "shared.json", "shared.json: error: kernel #5 ('ns::other', symbol "
         "'_ZN2ns5otherEv') has the C name 'other' of kernel #4 ('other', symbol 'other')"},
        {"shared.json", "base.json", "shared.json: error: kernel #5 ('ns::other'"},
        {"base.json", "shared_overload.json", "shared_overload.json: error: kernel #4 ('ns::clamp', "
         "symbol '_ZN2ns5clampEPdd') has the C name 'ns_clamp__floatp_float' of kernel #2"},
    };
    diffs_refuse_malformed(cases, sizeof cases / sizeof cases[0]);
    /* Overloads with their own C names are read (diff of a file with itself: no change). */
    int rc = run(&out, "cd '%s' && %s diff base.json base.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The manifest reader (manifest.c, through jansson since issue 20 #2; a
 * reader of drift.c's own from issue 10 #9 to then): strict RFC 8259, each
 * error with the file, line and column; escapes, surrogate pairs and UTF-8
 * decoded; unknown keys skipped whatever they hold; the last of duplicate
 * keys wins. */
static void write_bytes(const char *name, const char *bytes, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    fclose(f);
}

#define JSON_HEAD "{\"format\": 1, \"kernels\": ["

START_TEST(manifest_reader_is_strict_json)
{
    make_tmpdir();
    char *out;
    write_manifest("empty.json", "");
    /* Accepted: the name decoded, the unknown key with nested values
     * skipped. (A repeated key is refused below: issue 41 #17.) */
    write_manifest("ok.json", "{\"extra\": {\"a\": [1, -2.5e3, {\"b\": "
                   "[true, false, null]}]}, \"c_name\": \"k\", \"symbol\": \"k\", "
                   "\"line\": 2, \"launch_bounds\": null, \"params\": [], \"name\": "
                   "\"k\\u00e9\\ud83d\\ude00\\t\\\"q\\/\"}");
    int rc = run(&out, "%s diff %s/ok.json %s/empty.json", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 12, "exit %d:\n%s", rc, out);
    expect_has(out, "kernel k\xc3\xa9\xf0\x9f\x98\x80\\t\"q/ removed");
    free(out);

    static const struct {
        const char *name, *text;
        size_t len;           /* 0: strlen */
        const char *message;  /* with the position */
    } bad[] = {
        {"comma.json", JSON_HEAD "1,]}", 0, "comma.json:1:29: error: invalid JSON: unexpected "
         "token near ']'"},
        {"zero.json", JSON_HEAD "\n 01]}", 0, "zero.json:2:2: error: invalid JSON: invalid token "
         "near '0'"},
        {"utf8.json", JSON_HEAD "\"\xc0\x80\"]}", 0, "utf8.json:1:27: error: invalid JSON: unable "
         "to decode byte 0xc0"},
        {"surrogate.json", JSON_HEAD "\"\\ud800x\"]}", 0, "surrogate.json:1:35: error: invalid "
         "JSON: invalid Unicode '\\uD800'"},
        {"low.json", JSON_HEAD "\"\\udc00\"]}", 0, "low.json:1:34: error: invalid JSON: invalid "
         "Unicode '\\uDC00'"},
        {"nul.json", JSON_HEAD "\"a\\u0000\"]}", 0, "nul.json:1:35: error: invalid JSON: \\u0000 "
         "is not allowed"},
        {"tab.json", JSON_HEAD "\"a\tb\"]}", 0, "tab.json:1:28: error: invalid JSON: control "
         "character 0x9"},
        {"escape.json", JSON_HEAD "\"\\x41\"]}", 0, "escape.json:1:29: error: invalid JSON: "
         "invalid escape"},
        {"open.json", JSON_HEAD "\"abc", 0, "open.json:1:30: error: invalid JSON: premature end "
         "of input"},
        {"after.json", "{\"format\": 1, \"kernels\": []}\n]", 0,
         "after.json:2:1: error: invalid JSON: end of file expected"},
        {"big.json", "{\"format\": 9223372036854775808, \"kernels\": []}", 0,
         "big.json:1:30: error: invalid JSON: too big integer"},
        {"byte.json", JSON_HEAD "]}\0", 29, "byte.json:1:29: error: invalid JSON: end of file "
         "expected"},
        {"literal.json", JSON_HEAD "nul]}", 0, "literal.json:1:29: error: invalid JSON: invalid "
         "token near 'nul'"},
        {"key.json", "{\"format\": 1, kernels: []}", 0, "key.json:1:21: error: invalid JSON: "
         "string or '}' expected near 'kernels'"},
        {"empty-file.json", "", 0, "empty-file.json:1:1: error: invalid JSON: '[' or '{' "
         "expected near end of file"},
        /* jansson quotes the text near the error: a control character in it is
         * escaped by the diagnostics sink like any other (no raw ESC or newline). */
        {"ctl.json", JSON_HEAD "\x1b[31mtrue]}", 0, "ctl.json:1:27: error: invalid JSON: invalid "
         "token near '\\x1b'\n"},
        /* A repeated key at any depth is refused, never read as its last
         * value (issue 41 #17): in a parameter, in a kernel, at the top. */
        {"dupsize.json", JSON_HEAD "{\"name\": \"k\", \"params\": [{\"size\": 4, \"size\": 8}]}]}",
         0, "dupsize.json:1:69: error: invalid JSON: duplicate object key near '\"size\"'"},
        {"dupname.json", JSON_HEAD "{\"name\": \"first\", \"name\": \"k\"}]}", 0,
         "dupname.json:1:50: error: invalid JSON: duplicate object key near '\"name\"'"},
        {"dupformat.json", "{\"format\": 1, \"format\": 1, \"kernels\": []}", 0,
         "dupformat.json:1:22: error: invalid JSON: duplicate object key near '\"format\"'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_bytes(bad[i].name, bad[i].text, bad[i].len ? bad[i].len : strlen(bad[i].text));
        rc = run(&out, "cd '%s' && %s diff empty.json %s", tmpdir, kstub_bin(), bad[i].name);
        ck_assert_msg(rc == 1, "%s: exit %d:\n%s", bad[i].name, rc, out);
        expect_has(out, bad[i].message);
        free(out);
    }
    /* Nesting is bounded (jansson recurses once a level, to 2048): 100,000
     * open brackets are an error, not a stack overflow. */
    size_t depth = 100000;
    char *deep = malloc(depth);
    ck_assert_ptr_nonnull(deep);
    memset(deep, '[', depth);
    write_bytes("deep.json", deep, depth);
    free(deep);
    rc = run(&out, "cd '%s' && %s diff empty.json deep.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "deep.json:1:2049: error: invalid JSON: maximum parsing depth reached");
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 10 #17: a number of the wrong type in a manifest is an error naming
 * the field (it was read as 0: a bogus "size changed to 0"); kstub check
 * with a corrupt manifest on disk is a tool error (1), not a change (4); a
 * directory as input, as a template or as -T's file gets a plain message. */
static void write_whole(const char *name, const char *text)
{
    write_bytes(name, text, strlen(text));
}

START_TEST(wrong_typed_manifests_and_directories_are_errors)
{
    make_tmpdir();
    char *out, path[PATH_MAX];
    write_manifest("old.json", SCALE0);
    write_manifest("size.json", SCALE("null", P_X "," P_F "," PARAM("rows", "int", "4", 4, 12)));
    write_manifest("line.json", KERNEL("scale_rows", "scale_rows", "scale_rows", 3.5, "null",
                                       P_X "," P_F "," P_ROWS));
    write_manifest("bounds.json", SCALE("[\"256\", 0]", P_X "," P_F "," P_ROWS));
    write_manifest("nosize.json", SCALE("null", P_X "," P_F ","
                                        "{\"name\": \"rows\", \"type\": \"int\", \"c_type\": "
                                        "\"int\", \"align\": 4, \"offset\": 12}"));
    write_whole("params.json", "{\"format\": 1, \"kernels\": [{\"name\": \"k\", \"c_name\": \"k\", "
                   "\"symbol\": \"k\", \"params\": \"x\"}]}");
    write_whole("name.json", "{\"format\": 1, \"kernels\": [{\"name\": [], \"c_name\": \"k\", "
                   "\"symbol\": \"k\", \"params\": []}]}");
    write_whole("ctype.json", "{\"format\": 1, \"kernels\": [{\"name\": \"k\", \"c_name\": \"k\", "
                   "\"symbol\": \"k\", \"params\": [{\"name\": \"x\", \"c_type\": {}}]}]}");
    write_whole("param.json", "{\"format\": 1, \"kernels\": [{\"name\": \"k\", \"c_name\": \"k\", "
                   "\"symbol\": \"k\", \"params\": [\"x\"]}]}");
    write_whole("kernel.json", "{\"format\": 1, \"kernels\": [-1]}");
    write_whole("kernels.json", "{\"format\": 1, \"kernels\": {}}");
    write_whole("vars.json", "{\"format\": 1, \"kernels\": [], \"variables\": \"v\"}");
    write_whole("vname.json", "{\"format\": 1, \"kernels\": [], \"variables\": [{\"name\": "
                   "true}]}");
    static const char *const cases[][2] = {
        {"size.json", "kernel #1, parameter 3: \"size\" must be a non-negative integer, "
                      "not a string"},
        {"line.json", "kernel #1: \"line\" must be a non-negative integer, not a fraction"},
        {"bounds.json", "kernel #1: \"launch_bounds[0]\" must be a non-negative integer"},
        {"nosize.json", "kernel #1, parameter 3: \"size\" is missing"},
        /* A field of another type says so, with both types (issue 41 #17). */
        {"params.json", "kernel #1: \"params\" must be an array, not a string"},
        {"name.json", "kernel #1: \"name\" must be a string, not an array"},
        {"ctype.json", "kernel #1, parameter 1: \"c_type\" must be a string, not an object"},
        {"param.json", "kernel #1, parameter 1 must be an object, not a string"},
        {"kernel.json", "kernel #1 must be an object, not a negative integer"},
        {"kernels.json", "\"kernels\" must be an array, not an object"},
        {"vars.json", "\"variables\" must be an array, not a string"},
        {"vname.json", "variable #1: \"name\" must be a string, not a boolean"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run(&out, "%s diff %s/old.json %s/%s", kstub_bin(), tmpdir, tmpdir, cases[i][0]);
        ck_assert_msg(rc == 1, "%s: exit %d:\n%s", cases[i][0], rc, out);
        expect_has(out, cases[i][1]);
        expect_lacks(out, "changed");
        free(out);
    }

    /* kstub check: a corrupt manifest on disk. */
    snprintf(path, sizeof path, "%s/c.cu", tmpdir);
    write_file(path, tiny_cu);
    int rc = run(&out, "cd '%s' && %s c.cu -o c --manifest c.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/c.json", tmpdir);
    write_file(path, "{\"format\": 1, \"kernels\": [\n");
    rc = run(&out, "cd '%s' && %s check c.cu -o c --manifest c.json", tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "check with a corrupt manifest: exit %d:\n%s", rc, out);
    expect_has(out, "c.json:");
    free(out);

    /* Directories where files belong. */
    run(NULL, "mkdir '%s/dir.cu' '%s/tpl' '%s/tpl/header.h.in' && touch '%s/tpl/source.c.in' "
        "'%s/plain'", tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
    rc = run(&out, "cd '%s' && %s dir.cu -o d", tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "dir.cu: error: is a directory");
    expect_lacks(out, "could not parse");
    free(out);
    rc = run(&out, "cd '%s' && %s c.cu -o d -T tpl", tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "tpl/header.h.in: error: cannot read template: Is a directory");
    expect_lacks(out, "Input/output error");
    free(out);
    rc = run(&out, "cd '%s' && %s c.cu -o d -T plain", tmpdir, kstub_bin());
    ck_assert_msg(rc != 0, "exit %d:\n%s", rc, out);
    expect_has(out, "plain: error: -T takes a directory");
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 41 #19: an output that is a FIFO, a directory or a link to a device
 * is said to be what it is (it was "missing; kstub has not generated it"),
 * without opening it; removing it and running the fix gives a fresh check.
 * `kstub --list DIR` speaks of the input, not of an -o never given. */
START_TEST(check_names_what_stands_in_an_outputs_place)
{
    make_tmpdir();
    char *out, path[PATH_MAX];
    snprintf(path, sizeof path, "%s/c.cu", tmpdir);
    write_file(path, tiny_cu);
    int rc = run(&out, "cd '%s' && %s c.cu -o o", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    static const struct { const char *make, *said; } cases[] = {
        {"mkfifo o.h", "o.h: error: is a FIFO, not the file kstub generates"},
        {"mkdir o.h", "o.h: error: is a directory, not the file kstub generates"},
        {"ln -s /dev/zero o.h", "o.h: error: is a character device (through a symbolic link), "
                                "not the file kstub generates"},
        {"ln -s nowhere o.h", "o.h: error: is a symbolic link to nothing, not the file kstub "
                              "generates"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rc = run(&out, "cd '%s' && rm -rf o.h && %s && timeout 60 %s check c.cu -o o", tmpdir,
                 cases[i].make, kstub_bin());
        ck_assert_msg(rc == 4, "%s: exit %d:\n%s", cases[i].make, rc, out);
        expect_has(out, cases[i].said);
        expect_lacks(out, "missing");
        free(out);
    }
    rc = run(&out, "cd '%s' && rm -rf o.h && %s c.cu -o o && %s check c.cu -o o", tmpdir,
             kstub_bin(), kstub_bin());
    ck_assert_msg(rc == 0, "after the fix: exit %d:\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && %s --list .", tmpdir, kstub_bin());
    ck_assert_msg(rc != 0, "exit %d:\n%s", rc, out);
    expect_has(out, ".: error: is a directory, not a CUDA source file");
    expect_lacks(out, "-o");
    free(out);
    remove_tmpdir();
}
END_TEST

static Suite *drift_suite(void)
{
    Suite *s = suite_create("drift");
    TCase *tc;

    tc = tcase_create("depfile");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, depfile_lists_headers_with_escapes_and_phony_rules);
    tcase_add_test(tc, depfile_mmd_mf_mt_mq);
    tcase_add_test(tc, make_quote_escapes);
    suite_add_tcase(s, tc);

    tc = tcase_create("outputs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, unchanged_outputs_keep_mtime_changed_ones_are_replaced);
    tcase_add_test(tc, output_is_identical_from_any_directory);
    suite_add_tcase(s, tc);

    tc = tcase_create("kstub.mk");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, kstub_mk_sample_project_under_make_j);
    suite_add_tcase(s, tc);

    tc = tcase_create("compdb");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, compdb_translates_nvcc_flags);
    tcase_add_test(tc, compdb_drives_the_parse);
    suite_add_tcase(s, tc);

    tc = tcase_create("diff");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, diff_classifies_each_change, 0, NDIFF);
    tcase_add_test(tc, diff_launch_bounds_both_ways);
    tcase_add_test(tc, diff_cxx_type_change_is_one_error);
    tcase_add_test(tc, diff_tool_and_usage_errors);
    tcase_add_test(tc, diff_output_formats);
    suite_add_tcase(s, tc);

    tc = tcase_create("check");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, check_fresh_stale_missing);
    tcase_add_test(tc, check_names_what_stands_in_an_outputs_place);
    tcase_add_test(tc, variables_drift);
    tcase_add_test(tc, check_output_formats);
    tcase_add_test(tc, tool_errors_in_every_format);
    tcase_add_test(tc, help_describes_build_and_ci);
    suite_add_tcase(s, tc);

    tc = tcase_create("hostile");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, outputs_that_are_inputs_are_refused);
    tcase_add_test(tc, outputs_all_or_nothing_when_one_cannot_be_replaced);
    tcase_add_test(tc, diff_escapes_manifest_strings_in_every_format);
    tcase_add_test(tc, diff_of_100k_kernels_pairs_every_kernel);
    tcase_add_test(tc, manifest_listing_a_kernel_twice_is_malformed);
    tcase_add_test(tc, manifest_sharing_a_c_name_is_malformed);
    tcase_add_test(tc, wrong_typed_manifests_and_directories_are_errors);
    tcase_add_test(tc, manifest_reader_is_strict_json);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(drift_suite(), CK_FORK_GETENV);
}
