/*
 * check_hostile.c — regression tests for issue 10 (hostile input, faults and
 * attackers) that no component suite holds: the outputs put back byte for
 * byte when any file-system call of the write fails (fault injection through
 * tests/hostile_fault.c), the short-typedef read under valgrind, names that
 * collide with generated and runtime identifiers launched through the fake
 * driver, pointer depth, comments and quotes in what reaches generated C,
 * and __launch_bounds__ text inside a body.
 *
 * Run from the repository root (make check-hostile does) with KSTUB, KSTUB_LIB
 * (libkstub.a), FAKE_CUDA (tests/fake_cuda.c built), FAULT_LIB
 * (tests/hostile_fault.c built), NVCC and CUDA_PATH set.
 */
#include "manifest.h"
#include "model.h"
#include "inputs.h"
#include "util.h"

#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* An absolute path for a file the tests name from another directory. */
static const char *abs_env(const char *name, const char *fallback, char *buf)
{
    const char *p = env_or(name, fallback);
    return realpath(p, buf) ? buf : p;
}

static char kstub_path[PATH_MAX], lib_path[PATH_MAX], fake_path[PATH_MAX], fault_path[PATH_MAX];
static char tmpdir[128];

static void setup(void)
{
    abs_env("KSTUB", "build/bin/kstub", kstub_path);
    abs_env("KSTUB_LIB", "build/lib/libkstub.a", lib_path);
    abs_env("FAKE_CUDA", "build/tests/libcuda_fake.so", fake_path);
    abs_env("FAULT_LIB", "build/tests/hostile_fault.so", fault_path);
    char t[] = "/tmp/kstub-hostile-XXXXXX", real[PATH_MAX];
    ck_assert_ptr_nonnull(mkdtemp(t));
    /* realpath: the fault library compares it with /proc/self/fd links */
    ck_assert_ptr_nonnull(realpath(t, real));
    ck_assert_uint_lt(strlen(real), sizeof tmpdir);
    strcpy(tmpdir, real);
}

static void teardown(void)
{
    run(NULL, "rm -rf '%s'", tmpdir);
}

static void write_at(const char *name, const char *text)
{
    write_text_in(tmpdir, name, text);
}

static char *read_at(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return ks_read_file(path, NULL);
}

static const char *const compilers[] = {
    "gcc -std=c99", "gcc -std=c11", "g++ -x c++ -std=c++17",
    "clang -std=c99", "clang -std=c11", "clang++ -x c++ -std=c++17",
};
#define NCOMPILERS (sizeof compilers / sizeof compilers[0])
#define WERROR "-Wall -Wextra -Wpedantic -Wshadow -Werror"

/* Compiles tmpdir/file with each compiler; fails the test on the first error. */
static void compiles_everywhere(const char *file)
{
    for (size_t i = 0; i < NCOMPILERS; i++) {
        char *out;
        int rc = run(&out, "cd '%s' && %s " WERROR " -I'%s/runtime' -I'%s/include' -c '%s' "
                     "-o /dev/null", tmpdir, compilers[i], env_or("SRCDIR", "."),
                     env_or("CUDA_PATH", "/usr/local/cuda"), file);
        ck_assert_msg(rc == 0, "%s %s:\n%s", compilers[i], file, out);
        free(out);
    }
}

/* ---- #6: every output put back when any call of the write fails ----------------------------- */

/* The outputs of one run, with what each held before (NULL: none). */
static const char *const fault_outputs[] = {"out/o.h", "out/o.c", "out/o.json", "out/o.d"};
#define NOUT (sizeof fault_outputs / sizeof fault_outputs[0])

static int fault_fired(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/fired", tmpdir);
    return access(path, F_OK) == 0;
}

/* Nothing of a failed run may remain: no temporary file, no backup link. */
static void no_leftovers(const char *what)
{
    char *out;
    int rc = run(&out, "cd '%s' && find . -name '*.tmp.*' -o -name '*.bak.*'", tmpdir);
    ck_assert_msg(rc == 0 && out[0] == '\0', "%s left behind:\n%s", what, out);
    free(out);
}

