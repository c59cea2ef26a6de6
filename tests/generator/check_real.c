/*
 * check_real.c — kstub on .cu files as real projects write them (issue 14):
 * host code beside the kernels, template kernels instantiated only by host
 * code, kernels in project headers (--kernels-in), what clang's CUDA mode
 * lacks and nvcc has (generator/front/compat.c), internal-linkage kernels named in
 * notes, and two files of one name in two folders linked into one program
 * with kstub.mk. The ABI of every stub against nvcc's PTX is check-abi's
 * job (tests/generator/check_abi.c runs over the same files).
 *
 *   KSTUB=build/bin/kstub NVCC=nvcc KSTUB_LIBDIR=build/lib build/tests/check_real
 *
 * Run from the repository root (make check-real does).
 */
#include "model/model.h"
#include "base/util.h"
#include "emit/emit.h"
#include "model/naming.h"
#include "front/walk.h"
#include "symbol.h"
#include "testutil.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *kstub_bin(void)
{
    static char abs[PATH_MAX];
    const char *k = getenv("KSTUB") ? getenv("KSTUB") : "build/bin/kstub";
    return realpath(k, abs) ? abs : k;
}

static const char *nvcc_bin(void)
{
    return getenv("NVCC") ? getenv("NVCC") : "/usr/local/cuda/bin/nvcc";
}

static char tmpdir[PATH_MAX];

static void make_tmpdir(void)
{
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/kstub-real-XXXXXX", t);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char *out;
    run(&out, "rm -rf '%s'", tmpdir);
    free(out);
}

/* kstub's manifest for a file (extra options allowed); fails the test when
 * kstub does. *log gets kstub's messages. */
static json_t *manifest_of(const char *cu, const char *opts, char **log)
{
    char json[PATH_MAX + 16];
    snprintf(json, sizeof json, "%s/m.json", tmpdir);
    int rc = run(log, "%s %s %s -o %s/out.kstub --manifest %s", kstub_bin(), cu, opts, tmpdir, json);
    ck_assert_msg(rc == 0, "kstub %s %s failed (%d):\n%s", cu, opts, rc, *log);
    json_error_t err;
    json_t *m = json_load_file(json, 0, &err);
    ck_assert_msg(m != NULL, "%s: %s", json, err.text);
    return m;
}

/* The kernel of the manifest whose c_name is c_name, or NULL. */
static json_t *kernel_named(json_t *m, const char *c_name)
{
    json_t *ks = json_object_get(m, "kernels");
    for (size_t i = 0; i < json_array_size(ks); i++) {
        json_t *k = json_array_get(ks, i);
        if (strcmp(json_string_value(json_object_get(k, "c_name")), c_name) == 0)
            return k;
    }
    return NULL;
}

static void write_tmp(const char *name, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* __KSTUB__ hides code from kstub (nvcc never defines it), "// kstub:skip
 * NAME" leaves a kernel out, and the error for a kernel kstub cannot type
 * says how to skip it. */
START_TEST(kstub_macro_and_skip_directive)
{
    make_tmpdir();
    write_tmp("k.cu", "#ifndef __KSTUB__\n"
                      "__global__ void nvcc_only(int &r) {}\n"
                      "#endif\n"
                      "#ifdef __KSTUB__\n"
                      "extern \"C\" __global__ void kstub_only(float *p) {}\n"
                      "#endif\n"
                      "extern \"C\" __global__ void seen(int *p) {}\n"
                      "// kstub:skip byref\n"
                      "__global__ void byref(int &x) {}\n");
    char cu[PATH_MAX + 16], *log;
    snprintf(cu, sizeof cu, "%s/k.cu", tmpdir);
    json_t *m = manifest_of(cu, "", &log);
    ck_assert_int_eq(json_array_size(json_object_get(m, "kernels")), 2);
    ck_assert_ptr_nonnull(kernel_named(m, "seen"));
    ck_assert_ptr_nonnull(kernel_named(m, "kstub_only"));
    ck_assert_ptr_null(kernel_named(m, "nvcc_only"));
    ck_assert_ptr_null(kernel_named(m, "byref"));
    json_decref(m);
    free(log);
    /* Without the directive: an error at the parameter, naming the way out. */
    write_tmp("r.cu", "__global__ void byref(int &x) {}\n");
    snprintf(cu, sizeof cu, "%s/r.cu", tmpdir);
    int rc = run(&log, "%s %s -o %s/r", kstub_bin(), cu, tmpdir);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strstr(log, "r.cu:1:") && strstr(log, "error:") &&
                      strstr(log, "leave the kernel out with '// kstub:skip byref'"),
                  "%s", log);
    free(log);
    remove_tmpdir();
}
END_TEST

/* -p: relocatable device code comes from the compile command (-rdc=true),
 * so a template kernel instantiated only by a device-side launch gets its
 * stub; the same file compiled without it gets none, and a warning. */
START_TEST(rdc_from_compile_commands)
{
    make_tmpdir();
    char cwd[PATH_MAX], db[2 * PATH_MAX + 256], *log;
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    const char *cu = "tests/corpus/real/dynamic_launch.cu";
    for (int rdc = 1; rdc >= 0; rdc--) {
        snprintf(db, sizeof db, "[{\"directory\": \"%s\", \"file\": \"%s\", \"command\": "
                 "\"nvcc %s-std=c++17 -c %s -o dl.o\"}]\n", cwd, cu, rdc ? "-rdc=true " : "", cu);
        write_tmp("compile_commands.json", db);
        char opts[PATH_MAX + 8];
        snprintf(opts, sizeof opts, "-p %s", tmpdir);
        json_t *m = manifest_of(cu, opts, &log);
        int found = 0;
        json_t *ks = json_object_get(m, "kernels");
        for (size_t i = 0; i < json_array_size(ks); i++)
            found |= strstr(json_string_value(json_object_get(json_array_get(ks, i), "name")),
                            "count_segment") != NULL;
        ck_assert_msg(found == rdc, "rdc %d: count_segment %s:\n%s", rdc, found ? "found" : "missing", log);
        ck_assert_msg((strstr(log, "requires relocatable device code") != NULL) == !rdc, "rdc %d:\n%s", rdc, log);
        json_decref(m);
        free(log);
    }
    remove_tmpdir();
}
END_TEST

static void expect_kernel(json_t *m, const char *c_name, const char *name, const char *symbol)
{
    json_t *k = kernel_named(m, c_name);
    ck_assert_msg(k != NULL, "no kernel with C name '%s'", c_name);
    ck_assert_str_eq(json_string_value(json_object_get(k, "name")), name);
    if (symbol)
        ck_assert_str_eq(json_string_value(json_object_get(k, "symbol")), symbol);
}

/* ---- every file of the corpus parses as nvcc parses it ------------------------------------ */

static const char *const corpus[] = {
    "tests/corpus/real/train_step.cu", "tests/corpus/real/coop_reduce.cu",
    "tests/corpus/real/mixed_precision.cu", "tests/corpus/real/dynamic_launch.cu --rdc",
    "tests/corpus/real/nvcc_layout.cu", "tests/corpus/real/big_smem.cu",
    "tests/corpus/real/header_instances.cu",
    "tests/corpus/host_templates.cu", "tests/corpus/compat_cache_hints.cu",
    "tests/corpus/compat_host_math.cu", "tests/corpus/compat_openmp.cu",
    "tests/corpus/abi_host_code.cu", "tests/corpus/compat_cub.cu",
    "tests/corpus/compat_placement_new.cu", "tests/corpus/real/app_types.cu",
    "tests/corpus/real/const_c_typedef.cu", "tests/corpus/host_template_returns.cu",
    "tests/corpus/compat_implicit_includes.cu", "tests/corpus/abi_class_templates.cu",
    "tests/corpus/abi_array_pointers.cu", "tests/corpus/class_template_launches.cu",
    "tests/corpus/macro_instantiations.cu", "tests/corpus/abi_function_pointers.cu",
    "tests/corpus/real/cxx_own_enums.cu", "tests/corpus/compat_hd_redeclarations.cu",
    "tests/corpus/compat_hd_redeclarations.cu -DNDEBUG",
    "tests/corpus/abi_bases.cu",
};

