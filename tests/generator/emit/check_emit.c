/*
 * check_emit.c — what reaches the generated C (issue 10's hostile input,
 * issue 29's variable names): kernels, parameters and device variables named
 * like generated and runtime identifiers (renamed with a note, or refused
 * naming both, and the stubs launched through the fake driver hitting the
 * right kernel), pointer depth, comments, quotes and paths escaped in
 * generated comments, strings and the #include line (an -o name that line
 * cannot spell refused), and an output whose include guard would be the
 * runtime's. Every generated file compiles as C99, C11 and C++17 with gcc
 * and clang.
 *
 * Run from the repository root (make check-emit does) with KSTUB, KSTUB_LIB
 * (libkstub.a), FAKE_CUDA (tests/support/fake_cuda.c built), NVCC, CUDA_PATH
 * and SRCDIR set.
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

static char kstub_path[PATH_MAX], lib_path[PATH_MAX], fake_path[PATH_MAX];

static void setup(void)
{
    env_path("KSTUB", "build/bin/kstub", kstub_path);
    env_path("KSTUB_LIB", "build/lib/libkstub.a", lib_path);
    env_path("FAKE_CUDA", "build/tests/libcuda_fake.so", fake_path);
    scratch_make("emit");
}

static void teardown(void)
{
    scratch_remove();
}

static const char *const compilers[] = {
    "gcc -std=c99", "gcc -std=c11", "g++ -x c++ -std=c++17",
    "clang -std=c99", "clang -std=c11", "clang++ -x c++ -std=c++17",
};
#define NCOMPILERS (sizeof compilers / sizeof compilers[0])
#define WERROR "-Wall -Wextra -Wpedantic -Wshadow -Werror"

/* Compiles scratch_dir/file with each compiler; fails the test on the first error. */
static void compiles_everywhere(const char *file)
{
    for (size_t i = 0; i < NCOMPILERS; i++) {
        char *out;
        int rc = run(&out, "cd '%s' && %s " WERROR " -I'%s/include/kstub' -I'%s/include' -c '%s' "
                     "-o /dev/null", scratch_dir, compilers[i], env_or("SRCDIR", "."),
                     env_or("CUDA_PATH", "/usr/local/cuda"), file);
        ck_assert_msg(rc == 0, "%s %s:\n%s", compilers[i], file, out);
        free(out);
    }
}


/* ---- #3, #12: names that collide with generated and runtime identifiers ------------------------ */

static const char names_cu[] =
    "struct S { double d; };\n"
    "extern \"C\" __global__ void k3(float *ks__kernel_k3) {}\n"
    "extern \"C\" __global__ void own(int ks__args, int ks_kernel_launch, int KS_RESTRICT,\n"
    "                                 int ks_status, int nm_kstub_image) {}\n"
    "extern \"C\" __global__ void ks_launch_1d(int *x) {}\n"
    "extern \"C\" __global__ void S(struct S s) {}\n"
    "extern \"C\" __global__ void k3_kernel(int launch, int stream) {}\n"
    "template <typename... Ts> __global__ void kp(Ts... args) {}\n"
    "template __global__ void kp<int, float, double>(int, float, double);\n";

/* The driver launches each kernel through its stub against the fake
 * libcuda and checks which symbol ran with which bytes: a parameter named
 * like the kernel's descriptor once made the stub launch the parameter. */
