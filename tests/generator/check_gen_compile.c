/*
 * check_gen_compile.c — the generated code as callers meet it: compiled as
 * C99/C11/gnu17/C++17 by gcc and clang, calls that must not compile and what
 * the compiler's first lines say, strict mode, C and C++ callers' own types.
 *
 * Part of check-gen (tests/generator/gen.mk; check_gen.c runs every part,
 * CK_RUN_SUITE=gen-compile this one). Run from the repository root.
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

/* Issue 26 #11: kernel parameters, a struct member and a kernel named like
 * the macros GNU C predefines (unix, linux; i386 on 32-bit x86) compiled as
 * C11 but not under -std=gnu17, where each is 1. kstub's names step aside
 * (unix_, ...) as for the runtime's macros; every language compiles the
 * output, the GNU modes included, and the ABI is unchanged. */
START_TEST(gnu_predefined_macro_names_step_aside)
{
    make_tmpdir();
    write_text_in(tmpdir, "gnu.cu",
                  "struct Os { int linux; float unix; };\n"
                  "__global__ void sys(int unix, float *linux, struct Os i386) { }\n"
                  "__global__ void linux(int *p) { }\n");
    char *out;
    int rc = run(&out, "%s %s/gnu.cu -o %s/gnu.kstub --manifest %s/gnu.json", kstub_bin(), tmpdir, tmpdir,
                 tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/gnu.kstub.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_msg(strstr(h, " unix_,") && strstr(h, "*linux_,") && strstr(h, " i386_)") &&
                  strstr(h, "int linux_;") && strstr(h, "linux__kernel"), "names not stepped aside in %s", path);
    free(h);
    snprintf(path, sizeof path, "%s/use.c", tmpdir);
    write_text_in(tmpdir, "use.c", "#include \"gnu.kstub.h\"\nint use(void);\nint use(void) { return 0; }\n");
    for (size_t c = 0; c < NCOMPILERS; c++) {
        const char *files[] = {"use.c", "gnu.kstub.c"};
        for (size_t f = 0; f < 2; f++) {
            snprintf(path, sizeof path, "%s/%s", tmpdir, files[f]);
            rc = compile(&out, (int)c, path, tmpdir);
            ck_assert_msg(rc == 0, "%s %s: %s does not compile:\n%s", compilers[c].compiler,
                          compilers[c].lang, files[f], out);
            free(out);
        }
    }
    remove_tmpdir();
}
END_TEST

START_TEST(generated_code_compiles)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s tests/golden/basic.cu --embed tests/golden/basic.ptx -o %s/basic.kstub",
                 kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "%s tests/golden/basic.cu -o %s/noimage.kstub", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    /* Every header on its own, and every source file. */
    const char *files[] = {"basic.kstub.h", "basic.kstub.c", "noimage.kstub.c"};
    for (size_t f = 0; f < 3; f++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[f]);
        rc = compile(&out, _i, path, tmpdir);
        ck_assert_msg(rc == 0, "%s %s: %s does not compile:\n%s", compilers[_i].compiler,
                      compilers[_i].lang, files[f], out);
        free(out);
    }
    /* The other golden outputs as committed (their headers included from tests/golden). */
    for (size_t g = 1; g < gen_ngoldens; g++) {
        char path[128];
        snprintf(path, sizeof path, "tests/golden/%s.kstub.c", goldens[g].name);
        rc = compile(&out, _i, path, "tests/golden");
        ck_assert_msg(rc == 0, "%s %s: %s does not compile:\n%s", compilers[_i].compiler,
                      compilers[_i].lang, path, out);
        free(out);
    }
    /* The C mirrors of every record and vector kind: their static asserts
     * must hold under every compiler (CUtensorMap needs cuda.h: C11 and C++). */
    const char *corpus[] = {"abi_records", "abi_vectors", "abi_names", "abi_tensormap", "abi_globals"};
    for (size_t f = 0; f < 5; f++) {
        if (f == 3 && strstr(compilers[_i].lang, "c99"))
            continue;
        rc = run(&out, "%s tests/corpus/%s.cu -o %s/%s", kstub_bin(), corpus[f], tmpdir, corpus[f]);
        ck_assert_msg(rc == 0, "%s", out);
        free(out);
        char path[160];
        snprintf(path, sizeof path, "%s/%s.c", tmpdir, corpus[f]);
        rc = compile(&out, _i, path, tmpdir);
        ck_assert_msg(rc == 0, "%s %s: %s does not compile:\n%s", compilers[_i].compiler,
                      compilers[_i].lang, path, out);
        free(out);
    }
    /* And the stubs of the demo's kernels, when make has generated them. */
    const char *gen[] = {"build/gen/vector_ops.kstub.c", "build/gen/reduce.kstub.c",
                         "build/gen/scalars.kstub.c", "build/gen/records.kstub.c",
                         "build/gen/templates.kstub.c"};
    for (size_t f = 0; f < 5; f++) {
        if (!exists(gen[f]))
            continue;
        rc = compile(&out, _i, gen[f], "build/gen");
        ck_assert_msg(rc == 0, "%s %s: %s does not compile:\n%s", compilers[_i].compiler,
                      compilers[_i].lang, gen[f], out);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

/* A file of tmpdir compiles as C11 and as C++17 under gcc and clang. */
static void compiles_as_c11_and_cxx17(const char *path)
{
    for (size_t c = 0; c < NCOMPILERS; c++) {
        if (!modern(compilers[c].lang))
            continue;
        char *out;
        int rc = compile(&out, (int)c, path, tmpdir);
        ck_assert_msg(rc == 0, "%s %s: %s:\n%s", compilers[c].compiler, compilers[c].lang, path, out);
        free(out);
    }
}

/* Issue 23: a template's one C name over its instances, or the header's
 * reason for none: one instance; instances that differ only in template
 * arguments; the name taken (here by another kernel's _args struct). */
START_TEST(template_generic_name_or_the_reason)
{
    make_tmpdir();
    char *out, path[128];
    snprintf(path, sizeof path, "%s/g.cu", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("#include <cstdint>\n"
          "template <typename T> __global__ void pick(T *out, T v, int n) {}\n"
          "template __global__ void pick<float>(float *, float, int);\n"
          "template __global__ void pick<int>(int *, int, int);\n"
          "template __global__ void pick<double>(double *, double, int);\n"
          "template <typename T> __global__ void alone(T *out) {}\n"
          "template __global__ void alone<float>(float *);\n"
          "template <int N> __global__ void unrolled(float *out) {}\n"
          "template __global__ void unrolled<2>(float *);\n"
          "template __global__ void unrolled<4>(float *);\n"
          "extern \"C\" __global__ void bar(int x) {}\n"
          "template <typename T> __global__ void bar_args(T *out) {}\n"
          "template __global__ void bar_args<float>(float *);\n"
          "template __global__ void bar_args<int>(int *);\n", f);
    fclose(f);
    int rc = run(&out, "%s %s -o %s/g", kstub_bin(), path, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/g.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(strstr(h, "#define pick(...) KS__PICK_COUNT(4, ks__pick_call, pick_takes_4_arguments_launch_out_v_n, "
                         "__VA_ARGS__)(__VA_ARGS__)\n")
                  != NULL && strstr(h, "#define ks__pick_call(launch, out, v, n)") != NULL, "no pick() macro");
    ck_assert_msg(strstr(h, "inline ks_status pick(ks_launch launch, double * out, double v, int n)") != NULL, "%s", h);
    ck_assert_msg(strstr(h, "No alone() over the instances of alone (alone_float):\n * one instance") != NULL, "%s", h);
    ck_assert_msg(strstr(h, "No unrolled() over the instances of unrolled (unrolled_2, unrolled_4):\n * two "
                            "instances take the same parameter types") != NULL, "%s", h);
    ck_assert_msg(strstr(h, "No bar_args() over the instances of bar_args (bar_args_float, bar_args_int):\n"
                            " * the name is taken") != NULL, "%s", h);   /* bar's _args struct */
    free(h);
    /* Every language compiles it, and pick() picks. */
    snprintf(path, sizeof path, "%s/use.c", tmpdir);
    f = fopen(path, "w");
    fputs("#include \"g.h\"\nvoid call(float *f, int *i, double *d);\nvoid call(float *f, int *i, double *d)\n"
          "{\n    (void)pick(ks_launch_1d(1, 1), f, 1.0f, 1);\n    (void)pick(ks_launch_1d(1, 1), i, 1, 1);\n"
          "    (void)pick(ks_launch_1d(1, 1), d, 1.0, 1);\n}\n", f);
    fclose(f);
    compiles_as_c11_and_cxx17(path);
    snprintf(path, sizeof path, "%s/g.c", tmpdir);
    compiles_as_c11_and_cxx17(path);
    remove_tmpdir();
}
END_TEST

/* Issue 31 #6: instances that differ in an empty tag (std::bool_constant)
 * as well: the instance stubs pack the tag, so the one name takes no
 * argument for it, in C11 (the macro) and C++17 (the overloads); instances
 * that differ in the tag alone get the header's reason for no one name. */
START_TEST(template_generic_name_over_tag_instances)
{
    make_tmpdir();
    char *out, path[160];
    int rc = run(&out, "%s tests/corpus/abi_tag_instances.cu -o %s/t", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/t.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(strstr(h, "#define ks__matmul_backward_bias_kernel9_call(launch, dbias, dout, B, T, OC) \\")
                  != NULL, "%s", h);
    ck_assert_msg(strstr(h, "inline ks_status matmul_backward_bias_kernel9(ks_launch launch, double * dbias, "
                            "const float * dout, int B, int T, int OC)\n{\n    return "
                            "matmul_backward_bias_kernel9_double_false(launch, dbias, dout, B, T, OC);") != NULL,
                  "%s", h);
    ck_assert_msg(strstr(h, "No scale_into() over the instances of scale_into (scale_into_true, "
                            "scale_into_false):\n * two instances take the same parameter types") != NULL, "%s", h);
    free(h);
    snprintf(path, sizeof path, "%s/use.c", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("#include \"t.h\"\nvoid call(float *f, double *d, const float *in);\n"
          "void call(float *f, double *d, const float *in)\n{\n"
          "    (void)matmul_backward_bias_kernel9(ks_launch_1d(1, 1), f, in, 1, 2, 3);\n"
          "    (void)matmul_backward_bias_kernel9(ks_launch_1d(1, 1), d, in, 1, 2, 3);\n"
          "    (void)scale_into_true(ks_launch_1d(1, 1), f, in, 2.0f);\n}\n", f);
    fclose(f);
    compiles_as_c11_and_cxx17(path);
    remove_tmpdir();
}
END_TEST

/* Issue 30 #6: a C++ caller passes the application's own records (a class
 * template's specializations, a plain struct, a struct in a namespace) from
 * a header host C++ can include, with that header included beside the
 * generated one: no conversion to the mirror, no redefinition of struct Cfg.
 * A C caller passes the mirrors; the generated .c compiles either way. */
static const char own_hpp[] =
    "#pragma once\n"
    "template <typename T> struct Params { T *out; const T *in; T scale; int n; };\n"
    "struct Cfg { int rows, cols; float eps; };\n"
    "namespace geo { struct Box { float lo[3], hi[3]; }; }\n";
static const char own_cu[] =
    "#include \"params.hpp\"\n"
    "template <typename T> __global__ void apply(Params<T> p) {}\n"
    "template __global__ void apply<float>(Params<float>);\n"
    "template __global__ void apply<double>(Params<double>);\n"
    "__global__ void with_cfg(Cfg c, float *x) {}\n"
    "__global__ void in_box(geo::Box b, const Cfg *cfgs, int n) {}\n";
static const char own_cpp[] =
    "#include \"params.hpp\"\n#include \"own.h\"\n"
    "int use(float *f, double *d, Cfg *cfgs);\n"
    "int use(float *f, double *d, Cfg *cfgs)\n{\n"
    "    Params<float> pf = {f, f, 2.0f, 4};\n    Params<double> pd = {d, d, 2.0, 4};\n"
    "    Cfg c = {1, 2, 0.5f};\n    geo::Box b = {{0, 0, 0}, {1, 1, 1}};\n"
    "    ks_launch l = ks_launch_1d(1, 32);\n"
    "    int rc = apply_float(l, pf) | apply_double(l, pd) | apply(l, pf) | apply(l, pd);\n"
    "    return rc | with_cfg(l, c, f) | in_box(l, b, cfgs, 1);\n}\n";
static const char own_c[] =
    "#include \"own.h\"\nint use(float *f, double *d);\nint use(float *f, double *d)\n{\n"
    "    Params_float pf = {f, f, 2.0f, 4};\n    Params_double pd = {d, d, 2.0, 4};\n"
    "    Cfg c = {1, 2, 0.5f};\n    ks_launch l = ks_launch_1d(1, 32);\n"
    "    return apply_float(l, pf) | apply_double(l, pd) | with_cfg(l, c, f);\n}\n";

START_TEST(cxx_callers_pass_their_own_records)
{
    make_tmpdir();
    const char *files[][2] = {{"params.hpp", own_hpp}, {"own.cu", own_cu}, {"use.cpp", own_cpp},
                              {"use.c", own_c}};
    char path[160], *out;
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[i][0]);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(files[i][1], f);
        fclose(f);
    }
    int rc = run(&out, "%s %s/own.cu -o %s/own", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/own.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(strstr(h, "#ifdef __cplusplus\n#include \"params.hpp\"") != NULL, "%s", h);
    ck_assert_msg(strstr(h, "typedef ::Params<float> Params_float;\nKS_STATIC_ASSERT(sizeof(Params_float) == 24,")
                  != NULL, "%s", h);
    ck_assert_msg(strstr(h, "typedef ::geo::Box geo_Box;") != NULL, "%s", h);
    ck_assert_msg(strstr(h, "typedef ::Cfg Cfg;") != NULL, "%s", h);
    free(h);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        int cxx = strstr(compilers[c].lang, "c++") != NULL;
        snprintf(path, sizeof path, "%s/%s", tmpdir, cxx ? "use.cpp" : "use.c");
        rc = compile(&out, (int)c, path, tmpdir);
        ck_assert_msg(rc == 0, "%s %s: %s:\n%s", compilers[c].compiler, compilers[c].lang, path, out);
        free(out);
        snprintf(path, sizeof path, "%s/own.c", tmpdir);
        rc = compile(&out, (int)c, path, tmpdir);
        ck_assert_msg(rc == 0, "%s %s: %s:\n%s", compilers[c].compiler, compilers[c].lang, path, out);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

/* Issue 39 #18, #19: a parameter's type from an application header. A
 * header the caller's language cannot compile on its own (one that
 * includes curand_kernel.h, holds device code through macros, is not
 * self-contained, or has an unused static array) is mirrored instead of
 * included, for that language, with one note naming the header and why;
 * a C header's typedef'd anonymous enum and struct inside extern "C" are
 * named by their typedefs. Each generated header compiles as C11 and
 * C++17 with gcc, clang, g++ and clang++ under -Werror. */
static const struct {
    const char *cu;
    const char *header;      /* the header the note names; NULL: no note, the header included */
    const char *note;        /* what the note says of it */
} app_header_cases[] = {
    {"curand_header", "rng_params.h", "for C and C++ callers instead of including it (compiled alone as C11: "},
    {"device_code_header", "points.h", "unknown type name '__host__'"},
    {"not_self_contained", "span.h", "unknown type name 'uint32_t'"},
    {"static_table", "codes.h", "unused variable 'code_weights'"},
    {"extern_c_typedefs", NULL, NULL},
};

/* tmpdir/x.h included by a C file, compiled as C11 and C++17 by each compiler under -Werror. */
static void compile_x_h(const char *cu)
{
    char *out, path[256];
    snprintf(path, sizeof path, "%s/use.c", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#include \"x.h\"\n", f);
    fclose(f);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        if (!strstr(compilers[c].lang, "-std=c11") && !strstr(compilers[c].lang, "-std=c++17"))
            continue;
        int rc = compile(&out, (int)c, path, tmpdir);
        ck_assert_msg(rc == 0, "%s with %s %s:\n%s", cu, compilers[c].compiler, compilers[c].lang, out);
        free(out);
    }
}

START_TEST(app_headers_included_or_mirrored)
{
    make_tmpdir();
    char *out, path[256];
    const char *cu = app_header_cases[_i].cu;
    int rc = run(&out, "%s tests/corpus/app_headers/%s.cu -o %s/x 2>&1", kstub_bin(), cu, tmpdir);
    ck_assert_msg(rc == 0, "%s:\n%s", cu, out);
    const char *hdr = app_header_cases[_i].header;
    if (hdr) {
        const char *note = strstr(out, hdr);
        ck_assert_msg(note && strstr(note, ": note: the generated header mirrors this header's types") &&
                      strstr(note, app_header_cases[_i].note), "%s: no note for %s:\n%s", cu, hdr, out);
    } else {
        ck_assert_msg(strstr(out, "note:") == NULL, "%s:\n%s", cu, out);
    }
    free(out);
    snprintf(path, sizeof path, "%s/x.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(h);
    if (hdr) {
        char inc[64];
        snprintf(inc, sizeof inc, "/%s\"", hdr);
        ck_assert_msg(strstr(h, inc) == NULL, "%s: the generated header includes %s", cu, hdr);
    } else {
        ck_assert_msg(strstr(h, "/fbase.h\" /* the application's own types") && strstr(h, "sizeof(fbase_t) ==") &&
                      strstr(h, "sizeof(fseq_t) ==") && strstr(h, "const fbase_t *s") &&
                      !strstr(h, "enum fbase_t *") && !strstr(h, "(enum fbase_t)"), "%s: not named by "
                      "the typedefs:\n%.2000s", cu, h);
    }
    free(h);
    compile_x_h(cu);
    remove_tmpdir();
}
END_TEST

/* Issue 38: a header is compiled alone only in a language whose verdict
 * can change the output. Holder<float>::Params and Derived are mirrored
 * for C and C++ whatever the header's trials would say, so no trial runs
 * (none in the trial cache) and no note names the header, which would
 * fail both; the mirrors compile for C11 and C++17 callers. */
START_TEST(app_header_trials_only_where_they_decide)
{
    make_tmpdir();
    char *out, path[256];
    int rc = run(&out, "%s --cache-dir %s/cache tests/corpus/app_headers/untakeable_types.cu -o %s/x 2>&1",
                 kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "untakeable.h") == NULL, "a note names the header:\n%s", out);
    free(out);
    rc = run(&out, "ls %s/cache | grep -c '[.]trial$'", tmpdir);
    ck_assert_msg(atoi(out) == 0, "trials were run and cached: %s", out);
    free(out);
    snprintf(path, sizeof path, "%s/x.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(strstr(h, "untakeable.h\"") == NULL, "the generated header includes untakeable.h");
    free(h);
    compile_x_h("untakeable_types.cu");
    remove_tmpdir();
}
END_TEST

static const char *const compile_fail_cases[] = {
    "wrong_pointer_type.c", "too_few_arguments.c", "too_many_arguments.c",
    "missing_launch.c", "double_pointer_for_float.c", "const_dropped.c",
    "wrong_struct_type.c", "wrong_vector_type.c", "enum_for_int.c", "half_for_float.c",
    "strict_wrong_enum.c", "strict_scalar_mismatch.c", "strict_double_for_float.c",
    "node_wrong_pointer_type.c", "strict_node_double_for_float.c",
    "default_wrong_pointer_type.c", "default_node_int_pointer.c",
    "node_set_another_kernels_node.c", "nodes_set_another_kernels_nodes.c",
    "generic_no_instance.c", "generic_second_pointer.c",
    "function_pointer_wrong_type.c", "function_pointer_from_void_pointer.c",
    "strict_function_pointer_null.c", "null_literal_for_pointer.c",
    "global_double_pointer_for_float.c", "global_default_wrong_pointer.c", "global_wrong_struct.c", "strict_global_scalar.c",
    "global_set_wrong_vector.c",
    "cxx_int_for_own_enum.c", "cxx_other_enum_for_own_enum.c", "cxx_int_for_nested_own_enum.c",
    "cxx_own_enum_argument_no_instance.c", "generic_c99.c",
};
#define NFAILS (sizeof compile_fail_cases / sizeof compile_fail_cases[0])

/* The first line of a compiler's report that is a diagnostic (file:line:col:
 * error/warning/note): gcc's "In file included from" and "In function"
 * lines before it say where, not what. */
static const char *first_diagnostic(const char *out)
{
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), l);
        if (strstr(line, ": error: ") || strstr(line, ": warning: ") || strstr(line, ": note: "))
            return l;
    }
    return NULL;
}

static int count_lines(const char *out)
{
    int n = 0;
    for (const char *c = out; *c; c++)
        n += *c == '\n';
    return n + (*out && out[strlen(out) - 1] != '\n');
}

/* A directive of a compile-fail case: the text after "/" "* key: " up to
 * the comment's end, trailing blanks dropped; "" when there is none. */
static void directive(const char *text, const char *key, char *val, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, "/* %s: ", key);
    const char *d = strstr(text, pat);
    *val = '\0';
    if (!d)
        return;
    d += strlen(pat);
    const char *end = strstr(d, "*/");
    size_t n = end ? (size_t)(end - d) : strlen(d);
    snprintf(val, size, "%.*s", (int)(n < size - 1 ? n : size - 1), d);
    for (size_t e = strlen(val); e > 0 && val[e - 1] == ' '; e--)
        val[e - 1] = '\0';
}