/* With --body-errors every clang diagnostic counts: these files must give
 * none (each once failed in a body: host max, __stcs, omp.h, <<<>>>...). */
START_TEST(bodies_parse_as_nvcc_parses_them)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s --body-errors %s -o %s/x", kstub_bin(), corpus[_i], tmpdir);
    ck_assert_msg(rc == 0, "%s: kstub --body-errors failed (%d):\n%s", corpus[_i], rc, out);
    ck_assert_msg(strstr(out, "warning:") == NULL, "%s: warnings:\n%s", corpus[_i], out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The stubs of each file compile as C99 and C11 (gcc, clang) and as C++17
 * (g++) under -Wall -Wextra -Wpedantic -Werror: header kernels' prefixed
 * names, host instantiations' names, half and bfloat16 parameters. */
START_TEST(stubs_compile_as_c_and_cxx)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    int rc = run(&out, "%s %s -o %s/x.kstub && cd %s && "
                 "W='-Wall -Wextra -Wpedantic -Werror -I%s/include/kstub -I%s/include' && "
                 "gcc -std=c99 $W -c x.kstub.c -o c99.o && gcc -std=c11 $W -c x.kstub.c -o c11.o && "
                 "{ ! command -v clang >/dev/null || clang -std=c11 $W -c x.kstub.c -o clang.o; } && "
                 "echo '#include \"x.kstub.h\"' > x.cpp && g++ -std=c++17 $W -c x.cpp -o cxx.o",
                 kstub_bin(), corpus[_i], tmpdir, tmpdir, cwd, cuda);
    ck_assert_msg(rc == 0, "%s:\n%s", corpus[_i], out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Each kernel nvcc emits with internal linkage (a bare .entry: static, or
 * in an anonymous namespace) gets a stub whose symbol pattern matches it
 * (common/symbol.h), with and without -rdc=true. */
START_TEST(internal_kernels_get_stubs)
{
    make_tmpdir();
    char cu[256], flags[64] = "", kflags[64] = "";
    snprintf(cu, sizeof cu, "%s", corpus[_i]);
    char *space = strchr(cu, ' ');
    if (space) {
        *space = '\0';
        snprintf(flags, sizeof flags, "-rdc=true");
        snprintf(kflags, sizeof kflags, "%s", space + 1);
    }
    char *out;
    int rc = run(&out, "%s -ptx -arch=sm_90 %s %s -o %s/x.ptx && grep -h '^\\.entry' %s/x.ptx | "
                 "sed 's/^\\.entry //; s/($//'", nvcc_bin(), flags, cu, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "nvcc failed on %s:\n%s", cu, out);
    char *log;
    json_t *m = manifest_of(cu, kflags, &log);
    json_t *ks = json_object_get(m, "kernels");
    int internal = 0;
    char *save = NULL;
    for (char *sym = strtok_r(out, "\n", &save); sym; sym = strtok_r(NULL, "\n", &save)) {
        internal++;
        int matches = 0;
        for (size_t i = 0; i < json_array_size(ks); i++)
            matches += ks__symbol_match(json_string_value(json_object_get(json_array_get(ks, i), "symbol")),
                                        sym, 0);
        ck_assert_msg(matches == 1, "%s: nvcc's internal .entry %s is matched by %d kernels:\n%s", cu, sym,
                      matches, log);
    }
    ck_assert_msg(!strstr(log, "internal linkage"), "%s", log);
    printf("real: %s: %d internal-linkage kernel(s), each with a stub\n", cu, internal);
    json_decref(m);
    free(out);
    free(log);
    remove_tmpdir();
}
END_TEST

/* ---- template kernels instantiated by host code -------------------------------------------- */

START_TEST(host_instantiations_get_stubs)
{
    make_tmpdir();
    char *log;
    json_t *m = manifest_of("tests/corpus/host_templates.cu", "", &log);
    expect_kernel(m, "nn_softmax_float_4", "nn::softmax<float, 4>", "_ZN2nn7softmaxIfLi4EEEvPKT_PS1_i");
    expect_kernel(m, "nn_softmax_double_1", "nn::softmax<double, 1>", NULL);
    /* bool and enum arguments spelled as an explicit instantiation writes them */
    expect_kernel(m, "nn_activate_nn_Act_Gelu_true", "nn::activate<nn::Act::Gelu, true>",
                  "_ZN2nn8activateILNS_3ActE2ELb1EEEvPfPKfi");
    /* deduced, through a host function template's instantiations */
    expect_kernel(m, "fill_float", "fill<float>", "_Z4fillIfEvPT_S0_j");
    expect_kernel(m, "fill_double", "fill<double>", "_Z4fillIdEvPT_S0_j");
    /* its address taken, and an unsigned long argument */
    expect_kernel(m, "fill_int", "fill<int>", "_Z4fillIiEvPT_S0_j");
    expect_kernel(m, "fixed_short_8", "fixed<short, 8>", "_Z5fixedIsLm8EEvPT_i");
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 7);
    ck_assert_msg(strstr(log, "template kernel 'unused' is never explicitly instantiated"), "%s", log);
    json_decref(m);
    free(log);
    remove_tmpdir();
}
END_TEST

/* An explicit instantiation and a launch of the same specialization give
 * one stub; kstub:skip leaves a host-instantiated one out by name. */
START_TEST(host_and_explicit_instantiations_meet_once)
{
    make_tmpdir();
    char *out;
    run(&out, "cat > %s/t.cu <<'EOF'\n"
              "template <typename T> __global__ void k(T *p) { *p = T(); }\n"
              "template __global__ void k<float>(float *);\n"
              "// kstub:skip k<char>\n"
              "void host(float *f, int *i, char *c) { k<<<1, 1>>>(f); k<<<1, 1>>>(i); "
              "k<<<1, 1>>>(c); k<float><<<1, 1>>>(f); }\n"
              "EOF\n", tmpdir);
    free(out);
    char cu[PATH_MAX + 8];
    snprintf(cu, sizeof cu, "%s/t.cu", tmpdir);
    char *log;
    json_t *m = manifest_of(cu, "", &log);
    expect_kernel(m, "k_float", "k<float>", "_Z1kIfEvPT_");
    expect_kernel(m, "k_int", "k<int>", "_Z1kIiEvPT_");
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 2);
    ck_assert_msg(strstr(log, "kernel 'k<char>' left out (kstub:skip)"), "%s", log);
    json_decref(m);
    free(log);
    remove_tmpdir();
}
END_TEST

/* ---- kernels in project headers ------------------------------------------------------------- */

START_TEST(header_kernels_follow_kernels_in)
{
    make_tmpdir();
    const char *cu = "tests/corpus/real/train_step.cu";
    char *log;
    /* project (default): the header's kernels, C names prefixed by the
     * output's ("out"), notes located in the header */
    json_t *m = manifest_of(cu, "", &log);
    expect_kernel(m, "out_bias_act_forward", "bias_act_forward", "_Z16bias_act_forwardPfPKf10LayerShape");
    expect_kernel(m, "out_row_sum_256", "row_sum<256>", "_Z7row_sumILi256EEvPKfPf10LayerShape");
    expect_kernel(m, "cross_entropy", "cross_entropy", NULL);
    expect_kernel(m, "out_zero_rows", "zero_rows", "{static:13_train_step_cu}_Z9zero_rowsPfi");
    expect_kernel(m, "clear", "clear", "{static:13_train_step_cu}_Z5clearPfi");
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 11);
    json_decref(m);
    free(log);

    /* input only */
    m = manifest_of(cu, "--kernels-in input", &log);
    ck_assert_ptr_null(kernel_named(m, "out_bias_act_forward"));
    ck_assert_ptr_null(kernel_named(m, "bias_act_forward"));
    ck_assert_ptr_null(kernel_named(m, "out_row_sum_256"));
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 8);
    ck_assert_msg(strstr(log, "zero_rows") == NULL, "%s", log);
    json_decref(m);
    free(log);

    /* a named header: this file owns its kernels, under their own names */
    m = manifest_of(cu, "--kernels-in tests/corpus/real/include/layers.cuh", &log);
    expect_kernel(m, "bias_act_forward", "bias_act_forward", NULL);
    expect_kernel(m, "row_sum_256", "row_sum<256>", NULL);
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 11);
    json_decref(m);
    free(log);

    /* a header it does not include, or none at all, is an error */
    int rc = run(&log, "%s %s --kernels-in tests/corpus/real/big_smem.cu -o %s/x", kstub_bin(), cu, tmpdir);
    ck_assert_int_ne(rc, 0);
    ck_assert_msg(strstr(log, "does not include it"), "%s", log);
    free(log);
    rc = run(&log, "%s %s --kernels-in tests/corpus/real/include/nope.cuh -o %s/x", kstub_bin(), cu, tmpdir);
    ck_assert_int_ne(rc, 0);
    ck_assert_msg(strstr(log, "nope.cuh: error: --kernels-in: cannot open"), "%s", log);
    free(log);
    remove_tmpdir();
}
END_TEST