static const char names_main[] =
    "#include \"nm.h\"\n"
    "#include \"fake_cuda.h\"\n"
    "#include <dlfcn.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "static const fake_launch *(*get)(int);\n"
    "static int failures;\n"
    "static void expect(int i, const char *symbol, const void *bytes, size_t n) {\n"
    "    const fake_launch *l = get(i);\n"
    "    if (!l || strcmp(l->symbol, symbol) != 0 || memcmp(l->params, bytes, n) != 0) {\n"
    "        printf(\"launch %d: expected %s, got %s\\n\", i, symbol, l ? l->symbol : \"none\");\n"
    "        failures++;\n"
    "    }\n"
    "}\n"
    "#define CHECK(call) do { if ((call) != KS_OK) { printf(\"%s: %s\\n\", #call, "
    "ks_last_error_message()); return 1; } } while (0)\n"
    "int main(int argc, char **argv) {\n"
    "    (void)argc;\n"
    "    setenv(\"KSTUB_LIBCUDA\", argv[1], 1);\n"
    "    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n"
    "    if (!lib) { printf(\"%s\\n\", dlerror()); return 1; }\n"
    "    void (*set)(const char *, unsigned, const size_t *, const size_t *);\n"
    "    void *sym = dlsym(lib, \"fake_cuda_set_params\");\n"
    "    memcpy(&set, &sym, sizeof set);\n"
    "    sym = dlsym(lib, \"fake_cuda_launch\");\n"
    "    memcpy(&get, &sym, sizeof get);\n"
    "    size_t o1[] = {0}, s8[] = {8}, o5[] = {0, 4, 8, 12, 16}, s4[] = {4, 4, 4, 4, 4};\n"
    "    size_t o3[] = {0, 4, 8}, s3[] = {4, 4, 8};\n"
    "    set(\"k3\", 1, o1, s8); set(\"own\", 5, o5, s4); set(\"ks_launch_1d\", 1, o1, s8);\n"
    "    set(\"S\", 1, o1, s8); set(\"k3_kernel\", 2, o5, s4);\n"
    "    set(\"_Z2kpIJifdEEvDpT_\", 3, o3, s3);\n"
    "    float f; float *pf = &f; int i; int *pi = &i;\n"
    "    CHECK(k3(ks_launch_1d(1, 32), pf));\n"
    "    expect(0, \"k3\", &pf, sizeof pf);\n"
    "    CHECK(own(ks_launch_1d(1, 32), 11, 22, 33, 44, 55));\n"
    "    int ints[5] = {11, 22, 33, 44, 55};\n"
    "    expect(1, \"own\", ints, sizeof ints);\n"
    "    CHECK(ks_launch_1d_(ks_launch_1d(2, 64), pi));\n"
    "    expect(2, \"ks_launch_1d\", &pi, sizeof pi);\n"
    "    S s = {2.5};\n"
    "    CHECK(S_(ks_launch_1d(1, 32), s));\n"
    "    expect(3, \"S\", &s, sizeof s);\n"
    "    CHECK(k3_kernel_(ks_launch_1d(1, 32), 7, 8));\n"
    "    int two[2] = {7, 8};\n"
    "    expect(4, \"k3_kernel\", two, sizeof two);\n"
    "    CHECK(kp_int_float_double(ks_launch_1d(1, 32), 1, 2.0f, 3.0));\n"
    "    unsigned char packed[16] = {0}; int one = 1; float twof = 2.0f; double three = 3.0;\n"
    "    memcpy(packed, &one, 4); memcpy(packed + 4, &twof, 4); memcpy(packed + 8, &three, 8);\n"
    "    expect(5, \"_Z2kpIJifdEEvDpT_\", packed, sizeof packed);\n"
    "    if (failures == 0) printf(\"all launches right\\n\");\n"
    "    return failures != 0;\n"
    "}\n";

