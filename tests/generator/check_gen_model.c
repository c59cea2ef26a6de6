/*
 * check_gen_model.c — the generator's model stage: the type model built from
 * a parse (every scalar kind, template instances, __launch_bounds__), and the
 * refusals of what C cannot carry, each at its file:line:col.
 *
 * Part of check-gen (tests/generator/gen.mk; check_gen.c runs every part,
 * CK_RUN_SUITE=gen-model this one). Run from the repository root.
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
    /* base classes are mirrored (tests/corpus/abi_bases.cu); these are not */
    {"virtual_base.cu", "3:57", "Derived has a virtual base class 'Base'"},
    {"virtual_in_base.cu", "3:56", "Square: its base class 'Shape' has virtual functions"},
    {"base_destructor.cu", "3:56", "its base class 'Owner' has a user-provided destructor"},
    {"bitfield.cu", "2:51", "has a bit-field 'a'"},
    {"copy_constructor.cu", "2:44", "not trivially copyable"},
    {"bad_rename.cu", "2:4", "matches no kernel"},
    {"member_pointer.cu", "2:39", "is a member pointer"},
    {"rename_not_identifier.cu", "2:4", "is not a C identifier"},
    {"function_pointer.cu", "2:50", "pointer to function 'int (const char *, ...)', which is variadic"},
    {"function_pointer_reference.cu", "2:52", "its parameter 1 is a reference"},
    {"syntax_error.cu", "2:36", "unknown type name 'undeclared_type'"},
    {"int128.cu", "1:52", "no exact C equivalent"},
    /* what nvcc refuses of a function declared again in another execution
     * space stays an error (front/redecl.c; what it accepts: check-real's
     * compat_hd_redeclarations.cu) */
    {"redeclared_kernel.cu", "2:6", "cannot overload __global__ function 'k_redeclared'"},
    {"redeclared_return.cu", "2:26", "cannot overload __device__ function 'h_returns'"},
    {"redeclared_two_definitions.cu", "2:27", "cannot overload __device__ function 'g_defined'"},
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

Suite *gen_model_suite(void)
{
    Suite *s = suite_create("gen-model");
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
    return s;
}