/* The prelude cache the sweep's runs share, warmed once: outside tmpdir, so
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
            run(NULL, "cd '%s' && rm -rf out fired%s", tmpdir, fresh ? "" : " && mkdir out");
            if (!fresh)
                for (size_t i = 0; i < NOUT; i++)
                    write_at(fault_outputs[i], old[i]);
            int rc = run(&out, "cd '%s' && KSTUB_FAULT=%s:%d KSTUB_FAULT_DIR='%s' "
                         "KSTUB_FAULT_FIRED='%s/fired' KSTUB_CACHE_DIR='%s' LD_PRELOAD='%s' %s x.cu "
                         "-o out/o --manifest out/o.json -MD", tmpdir, calls[c], nth,
                         tmpdir, tmpdir, fault_cache, fault_path, kstub_path);
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
                char *now = read_at(fault_outputs[i]);
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
                snprintf(path, sizeof path, "%s/out", tmpdir);
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
    write_at("x.cu", "extern \"C\" __global__ void k(int a) {}\n"
                     "extern \"C\" __global__ void k2(float *x, int n) {}\n");
    char *out;
    strcpy(fault_cache, "/tmp/kstub-hcache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(fault_cache));
    int rc = run(&out, "cd '%s' && KSTUB_CACHE_DIR='%s' KSTUB_DEBUG_PCH=1 %s x.cu -o warm", tmpdir,
                 fault_cache, kstub_path);
    ck_assert_msg(rc == 0 && strstr(out, "prelude cache: built"), "%s", out);
    free(out);
    run(NULL, "rm -f '%s'/warm.*", tmpdir);
    int existing = sweep_faults(0);
    int fresh = sweep_faults(1);
    run(NULL, "rm -rf '%s'", fault_cache);
    fprintf(stderr, "check_hostile: %d faults injected into writes over existing outputs, "
                    "%d into writes into a new folder\n", existing, fresh);
    /* 4 outputs: 4 mkstemp for temporaries + 4 for backup names, 4 fclose,
     * 4 chmod, 4 link, 4 rename at least */
    ck_assert_int_ge(existing, 24);
    ck_assert_int_ge(fresh, 17);
    /* And with no fault, the same command writes every output. */
    rc = run(&out, "cd '%s' && rm -rf out && %s --no-cache x.cu -o out/o --manifest "
                 "out/o.json -MD", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char *h = read_at("out/o.h");
    expect_has(h, "ks_status k2(");
    free(h);
}
END_TEST

/* ---- #2: a typedef shorter than "kstub_i" ------------------------------------------------------ */

/* The instantiation handler read a typedef's name past its end before
 * comparing the prefix (strtoul, which ASan does not intercept): valgrind
 * saw it. --skip-bodies and --no-cache keep the run to seconds, not minutes. */