/* Explicit instantiations written in a header, at global scope and in
 * namespaces, get stubs as the input's do, one in an anonymous namespace too. */
START_TEST(header_explicit_instantiations)
{
    make_tmpdir();
    char *log;
    json_t *m = manifest_of("tests/corpus/real/header_instances.cu", "", &log);
    expect_kernel(m, "out_inclusive_scan_int", "inclusive_scan<int>", "_Z14inclusive_scanIiEvPKT_PS0_i");
    expect_kernel(m, "out_inclusive_scan_double", "inclusive_scan<double>", "_Z14inclusive_scanIdEvPKT_PS0_i");
    expect_kernel(m, "out_scan_detail_strided_copy_2", "scan::detail::strided_copy<2>",
                  "_ZN4scan6detail12strided_copyILi2EEEvPKfPfi");
    expect_kernel(m, "out_scan_local_fill_char", "scan::(anonymous)::local_fill<char>",
                  "{static:19_header_instances_cu}_ZN4scan{anon:19_header_instances_cu}10local_fillIcEEvPT_S2_");
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 4);
    json_decref(m);
    free(log);
    m = manifest_of("tests/corpus/real/header_instances.cu", "--kernels-in input", &log);
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 0);
    json_decref(m);
    free(log);
    remove_tmpdir();
}
END_TEST

/* "x.template f<N>()", "p->template" and "A::template" name a member
 * template of a dependent type; none is an explicit instantiation, in the
 * input or a header. Read as one, a kernel body's call before a real
 * instantiation broke the parse of a file nvcc compiles, and each header's
 * gave a note about an instantiation "not at namespace scope". */
START_TEST(template_disambiguators_are_not_instantiations)
{
    make_tmpdir();
    write_tmp("inst.cuh",
              "#pragma once\n"
              "struct Shape { template <int I> __host__ __device__ int get() const { return I; } };\n"
              "template <typename L> struct Holder { L l;\n"
              "    template <int I> __host__ __device__ int at() const { return l.template get<I>(); } };\n"
              "template <typename T>\n"
              "__global__ void fill(T *x, int n) { Holder<Shape> h; Holder<Shape> *p = &h;\n"
              "    x[0] = (T)(h.template at<1>() + p->template at<2>()); }\n"
              "template <typename T> struct Alloc { template <typename U> struct rebind { typedef Alloc<U> other; }; };\n"
              "template <typename A> int width() { typedef typename A::template rebind<int>::other B; return (int)sizeof(B); }\n"
              "template __global__ void fill<float>(float *, int);\n");
    write_tmp("k.cu", "#include \"inst.cuh\"\n"
                      "template <typename T>\n"
                      "__global__ void twice(T *x) { Holder<Shape> h; x[0] = (T)h.template at<3>(); }\n"
                      "template __global__ void twice<int>(int *);\n"
                      "void run(double *d, int n) { Holder<Shape> h; n += h.template at<4>(); fill<double><<<1, 1>>>(d, n); }\n");
    char cu[PATH_MAX + 8], *log;
    snprintf(cu, sizeof cu, "%s/k.cu", tmpdir);
    json_t *m = manifest_of(cu, "", &log);
    expect_kernel(m, "twice_int", "twice<int>", "_Z5twiceIiEvPT_");
    expect_kernel(m, "out_fill_float", "fill<float>", "_Z4fillIfEvPT_i");
    expect_kernel(m, "out_fill_double", "fill<double>", "_Z4fillIdEvPT_i");
    ck_assert_uint_eq(json_array_size(json_object_get(m, "kernels")), 3);
    ck_assert_msg(!strstr(log, "namespace scope"), "%s", log);
    json_decref(m);
    free(log);
    remove_tmpdir();
}
END_TEST

/* A header found through -I, even with <>, is the project's. (Toolkit and
 * -isystem headers are not: the corpus's cooperative_groups, cuda_fp16 and
 * cuda_bf16 bring no kernel into any manifest, which check-abi proves.) */
START_TEST(headers_through_I_are_the_project)
{
    make_tmpdir();
    char *out;
    run(&out, "mkdir -p %s/sys && cat > %s/sys/lib.cuh <<'EOF'\n"
              "__global__ void from_system(int *p) { *p = 0; }\n"
              "EOF\n"
              "cat > %s/t.cu <<'EOF'\n#include <lib.cuh>\n__global__ void mine(int *p) { *p = 1; }\nEOF\n",
        tmpdir, tmpdir, tmpdir);
    free(out);
    char cu[PATH_MAX + 8];
    snprintf(cu, sizeof cu, "%s/t.cu", tmpdir);
    char opts[PATH_MAX + 32];
    snprintf(opts, sizeof opts, "-I %s/sys", tmpdir);
    char *log;
    json_t *m = manifest_of(cu, opts, &log);
    ck_assert_ptr_nonnull(kernel_named(m, "out_from_system"));   /* -I: the project's */
    ck_assert_ptr_nonnull(kernel_named(m, "mine"));
    json_decref(m);
    free(log);
    remove_tmpdir();
}
END_TEST

/* A header kernel's prefixed name meeting one of the input's is an error
 * naming both places. */
START_TEST(prefixed_names_are_checked)
{
    make_tmpdir();
    char *out;
    run(&out, "cat > %s/h.cuh <<'EOF'\n__global__ void scale(float *p) { *p = 0; }\nEOF\n"
              "cat > %s/t.cu <<'EOF'\n#include \"h.cuh\"\n__global__ void out_scale(float *p) { *p = 1; }\nEOF\n",
        tmpdir, tmpdir);
    free(out);
    char *log;
    int rc = run(&log, "%s %s/t.cu -o %s/out", kstub_bin(), tmpdir, tmpdir);
    ck_assert_int_ne(rc, 0);
    ck_assert_msg(strstr(log, "both get the C name 'out_scale'") && strstr(log, "h.cuh:1"), "%s", log);
    free(log);
    remove_tmpdir();
}
END_TEST

/* ---- same file name in two folders ------------------------------------------------------------ */

/* a/util.cu and b/util.cu include one header of kernels; kstub.mk builds
 * both into one program, which links (image symbols, guards and the
 * header's stubs differ) and names each through its own header. */
