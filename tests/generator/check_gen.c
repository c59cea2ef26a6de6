/*
 * check_gen.c — Check suite for the generator: the type model, refusals with
 * file:line:col, golden output, generated code compiling in C99/C11/C++17
 * with gcc and clang, calls that must not compile, and the command line.
 *
 * Run from the repository root (make check-gen does). The model tests link
 * the generator's objects; the rest run build/bin/kstub as a user would.
 * To re-bless the golden files after an intended change: make bless
 */
#include "model.h"
#include "inputs.h"
#include "util.h"
#include "cli.h"
#include "emit.h"
#include "image.h"
#include "naming.h"
#include "walk.h"

#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *kstub_bin(void)
{
    const char *k = getenv("KSTUB");
    return k ? k : "build/bin/kstub";
}

static const char *cuda_path(void)
{
    const char *c = getenv("CUDA_PATH");
    return c && *c ? c : "/usr/local/cuda";
}


static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kstub-check-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char *out;
    run(&out, "rm -rf '%s'", tmpdir);
    free(out);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the type model -------------------------------------------------------------------------- */

static ks_model model;
static ks_options opts;
static ks_spellings spellings;   /* the header's spelling of each parameter's type */

/* The pipeline up to the text: parse, name for the C target, spell. */
static void parse_file(const char *path)
{
    memset(&opts, 0, sizeof opts);
    opts.input = path;
    opts.outbase = "unused";
    opts.cuda_path = cuda_path();
    opts.arch = "sm_90";
    opts.std = "c++17";
    opts.template_dir = "templates";
    ck_assert_int_eq(ks_parse(&opts, &model), 0);
    ks_target target;
    ck_assert_int_eq(ks_target_load(opts.template_dir, 0, &target), 0);
    ck_assert_int_eq(ks_name_model(&target, &opts, &model), 0);
    ks_spellings_free(&spellings);
    ck_assert_int_eq(ks_emit_spellings(&target, &opts, &model, &spellings), 0);
    ks_target_free(&target);
}

/* The manifest's c_type of parameter i of k. */
static const char *c_type_of(const ks_kern *k, size_t i)
{
    return spellings.c_types[k - model.kernels][i];
}

static const ks_kern *kernel_named(const char *c_name)
{
    for (size_t i = 0; i < model.nkernels; i++)
        if (strcmp(model.kernels[i].c_name, c_name) == 0)
            return &model.kernels[i];
    ck_abort_msg("no kernel with C name '%s'", c_name);
    return NULL;
}

static void expect_param(const ks_kern *k, size_t i, const char *name, const char *c_type,
                         long size, long align, long offset)
{
    ck_assert_msg(i < k->nparams, "%s has %zu params, wanted #%zu", k->c_name, k->nparams, i);
    const ks_param *p = &k->params[i];
    ck_assert_str_eq(p->c_name, name);
    ck_assert_str_eq(c_type_of(k, i), c_type);
    ck_assert_msg(p->size == size && p->align == align && p->offset == offset,
                  "%s.%s: size/align/offset %ld/%ld/%ld, expected %ld/%ld/%ld", k->c_name, name,
                  p->size, p->align, p->offset, size, align, offset);
}

/* The front end names nothing for an output language (issue 20 #3): after
 * ks_parse every generated name is NULL, an anonymous member's record is
 * keyed by its place; the naming stage, run for a target, gives them all. */
START_TEST(parse_names_nothing_naming_names_all)
{
    ks_options o;
    memset(&o, 0, sizeof o);
    o.input = "tests/corpus/abi_records.cu";
    o.outbase = "records";
    o.cuda_path = cuda_path();
    o.arch = "sm_90";
    o.std = "c++17";
    o.template_dir = "templates";
    ks_model m;
    ck_assert_int_eq(ks_parse(&o, &m), 0);
    ck_assert_ptr_null(m.prefix);
    ck_assert_ptr_null(m.header);
    ck_assert_ptr_null(m.guard);
    ck_assert_ptr_null(m.image);
    for (size_t i = 0; i < m.nkernels; i++) {
        const ks_kern *k = &m.kernels[i];
        ck_assert_ptr_null(k->c_name);
        ck_assert_ptr_null(k->descriptor);
        ck_assert_ptr_null(k->launch_name);
        for (size_t j = 0; j < k->nparams; j++)
            ck_assert_ptr_null(k->params[j].c_name);
    }
    size_t anon = m.ndefs;
    for (size_t i = 0; i < m.ndefs; i++) {
        ck_assert_ptr_null(m.defs[i].c_name);
        ck_assert_ptr_null(m.defs[i].cxx_name);
        ck_assert_ptr_null(m.defs[i].member);
        for (size_t j = 0; j < m.defs[i].nfields; j++)
            ck_assert_ptr_null(m.defs[i].fields[j].c_name);
        if (strcmp(m.defs[i].qname, "shapes::Anonymous::(anonymous 0)") == 0)
            anon = i;
    }
    ck_assert_msg(anon < m.ndefs, "no record keyed 'shapes::Anonymous::(anonymous 0)'");
    ks_target target;
    ck_assert_int_eq(ks_target_load(o.template_dir, 0, &target), 0);
    ck_assert_int_eq(ks_name_model(&target, &o, &m), 0);
    ck_assert_str_eq(m.guard, "KSTUB_RECORDS_H");
    ck_assert_str_eq(m.image, "records_kstub_image");
    ck_assert_str_eq(m.defs[anon].member, "ks__anon0");
    ck_assert_str_eq(m.defs[anon].c_name, "shapes_Anonymous_ks__anon0");
    for (size_t i = 0; i < m.nkernels; i++) {
        ck_assert_ptr_nonnull(m.kernels[i].c_name);
        ck_assert_ptr_nonnull(m.kernels[i].descriptor);
    }
    ks_target_free(&target);
    ks_model_free(&m);
}
END_TEST