START_TEST(short_typedef_names_are_read_within_bounds)
{
    char *out;
    if (*env_or("SAN_FLAGS", "")) {     /* make check-asan: valgrind cannot run an ASan build */
        fprintf(stderr, "check_hostile: kstub built with %s; short_typedef_names skipped (valgrind-gen "
                "and make check run it on the plain build)\n", env_or("SAN_FLAGS", ""));
        return;
    }
    if (run(&out, "command -v %s", env_or("VALGRIND", "valgrind")) != 0) {
        fprintf(stderr, "check_hostile: no valgrind; short_typedef_names skipped\n");
        free(out);
        return;
    }
    free(out);
    write_at("t.cu", "typedef int T;\ntypedef float U2;\n__global__ void k(T *p, U2 u) {}\n");
    int rc = run(&out, "cd '%s' && %s -q --error-exitcode=9 --leak-check=no "
                 "--suppressions='%s/tests/valgrind-libclang.supp' %s --no-cache --skip-bodies "
                 "t.cu -o t", tmpdir, env_or("VALGRIND", "valgrind"), env_or("SRCDIR", "."),
                 kstub_path);
    ck_assert_msg(rc == 0, "valgrind: exit %d:\n%s", rc, out);
    expect_lacks(out, "Invalid read");
    free(out);
    char *h = read_at("t.h");
    expect_has(h, "T");
    free(h);
}
END_TEST

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
    write_at("nm.cu", names_cu);
    int rc = run(&out, "cd '%s' && %s -ptx nm.cu -o nm.ptx", tmpdir,
                 env_or("NVCC", "/usr/local/cuda/bin/nvcc"));
    ck_assert_msg(rc == 0, "nvcc:\n%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --embed nm.ptx nm.cu -o nm", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "kstub:\n%s", out);
    /* renamed with a note naming the C name; never silently */
    expect_has(out, "note: kernel 'ks_launch_1d' is 'ks_launch_1d_' in C");
    expect_has(out, "note: kernel 'S' is 'S_' in C");
    free(out);
    compiles_everywhere("nm.c");
    write_at("main.c", names_main);
    /* SAN_FLAGS: the sanitizers libkstub was built with, which its link needs (check-asan) */
    rc = run(&out, "cd '%s' && cc -std=c11 " WERROR " -D_GNU_SOURCE %s -I'%s/runtime' "
             "-I'%s/tests' -I'%s/include' main.c nm.c '%s' -o main -ldl -lpthread && ./main '%s'",
             tmpdir, env_or("SAN_FLAGS", ""), env_or("SRCDIR", "."), env_or("SRCDIR", "."),
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
    write_at("vn.cu", cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s vn.cu -o vn", tmpdir, kstub_path);
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
    char *h = read_at("vn.h");
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
    write_at("cl.cu", clash);
    rc = run(&out, "cd '%s' && %s cl.cu -o cl", tmpdir, kstub_path);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    expect_has(out, "cl.cu:1:30: error: kernel 'a_b::c' (cl.cu:2) and variable 'a::b_c' both get the C "
               "name 'a_b_c'; name one with a '// kstub:name NAME = C_NAME' comment");
    free(out);
    char *fixed = ks_xasprintf("%s// kstub:name a::b_c = abc_var\n", clash);
    write_at("cl.cu", fixed);
    free(fixed);
    rc = run(&out, "cd '%s' && %s cl.cu -o cl", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    h = read_at("cl.h");
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
        write_at("deep.cu", cu);
        free(cu);
        int rc = run(&out, "cd '%s' && %s deep.cu -o deep", tmpdir, kstub_path);
        ck_assert_msg(rc == 0, "%d levels:\n%s", n, out);
        free(out);
        char *h = read_at("deep.h"), *want = ks_xasprintf("int %sp", stars),
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
        write_at("call.c", call);
        free(call);
        compiles_everywhere("call.c");
        call = ks_xasprintf("#include \"deep.h\"\nks_status f(int %sp);\n"
                            "ks_status f(int %sp) { return deep(ks_launch_1d(1, 1), p); }\n",
                            fewer, fewer);
        write_at("wrong.c", call);
        free(call);
        rc = run(&out, "cd '%s' && gcc -std=c11 " WERROR " -I'%s/runtime' -I'%s/include' -c "
                 "wrong.c -o /dev/null", tmpdir, env_or("SRCDIR", "."),
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
    snprintf(path, sizeof path, "%s/q\"b\\c\nd*", tmpdir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    write_at("q\"b\\c\nd*/x.cu", cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s 'q\"b\\c\nd*/x.cu' -o gen --manifest gen.json "
                 "'-DFOO=a*/b' '-DBAR=\"x\\y\"' '-DNL=1\n2'", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    compiles_everywhere("gen.c");
    char *h = read_at("gen.h");
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
        write_at("x.cu", "extern \"C\" __global__ void k(int a) {}\n");
        char *out;
        int rc = run(&out, "cd '%s' && rm -rf o* && %s x.cu -o '%s' --manifest o.json -MF o.d",
                     tmpdir, kstub_path, refused[i].base);
        ck_assert_msg(rc == 1, "-o '%s': exit %d:\n%s", refused[i].base, rc, out);
        expect_has(out, "source.c.in:14:");   /* the #include line of templates/source.c.in */
        expect_has(out, refused[i].why);
        expect_has(out, "an #include \"...\" line cannot name that file");
        free(out);
        rc = run(&out, "cd '%s' && ls | grep '^o'", tmpdir);
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
                     tmpdir, kstub_path, spelled[i].quoted, spelled[i].quoted);
        ck_assert_msg(rc == 0, "-o '%s': exit %d:\n%s", spelled[i].base, rc, out);
        free(out);
        char *text = read_at("spelled.c");
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
    write_at("types.cu", "struct P { int a; float b; };\n"
                         "extern \"C\" __global__ void k(P p, int *out) {}\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s types.cu -o types", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    char *h = read_at("types.h");
    expect_has(h, "#ifndef KSTUB_TYPES_H_\n");
    free(h);
    compiles_everywhere("types.c");
}
END_TEST

/* ---- #16: __launch_bounds__ text in a body ------------------------------------------------------ */

START_TEST(launch_bounds_text_in_a_body_is_not_the_kernels)
{
    write_at("lb.cu",
             "extern \"C\" __global__ void in_body(int *x) {\n"
             "    const char *s = \"__launch_bounds__(64)\"; (void)s;\n"
             "    /* __launch_bounds__(32) */\n"
             "}\n"
             "extern \"C\" __global__ void __launch_bounds__(128) real(int *x) {}\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s lb.cu -o lb --manifest lb.json", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "%s", out);
    expect_lacks(out, "launch_bounds");
    expect_lacks(out, "note");
    free(out);
    ks_sigs m;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/lb.json", tmpdir);
    ck_assert_int_eq(ks_manifest_read(path, &m), 0);
    ck_assert_uint_eq(m.nkernels, 2);
    ck_assert_str_eq(m.kernels[0].name, "in_body");
    ck_assert_int_lt(m.kernels[0].max_threads, 1);
    ck_assert_str_eq(m.kernels[1].name, "real");
    ck_assert_int_eq(m.kernels[1].max_threads, 128);
    ks_sigs_free(&m);
}
END_TEST

/* ---- issue 18: macros that write explicit instantiations ----------------------------------- */

/* source.c expands the macros clang expanded to find the explicit
 * instantiations they write. Macros that call each other, that square
 * their text at every level, or an invocation never closed, in #if 0 (a
 * skipped range: clang expands nothing there, nor does kstub), leave the
 * file's own kernel and macro instance alone. */
START_TEST(macro_expansion_is_bounded)
{
    write_at("mx.cu",
             "template <int N> __global__ void k(int *x) {}\n"
             "#define D1(x) x x\n#define D2(x) D1(D1(x))\n#define D3(x) D2(D2(x))\n"
             "#define D4(x) D3(D3(x))\n#define D5(x) D4(D4(x))\n#define D6(x) D5(D5(x))\n"
             "#define D7(x) D6(D6(x))\n#define D8(x) D7(D7(x))\n"
             "#define A(x) B(x) template __global__ void k<x>(int *);\n"
             "#define B(x) A(x) #x a##x\n"
             "#define I(n) template __global__ void k<n>(int *);\n"
             "#if 0\nD8(template __global__ void k<1>(int *);) A(2)\n#endif\n"
             "I(3)\n"
             "#if 0\nI(4\n#endif\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s mx.cu -o mx --list", tmpdir, kstub_path);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strcmp(out, "ks_status k_3(ks_launch launch, int *x);\n") == 0, "%s", out);
    free(out);
}
END_TEST


/* ---- issue 26: one preprocessor, clang's ------------------------------------------------------ */

/* Runs kstub --list on name; returns its exit status, *out what it printed. */
static int list_of(char **out, const char *name)
{
    return run(out, "cd '%s' && %s %s -o out_%s --list 2>&1", tmpdir, kstub_path, name, name);
}

/* Item 1: a raw string literal is a literal. The scanner of old ended a
 * string at the next '"', took the line inside for an explicit
 * instantiation and wrote its reference into the literal: sizeof doc, and
 * the stub's Blob, grew (nvcc: 52 bytes). Custom delimiters and the u8R and
 * LR prefixes, comments and #if 0 alike. */
START_TEST(raw_string_is_no_code)
{
    write_at("raw.cu",
             "template <int N> struct Blob { char b[N]; };\n"
             "template <class T> __global__ void k(T *p) {}\n"
             "constexpr char doc[] = R\"(usage:\n"
             "template __global__ void k<float>(float *);\n"
             ")\";\n"
             "constexpr char dx[] = R\"x(a )\" template __global__ void k<int>(int *); )x\";\n"
             "constexpr char du[] = u8R\"(template __global__ void k<char>(char *);)\";\n"
             "constexpr wchar_t dl[] = LR\"(template __global__ void k<long>(long *);)\";\n"
             "/* template __global__ void k<short>(short *); */\n"
             "// template __global__ void k<double>(double *);\n"
             "#if 0\ntemplate __global__ void k<unsigned>(unsigned *);\n#endif\n"
             "extern \"C\" __global__ void sized(Blob<sizeof doc> b) {}\n");
    char *out;
    int rc = list_of(&out, "raw.cu");
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "ks_status sized(ks_launch launch, struct Blob_52 b);\n") && !strstr(out, "k_"),
                  "%s", out);
    free(out);
}
END_TEST

/* Item 2: a macro defined in an inactive branch is not the one clang
 * expands (nvcc builds no kernel from this file); one in a true #ifdef is. */
START_TEST(inactive_definition_is_not_expanded)
{
    write_at("inactive.cu",
             "template <class T> __global__ void k(T *p) {}\n"
             "#ifndef NEVER_DEFINED\n#define INST(T)\n#else\n"
             "#define INST(T) template __global__ void k<T>(T *);\n#endif\n"
             "INST(float)\n"
             "#define HAVE 1\n#ifdef HAVE\n#define YES(T) template __global__ void k<T>(T *);\n"
             "#else\n#define YES(T)\n#endif\n"
             "YES(double)\n");
    char *out;
    int rc = list_of(&out, "inactive.cu");
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "ks_status k_double(ks_launch launch, double *p);\n") && !strstr(out, "k_float"),
                  "%s", out);
    free(out);
}
END_TEST