START_TEST(same_file_name_in_two_folders_links)
{
    make_tmpdir();
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    char *out;
    int rc = run(&out,
        "cd %s && mkdir -p a b include && "
        "printf '#pragma once\\n__global__ void axpy(float a, const float *x, float *y, int n)\\n"
        "{ int i = threadIdx.x; if (i < n) y[i] += a * x[i]; }\\n' > include/ops.cuh && "
        "printf '#include \"../include/ops.cuh\"\\n__global__ void only_a(int *p) { *p = 1; }\\n' > a/util.cu && "
        "printf '#include \"../include/ops.cuh\"\\n__global__ void only_b(int *p) { *p = 2; }\\n' > b/util.cu && "
        "printf '#include \"a/util.kstub.h\"\\n#include \"b/util.kstub.h\"\\n#include <stdio.h>\\n"
        "int main(void) {\\n"
        "    ks_image *images[] = {&a_util_kstub_image, &b_util_kstub_image};\\n"
        "    ks_kernel *k[] = {&a_util_axpy_kernel, &b_util_axpy_kernel, &only_a_kernel, &only_b_kernel};\\n"
        "    printf(\"%%%%d %%%%d\\\\n\", images[0] != images[1], k[0] != k[1] && k[2] != k[3]);\\n"
        "    return 0;\\n}\\n' > main.c && "
        "printf 'KSTUB_KERNELS := a/util.cu b/util.cu\\nKSTUB_OUT := out\\nKSTUB_ARCHS := 90\\n"
        "include $(KSTUB_MK)\\napp: main.o $(KSTUB_OBJS)\\n\\t$(CC) $^ -o $@ $(KSTUB_LIBS)\\n"
        "main.o: main.c | $(KSTUB_HEADERS)\\n\\t$(CC) -std=c11 -Wall -Wextra -Werror -Iout "
        "$(KSTUB_CPPFLAGS) -c $< -o $@\\n' > Makefile && "
        "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j2 app KSTUB_MK=%s/kstub.mk KSTUB=%s "
        "KSTUB_INCLUDE=%s/include/kstub KSTUB_LIBDIR=%s CUDA_PATH=%s NVCC=%s && ./app",
        tmpdir, cwd, kstub_bin(), cwd, getenv("KSTUB_LIBDIR") ? getenv("KSTUB_LIBDIR") : "build/lib",
        getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda", nvcc_bin());
    ck_assert_msg(rc == 0, "build failed:\n%s", out);
    ck_assert_msg(strstr(out, "1 1\n"), "%s", out);
    free(out);
    rc = run(&out, "cd %s && grep -h '^#define KSTUB_' out/a/util.kstub.h out/b/util.kstub.h", tmpdir);
    ck_assert_msg(strstr(out, "KSTUB_A_UTIL_KSTUB_H") && strstr(out, "KSTUB_B_UTIL_KSTUB_H"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The rule, case by case: an output beside its input or in a folder that
 * does not mirror the input's keeps the plain stem. */
START_TEST(image_symbol_rule)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "cd %s && mkdir -p src/x gen out/src/x && "
                 "echo '__global__ void k(int *p) { *p = 0; }' > src/x/util.cu && "
                 "%s src/x/util.cu -o src/x/util.kstub && %s src/x/util.cu -o gen/util.kstub && "
                 "%s src/x/util.cu -o out/src/x/util.kstub && %s src/x/util.cu -o gen/other.kstub && "
                 "grep -h 'kstub_image;' src/x/util.kstub.h gen/util.kstub.h out/src/x/util.kstub.h "
                 "gen/other.kstub.h", tmpdir, kstub_bin(), kstub_bin(), kstub_bin(), kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    const char *want = "extern ks_image util_kstub_image;\nextern ks_image util_kstub_image;\n"
                       "extern ks_image src_x_util_kstub_image;\nextern ks_image other_kstub_image;\n";
    ck_assert_msg(strcmp(out, want) == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- types the application already has ----------------------------------------------------- */

static const ks_def *def_named(const ks_model *m, const char *qname)
{
    for (size_t i = 0; i < m->ndefs; i++)
        if (strcmp(m->defs[i].qname, qname) == 0)
            return &m->defs[i];
    return NULL;
}

static void parse_into(const char *cu, ks_model *m)
{
    ks_options o;
    memset(&o, 0, sizeof o);
    o.input = cu;
    o.outbase = "unused";
    o.cuda_path = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    o.arch = "sm_90";
    o.std = "c++17";
    o.template_dir = "templates";
    ck_assert_int_eq(ks_parse(&o, m), 0);
    ks_target target;
    ck_assert_int_eq(ks_target_load(o.template_dir, 0, &target), 0);
    ck_assert_int_eq(ks_name_model(&target, &o, m), 0);
    ks_target_free(&target);
}

/* Each by-value record and enum knows its header, whether C can include it
 * and whether C can write its bare name. */
START_TEST(types_record_their_header)
{
    ks_model m;
    parse_into("tests/corpus/real/train_step.cu", &m);
    const ks_def *shape = def_named(&m, "LayerShape"), *act = def_named(&m, "Activation");
    ck_assert_ptr_nonnull(shape);
    ck_assert_ptr_nonnull(act);
    ck_assert_str_eq(shape->file, "tests/corpus/real/include/model_params.h");
    ck_assert_int_eq(shape->c_header, 1);
    ck_assert_int_eq(shape->c_typedef, 1);
    ck_assert_str_eq(act->file, "tests/corpus/real/include/model_params.h");
    ck_assert_int_eq(act->c_header, 1);
    ck_assert_int_eq(act->c_typedef, 1);
    ks_model_free(&m);

    parse_into("tests/corpus/real/mixed_precision.cu", &m);
    const ks_def *ms = def_named(&m, "MixedScale");
    ck_assert_ptr_nonnull(ms);
    ck_assert_ptr_null(ms->file);          /* defined in the input: a mirror */
    ck_assert_int_eq(ms->c_header, 0);
    ks_model_free(&m);

    make_tmpdir();
    char *out;
    run(&out, "cd %s && printf 'namespace geo { struct Box { float lo, hi; }; }\n"
              "struct Plain { int a; };\n' > shapes.hpp && "
              "printf 'struct Tagged { int a; double b; };\n' > tagged.h && "
              "printf '#include \"shapes.hpp\"\n#include \"tagged.h\"\n"
              "__global__ void k(geo::Box b, Plain p, Tagged t, float *o) { *o = b.lo + p.a + t.b; }\n' > t.cu",
        tmpdir);
    free(out);
    char cu[PATH_MAX + 8];
    snprintf(cu, sizeof cu, "%s/t.cu", tmpdir);
    parse_into(cu, &m);
    const ks_def *box = def_named(&m, "geo::Box"), *plain = def_named(&m, "Plain"),
                 *tagged = def_named(&m, "Tagged");
    ck_assert_ptr_nonnull(box);
    ck_assert_ptr_nonnull(plain);
    ck_assert_ptr_nonnull(tagged);
    ck_assert_ptr_nonnull(strstr(box->file, "shapes.hpp"));
    ck_assert_int_eq(box->c_header, 0);    /* a C++ header */
    ck_assert_int_eq(plain->c_header, 0);  /* ... the whole file decides */
    ck_assert_ptr_nonnull(strstr(tagged->file, "tagged.h"));
    ck_assert_int_eq(tagged->c_header, 1);
    ck_assert_int_eq(tagged->c_typedef, 0);   /* C must write "struct Tagged" */
    ks_model_free(&m);
    remove_tmpdir();
}
END_TEST

/* The generated header includes the application's header for its C types
 * (no mirror, no redefinition beside it) and asserts their layout; C callers
 * pass model_params.h's struct and enum, C++ callers CUDA's half types and
 * the application's enum class values (tests/consumers/). */
/* Classes with base classes (tests/corpus/abi_bases.cu): every field of
 * their C mirrors, base fields flattened and renamed ones included, set
 * from C (tests/consumers/bases_fill.c) reads back through its C++ name
 * in nvcc's own layout of the class (tests/consumers/bases_read.cu). */
START_TEST(base_fields_land_where_cxx_reads_them)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    int rc = run(&out, "%s tests/corpus/abi_bases.cu -o %s/abi_bases.kstub && cd %s && "
                 "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -I. -I%s/include/kstub -I%s/include "
                 "%s/tests/consumers/bases_fill.c -o fill && ./fill bytes && "
                 "%s -std=c++17 -I%s/tests/corpus %s/tests/consumers/bases_read.cu -o read && ./read bytes",
                 kstub_bin(), tmpdir, tmpdir, cwd, cuda, cwd, nvcc_bin(), cwd, cwd);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The same classes on the device: the offset of each field of
 * tests/consumers/bases_fields.h in its C mirror (bases_offsets.c) is the
 * one nvcc's device compile gives the C++ member (bases_device.cu stores
 * it, a constant in the PTX). */
START_TEST(base_fields_are_at_device_offsets)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    int rc = run(&out, "%s tests/corpus/abi_bases.cu -o %s/abi_bases.kstub && cd %s && "
                 "I='-I. -I%s/tests/consumers -I%s/include/kstub -I%s/include' && "
                 "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror $I %s/tests/consumers/bases_offsets.c -o off && "
                 "./off | sort > c.txt && %s -ptx -arch=sm_90 -I%s/tests/corpus -I%s/tests/consumers "
                 "%s/tests/consumers/bases_device.cu -o d.ptx && "
                 "awk '/^\\.visible \\.entry /{k=$3; sub(/\\(.*/,\"\",k)} /mov\\.u64|st\\.global\\.u64/"
                 "{ if (k!=\"\") { v=$NF; sub(/;$/,\"\",v); if (v ~ /^[0-9]+$/) { print k, v; k=\"\" } } }' d.ptx "
                 "| sort > nvcc.txt && test -s c.txt && diff c.txt nvcc.txt && wc -l < c.txt",
                 kstub_bin(), tmpdir, tmpdir, cwd, cwd, cuda, cwd, nvcc_bin(), cwd, cwd, cwd);
    ck_assert_msg(rc == 0, "C mirror's offsets (<) and nvcc's (>):\n%s", out);
    ck_assert_msg(atoi(out) >= 40, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(application_types_in_consumers)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    int rc = run(&out, "mkdir -p %s/gen && %s tests/corpus/real/app_types.cu -o %s/gen/app_types.kstub && "
                 "grep -c -e '^#include \"\\.\\./.*tests/corpus/real/include/model_params.h\"' "
                 "-e 'typedef struct KS_ALIGNED(8) LayerShape' -e 'typedef struct Activation' "
                 "-e 'mirrored' -e '^typedef ::nn::Act nn_Act;' "
                 "-e 'offsetof(LayerShape, act) == 16' %s/gen/app_types.kstub.h",
                 tmpdir, kstub_bin(), tmpdir, tmpdir);
    /* the include, the enum class the application's own in C++ (issue 30
     * #6), the offset asserted, and one mirror: LocalScale (nn::Act and
     * nn::Round are "kept a distinct type" in C) */
    ck_assert_msg(rc == 0 && strcmp(out, "4\n") == 0, "%s", out);
    free(out);
    rc = run(&out, "cd %s/gen && I='-I. -I%s/tests/consumers -I%s/tests/corpus/real/include -I%s/include/kstub "
             "-isystem %s/include' && W='-Wall -Wextra -Wpedantic -Werror' && "
             "for cc in gcc clang; do command -v $cc >/dev/null || continue; "
             "for std in '-std=c99' '-std=c11' '-std=c11 -DKSTUB_STRICT'; do "
             "$cc $std $W $I -c %s/tests/consumers/app_types.c -o c.o || exit 1; echo \"$cc $std\"; done; "
             "$cc -std=c99 $W $I -c app_types.kstub.c -o s.o || exit 1; done; "
             "for cxx in g++ clang++; do command -v $cxx >/dev/null || continue; "
             "for d in '' -DKSTUB_STRICT; do "
             "$cxx -std=c++17 $d $W $I -c %s/tests/consumers/cxx_types.cpp -o x.o || exit 1; "
             "echo \"$cxx $d\"; done; done",
             tmpdir, cwd, cwd, cwd, cuda, cwd, cwd);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "gcc -std=c11 -DKSTUB_STRICT\n") && strstr(out, "g++ -DKSTUB_STRICT\n"), "%s", out);
    free(out);
    /* A C++ caller passing CUDA's types must have included their headers first. */
    rc = run(&out, "cd %s/gen && printf '#include \"app_types.kstub.h\"\\n"
             "int f(__half *y);\\nint f(__half *y) { ks_launch l = ks_launch(); "
             "return act_half(l, y, y, ks_half(), nn_Act(), nn_v1_Round(), 1); }\\n' > no_fp16.cpp && "
             "g++ -std=c++17 -I%s/include/kstub -c no_fp16.cpp -o n.o", tmpdir, cwd);
    ck_assert_msg(rc != 0 && strstr(out, "__half"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 30 #6, enums: a C++ caller passes the application's own enums
 * (tests/corpus/real/include/own_enums.hpp: a plain enum, an enum class with
 * its underlying type, a namespace's, a class's, enums as fields and as
 * template arguments) with no cast, own_enums.hpp included before or after
 * the generated header; a C caller the mirrors. The enum the .cu declares
 * itself stays a mirror in C++. Both callers' launches through the fake
 * driver pack the same bytes, the C++ caller built by g++ and by clang++. */
START_TEST(cxx_callers_pass_their_own_enums)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    const char *cu = "tests/corpus/real/cxx_own_enums.cu";
    /* make check-real passes both absolute; SAN_FLAGS: what a sanitized libkstub's link needs */
    char libdir[PATH_MAX + 16], fake[PATH_MAX + 32];
    snprintf(libdir, sizeof libdir, "%s", getenv("KSTUB_LIBDIR") ? getenv("KSTUB_LIBDIR") : "");
    snprintf(fake, sizeof fake, "%s", getenv("FAKE_CUDA") ? getenv("FAKE_CUDA") : "");
    if (!*libdir)
        snprintf(libdir, sizeof libdir, "%s/build/lib", cwd);
    if (!*fake)
        snprintf(fake, sizeof fake, "%s/build/tests/libcuda_fake.so", cwd);
    int rc = run(&out, "%s -ptx -arch=sm_90 %s -o %s/e.ptx && %s --embed %s/e.ptx %s -o %s/cxx_own_enums.kstub && "
                 "grep -c -e '^#include \"\\.\\./.*tests/corpus/real/include/own_enums.hpp\" /\\* .*for C++ callers' "
                 "-e '^typedef ::Color Color;' -e '^typedef ::Act Act;' -e '^typedef ::nn::Norm nn_Norm;' "
                 "-e '^typedef ::nn::Pool nn_Pool;' -e '^typedef ::Layer::Kind Layer_Kind;' "
                 "-e '^#define Color_BLUE (static_cast<Color>(6u))' "
                 "-e '^typedef ::Tagged<Color, Act::Relu> Tagged_Color_Act_Relu;' "
                 "-e 'sizeof(Act) == 1 && KS_ALIGNOF(Act) == 1' "
                 "-e '^typedef struct Local { unsigned char value; } Local;' "
                 "-e '^typedef struct Holder_Mode { unsigned int value; } Holder_Mode;' "
                 "-e 'declared again' %s/cxx_own_enums.kstub.h",
                 nvcc_bin(), cu, tmpdir, kstub_bin(), tmpdir, cu, tmpdir, tmpdir);
    /* the include, five typedefs of the application's enums, a constant, a
     * specialization holding one, the layout (twice: C++ and C), the two
     * mirrors kept in C++ (once each: no #ifdef around them); no enum
     * declared again opaquely */
    ck_assert_msg(rc == 0 && strcmp(out, "12\n") == 0, "%s", out);
    free(out);
    rc = run(&out, "cd %s && I='-I. -I%s/tests/corpus/real/include -I%s/include/kstub -I%s/tests/support -isystem %s/include' && "
             "W='-Wall -Wextra -Wpedantic -Werror' && C=%s/tests/consumers && "
             "for cc in gcc clang; do for std in '-std=c99' '-std=c11' '-std=c11 -DKSTUB_STRICT'; do "
             "$cc $std $W $I -c $C/own_enums.c -o c.o || exit 1; done; "
             "$cc -std=c99 $W $I -c cxx_own_enums.kstub.c -o gen.o || exit 1; echo \"$cc\"; done; "
             "g++ -std=c++17 $W $I -c $C/own_enums_abi.cpp -o m.o || exit 1; "
             "for cxx in g++ clang++; do for d in '' -DKSTUB_STRICT -DOWN_AFTER; do "
             "$cxx -std=c++17 $d $W $I -c $C/own_enums.cpp -o x.o || exit 1; done; "
             "$cxx -x c++ -std=c++17 $W $I -c cxx_own_enums.kstub.c -o /dev/null || exit 1; "
             "g++ %s m.o x.o c.o gen.o %s/libkstub.a -o abi -ldl -lpthread && ./abi %s || exit 1; "
             "echo \"$cxx\"; done",
             tmpdir, cwd, cwd, cwd, cuda, cwd, getenv("SAN_FLAGS") ? getenv("SAN_FLAGS") : "", libdir, fake);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "gcc\nclang\nC and C++ packed the same bytes: 6 launches\ng++\n"
                              "C and C++ packed the same bytes: 6 launches\nclang++\n"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The other rule (docs/generated-api.md): an enum class from a header with
 * CUDA-only tokens keeps its mirror in C++, which a host caller that
 * includes the header all the same (its device code behind __CUDACC__)
 * passes its values to through the opaque redeclaration's overloads. */
START_TEST(cuda_header_enum_class_keeps_its_mirror)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    write_tmp("modes.h", "#pragma once\nnamespace md { enum class Mode : int { A = 1, B = 2 }; }\n"
                         "#ifdef __CUDACC__\n__device__ inline int twice(int v) { return 2 * v; }\n#endif\n");
    write_tmp("k.cu", "#include \"modes.h\"\n__global__ void k(md::Mode m, int *o) { *o = twice((int)m); }\n");
    write_tmp("use.cpp", "#include \"modes.h\"\n#include \"k.kstub.h\"\nint use(int *o);\n"
                         "int use(int *o) { return k(ks_launch_1d(1, 1), md::Mode::B, o) | k(ks_launch_1d(1, 1), md_Mode_A, o); }\n");
    int rc = run(&out, "cd %s && %s k.cu -o k.kstub && grep -c -e '^typedef struct md_Mode { int value; } md_Mode;' "
                 "-e '^namespace md { enum class Mode : int; }' -e 'modes.h\"' k.kstub.h && "
                 "for cxx in g++ clang++; do $cxx -std=c++17 -Wall -Wextra -Wpedantic -Werror -I%s/include/kstub "
                 "-c use.cpp -o u.o || exit 1; done; echo built",
                 tmpdir, kstub_bin(), cwd);
    /* the mirror and the enum declared again; the header is not included */
    ck_assert_msg(rc == 0 && strcmp(out, "2\nbuilt\n") == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The asserts are real: a struct whose layout differs between the device
 * parse and a C compiler (a field only nvcc sees) stops the C build with
 * kstub's message. */
START_TEST(application_type_layout_is_asserted)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    int rc = run(&out, "cd %s && printf '#include <stdint.h>\\ntypedef struct Cfg {\\n    int32_t n;\\n"
                 "#ifdef __CUDACC__\\n    double device_only;\\n#endif\\n} Cfg;\\n' > cfg.h && "
                 "printf '#include \"cfg.h\"\\n__global__ void k(float *o, Cfg c) { *o = c.n; }\\n' > k.cu && "
                 "%s k.cu -o k.kstub && grep -c '^#include \"cfg.h\"' k.kstub.h && "
                 "gcc -std=c11 -I%s/include/kstub -c k.kstub.c -o k.o", tmpdir, kstub_bin(), cwd);
    ck_assert_msg(rc != 0 && strstr(out, "1\n") && strstr(out, "kstub: Cfg is 16 bytes on the device"),
                  "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* "// kstub:mirror TYPE" keeps the mirror for a type whose header C could
 * include; a name that matches no type is an error. */
START_TEST(mirror_directive_keeps_the_mirror)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    int rc = run(&out, "cd %s && printf 'struct Tagged { int a; double b; };\\n' > tagged.h && "
                 "printf '#include \"tagged.h\"\\n// kstub:mirror Tagged\\n"
                 "__global__ void k(float *o, Tagged t) { *o = t.a + t.b; }\\n' > k.cu && "
                 "%s k.cu -o k.kstub && grep -c -e 'tagged.h\"' -e '^typedef struct KS_ALIGNED(8) Tagged {' k.kstub.h; "
                 "gcc -std=c11 -Wall -Wextra -Werror -I%s/include/kstub -c k.kstub.c -o k.o && echo built",
                 tmpdir, kstub_bin(), cwd);
    ck_assert_msg(rc == 0 && strcmp(out, "1\nbuilt\n") == 0, "%s", out);
    free(out);
    /* without the directive: the header, "struct Tagged" (no typedef in tagged.h) */
    rc = run(&out, "cd %s && sed -i '/kstub:mirror/d' k.cu && %s k.cu -o k.kstub && "
             "grep -c -e '^#include \"tagged.h\"' -e 'sizeof(struct Tagged) == 16' k.kstub.h && "
             "gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I%s/include/kstub -c k.kstub.c -o k.o && echo built",
             tmpdir, kstub_bin(), cwd);
    ck_assert_msg(rc == 0 && strcmp(out, "2\nbuilt\n") == 0, "%s", out);
    free(out);
    rc = run(&out, "cd %s && printf '// kstub:mirror Nope\\n__global__ void k(int *p) { *p = 0; }\\n' > n.cu && "
             "%s n.cu -o n.kstub", tmpdir, kstub_bin());
    ck_assert_msg(rc != 0 && strstr(out, "n.cu:1:4: error: kstub:mirror 'Nope' names no type"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Class template specializations by value (issue 18, item 5) are mirrored
 * under "<template>_<arguments>" or the kstub:name the source gives; an
 * empty class (std::bool_constant, std::integral_constant, a tag) takes
 * no argument: the stub packs its byte. check-abi checks the layouts. */
START_TEST(class_template_specializations_are_mirrored)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s tests/corpus/abi_class_templates.cu --list", kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    static const char *const want[] = {
        "ks_status constants(ks_launch launch, float *x, char c, double after);\n",
        "ks_status apply_float(ks_launch launch, struct Params_float p);\n",
        "ks_status apply_int(ks_launch launch, struct ParamsI p);\n",
        "ks_status apply_twice_float(ks_launch launch, struct Params_float a, struct Params_float b, "
        "const struct Params_float *more);\n",
        "ks_status mha___half_8(ks_launch launch, struct attn_Mha_params___half_8 p, int n);\n",
        "ks_status tagged_true(ks_launch launch, float *x, int n);\n",
        "ks_status tagged_false(ks_launch launch, float *x, int n);\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
    free(out);
    char *log;
    json_t *m = manifest_of("tests/corpus/abi_class_templates.cu", "", &log);
    json_t *ps = json_object_get(kernel_named(m, "constants"), "params");
    ck_assert_uint_eq(json_array_size(ps), 7);
    static const int fixed[] = {0, 1, 1, 0, 1, 1, 0};
    for (size_t i = 0; i < 7; i++)
        ck_assert_msg(json_is_true(json_object_get(json_array_get(ps, i), "fixed")) == fixed[i],
                      "parameter %zu", i);
    json_decref(m);
    free(log);
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    rc = run(&out, "cd %s && %s %s/tests/corpus/abi_class_templates.cu -o k.kstub && "
             "grep -c 'KS_STATIC_ASSERT(offsetof(attn_Mha_params___half_8, inner) == 48' k.kstub.h && "
             "grep -c 'is an empty class: its value is its type, and the stub packs its byte' k.kstub.h",
             tmpdir, kstub_bin(), cwd);
    ck_assert_msg(rc == 0 && strcmp(out, "1\n6\n") == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Pointers to arrays (issue 18, item 6): the stub takes "float_arr28 *",
 * and a C or C++ caller passes its own float (*)[28] without a cast, under
 * -Werror; strict mode takes it too. */
START_TEST(pointers_to_arrays_take_callers_arrays)
{
    make_tmpdir();
    char *out, cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    int rc = run(&out, "cd %s && %s %s/tests/corpus/abi_array_pointers.cu -o k.kstub && "
                 "printf '#include \"k.kstub.h\"\n"
                 "ks_status f(ks_launch l, float (*in)[28], const float (*w)[5][5], float *o,\n"
                 "            struct Cell (*g)[4], unsigned (*c)[3], double (*a)[2], int (*m)[7]);\n"
                 "ks_status f(ks_launch l, float (*in)[28], const float (*w)[5][5], float *o,\n"
                 "            struct Cell (*g)[4], unsigned (*c)[3], double (*a)[2], int (*m)[7])\n"
                 "{\n    ks_status s = conv(l, in, w, o, 3);\n    if (s)\n        return s;\n"
                 "    s = cells(l, g, c, a);\n    if (s)\n        return s;\n"
                 "    s = rows_float_28(l, in, 1);\n    return s ? s : rows_int_7(l, m, 2);\n}\n'"
                 " > use.c && W='-Wall -Wextra -Wpedantic -Werror -I%s/include/kstub' && "
                 "gcc -std=c11 $W -c use.c -o c.o && gcc -std=c11 -DKSTUB_STRICT $W -c use.c -o s.o && "
                 "cp use.c use.cpp && sed -i 's/struct Cell/Cell/g' use.cpp && g++ -std=c++17 $W -c use.cpp -o x.o && echo built",
                 tmpdir, kstub_bin(), cwd, cwd);
    ck_assert_msg(rc == 0 && strstr(out, "built"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Launches in the members of an explicitly instantiated class template
 * (issue 18, item 7) are followed from "template class X<...>;"; a member
 * kstub cannot refer to (overloaded, a constructor) that launches a kernel
 * template is named in a note, and a private one is reached through the
 * public member that calls it. Namespaces, unnamed ones included. */
START_TEST(class_template_members_are_followed)
{
    make_tmpdir();
    write_tmp("k.cu", "template <typename T> __global__ void a(T *x) {}\n"
                      "template <typename T> __global__ void b(T *x, int n) {}\n"
                      "template <typename T> __global__ void c(T *x, T v) {}\n"
                      "template <typename T> __global__ void d(T *x, char n) {}\n"
                      "namespace outer { namespace {\n"
                      "template <typename T> class R {\n"
                      "public:\n"
                      "    R() { d<<<1, 1>>>((T *)0, 'a'); }\n"
                      "    void one(T *x) { a<<<1, 1>>>(x); }\n"
                      "    void one(T *x, int n) { b<<<1, 1>>>(x, n); }\n"
                      "    void pub(T *x) { priv(x); }\n"
                      "private:\n"
                      "    void priv(T *x) { c<<<1, 1>>>(x, T(1)); }\n"
                      "};\n"
                      "template class R<float>;\n"
                      "} }\n");
    char cu[PATH_MAX + 16], *log;
    snprintf(cu, sizeof cu, "%s/k.cu", tmpdir);
    json_t *m = manifest_of(cu, "", &log);
    ck_assert_int_eq(json_array_size(json_object_get(m, "kernels")), 1);
    ck_assert_ptr_nonnull(kernel_named(m, "c_float"));
    ck_assert_msg(strstr(log, "k.cu:15:1: note: 'R<float>::one' launches a kernel template, but "
                              "kstub cannot follow it (it is overloaded, and a reference cannot say "
                              "which one)"), "%s", log);
    ck_assert_msg(strstr(log, "'R<float>::R' launches a kernel template, but kstub cannot follow it "
                              "(a constructor or destructor has no address to refer to)"), "%s", log);
    json_decref(m);
    free(log);
    remove_tmpdir();
}
END_TEST

/* kstub --list of \p cu succeeds and prints each of the \p n lines \p want. */
static void expect_listed(const char *cu, const char *const *want, size_t n)
{
    char *out;
    int rc = run(&out, "%s %s --list", kstub_bin(), cu);
    ck_assert_msg(rc == 0, "%s", out);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
    free(out);
}

/* Every "// kstub:skip ..." line kstub printed for k.cu, applied: each is
 * appended to the file, and kstub must then succeed, with no directive that
 * matches no kernel. Returns how many hints were applied. */
static int apply_skip_hints(void)
{
    char cu[PATH_MAX + 16], *out;
    snprintf(cu, sizeof cu, "%s/k.cu", tmpdir);
    int rc = run(&out, "%s %s -o %s/k", kstub_bin(), cu, tmpdir);
    ck_assert_msg(rc != 0, "no error to take a hint from:\n%s", out);
    FILE *f = fopen(cu, "a");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    for (const char *p = out; (p = strstr(p, "'// kstub:skip ")) != NULL; n++) {
        p++;
        const char *end = strchr(p, '\'');
        ck_assert_ptr_nonnull(end);
        fprintf(f, "%.*s\n", (int)(end - p), p);
        p = end;
    }
    fclose(f);
    ck_assert_msg(n > 0, "no hint printed:\n%s", out);
    free(out);
    rc = run(&out, "%s %s -o %s/k", kstub_bin(), cu, tmpdir);
    ck_assert_msg(rc == 0 && !strstr(out, "matches no kernel"), "after the hints (%d):\n%s", rc, out);
    free(out);
    return n;
}

/* A kernel launched by host code with a template argument kstub cannot
 * spell in a stub's name (issue 18, item 9): the error names the argument,
 * its parameter and kind, what to launch instead and the kstub:skip line
 * with nvcc's symbol (a pattern for a static kernel template), and each
 * printed line, applied, works (issue 31 #5). */
START_TEST(unspellable_template_arguments_are_explained)
{
    make_tmpdir();
    write_tmp("k.cu", "template <typename T> struct Box { T v; };\n"
                      "template <template <typename> class B>\n"
                      "__global__ void boxed(float *x, int n) { x[0] = sizeof(B<float>); }\n"
                      "template <template <typename> class B>\n"
                      "static __global__ void boxed_static(float *x, int n) { x[0] = 1; }\n"
                      "template <float *p>\n"
                      "__global__ void at(float *x) { x[0] = p ? *p : 0; }\n"
                      "void run(float *x, int n) { boxed<Box><<<1, 1>>>(x, n); boxed_static<Box><<<1, 1>>>(x, n);\n"
                      "    at<nullptr><<<1, 1>>>(x); }\n"
                      "__global__ void kept(float *y) {}\n");
    char *out;
    int rc = run(&out, "%s %s/k.cu -o %s/k", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc != 0, "%s", out);
    ck_assert_msg(strstr(out, "k.cu:3:17: error: template kernel 'boxed' is instantiated by host code, "
                              "but its template argument 1 (parameter 'B', of type '') is a template"), "%s", out);
    ck_assert_msg(strstr(out, "'// kstub:skip _Z5boxedI3BoxEvPfi'"), "%s", out);
    ck_assert_msg(strstr(out, "'// kstub:skip {static:4_k_cu}_Z12boxed_staticI3BoxEvPfi'"), "%s", out);
    ck_assert_msg(!strstr(out, "_ZL"), "%s", out);     /* clang's mark, never nvcc's */
    free(out);
    ck_assert_int_eq(apply_skip_hints(), 3);
    remove_tmpdir();
}
END_TEST

/* The error for a kernel kstub cannot type names it in its hint; the hint,
 * applied, works, for a static kernel and a template's instance too. */
START_TEST(parameter_hints_work)
{
    make_tmpdir();
    write_tmp("k.cu", "struct S { int a; };\n"
                      "__global__ void by_ref(S &s) {}\n"
                      "static __global__ void by_ref_static(S &s) {}\n"
                      "template <typename T> static __global__ void by_ref_t(T &t) {}\n"
                      "void run(S &s, float &f) { by_ref_static<<<1, 1>>>(s); by_ref_t<<<1, 1>>>(f); }\n"
                      "__global__ void kept(float *y) {}\n");
    ck_assert_int_eq(apply_skip_hints(), 3);
    remove_tmpdir();
}
END_TEST

/* Variadic kernel templates (issue 31 #4): the C name and the parameters
 * come from the expanded pack, each element named after the pack; the
 * stubs compile (check-abi checks the layouts against nvcc). */
START_TEST(variadic_kernel_templates_get_stubs)
{
    static const char *const want[] = {
        "ks_status multi_tensor_apply_kernel_TensorList_ScaleFunctor_float_int(ks_launch launch, int64_t "
        "chunk_size, volatile int *noop_flag, struct TensorList tl, struct ScaleFunctor callable, float args_0, "
        "int args_1);\n",
        "ks_status multi_tensor_apply_kernel_TensorList_ScaleFunctor(ks_launch launch, int64_t chunk_size, "
        "volatile int *noop_flag, struct TensorList tl, struct ScaleFunctor callable);\n",
        "ks_status sum_all_int_double_char_float(ks_launch launch, float *out, int vals_0, double vals_1, "
        "char vals_2, float vals_3);\n",
    };
    expect_listed("tests/corpus/abi_variadic.cu", want, sizeof want / sizeof *want);
    char *out;
    make_tmpdir();
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    int rc = run(&out, "%s tests/corpus/abi_variadic.cu -o %s/v && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror "
             "-Iinclude/kstub -I%s/include -c %s/v.c -o %s/v.o && g++ -std=c++17 -Wall -Wextra -Werror -Iinclude/kstub "
             "-I%s/include -x c++ -c %s/v.c -o %s/v.o", kstub_bin(), tmpdir, cuda, tmpdir, tmpdir,
             cuda, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* A kernel template on a device function (issue 31 #3): a stub per
 * function, named after it; "kstub:skip" takes the template's name, an
 * instance's name with or without '&', or the symbol. */
START_TEST(function_template_arguments_get_stubs)
{
    make_tmpdir();
    static const char src[] =
        "__device__ float sq(float x) { return x * x; }\n"
        "static __device__ float neg(float x) { return -x; }\n"
        "template <float (*op)(float)>\n"
        "__global__ void apply(float *x, int n) { x[0] = op(x[0]); }\n"
        "void run(float *x, int n) { apply<sq><<<1, 1>>>(x, n); apply<neg><<<1, 1>>>(x, n); }\n";
    write_tmp("k.cu", src);
    char cu[PATH_MAX + 16], *log;
    snprintf(cu, sizeof cu, "%s/k.cu", tmpdir);
    json_t *m = manifest_of(cu, "", &log);
    expect_kernel(m, "apply_sq", "apply<sq>", "_Z5applyIXadL_Z2sqfEEEvPfi");
    expect_kernel(m, "apply_neg", "apply<neg>", "{static:4_k_cu}_Z5applyIXadL_ZN{internal:4_k_cu}3negEfEEEvPfi");
    json_decref(m);
    free(log);
    static const char *const skips[][2] = {
        {"apply", "0"}, {"apply<sq>", "1"}, {"apply<&sq>", "1"}, {"_Z5applyIXadL_Z2sqfEEEvPfi", "1"},
        {"{static:4_k_cu}_Z5applyIXadL_ZN{internal:4_k_cu}3negEfEEEvPfi", "1"},
    };
    for (size_t i = 0; i < sizeof skips / sizeof *skips; i++) {
        char text[sizeof src + 128];
        snprintf(text, sizeof text, "%s// kstub:skip %s\n", src, skips[i][0]);
        write_tmp("k.cu", text);
        m = manifest_of(cu, "", &log);
        ck_assert_msg(json_array_size(json_object_get(m, "kernels")) == (size_t)atoi(skips[i][1]),
                      "kstub:skip %s: %zu kernels left", skips[i][0], json_array_size(json_object_get(m, "kernels")));
        json_decref(m);
        free(log);
    }
    remove_tmpdir();
}
END_TEST

/* Device function pointers (issue 18, item 9): each parameter is a
 * pointer to a typedef of its function type, named from the types or the
 * typedef it is spelled through; the manifest gives that C type, and a C
 * caller passes the pointer it read with cudaMemcpyFromSymbol unchanged
 * (check-abi checks the layouts; check-gen the macro form's checks). */
START_TEST(function_pointers_are_typed)
{
    static const char *const want[] = {
        "ks_status map(ks_launch launch, float *y, const float *x, float_fn_float *op, int n);\n",
        "ks_status map_t(ks_launch launch, float *y, unary_t_fn *op, int n);\n",
        "ks_status zip(ks_launch launch, float *y, binary_t_fn *f, const float *a, const float *b);\n",
        "ks_status scaled(ks_launch launch, float *y, scale_fn_fn *s, char c);\n",
        "ks_status shapes(ks_launch launch, floatp_fn_floatp_int *pick, Pair_fn_cPairp_Pair *make, "
        "void_fn_void *fire, int_fn_void *count, unary_t_fnp_fn_int_unary_t_fnp *choose, "
        "float_fn_float *fixed, unary_t_fn **table, ops_reduce_t_fn *red, double tail);\n",
        "ks_status apply_float_p_float(ks_launch launch, float *y, float_fn_float *f, int n);\n",
    };
    expect_listed("tests/corpus/abi_function_pointers.cu", want, sizeof want / sizeof *want);
    char *out;
    char *log;
    json_t *m = manifest_of("tests/corpus/abi_function_pointers.cu", "", &log);
    json_t *op = json_array_get(json_object_get(kernel_named(m, "map"), "params"), 2);
    ck_assert_str_eq(json_string_value(json_object_get(op, "type")), "float (*)(float)");
    ck_assert_str_eq(json_string_value(json_object_get(op, "c_type")), "float_fn_float *");
    ck_assert_int_eq(json_integer_value(json_object_get(op, "size")), 8);
    json_decref(m);
    free(log);
    make_tmpdir();
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    int rc = run(&out, "cd %s && %s %s/tests/corpus/abi_function_pointers.cu -o k.kstub && "
             "grep -c '^typedef float float_fn_float(float);$' k.kstub.h && "
             "grep -c '^typedef struct Pair Pair_fn_cPairp_Pair(const struct Pair \\*, struct Pair);$' k.kstub.h && "
             "grep -c '^typedef int ops_reduce_t_fn(const int \\*, int64_t);$' k.kstub.h && "
             "grep -c 'KS_STATIC_ASSERT(sizeof(unary_t_fn \\*) == 8 && KS_ALIGNOF(unary_t_fn \\*) == 8,' k.kstub.h && "
             "grep -c '    float_fn_float \\*g\\[2\\];' k.kstub.h",
             tmpdir, kstub_bin(), cwd);
    ck_assert_msg(rc == 0 && strcmp(out, "1\n1\n1\n1\n1\n") == 0, "%s", out);
    free(out);
    /* kstub:name names the typedef, by the header comment's spelling. */
    write_tmp("r.cu", "// kstub:name float (float) = unary\n// kstub:name bin_t = binary\n"
                      "typedef float (*bin_t)(float, float);\n"
                      "extern \"C\" __global__ void k(float (*f)(float), bin_t g) {}\n");
    rc = run(&out, "%s %s/r.cu --list", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "ks_status k(ks_launch launch, unary *f, binary *g);"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

static Suite *real_suite(void)
{
    Suite *s = suite_create("real");
    TCase *tc = tcase_create("corpus");
    tcase_set_timeout(tc, 300);
    int n = (int)(sizeof corpus / sizeof *corpus);
    tcase_add_loop_test(tc, bodies_parse_as_nvcc_parses_them, 0, n);
    tcase_add_loop_test(tc, internal_kernels_get_stubs, 0, 7);
    tcase_add_loop_test(tc, stubs_compile_as_c_and_cxx, 0, n);
    suite_add_tcase(s, tc);
    tc = tcase_create("instantiations");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, host_instantiations_get_stubs);
    tcase_add_test(tc, host_and_explicit_instantiations_meet_once);
    suite_add_tcase(s, tc);
    tc = tcase_create("headers");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, header_kernels_follow_kernels_in);
    tcase_add_test(tc, headers_through_I_are_the_project);
    tcase_add_test(tc, prefixed_names_are_checked);
    tcase_add_test(tc, header_explicit_instantiations);
    tcase_add_test(tc, template_disambiguators_are_not_instantiations);
    tcase_add_test(tc, types_record_their_header);
    tcase_add_test(tc, application_types_in_consumers);
    tcase_add_test(tc, base_fields_land_where_cxx_reads_them);
    tcase_add_test(tc, base_fields_are_at_device_offsets);
    tcase_add_test(tc, cxx_callers_pass_their_own_enums);
    tcase_add_test(tc, cuda_header_enum_class_keeps_its_mirror);
    tcase_add_test(tc, application_type_layout_is_asserted);
    tcase_add_test(tc, mirror_directive_keeps_the_mirror);
    tcase_add_test(tc, kstub_macro_and_skip_directive);
    tcase_add_test(tc, rdc_from_compile_commands);
    tcase_add_test(tc, class_template_specializations_are_mirrored);
    tcase_add_test(tc, pointers_to_arrays_take_callers_arrays);
    tcase_add_test(tc, class_template_members_are_followed);
    tcase_add_test(tc, unspellable_template_arguments_are_explained);
    tcase_add_test(tc, parameter_hints_work);
    tcase_add_test(tc, function_template_arguments_get_stubs);
    tcase_add_test(tc, variadic_kernel_templates_get_stubs);
    tcase_add_test(tc, function_pointers_are_typed);
    suite_add_tcase(s, tc);
    tc = tcase_create("names");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, same_file_name_in_two_folders_links);
    tcase_add_test(tc, image_symbol_rule);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(real_suite(), CK_FORK_GETENV);
}