START_TEST(model_golden_input)
{
    parse_file("tests/golden/basic.cu");
    ck_assert_uint_eq(model.nkernels, 7);

    const ks_kern *k = kernel_named("mixed");
    ck_assert_str_eq(k->symbol, "mixed");
    ck_assert_int_eq(k->max_threads, 128);
    ck_assert_int_eq(k->min_blocks, 4);
    ck_assert_uint_eq(k->nparams, 8);
    expect_param(k, 0, "c", "char", 1, 1, 0);
    expect_param(k, 1, "d", "double", 8, 8, 8);
    expect_param(k, 2, "s", "short", 2, 2, 16);
    expect_param(k, 3, "i", "int64_t", 8, 8, 24);
    expect_param(k, 4, "b", "bool", 1, 1, 32);
    expect_param(k, 5, "in", "const float *restrict", 8, 8, 40);
    expect_param(k, 6, "flags", "volatile unsigned int *", 8, 8, 48);
    expect_param(k, 7, "table", "const struct Particle *const *", 8, 8, 56);

    k = kernel_named("physics_detail_step");
    ck_assert_str_eq(k->name, "physics::detail::step");
    ck_assert_str_eq(k->symbol, "_ZN7physics6detail4stepEP8Particlefj");
    ck_assert_int_eq(k->max_threads, -1);
    expect_param(k, 0, "p", "struct Particle *", 8, 8, 0);
    expect_param(k, 1, "dt", "float", 4, 4, 8);
    expect_param(k, 2, "n", "uint32_t", 4, 4, 12);

    /* Overloads get a suffix made of their parameter types. */
    k = kernel_named("physics_clamp__floatp_float_float");
    ck_assert_str_eq(k->symbol, "_ZN7physics5clampEPfff");
    k = kernel_named("physics_clamp__intp_int_int");
    ck_assert_str_eq(k->symbol, "_ZN7physics5clampEPiii");

    k = kernel_named("no_params");
    ck_assert_uint_eq(k->nparams, 0);

    k = kernel_named("odd_names");
    expect_param(k, 0, "arg0", "int", 4, 4, 0);
    expect_param(k, 1, "launch", "float *", 8, 8, 8);
    expect_param(k, 2, "args", "int", 4, 4, 16);
    expect_param(k, 5, "restrict_", "const char *", 8, 8, 32);
    ks_model_free(&model);
}
END_TEST

START_TEST(model_template_instantiations)
{
    parse_file("kernels/templates.cu");
    ck_assert_uint_eq(model.nkernels, 4);
    const ks_kern *k = kernel_named("tmpl_axpy_float_4");
    ck_assert_str_eq(k->name, "tmpl::axpy<float, 4>");
    ck_assert_str_eq(k->symbol, "_ZN4tmpl4axpyIfLi4EEEvT_PKS1_PS1_l");
    expect_param(k, 0, "a", "float", 4, 4, 0);
    expect_param(k, 1, "x", "const float *restrict", 8, 8, 8);
    expect_param(k, 3, "n", "int64_t", 8, 8, 24);
    k = kernel_named("tmpl_axpy_double_2");
    expect_param(k, 0, "a", "double", 8, 8, 0);
    k = kernel_named("fill_int");
    ck_assert_str_eq(k->name, "fill<int>");
    /* named by a "kstub:name" comment */
    k = kernel_named("fill_u16");
    ck_assert_str_eq(k->name, "fill<unsigned short>");
    expect_param(k, 1, "value", "unsigned short", 2, 2, 8);
    ks_model_free(&model);
}
END_TEST

START_TEST(model_launch_bounds_expressions)
{
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/lb.cu", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("constexpr int NT = 128;\n"
          "namespace a { namespace b { constexpr int WARPS = 8;\n"
          "__global__ void __launch_bounds__(WARPS * 32, NT / 64) k(int n) {} } }\n"
          "extern \"C\" __global__ void __launch_bounds__(NT) top(int n) {}\n"
          "extern \"C\" __global__ void __launch_bounds__(0x100, 3) lit(int n) {}\n"
          "extern \"C\" __global__ void none(int n) {}\n", f);
    fclose(f);
    parse_file(path);
    const ks_kern *k = kernel_named("a_b_k");
    ck_assert_int_eq(k->max_threads, 256);
    ck_assert_int_eq(k->min_blocks, 2);
    k = kernel_named("top");
    ck_assert_int_eq(k->max_threads, 128);
    ck_assert_int_eq(k->min_blocks, -1);
    k = kernel_named("lit");
    ck_assert_int_eq(k->max_threads, 256);
    ck_assert_int_eq(k->min_blocks, 3);
    k = kernel_named("none");
    ck_assert_int_eq(k->max_threads, -1);
    ks_model_free(&model);
    remove_tmpdir();
}
END_TEST

START_TEST(template_overloads_and_skip_bodies)
{
    make_tmpdir();
    char path[128], *out;
    snprintf(path, sizeof path, "%s/o.cu", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("namespace q {\n"
          "template <typename T> __global__ void k(T *x) { x[0] = 1; }\n"
          "template <typename T> __global__ void k(T *x, int n) { x[n] = 2; }\n"
          "template __global__ void k<float>(float *, int);   // the second one\n"
          "template __global__ void k<double>(double *x);      /* the first */\n"
          "}\n"
          "extern \"C\" __global__ void only_declared(int n);    // not in this image\n"
          "extern \"C\" __global__ void defined(int n) /* body: */ { }\n", f);
    fclose(f);
    int rc = run(&out, "%s %s --skip-bodies -o %s/o --manifest %s/o.json", kstub_bin(), path,
                 tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/o.json", tmpdir);
    char *json = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(json);
    ck_assert_msg(strstr(json, "\"symbol\": \"_ZN1q1kIfEEvPT_i\"") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"symbol\": \"_ZN1q1kIdEEvPT_\"") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"c_name\": \"q_k_float\"") != NULL, "%s", json);
    ck_assert_msg(strstr(json, "only_declared") == NULL, "%s", json);
    ck_assert_msg(strstr(json, "\"symbol\": \"defined\"") != NULL, "%s", json);
    free(json);
    remove_tmpdir();
}
END_TEST