START_TEST(colliding_names_launch_the_right_kernel)
{
    char *out;
    scratch_write("nm.cu", names_cu);
    int rc = run(&out, "cd '%s' && %s -ptx nm.cu -o nm.ptx", scratch_dir,
                 env_or("NVCC", "/usr/local/cuda/bin/nvcc"));
    ck_assert_msg(rc == 0, "nvcc:\n%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --embed nm.ptx nm.cu -o nm", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "kstub:\n%s", out);
    /* renamed with a note naming the C name; never silently */
    expect_has(out, "note: kernel 'ks_launch_1d' is 'ks_launch_1d_' in C");
    expect_has(out, "note: kernel 'S' is 'S_' in C");
    free(out);
    compiles_everywhere("nm.c");
    scratch_write("main.c", names_main);
    /* SAN_FLAGS: the sanitizers libkstub was built with, which its link needs (check-asan) */
    rc = run(&out, "cd '%s' && cc -std=c11 " WERROR " -D_GNU_SOURCE %s -I'%s/include/kstub' "
             "-I'%s/tests/support' -I'%s/include' main.c nm.c '%s' -o main -ldl -lpthread && ./main '%s'",
             scratch_dir, env_or("SAN_FLAGS", ""), env_or("SRCDIR", "."), env_or("SRCDIR", "."),
             env_or("CUDA_PATH", "/usr/local/cuda"), lib_path, fake_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    expect_has(out, "all launches right");
    free(out);
}
END_TEST

/* ---- issue 29: device variables' names ------------------------------------------------------------ */

/* A variable named like a C keyword, a runtime name, another variable's or
 * a kernel's generated name steps aside with a note; one whose C name is a
 * kernel's is an error naming both, and the kstub:name it suggests fixes it;
 * a variable template (instantiated: one that is not puts nothing in the
 * image), a namespace-scope __shared__ and a hidden one get notes. Everything generated compiles in every language. */
START_TEST(variable_names_step_aside_or_collide)
{
    static const char cu[] =
        "template <typename T> __device__ T g_vt;\n"
        "extern \"C\" __global__ void k(float *o) { o[0] = g_vt<float>; }\n"
        "__device__ int restrict;\n"
        "__device__ float ks_table[4];\n"
        "__device__ int k_node;\n"
        "__constant__ float c_w[4];\n"
        "__constant__ float c_w_set[2];\n"
        "__device__ int KS_OK;\n"
        "__shared__ float s_tile[8];\n"
        "static __device__ int s_plain;\n"
        "namespace { __device__ int hidden; }\n";
    scratch_write("vn.cu", cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s vn.cu -o vn", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "kstub:\n%s", out);
    expect_has(out, "note: variable 'restrict' is 'restrict_' in C");
    expect_has(out, "note: variable 'ks_table' is 'ks_table_' in C");
    expect_has(out, "note: variable 'k_node' is 'k_node_' in C");
    expect_has(out, "note: variable 'c_w_set' is 'c_w_set_' in C");
    expect_has(out, "note: variable 'KS_OK' is 'KS_OK_' in C");
    expect_has(out, "note: 'g_vt' is a device variable template");
    expect_has(out, "note: variable 's_tile' is __shared__ at namespace scope");
    expect_has(out, "note: variable '(anonymous)::hidden' has internal linkage in a namespace");
    expect_lacks(out, "s_plain");
    free(out);
    char *h = scratch_read("vn.h");
    expect_has(h, "ks_status restrict__set(int ks__value, ks_stream ks__stream);");
    expect_has(h, "ks_status c_w_set(const float *ks__src, ks_stream ks__stream);");
    expect_has(h, "ks_status c_w_set__set(const float *ks__src, ks_stream ks__stream);");
    expect_has(h, "ks_status s_plain_set(int ks__value, ks_stream ks__stream);");
    expect_has(h, "ks_status k_node(ks_graph ks__graph");
    expect_has(h, "ks_status k_node__get(int *ks__value, ks_stream ks__stream);");
    free(h);
    compiles_everywhere("vn.c");

    /* A variable and a kernel wanting one C name: an error naming both, then the fix it names. */
    static const char clash[] =
        "namespace a { __device__ int b_c; }\n"
        "namespace a_b { __global__ void c(float *o) {} }\n";
    scratch_write("cl.cu", clash);
    rc = run(&out, "cd '%s' && %s cl.cu -o cl", scratch_dir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "cl.cu:1:30: error: kernel 'a_b::c' (cl.cu:2) and variable 'a::b_c' both get the C "
               "name 'a_b_c'; name one with a '// kstub:name NAME = C_NAME' comment");
    free(out);
    char *fixed = ks_xasprintf("%s// kstub:name a::b_c = abc_var\n", clash);
    scratch_write("cl.cu", fixed);
    free(fixed);
    rc = run(&out, "cd '%s' && %s cl.cu -o cl", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    h = scratch_read("cl.h");
    expect_has(h, "ks_status abc_var_set(int ks__value, ks_stream ks__stream);");
    free(h);
    compiles_everywhere("cl.c");
}
END_TEST

/* ---- #13: pointer depth ---------------------------------------------------------------------- */

START_TEST(pointer_depth_is_not_capped)
{
    static const int depths[] = {17, 40};
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
        int n = depths[d];
        char stars[64], fewer[64], *out;
        memset(stars, '*', (size_t)n);
        stars[n] = '\0';
        memcpy(fewer, stars, (size_t)n - 1);
        fewer[n - 1] = '\0';
        char *cu = ks_xasprintf("extern \"C\" __global__ void deep(int %sp) {}\n", stars);
        scratch_write("deep.cu", cu);
        free(cu);
        int rc = run(&out, "cd '%s' && %s deep.cu -o deep", scratch_dir, kstub_path);
        ck_assert_msg(rc == 0, "%d levels:\n%s", n, out);
        free(out);
        char *h = scratch_read("deep.h"), *want = ks_xasprintf("int %sp", stars),
             *too_many = ks_xasprintf("int %s*p", stars);
        expect_has(h, want);
        expect_lacks(h, too_many);
        free(h);
        free(want);
        free(too_many);
        /* a call with exactly that depth compiles; one level fewer does not */
        char *call = ks_xasprintf("#include \"deep.h\"\nks_status f(int %sp);\n"
                                  "ks_status f(int %sp) { return deep(ks_launch_1d(1, 1), p); }\n",
                                  stars, stars);
        scratch_write("call.c", call);
        free(call);
        compiles_everywhere("call.c");
        call = ks_xasprintf("#include \"deep.h\"\nks_status f(int %sp);\n"
                            "ks_status f(int %sp) { return deep(ks_launch_1d(1, 1), p); }\n",
                            fewer, fewer);
        scratch_write("wrong.c", call);
        free(call);
        rc = run(&out, "cd '%s' && gcc -std=c11 " WERROR " -I'%s/include/kstub' -I'%s/include' -c "
                 "wrong.c -o /dev/null", scratch_dir, env_or("SRCDIR", "."),
                 env_or("CUDA_PATH", "/usr/local/cuda"));
        ck_assert_msg(rc != 0, "%d levels: a pointer of %d levels was accepted", n, n - 1);
        free(out);
    }
}
END_TEST

/* ---- #11: comments and quotes that reach generated C --------------------------------------------- */

START_TEST(comments_quotes_and_paths_reach_generated_c_escaped)
{
    static const char cu[] =
        "extern \"C\" __global__ void cm(float *o /* [n] */, int n /* count */) {}\n"
        "template <typename U, int N> __global__ void kt(U *u) {}\n"
        "template __global__ void kt<float /* e */, 4>(float *);\n"
        "template <char C> __global__ void kc(char *c) {}\n"
        "template __global__ void kc<'\"'>(char *);\n"
        "template <char C> __global__ void kd(char *c) {}\n"
        "template __global__ void kd<'\\\\'>(char *);\n";
    /* an input path with a quote, a backslash, a newline and a comment closer */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/q\"b\\c\nd*", scratch_dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    scratch_write("q\"b\\c\nd*/x.cu", cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s 'q\"b\\c\nd*/x.cu' -o gen --manifest gen.json "
                 "'-DFOO=a*/b' '-DBAR=\"x\\y\"' '-DNL=1\n2'", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    compiles_everywhere("gen.c");
    char *h = scratch_read("gen.h");
    /* each comment closes once, where the template closes it */
    expect_lacks(h, "[n] */,");
    expect_has(h, "kt<float");
    free(h);
}
END_TEST

/* #11, the #include line: an OUTBASE whose file name holds '"', '\' or a
 * newline once reached the #include line of OUTBASE.c through the C-string
 * escape ("o\"ut.h"), which no compiler reads as that file, and kstub exited
 * 0. An #include "..." line has no escapes, so such a name is refused with
 * exit 1, a message that says why, and nothing written; a name that line
 * can spell (a quote ', spaces, a '$') is written and compiles. */
START_TEST(outbase_names_reach_the_include_line_intact)
{
    static const struct {
        const char *base, *why;
    } refused[] = {
        {"o\"ut", "holds a '\"'"},
        {"o\\ut", "holds a backslash"},
        {"o\nut", "holds a newline"},
        {"o\tut", "holds a control character"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        scratch_write("x.cu", "extern \"C\" __global__ void k(int a) {}\n");
        char *out;
        int rc = run(&out, "cd '%s' && rm -rf o* && %s x.cu -o '%s' --manifest o.json -MF o.d",
                     scratch_dir, kstub_path, refused[i].base);
        ck_assert_msg(rc == 1, "-o '%s': exit %d:\n%s", refused[i].base, rc, out);
        expect_has(out, "source.c.in:14:");   /* the #include line of templates/source.c.in */
        expect_has(out, refused[i].why);
        expect_has(out, "an #include \"...\" line cannot name that file");
        free(out);
        rc = run(&out, "cd '%s' && ls | grep '^o'", scratch_dir);
        ck_assert_msg(rc != 0, "-o '%s' left files behind:\n%s", refused[i].base, out);
        free(out);
    }
    /* each as the shell reads it inside '...' */
    static const struct {
        const char *base, *quoted;
    } spelled[] = {{"o'ut", "o'\\''ut"}, {"o ut", "o ut"}, {"o$ut", "o$ut"}};
    for (size_t i = 0; i < sizeof spelled / sizeof spelled[0]; i++) {
        char *out;
        int rc = run(&out, "cd '%s' && rm -rf o* && %s x.cu -o '%s' && cp '%s.c' spelled.c",
                     scratch_dir, kstub_path, spelled[i].quoted, spelled[i].quoted);
        ck_assert_msg(rc == 0, "-o '%s': exit %d:\n%s", spelled[i].base, rc, out);
        free(out);
        char *text = scratch_read("spelled.c");
        char *line = ks_xasprintf("#include \"%s.h\"\n", spelled[i].base);
        expect_has(text, line);
        free(line);
        free(text);
        compiles_everywhere("spelled.c");   /* finds the header beside it */
    }
}
END_TEST

/* The include guard of "-o types" is not kstub_types.h's (KSTUB_TYPES_H):
 * the generated header compiles beside the runtime's headers. */
START_TEST(include_guard_is_not_the_runtimes)
{
    scratch_write("types.cu", "struct P { int a; float b; };\n"
                         "extern \"C\" __global__ void k(P p, int *out) {}\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s types.cu -o types", scratch_dir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    char *h = scratch_read("types.h");
    expect_has(h, "#ifndef KSTUB_TYPES_H_\n");
    free(h);
    compiles_everywhere("types.c");
}
END_TEST

static Suite *emit_suite(void)
{
    Suite *s = suite_create("emit");
    TCase *tc = tcase_create("generated C");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, colliding_names_launch_the_right_kernel);
    tcase_add_test(tc, variable_names_step_aside_or_collide);
    tcase_add_test(tc, pointer_depth_is_not_capped);
    tcase_add_test(tc, comments_quotes_and_paths_reach_generated_c_escaped);
    tcase_add_test(tc, outbase_names_reach_the_include_line_intact);
    tcase_add_test(tc, include_guard_is_not_the_runtimes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(emit_suite(), CK_FORK_GETENV);
}