START_TEST(wrong_calls_do_not_compile)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s kernels/vector_ops.cu -o %s/vector_ops.kstub", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "%s kernels/records.cu -o %s/records.kstub", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char src[128];
    snprintf(src, sizeof src, "tests/compile_fail/%s", compile_fail_cases[_i]);
    char *text = ks_read_file(src, NULL);
    ck_assert_ptr_nonnull(text);
    if (strstr(text, "templates.kstub.h")) {   /* a template's one C name */
        rc = run(&out, "%s kernels/templates.cu -o %s/templates.kstub", kstub_bin(), tmpdir);
        ck_assert_msg(rc == 0, "%s", out);
        free(out);
    }
    if (strstr(text, "abi_globals.kstub.h")) {   /* device variables' accessors */
        rc = run(&out, "%s tests/corpus/abi_globals.cu -o %s/abi_globals.kstub", kstub_bin(), tmpdir);
        ck_assert_msg(rc == 0, "%s", out);
        free(out);
    }
    if (strstr(text, "cxx_own_enums.kstub.h")) {   /* C++ callers' own enums (issue 30 #6) */
        rc = run(&out, "%s tests/corpus/real/cxx_own_enums.cu -o %s/cxx_own_enums.kstub", kstub_bin(), tmpdir);
        ck_assert_msg(rc == 0, "%s", out);
        free(out);
    }
    if (strstr(text, "abi_function_pointers.kstub.h")) {   /* device function pointers */
        rc = run(&out, "%s tests/corpus/abi_function_pointers.cu -o %s/abi_function_pointers.kstub",
                 kstub_bin(), tmpdir);
        ck_assert_msg(rc == 0, "%s", out);
        free(out);
    }
    char expect[64] = "", only[64] = "", c_expect[128] = "";
    /* The text up to the comment's end: strict cases name kernel and parameter. */
    sscanf(text, "/* expect: %63[^*]", expect);
    for (size_t e = strlen(expect); e > 0 && expect[e - 1] == ' '; e--)
        expect[e - 1] = '\0';
    directive(text, "c-expect", c_expect, sizeof c_expect);   /* what the C11 compilers' message says */
    /* clang's, where it differs: a pointer of another type is reported against
     * a struct named for kernel, parameter and type (kstub_types.h) */
    char clang_c_expect[160];
    directive(text, "clang-c-expect", clang_c_expect, sizeof clang_c_expect);
    /* no-werror: the error must come without -Werror (the default mode's pointer check) */
    int no_werror = strstr(text, "/* no-werror") != NULL;
    const char *o = strstr(text, "/* only: ");
    if (o)
        sscanf(o, "/* only: %63[^*]", only);   /* e.g. "c11 c++17": strict mode needs C11 or C++ */
    /* Issue 30 #3-#5: where the report starts (the caller's line), how long
     * it is, the type the C compilers name as given, text it must not have. */
    char at_line[16], max_lines[16], clang_max_lines[16], c99_max_lines[16], clang_c99_max_lines[16];
    char c_given[64], lacks[96];
    directive(text, "at-line", at_line, sizeof at_line);
    directive(text, "max-lines", max_lines, sizeof max_lines);   /* gcc, g++ */
    directive(text, "clang-max-lines", clang_max_lines, sizeof clang_max_lines);
    directive(text, "c99-max-lines", c99_max_lines, sizeof c99_max_lines);   /* gcc -std=c99, where set */
    directive(text, "clang-c99-max-lines", clang_c99_max_lines, sizeof clang_c99_max_lines);
    char cxx_max_lines[16];
    directive(text, "cxx-max-lines", cxx_max_lines, sizeof cxx_max_lines);   /* g++, clang++, where set */
    directive(text, "c-given", c_given, sizeof c_given);
    directive(text, "lacks", lacks, sizeof lacks);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        if (*only && !strstr(only, strstr(compilers[c].lang, "-std=") + 5))
            continue;
        rc = no_werror ? compile_lenient(&out, (int)c, src, tmpdir) : compile(&out, (int)c, src, tmpdir);
        ck_assert_msg(rc != 0, "%s compiled with %s %s, but must not", src, compilers[c].compiler,
                      compilers[c].lang);
        int is_clang = strncmp(compilers[c].compiler, "clang", 5) == 0;
        const char *says = is_clang && *clang_c_expect ? clang_c_expect : c_expect;
        ck_assert_msg(!*says || !strstr(compilers[c].lang, "c11") || strstr(out, says) != NULL,
                      "%s with %s: the diagnostic does not say '%s':\n%s", src, compilers[c].compiler,
                      says, out);
        ck_assert_msg(strstr(out, expect) != NULL, "%s with %s: the diagnostic does not name "
                      "'%s':\n%s", src, compilers[c].compiler, expect, out);
        int is_c = strstr(compilers[c].lang, "c++") == NULL;
        if (*at_line) {
            char want[160];
            snprintf(want, sizeof want, "%s:%s:", src, at_line);
            const char *first = first_diagnostic(out);
            const char *eol = first ? strchr(first, '\n') : NULL;
            ck_assert_msg(first && strncmp(first, want, strlen(want)) == 0 &&
                          strstr(first, ": error: ") && (!eol || strstr(first, ": error: ") < eol),
                          "%s with %s %s: the first diagnostic is not an error at %s:\n%s", src,
                          compilers[c].compiler, compilers[c].lang, want, out);
        }
        /* clang adds an "expanded from macro" note (3 lines) per macro level */
        int c99 = strstr(compilers[c].lang, "c99") != NULL;
        const char *most = !is_c && *cxx_max_lines ? cxx_max_lines : is_clang ? (c99 && *clang_c99_max_lines ? clang_c99_max_lines : clang_max_lines)
                                    : (c99 && *c99_max_lines ? c99_max_lines : max_lines);
        if (*most)
            ck_assert_msg(count_lines(out) <= atoi(most), "%s with %s %s: %d lines, more than %s:\n%s",
                          src, compilers[c].compiler, compilers[c].lang, count_lines(out), most, out);
        if (*c_given && is_c)
            ck_assert_msg(strstr(out, c_given) != NULL, "%s with %s %s: the given type '%s' is not named:\n%s",
                          src, compilers[c].compiler, compilers[c].lang, c_given, out);
        for (char *l = lacks, *bar; *l; l = bar ? bar + 3 : l + strlen(l)) {   /* "a | b" */
            bar = strstr(l, " | ");
            char one[96];
            snprintf(one, sizeof one, "%.*s", (int)(bar ? (size_t)(bar - l) : strlen(l)), l);
            ck_assert_msg(strstr(out, one) == NULL, "%s with %s %s: the report says '%s':\n%s", src,
                          compilers[c].compiler, compilers[c].lang, one, out);
        }
        /* "names <compiler> <std>: a | b | ...": what this compiler's report
         * must name (kernel, parameter, the type wanted, the type given), as
         * it spells them */
        char key[64], names[256];
        snprintf(key, sizeof key, "names %s %s", compilers[c].compiler, strstr(compilers[c].lang, "-std=") + 5);
        directive(text, key, names, sizeof names);
        for (char *l = names, *bar; *l; l = bar ? bar + 3 : l + strlen(l)) {
            bar = strstr(l, " | ");
            char one[128];
            snprintf(one, sizeof one, "%.*s", (int)(bar ? (size_t)(bar - l) : strlen(l)), l);
            ck_assert_msg(strstr(out, one) != NULL, "%s with %s %s: the report does not name '%s':\n%s", src,
                          compilers[c].compiler, compilers[c].lang, one, out);
        }
        free(out);
    }
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(strict_mode_accepts_exact_types)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s kernels/vector_ops.cu -o %s/vector_ops.kstub && %s kernels/records.cu "
                 "-o %s/records.kstub", kstub_bin(), tmpdir, kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        if (!modern(compilers[c].lang))
            continue;
        rc = compile(&out, (int)c, "tests/compile_ok/strict_ok.c", tmpdir);
        ck_assert_msg(rc == 0, "%s: strict mode rejects a correct call:\n%s",
                      compilers[c].compiler, out);
        free(out);
    }
    /* A template's one C name, in C11 and C++17. */
    rc = run(&out, "%s kernels/templates.cu -o %s/templates.kstub", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        if (!modern(compilers[c].lang))
            continue;
        rc = compile(&out, (int)c, "tests/compile_ok/generic_ok.c", tmpdir);
        ck_assert_msg(rc == 0, "%s %s: a template's one C name rejects a correct call:\n%s",
                      compilers[c].compiler, compilers[c].lang, out);
        free(out);
    }
    /* The default mode's macro form accepts what C accepts, in every language. */
    for (size_t c = 0; c < NCOMPILERS; c++) {
        rc = compile(&out, (int)c, "tests/compile_ok/default_ok.c", tmpdir);
        ck_assert_msg(rc == 0, "%s %s: the default mode rejects a call C accepts:\n%s",
                      compilers[c].compiler, compilers[c].lang, out);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

/* Issue 29: device variables' accessors take their element types in every
 * language, and strict mode's exact ones in C11 and C++17. */
START_TEST(global_accessors_compile)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s tests/corpus/abi_globals.cu -o %s/abi_globals.kstub", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        rc = compile(&out, (int)c, "tests/compile_ok/globals_ok.c", tmpdir);
        ck_assert_msg(rc == 0, "%s %s: an accessor refuses a correct call:\n%s",
                      compilers[c].compiler, compilers[c].lang, out);
        free(out);
        if (!strstr(compilers[c].lang, "c11") && !strstr(compilers[c].lang, "c++17"))
            continue;
        rc = run(&out, "%s %s -DGLOBALS_STRICT -Wall -Wextra -Wpedantic -Werror -Iinclude/kstub -I%s -c "
                 "tests/compile_ok/globals_ok.c -o /dev/null", compilers[c].compiler,
                 compilers[c].lang, tmpdir);
        ck_assert_msg(rc == 0, "%s %s: strict mode refuses an exact accessor call:\n%s",
                      compilers[c].compiler, compilers[c].lang, out);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

/* Issue 18, item 9: a device function pointer's parameter takes the
 * caller's function pointer of that type, the generated typedef's pointer
 * and NULL (C99, C11, C++17, gcc and clang, -Wpedantic -Werror); strict
 * mode the exact type (NULL written as a typed null pointer). */
START_TEST(function_pointer_arguments_compile)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s tests/corpus/abi_function_pointers.cu -o %s/abi_function_pointers.kstub",
                 kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        rc = compile(&out, (int)c, "tests/compile_ok/function_pointers_ok.c", tmpdir);
        ck_assert_msg(rc == 0, "%s %s: a function pointer argument is refused:\n%s",
                      compilers[c].compiler, compilers[c].lang, out);
        free(out);
        if (!modern(compilers[c].lang))
            continue;
        rc = run(&out, "%s %s -DFP_STRICT -Wall -Wextra -Wpedantic -Werror -Iinclude/kstub -I%s -c "
                 "tests/compile_ok/function_pointers_ok.c -o /dev/null", compilers[c].compiler,
                 compilers[c].lang, tmpdir);
        ck_assert_msg(rc == 0, "%s %s: strict mode refuses an exact function pointer:\n%s",
                      compilers[c].compiler, compilers[c].lang, out);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

Suite *gen_compile_suite(void)
{
    Suite *s = suite_create("gen-compile");
    TCase *tc;
    tc = tcase_create("compile");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, generated_code_compiles, 0, NCOMPILERS);
    tcase_add_test(tc, gnu_predefined_macro_names_step_aside);
    tcase_add_loop_test(tc, wrong_calls_do_not_compile, 0, NFAILS);
    tcase_add_test(tc, strict_mode_accepts_exact_types);
    tcase_add_test(tc, function_pointer_arguments_compile);
    tcase_add_test(tc, global_accessors_compile);
    tcase_add_test(tc, template_generic_name_or_the_reason);
    suite_add_tcase(s, tc);

    /* How C and C++ callers meet the generated header (issues 30, 31). */
    tc = tcase_create("callers");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, template_generic_name_over_tag_instances);
    tcase_add_test(tc, cxx_callers_pass_their_own_records);
    tcase_add_loop_test(tc, app_headers_included_or_mirrored, 0,
                        (int)(sizeof app_header_cases / sizeof app_header_cases[0]));
    tcase_add_test(tc, app_header_trials_only_where_they_decide);
    suite_add_tcase(s, tc);
    return s;
}