START_TEST(template_without_instantiation_is_noted)
{
    make_tmpdir();
    char path[128], *out;
    snprintf(path, sizeof path, "%s/t.cu", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("template <typename T> __global__ void lonely(T *x) {}\n"
          "extern \"C\" __global__ void k(int n) {}\n", f);
    fclose(f);
    int rc = run(&out, "%s %s -o %s/t", kstub_bin(), path, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "template kernel 'lonely' is never explicitly instantiated") != NULL,
                  "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Every scalar kind and its exact C spelling, size and alignment. */
static const struct {
    const char *decl;       /* parameter type in the .cu */
    const char *c_type;
    long size, align;
} scalar_kinds[] = {
    {"bool", "bool", 1, 1},
    {"char", "char", 1, 1},
    {"signed char", "signed char", 1, 1},
    {"unsigned char", "unsigned char", 1, 1},
    {"short", "short", 2, 2},
    {"unsigned short", "unsigned short", 2, 2},
    {"int", "int", 4, 4},
    {"unsigned", "unsigned int", 4, 4},
    {"long", "long", 8, 8},
    {"unsigned long", "unsigned long", 8, 8},
    {"long long", "long long", 8, 8},
    {"unsigned long long", "unsigned long long", 8, 8},
    {"float", "float", 4, 4},
    {"double", "double", 8, 8},
    {"int8_t", "int8_t", 1, 1},
    {"uint8_t", "uint8_t", 1, 1},
    {"int16_t", "int16_t", 2, 2},
    {"uint16_t", "uint16_t", 2, 2},
    {"int32_t", "int32_t", 4, 4},
    {"uint32_t", "uint32_t", 4, 4},
    {"int64_t", "int64_t", 8, 8},
    {"uint64_t", "uint64_t", 8, 8},
    {"std::int64_t", "int64_t", 8, 8},
    {"size_t", "size_t", 8, 8},
    {"std::size_t", "size_t", 8, 8},
    {"ptrdiff_t", "ptrdiff_t", 8, 8},
    {"intptr_t", "intptr_t", 8, 8},
    {"uintptr_t", "uintptr_t", 8, 8},
    {"my_int", "int", 4, 4},                 /* user typedef: its C type */
    {"my_size", "size_t", 8, 8},             /* typedef of a std typedef keeps it */
    {"const int", "int", 4, 4},              /* top-level const means nothing to callers */
    {"void *", "void *", 8, 8},
    {"const void *", "const void *", 8, 8},
    {"int **", "int **", 8, 8},
    {"const char *const *", "const char *const *", 8, 8},
    {"float *__restrict__", "float *restrict", 8, 8},
    {"volatile double *", "volatile double *", 8, 8},
    {"const volatile uint8_t *", "const volatile uint8_t *", 8, 8},
    {"float4 *", "float4 *", 8, 8},
    {"my_enum *", "my_enum *", 8, 8},         /* pointer to enum: its mirror */
    {"my_int *", "int *", 8, 8},
    {"float[]", "float *", 8, 8},            /* array parameters are pointers */
    {"const int[10]", "const int *", 8, 8},
};
#define NKINDS (sizeof scalar_kinds / sizeof scalar_kinds[0])

START_TEST(model_every_scalar_kind)
{
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/kinds.cu", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#include <cstddef>\n#include <cstdint>\ntypedef int my_int;\n"
               "typedef size_t my_size;\nenum my_enum { A, B };\n");
    for (size_t i = 0; i < NKINDS; i++) {
        const char *decl = scalar_kinds[i].decl, *bracket = strchr(decl, '[');
        int base = bracket ? (int)(bracket - decl) : (int)strlen(decl);
        fprintf(f, "extern \"C\" __global__ void k%zu(char pad, %.*s v%s) {}\n", i, base, decl,
                bracket ? bracket : "");
    }
    fclose(f);
    parse_file(path);
    ck_assert_uint_eq(model.nkernels, NKINDS);
    for (size_t i = 0; i < NKINDS; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%zu", i);
        const ks_kern *k = kernel_named(name);
        const char *spelled = c_type_of(k, 1);
        ck_assert_msg(strcmp(spelled, scalar_kinds[i].c_type) == 0,
                      "'%s' became C '%s', expected '%s'", scalar_kinds[i].decl,
                      spelled, scalar_kinds[i].c_type);
        /* the char before it forces the parameter to its own alignment */
        expect_param(k, 1, "v", scalar_kinds[i].c_type, scalar_kinds[i].size,
                     scalar_kinds[i].align, scalar_kinds[i].align);
    }
    ks_model_free(&model);
    remove_tmpdir();
}
END_TEST

/* ---- refusals --------------------------------------------------------------------------------- */

static const struct {
    const char *file;
    const char *where;     /* "line:col" */
    const char *says;      /* part of the message */
} refusals[] = {
    {"reference.cu", "1:40", "is a reference"},
    {"rvalue_reference.cu", "1:39", "is a reference"},
    {"virtual_class.cu", "2:55", "has virtual functions"},
    {"bitfield.cu", "2:51", "has a bit-field 'a'"},
    {"copy_constructor.cu", "2:44", "not trivially copyable"},
    {"bad_rename.cu", "2:4", "matches no kernel"},
    {"member_pointer.cu", "2:39", "is a member pointer"},
    {"rename_not_identifier.cu", "2:4", "is not a C identifier"},
    {"function_pointer.cu", "2:50", "pointer to function 'int (const char *, ...)', which is variadic"},
    {"function_pointer_reference.cu", "2:52", "its parameter 1 is a reference"},
    {"syntax_error.cu", "2:36", "unknown type name 'undeclared_type'"},
    {"int128.cu", "1:52", "no exact C equivalent"},
};
#define NREFUSALS (sizeof refusals / sizeof refusals[0])

START_TEST(refusal_reports_location)
{
    make_tmpdir();
    char *out;
    const char *file = refusals[_i].file;
    int rc = run(&out, "%s tests/refuse/%s -o %s/out --manifest %s/out.json", kstub_bin(), file,
                 tmpdir, tmpdir);
    char want[256];
    snprintf(want, sizeof want, "tests/refuse/%s:%s: error: ", file, refusals[_i].where);
    ck_assert_msg(rc == 1, "%s: exit %d, expected 1; output:\n%s", file, rc, out);
    ck_assert_msg(strstr(out, want) != NULL, "%s: no '%s' in:\n%s", file, want, out);
    ck_assert_msg(strstr(out, refusals[_i].says) != NULL, "%s: no '%s' in:\n%s", file,
                  refusals[_i].says, out);
    ck_assert_msg(strstr(out, "nothing written") != NULL, "%s:\n%s", file, out);
    char p[128];
    snprintf(p, sizeof p, "%s/out.h", tmpdir);
    ck_assert_msg(!exists(p), "%s: wrote %s despite errors", file, p);
    snprintf(p, sizeof p, "%s/out.json", tmpdir);
    ck_assert_msg(!exists(p), "%s: wrote %s despite errors", file, p);
    free(out);
    remove_tmpdir();
}
END_TEST

/* "// kstub:skip NAME" leaves a kernel out; naming none is an error. */
START_TEST(skip_directive)
{
    make_tmpdir();
    char path[128], *out;
    snprintf(path, sizeof path, "%s/s.cu", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("// kstub:skip ns::gone\nnamespace ns { __global__ void gone(int &r) {} }\n"
          "__global__ void kept(int *x) {}\n", f);
    fclose(f);
    int rc = run(&out, "%s %s -o %s/s", kstub_bin(), path, tmpdir);
    ck_assert_msg(rc == 0 && strstr(out, "kernel 'ns::gone' left out"), "exit %d:\n%s", rc, out);
    free(out);
    f = fopen(path, "w");
    fputs("/* kstub:skip nothing */\n__global__ void kept(int *x) {}\n", f);
    fclose(f);
    rc = run(&out, "%s %s -o %s/s", kstub_bin(), path, tmpdir);
    ck_assert_msg(rc == 1 && strstr(out, ":1:4: error: kstub:skip 'nothing' matches no kernel"),
                  "exit %d:\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* kstub:extent hints: checked at generation time, recorded in the manifest
 * and compiled into the descriptor. */
START_TEST(extent_directive)
{
    make_tmpdir();
    char path[128], *out;
    snprintf(path, sizeof path, "%s/e.cu", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("// kstub:extent(y, 2 * (n + 1) - m / 2)\n"
          "__global__ void k(float *y, const float4 *v, int n, unsigned m, float a) {}\n", f);
    fclose(f);
    int rc = run(&out, "%s %s -o %s/e --manifest %s/e.json", kstub_bin(), path, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    free(out);
    char jpath[160], cpath[160];
    snprintf(jpath, sizeof jpath, "%s/e.json", tmpdir);
    snprintf(cpath, sizeof cpath, "%s/e.c", tmpdir);
    char *json = ks_read_file(jpath, NULL), *c = ks_read_file(cpath, NULL);
    ck_assert_msg(strstr(json, "\"extent\": \"2*(n+1)-m/2\"") != NULL, "%s", json);
    ck_assert_msg(strstr(c, "{ KS_EXTENT_CONST, 2 },\n    { KS_EXTENT_PARAM, 2 },\n    { KS_EXTENT_CONST, 1 },\n"
                            "    { KS_EXTENT_ADD, 0 },\n    { KS_EXTENT_MUL, 0 },\n    { KS_EXTENT_PARAM, 3 },\n"
                            "    { KS_EXTENT_CONST, 2 },\n    { KS_EXTENT_DIV, 0 },\n    { KS_EXTENT_SUB, 0 },") != NULL,
                  "%s", c);
    ck_assert_msg(strstr(c, "KS_PARAM_POINTER, \"v\", \"const float4 *\",\n      sizeof(const float4), "
                            "KS_ALIGNOF(const float4)") != NULL, "%s", c);
    free(json);
    free(c);
    static const struct { const char *hint, *error; } bad[] = {
        {"(q, n)", "kstub:extent: 'q' is not a parameter of kernel k"},
        {"(n, m)", "kstub:extent: 'n' of kernel k is a int, not a pointer"},
        {"(y, a)", "'a' is a float, not an integer parameter"},
        {"(y, n +)", "expected an integer parameter, a number or '('"},
        {"(y, zz)", "'zz' is not a parameter of k"},
        {" y, n", "expected 'kstub:extent(POINTER, COUNT)'"},
        {"(p, n)", "its element size is not known"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(path, "w");
        fprintf(f, "// kstub:extent%s\n__global__ void k(float *y, void *p, int n, unsigned m, float a) {}\n",
                bad[i].hint);
        fclose(f);
        rc = run(&out, "%s %s -o %s/bad --manifest %s/bad.json", kstub_bin(), path, tmpdir, tmpdir);
        ck_assert_msg(rc == 1 && strstr(out, ":1:4: error: ") && strstr(out, bad[i].error),
                      "%s: exit %d:\n%s", bad[i].hint, rc, out);
        free(out);
        snprintf(jpath, sizeof jpath, "%s/bad.json", tmpdir);
        ck_assert_msg(access(jpath, F_OK) != 0, "%s: a manifest was written", bad[i].hint);
    }
    remove_tmpdir();
}
END_TEST

static int compile(char **out, int i, const char *file, const char *incdir);

/* A template directory can restyle the mirrors: here a comment per field. */
START_TEST(templates_restyle_mirrors)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "mkdir -p %s/t && cp templates/source.c.in %s/t/ && sed "
                 "'s|^    {{decl}};{{comment_pad}}/\\* offset {{offset}} \\*/$|    /* field {{field_name}} */ {{decl}};|' "
                 "templates/header.h.in > %s/t/header.h.in && %s tests/corpus/abi_records.cu -T %s/t -o %s/r",
                 tmpdir, tmpdir, tmpdir, kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char p[128];
    snprintf(p, sizeof p, "%s/r.h", tmpdir);
    char *h = ks_read_file(p, NULL);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(strstr(h, "    /* field d */ double d;") != NULL, "%s", h);
    ck_assert_msg(strstr(h, "/* offset") == NULL, "%s", h);
    free(h);
    rc = compile(&out, 0, p, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* nvcc is the compiler of record: an error inside a function body changes
 * no signature, so it is a warning (and the stubs are written), unless
 * --body-errors asks for errors. */
START_TEST(body_errors_are_warnings)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s tests/refuse/body_error.cu -o %s/b", kstub_bin(), tmpdir);
    /* The warning says what is true: nvcc would refuse this body too (issue 19 #16). */
    ck_assert_msg(rc == 0 && strstr(out, "body_error.cu:2:12: warning: use of undeclared identifier") &&
                  strstr(out, "[in a function body: kstub reads signatures, bodies are nvcc's to check; "
                              "--body-errors makes this an error]") &&
                  !strstr(out, "nvcc compiles it"), "exit %d:\n%s", rc, out);
    free(out);
    rc = run(&out, "%s tests/refuse/body_error.cu --body-errors -o %s/c", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 1 && strstr(out, "body_error.cu:2:12: error: use of undeclared identifier"),
                  "exit %d:\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* One option reader for kstub, check and diff: a missing value is a usage
 * error (2) with a message, never "unknown option" or a crash. */
START_TEST(cli_missing_values_are_usage_errors)
{
    static const char *const cmds[] = {"diff --source", "diff a.json b.json --format",
                                       "tests/golden/basic.cu -o", "check tests/golden/basic.cu -o x -MF",
                                       "tests/golden/basic.cu -o x --embed"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char *out;
        int rc = run(&out, "%s %s", kstub_bin(), cmds[i]);
        ck_assert_msg(rc == 2 && strstr(out, "needs a value"), "'%s': exit %d:\n%s", cmds[i], rc, out);
        free(out);
    }
}
END_TEST

START_TEST(refusal_messages_name_kernel_and_parameter)
{
    char *out;
    ck_assert_int_eq(run(&out, "%s tests/refuse/reference.cu -o /tmp/kstub-never", kstub_bin()), 1);
    ck_assert_msg(strstr(out, "kernel 'by_ref', parameter 1 'x'") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "or a device pointer") != NULL, "says what to do instead: %s", out);
    free(out);
}
END_TEST

START_TEST(errors_leave_existing_outputs_alone)
{
    make_tmpdir();
    char *out;
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu -o %s/x", kstub_bin(), tmpdir), 0);
    free(out);
    char *before = NULL, *after = NULL;
    char h[128];
    snprintf(h, sizeof h, "%s/x.h", tmpdir);
    before = ks_read_file(h, NULL);
    ck_assert_int_eq(run(&out, "%s tests/refuse/syntax_error.cu -o %s/x", kstub_bin(), tmpdir), 1);
    free(out);
    after = ks_read_file(h, NULL);
    ck_assert_ptr_nonnull(after);
    ck_assert_str_eq(before, after);
    ck_assert_int_eq(run(&out, "ls %s | grep -c tmp", tmpdir), 1); /* no temporary left */
    free(out);
    free(before);
    free(after);
    remove_tmpdir();
}
END_TEST

/* ---- golden output ---------------------------------------------------------------------------- */

static void compare_golden(const char *generated, const char *golden)
{
    char *g = ks_read_file(golden, NULL);
    char *o = ks_read_file(generated, NULL);
    ck_assert_msg(g != NULL, "missing golden file %s; run: make bless", golden);
    ck_assert_msg(o != NULL, "kstub did not write %s", generated);
    if (strcmp(g, o) != 0) {
        char *diff;
        run(&diff, "diff -u %s %s | head -40", golden, generated);
        ck_abort_msg("%s and the generated output differ! If the change is intended, run: "
                     "make bless\n%s", golden, diff);
    }
    free(g);
    free(o);
}

/* Each golden input and its image (NULL: none embedded); make bless writes
 * their outputs (tests/generator/gen.mk's GOLDEN_PLAIN lists the ones without an image).
 * in_dir: generated from its own folder with its header NAME.hpp beside it
 * (gen.mk's GOLDEN_IN_DIR), so the header's #include is "NAME.hpp". */
static const struct {
    const char *name, *embed;
    int in_dir;
} goldens[] = {
    {"basic", "tests/golden/basic.ptx", 0},  /* the shapes of signature */
    {"records", NULL, 0},                    /* records, enums, halves, by value and through pointers */
    {"templates", NULL, 0},                  /* template instances, specializations, tags, arrays */
    {"internal", NULL, 0},                   /* static and anonymous-namespace kernels */
    {"globals", NULL, 0},                    /* device variables' accessors (issue 29) */
    {"cxx_types", NULL, 1},                  /* the application's own types in C++ (issue 30 #6) */
};

START_TEST(golden_output)
{
    make_tmpdir();
    const char *g = goldens[_i].name;
    char *out, embed[128] = "";
    if (goldens[_i].embed)
        snprintf(embed, sizeof embed, "--embed %s", goldens[_i].embed);
    char kstub[PATH_MAX];
    if (!realpath(kstub_bin(), kstub))
        snprintf(kstub, sizeof kstub, "%s", kstub_bin());
    int rc = goldens[_i].in_dir
                 ? run(&out, "cp tests/golden/%s.cu tests/golden/%s.hpp %s && cd %s && %s %s.cu -o %s.kstub "
                       "--manifest %s.kstub.json", g, g, tmpdir, tmpdir, kstub, g, g, g)
                 : run(&out, "%s tests/golden/%s.cu %s -o %s/%s.kstub --manifest %s/%s.kstub.json", kstub_bin(), g,
                       embed, tmpdir, g, tmpdir, g);
    ck_assert_msg(rc == 0, "kstub failed on tests/golden/%s.cu:\n%s", g, out);
    free(out);
    const char *ext[] = {".h", ".c", ".json"};
    for (int i = 0; i < 3; i++) {
        char gen[128], gold[128];
        snprintf(gen, sizeof gen, "%s/%s.kstub%s", tmpdir, g, ext[i]);
        snprintf(gold, sizeof gold, "tests/golden/%s.kstub%s", g, ext[i]);
        compare_golden(gen, gold);
    }
    remove_tmpdir();
}
END_TEST

START_TEST(unchanged_output_keeps_mtime)
{
    make_tmpdir();
    char *out;
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu -o %s/x --manifest %s/x.json",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    char h[128];
    snprintf(h, sizeof h, "%s/x.h", tmpdir);
    struct stat before, after;
    ck_assert_int_eq(stat(h, &before), 0);
    /* Back-date it, so a rewrite would show. */
    ck_assert_int_eq(run(&out, "touch -d '2001-01-01' %s/x.h %s/x.c %s/x.json", tmpdir, tmpdir,
                         tmpdir), 0);
    free(out);
    ck_assert_int_eq(stat(h, &before), 0);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu -o %s/x --manifest %s/x.json",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(stat(h, &after), 0);
    ck_assert_int_eq(before.st_mtime, after.st_mtime);
    remove_tmpdir();
}
END_TEST

/* ---- generated code compiles ---------------------------------------------------------------- */

static const struct {
    const char *compiler;
    const char *lang;     /* flags choosing the language */
} compilers[] = {
    {"gcc", "-x c -std=c99"},
    {"gcc", "-x c -std=c11"},
    {"clang", "-x c -std=c99"},
    {"clang", "-x c -std=c11"},
    {"g++", "-x c++ -std=c++17"},
    {"clang++", "-x c++ -std=c++17"},
    /* GNU modes, the compilers' default: they predefine unix and linux
     * (issue 26 #11), which the generated code must not use as names. */
    {"gcc", "-x c -std=gnu17"},
    {"g++", "-x c++ -std=gnu++17"},
};
#define NCOMPILERS (sizeof compilers / sizeof compilers[0])

/* C11 or later, or C++17 (strict mode needs one of them). */
static int modern(const char *lang)
{
    return strstr(lang, "c11") || strstr(lang, "c++17") || strstr(lang, "gnu17") || strstr(lang, "gnu++17");
}

static int compile(char **out, int i, const char *file, const char *incdir)
{
    return run(out, "%s %s -Wall -Wextra -Wpedantic -Werror -Iinclude/kstub -I%s/include -I%s -c %s "
               "-o /dev/null", compilers[i].compiler, compilers[i].lang, cuda_path(), incdir, file);
}

/* As a user's default build: warnings stay warnings. */
static int compile_lenient(char **out, int i, const char *file, const char *incdir)
{
    return run(out, "%s %s -Wall -Iinclude/kstub -I%s/include -I%s -c %s -o /dev/null", compilers[i].compiler,
               compilers[i].lang, cuda_path(), incdir, file);
}

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

/* Kernels with internal linkage get stubs, without a note; their symbols
 * are patterns for the per-compilation part of nvcc's names. */
START_TEST(internal_linkage_gets_stubs)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "%s tests/golden/internal.cu -o %s/out", kstub_bin(), tmpdir);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(!strstr(out, "note:"), "%s", out);
    char p[128];
    snprintf(p, sizeof p, "%s/out.c", tmpdir);
    char *c = ks_read_file(p, NULL);
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(strstr(c, "\"{static:11_internal_cu}_Z6hiddenPf\"") &&
                  strstr(c, "\"{static:11_internal_cu}_ZN{anon:11_internal_cu}4anonEPf\"") &&
                  strstr(c, "\"_Z7visiblePf\""), "%s", c);
    free(c);
    free(out);
    /* The stubs compile as every language a user builds them as. */
    static const char *const extra[][2] = {{"clang", "-x c -std=gnu17"}};   /* gcc's gnu17 is in compilers[] */
    for (size_t i = 0; i < NCOMPILERS + 1; i++) {
        const char *cc = i < NCOMPILERS ? compilers[i].compiler : extra[i - NCOMPILERS][0];
        const char *lang = i < NCOMPILERS ? compilers[i].lang : extra[i - NCOMPILERS][1];
        rc = run(&out, "%s %s -Wall -Wextra -Wpedantic -Werror -Iinclude/kstub -I%s/include -I%s -c %s/out.c "
                 "-o /dev/null", cc, lang, cuda_path(), tmpdir, tmpdir);
        ck_assert_msg(rc == 0, "%s %s:\n%s", cc, lang, out);
        free(out);
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
    for (size_t g = 1; g < sizeof goldens / sizeof goldens[0]; g++) {
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
        const char *most = is_clang ? (c99 && *clang_c99_max_lines ? clang_c99_max_lines : clang_max_lines)
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

/* Kernels with internal linkage are found in an embedded image by their
 * symbol patterns: whole-program and -rdc, PTX and cubin; an image of a file
 * of another name is refused, as any image that lacks a kernel. */
START_TEST(embed_accepts_internal_kernels)
{
    make_tmpdir();
    char *out;
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    ck_assert_msg(run(&out, "cp tests/golden/internal.cu %s && cd %s && cp internal.cu other.cu && "
                      "%s/bin/nvcc -ptx -arch=sm_90 internal.cu -o wp.ptx && "
                      "%s/bin/nvcc -ptx -arch=sm_90 -rdc=true internal.cu -o rdc.ptx && "
                      "%s/bin/nvcc -cubin -arch=sm_90 -rdc=true internal.cu -o rdc.cubin",
                      tmpdir, tmpdir, cuda, cuda, cuda) == 0, "nvcc: %s", out);
    free(out);
    static const char *const images[] = {"wp.ptx", "rdc.ptx", "rdc.cubin"};
    for (size_t i = 0; i < sizeof images / sizeof *images; i++) {
        int rc = run(&out, "%s %s/internal.cu --embed %s/%s -o %s/a", kstub_bin(), tmpdir, tmpdir,
                     images[i], tmpdir);
        ck_assert_msg(rc == 0, "%s: %s", images[i], out);
        free(out);
    }
    ck_assert_int_ne(run(&out, "%s %s/other.cu --embed %s/wp.ptx -o %s/b", kstub_bin(), tmpdir, tmpdir,
                         tmpdir), 0);
    ck_assert_msg(strstr(out, "kernel 'hidden' (symbol '{static:8_other_cu}_Z6hiddenPf') is not in the "
                         "image") == NULL, "%s", out);   /* whole-program: found by its plain name */
    ck_assert_msg(strstr(out, "kernel '(anonymous)::anon' (symbol '{static:8_other_cu}_ZN{anon:8_other_cu}"
                         "4anonEPf') is not in the image"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The variables an image's PTX declares (issue 29): module-scope .global and
 * .const only (not an instruction's suffix, a parameter's state space or a
 * declaration inside a function), each with its size: a vector type's
 * width times its lanes, each extent multiplied in, unknown ("[]", an
 * opaque type) as -1; one after .extern is declared, not defined; comments
 * and strings are not read. */
START_TEST(image_ptx_variables_are_read)
{
    static const char ptx[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        "// .global .u32 in_comment;\n"
        "/* .const .b8 in_block[4]; */\n"
        ".global .align 4 .u32 k = 3;\n"
        ".visible .const .align 4 .b8 c_w[64];\n"
        ".global .attribute(.managed) .align 8 .f64 m_x;\n"
        ".global .align 16 .v4 .f32 g_v;\n"
        ".global .align 4 .u32 g_grid[4][3];\n"
        ".global .align 1 .b8 g_open[] = {1, 2, 3};\n"
        ".global .texref t_ref;\n"
        ".global .align 8 .u64 g_ptrs[2] = {generic(k), 0};\n"
        ".extern .global .align 4 .u32 g_other;\n"
        ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
        ".visible .entry _Z1kPf(\n\t.param .u64 .ptr .global .align 4 _Z1kPf_param_0\n)\n"
        "{\n\t.global .u32 inner;\n\tld.global.u32 %r1, [k];\n\tld.const.f32 %f1, [c_w+4];\n}\n";
    ks_image_entries e;
    ks_image_entries_read((const unsigned char *)ptx, sizeof ptx - 1, &e);
    ck_assert_uint_eq(e.nmembers, 1);
    const ks_image_member *m = &e.members[0];
    static const struct {
        const char *name;
        long long size;
        int defined;
    } want[] = {
        {"k", 4, 1}, {"c_w", 64, 1}, {"m_x", 8, 1}, {"g_v", 16, 1}, {"g_grid", 48, 1},
        {"g_open", -1, 1}, {"t_ref", -1, 1}, {"g_ptrs", 16, 1}, {"g_other", 4, 0},
    };
    ck_assert_uint_eq(m->nentries, 1);
    ck_assert_str_eq(m->entries[0], "_Z1kPf");
    ck_assert_uint_eq(m->nvars, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < m->nvars; i++) {
        ck_assert_str_eq(m->vars[i].name, want[i].name);
        ck_assert_msg(m->vars[i].size == want[i].size, "%s: %lld", want[i].name, m->vars[i].size);
        ck_assert_int_eq(m->vars[i].defined, want[i].defined);
    }
    ks_image_entries_free(&e);
}
END_TEST

/* Issue 29: what kstub cannot give accessors gets a note saying why, and
 * each note's way out, applied, gets them, nvcc's whole-program image
 * holding every symbol kstub then expects (--embed checks it): an extern
 * declaration (of unknown bound too; a definition of unknown bound cannot
 * be written, its initializer gives the bound) is typed in the file that
 * defines it; internal linkage in a namespace (static, const) is not, and
 * with external linkage it is; an unnamed struct type, once named, is. */
START_TEST(untyped_variables_say_why_and_the_way_out_works)
{
    make_tmpdir();
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    char *out;
    write_text_in(tmpdir, "use.cu",
          "extern __device__ int g_elsewhere;\n"
          "extern __device__ float g_open[];\n"
          "__device__ struct { int a; } g_anon;\n"
          "namespace n { static __device__ int s_in_ns; const __device__ int k_in_ns = 2; }\n"
          "__global__ void k(float *o) { o[0] = g_elsewhere + g_open[0] + g_anon.a + n::s_in_ns + n::k_in_ns; }\n");
    int rc = run(&out, "%s %s/use.cu -o %s/use", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    static const char *const notes[] = {
        "use.cu:1:23: note: variable 'g_elsewhere' is declared extern and not defined in this file: its "
        "definition (-rdc) may be in another image, where kstub cannot prove its type; give it accessors "
        "in the file that defines it",
        "use.cu:2:25: note: variable 'g_open' is declared extern and not defined in this file",
        "use.cu:3:30: note: variable 'g_anon': 'g_anon' has an unnamed struct or union type, which C cannot "
        "name; give the type a name; no accessors",
        "use.cu:4:37: note: variable 'n::s_in_ns' has internal linkage in a namespace (static, const, or an "
        "anonymous namespace): nvcc names it per compilation (_ZN<n>_INTERNAL_<hash>...), so no symbol can "
        "be known before the image is built; no accessors (give it external linkage to have them)",
        "use.cu:4:67: note: variable 'n::k_in_ns' has internal linkage in a namespace",
    };
    for (size_t i = 0; i < sizeof notes / sizeof *notes; i++)
        ck_assert_msg(strstr(out, notes[i]) != NULL, "wanted \"%s\" in:\n%s", notes[i], out);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c '_get(' %s/use.h", tmpdir), 1);   /* none: grep finds no line */
    free(out);
    /* The ways out: the file that defines the extern ones, external linkage, a named type. */
    write_text_in(tmpdir, "def.cu",
          "__device__ int g_elsewhere;\n"
          "__device__ float g_open[] = {1, 2, 3};\n"
          "struct A { int a; };\n"
          "__device__ A g_anon;\n"
          "namespace n { __device__ int s_in_ns; extern const __device__ int k_in_ns = 2; }\n"
          "__global__ void k(float *o) { o[0] = g_elsewhere + g_open[0] + g_anon.a + n::s_in_ns + n::k_in_ns; }\n");
    rc = run(&out, "%s/bin/nvcc -ptx -arch=sm_90 %s/def.cu -o %s/def.ptx && %s %s/def.cu --embed %s/def.ptx "
             "-o %s/def", cuda, tmpdir, tmpdir, kstub_bin(), tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0 && !strstr(out, "note:") && !strstr(out, "error"), "%s", out);
    free(out);
    rc = run(&out, "grep -c 'ks_status \\(g_elsewhere\\|g_open\\|g_anon\\|n_s_in_ns\\|n_k_in_ns\\)_get(' %s/def.h",
             tmpdir);
    ck_assert_msg(rc == 0 && atoi(out) == 5, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(embed_tells_image_kinds_apart)
{
    make_tmpdir();
    char *out;
    char path[128];
    FILE *f;
    /* A cubin is an ELF file; a fatbin starts with its magic number: nvcc's
     * own, embedded as what they are. */
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    ck_assert_msg(run(&out, "%s/bin/nvcc -cubin -arch=sm_90 tests/golden/basic.cu -o %s/real.cubin "
                      "&& %s/bin/nvcc -fatbin -arch=sm_90 tests/golden/basic.cu -o %s/real.fatbin",
                      cuda, tmpdir, cuda, tmpdir) == 0, "nvcc: %s", out);
    free(out);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s/real.cubin -o %s/a",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c 'KS_IMAGE_CUBIN' %s/a.c", tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s/real.fatbin -o %s/b",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c 'KS_IMAGE_FATBIN' %s/b.c", tmpdir), 0);
    free(out);
    /* Their first bytes alone are told apart too, and refused as cut short
     * (issue 19 #11: they were embedded). */
    snprintf(path, sizeof path, "%s/fake.cubin", tmpdir);
    f = fopen(path, "wb");
    fwrite("\177ELF\2\1\1", 1, 7, f);
    fclose(f);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s -o %s/fa", kstub_bin(), path,
                         tmpdir), 1);
    ck_assert_msg(strstr(out, "fake.cubin: error: corrupt image: cubin:") != NULL, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/fake.fatbin", tmpdir);
    f = fopen(path, "wb");
    fwrite("\x50\xed\x55\xba\1\0\x10\0", 1, 8, f);
    fclose(f);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s -o %s/fb", kstub_bin(), path,
                         tmpdir), 1);
    ck_assert_msg(strstr(out, "fake.fatbin: error: corrupt image: the fatbin: it has 8 bytes") != NULL,
                  "%s", out);
    free(out);
    /* The source itself, for NVRTC at run time. */
    ck_assert_int_eq(run(&out, "%s kernels/vector_ops.cu --embed-source -o %s/s", kstub_bin(),
                         tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c 'KS_IMAGE_SOURCE' %s/s.c", tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "%s kernels/vector_ops.cu --embed-source --embed %s -o %s/s2",
                         kstub_bin(), path, tmpdir), 2);
    ck_assert_ptr_nonnull(strstr(out, "choose one"));
    free(out);
    /* Anything else is refused, and nothing is written. */
    snprintf(path, sizeof path, "%s/junk.bin", tmpdir);
    f = fopen(path, "wb");
    fputs("hello", f);
    fclose(f);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s -o %s/c", kstub_bin(), path,
                         tmpdir), 1);
    ck_assert_ptr_nonnull(strstr(out, "not a kernel image"));
    free(out);
    snprintf(path, sizeof path, "%s/c.h", tmpdir);
    ck_assert(!exists(path));
    remove_tmpdir();
}
END_TEST

START_TEST(user_templates)
{
    make_tmpdir();
    char *out;
    char path[128];
    snprintf(path, sizeof path, "%s/tpl", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/tpl/header.h.in", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("{{#kernels}}\n{{c_name}}:{{#params}} {{name}}@{{offset}}{{/params}}\n{{/kernels}}\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/tpl/source.c.in", tmpdir);
    f = fopen(path, "w");
    fputs("{{^kernels}}none{{/kernels}}{{! a comment }}\n", f);
    fclose(f);
    int rc = run(&out, "%s kernels/vector_ops.cu -T %s/tpl -o %s/v", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/v.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(strstr(h, "saxpy: a@0 x@8 y@16 n@24\n"));
    free(h);
    /* A typo in a template is an error with the template's line. */
    snprintf(path, sizeof path, "%s/tpl/source.c.in", tmpdir);
    f = fopen(path, "w");
    fputs("line one\n{{#kernels}}{{c_nmae}}{{/kernels}}\n", f);
    fclose(f);
    rc = run(&out, "%s kernels/vector_ops.cu -T %s/tpl -o %s/w", kstub_bin(), tmpdir, tmpdir);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strstr(out, "source.c.in:2:13: error: unknown name 'c_nmae'") != NULL, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 10 #17: a template that would break the engine is refused with its
 * real line and column and nothing is written: a NUL byte (once truncated
 * the output), an unterminated '{{' (once reported at column 0), and 30,000
 * nested sections (once a stack overflow). Issue 19 #7: 40 nested
 * {{#kernels}} (2^40 renders and more: it ran for ever) stop once the work
 * passes its bound, at the innermost section, naming the outer one. */
START_TEST(hostile_templates_are_refused_at_their_position)
{
    static const struct {
        const char *head;   /* the header template's text before the hostile part */
        const char *says;
    } cases[] = {
        {"line one\nab", "header.h.in:2:3: error: a NUL byte in a template"},
        {"line one\n  xx {{ prefix\n", "header.h.in:2:6: error: unterminated '{{'"},
        {"line one\n", "header.h.in:2:705: error: sections nest deeper than 64"},
        {"line one\n", "header.h.in:"},   /* the line where the budget ran out: see below */
    };
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/tpl", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/tpl/source.c.in", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("{{prefix}}\n", f);
    fclose(f);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/tpl/header.h.in", tmpdir);
        f = fopen(path, "w");
        fputs(cases[i].head, f);
        if (i == 0)
            fwrite("\0cd {{prefix}}\n", 1, 15, f);
        if (i == 2) {
            for (int d = 0; d < 30000; d++)
                fputs("{{#prefix}}", f);
            for (int d = 0; d < 30000; d++)
                fputs("{{/prefix}}", f);
            fputs("\n", f);
        }
        if (i == 3) {
            for (int d = 0; d < 40; d++)
                fputs("{{#kernels}}\n", f);
            fputs("{{c_name}}\n", f);
            for (int d = 0; d < 40; d++)
                fputs("{{/kernels}}\n", f);
        }
        fclose(f);
        char *out;
        int rc = run(&out, "%s kernels/vector_ops.cu -T %s/tpl -o %s/t%zu", kstub_bin(), tmpdir, tmpdir, i);
        ck_assert_msg(rc == 1, "case %zu: exit %d:\n%s", i, rc, out);
        ck_assert_msg(strstr(out, cases[i].says) != NULL, "no '%s' in:\n%s", cases[i].says, out);
        ck_assert_msg(strstr(out, "nothing written") != NULL, "%s", out);
        ck_assert_msg(i != 3 || (strstr(out, ":1: error: rendering stopped after") &&
                                 strstr(out, "section 'kernels' repeats inside itself (opened at "
                                             "line 2)")), "%s", out);
        free(out);
        snprintf(path, sizeof path, "%s/t%zu.h", tmpdir, i);
        ck_assert_msg(access(path, F_OK) != 0, "%s written", path);
    }
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

static Suite *gen_suite(void)
{
    Suite *s = suite_create("generator");
    TCase *tc;

    tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, parse_names_nothing_naming_names_all);
    tcase_add_test(tc, model_golden_input);
    tcase_add_test(tc, model_every_scalar_kind);
    tcase_add_test(tc, model_template_instantiations);
    tcase_add_test(tc, template_without_instantiation_is_noted);
    tcase_add_test(tc, template_overloads_and_skip_bodies);
    tcase_add_test(tc, model_launch_bounds_expressions);
    suite_add_tcase(s, tc);

    tc = tcase_create("refusals");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, refusal_reports_location, 0, NREFUSALS);
    tcase_add_test(tc, refusal_messages_name_kernel_and_parameter);
    tcase_add_test(tc, internal_linkage_gets_stubs);
    tcase_add_test(tc, skip_directive);
    tcase_add_test(tc, extent_directive);
    tcase_add_test(tc, cli_missing_values_are_usage_errors);
    tcase_add_test(tc, body_errors_are_warnings);
    tcase_add_test(tc, errors_leave_existing_outputs_alone);
    suite_add_tcase(s, tc);

    tc = tcase_create("output");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, golden_output, 0, (int)(sizeof goldens / sizeof goldens[0]));
    tcase_add_test(tc, unchanged_output_keeps_mtime);
    tcase_add_test(tc, user_templates);
    tcase_add_test(tc, hostile_templates_are_refused_at_their_position);
    tcase_add_test(tc, templates_restyle_mirrors);
    tcase_add_test(tc, embed_tells_image_kinds_apart);
    tcase_add_test(tc, embed_accepts_internal_kernels);
    tcase_add_test(tc, image_ptx_variables_are_read);
    tcase_add_test(tc, untyped_variables_say_why_and_the_way_out_works);
    suite_add_tcase(s, tc);

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
    suite_add_tcase(s, tc);

    tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cli_help_version_and_misuse);
    tcase_add_test(tc, macros_and_includes_reach_the_parse);
    tcase_add_test(tc, installed_kstub_uses_installed_templates);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gen_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