/* Item 3: after #undef the name is the program's again (kstub refused
 * this valid file: "unknown type name 'global_obj'"); a redefinition
 * between two uses is the one the second use expands. */
START_TEST(undef_and_redefinition_are_honoured)
{
    write_at("undef.cu",
             "template <class T> __global__ void k(T *p) {}\n"
             "template <class T> __global__ void j(T *p) {}\n"
             "#define INST(T) template __global__ void k<T>(T *);\n"
             "INST(int)\n"
             "#undef INST\n"
             "#define INST(T) template __global__ void j<T>(T *);\n"
             "INST(float)\n"
             "#undef INST\n"
             "struct INST { int v; }; INST(global_obj);\n");
    char *out;
    int rc = list_of(&out, "undef.cu");
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strcmp(out, "ks_status k_int(ks_launch launch, int *p);\n"
                              "ks_status j_float(ks_launch launch, float *p);\n") == 0, "%s", out);
    free(out);
}
END_TEST

/* The macro's definition comes from a header; a function-like macro's
 * name without arguments is no invocation; one in a comment is none. */
START_TEST(macro_of_a_header_and_names_that_are_no_invocation)
{
    write_at("inst.cuh", "#define INST(T) template __global__ void k<T>(T *);\n");
    write_at("hdr.cu",
             "#include \"inst.cuh\"\n"
             "template <class T> __global__ void k(T *p) {}\n"
             "int INST = 0;\n"
             "// INST(long)\n"
             "INST(short)\n");
    char *out;
    int rc = list_of(&out, "hdr.cu");
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strcmp(out, "ks_status k_short(ks_launch launch, short *p);\n") == 0, "%s", out);
    free(out);
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc;

    tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, outputs_restored_byte_for_byte_when_any_write_call_fails);
    suite_add_tcase(s, tc);

    tc = tcase_create("memory");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, short_typedef_names_are_read_within_bounds);
    suite_add_tcase(s, tc);

    tc = tcase_create("generated C");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, colliding_names_launch_the_right_kernel);
    tcase_add_test(tc, variable_names_step_aside_or_collide);
    tcase_add_test(tc, pointer_depth_is_not_capped);
    tcase_add_test(tc, comments_quotes_and_paths_reach_generated_c_escaped);
    tcase_add_test(tc, launch_bounds_text_in_a_body_is_not_the_kernels);
    tcase_add_test(tc, macro_expansion_is_bounded);
    tcase_add_test(tc, raw_string_is_no_code);
    tcase_add_test(tc, inactive_definition_is_not_expanded);
    tcase_add_test(tc, undef_and_redefinition_are_honoured);
    tcase_add_test(tc, macro_of_a_header_and_names_that_are_no_invocation);
    tcase_add_test(tc, outbase_names_reach_the_include_line_intact);
    tcase_add_test(tc, include_guard_is_not_the_runtimes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(hostile_suite(), CK_FORK_GETENV);
}
