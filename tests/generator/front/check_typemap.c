/*
 * check_typemap.c — typemap.c on its own: each kind of kernel parameter, in
 * a small .cu parsed with libclang (ks_parse), and the typed model it becomes
 * (base, scalar, qualifiers per pointer level, records with their layout,
 * enums, arrays, CUDA vector and special types, tags), or the refusal it
 * gets with its location. Only the front end's structure is asserted, never
 * a C name, so the cases hold whichever stage names the model.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "base/options.h"
#include "base/util.h"
#include "front/walk.h"
#include "testutil.h"

static char tmpdir[64];
static ks_model model;
static ks_options opts;
static char *diagnostics;

static const char *cuda_path(void)
{
    const char *p = getenv("CUDA_PATH");
    return p && *p ? p : "/usr/local/cuda";
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kstub-typemap-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    memset(&model, 0, sizeof model);
    diagnostics = NULL;
}

static void teardown(void)
{
    char *out;
    run(&out, "rm -rf '%s'", tmpdir);
    free(out);
    ks_model_free(&model);
    free(diagnostics);
}

/* Writes source as k.cu in the test's directory and parses it; returns
 * ks_parse's result, its diagnostics in `diagnostics`. */
static int parse(const char *source)
{
    char path[128];
    snprintf(path, sizeof path, "%s/k.cu", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(source, f);
    fclose(f);
    memset(&opts, 0, sizeof opts);
    opts.input = path;
    opts.outbase = "k.kstub";
    opts.cuda_path = cuda_path();
    opts.arch = "sm_90";
    opts.std = "c++17";
    opts.no_cache = 1;
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *cap = tmpfile();
    ck_assert_ptr_nonnull(cap);
    dup2(fileno(cap), STDERR_FILENO);
    int rc = ks_parse(&opts, &model);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    long n = ftell(cap);
    rewind(cap);
    diagnostics = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    if (n > 0)
        ck_assert_uint_eq(fread(diagnostics, 1, (size_t)n, cap), (size_t)n);
    fclose(cap);
    return rc;
}

#define PARSES(src) ck_assert_msg(parse(src) == 0, "parse failed: %s", diagnostics)
#define REFUSES(src, what)                                                                 \
    do {                                                                                   \
        ck_assert_msg(parse(src) != 0, "accepted: %s", (src));                             \
        ck_assert_msg(strstr(diagnostics, "k.cu:") != NULL, "not located: %s", diagnostics); \
        ck_assert_msg(strstr(diagnostics, (what)) != NULL, "diagnostics lack \"%s\": %s", (what), diagnostics); \
    } while (0)

/* The parameter of the kernel whose qualified name is kname, by index. */
static const ks_param *param_of(const char *kname, size_t i)
{
    for (size_t k = 0; k < model.nkernels; k++)
        if (strcmp(model.kernels[k].name, kname) == 0) {
            ck_assert_uint_gt(model.kernels[k].nparams, i);
            return &model.kernels[k].params[i];
        }
    ck_abort_msg("no kernel '%s'", kname);
    return NULL;
}

static const ks_def *def_of(const ks_type *t)
{
    ck_assert_uint_lt(t->def, model.ndefs);
    return &model.defs[t->def];
}

/* ---- scalars and pointers ------------------------------------------------------------ */

START_TEST(scalars_by_name)
{
    PARSES("#include <stdint.h>\n#include <stddef.h>\n"
           "__global__ void s(bool b, char c, signed char sc, unsigned char uc, short sh,\n"
           "                  unsigned long long ull, int64_t i64, size_t n, float f, double d) {}\n");
    static const ks_scalar want[] = {KS_SCALAR_BOOL, KS_SCALAR_CHAR, KS_SCALAR_SCHAR, KS_SCALAR_UCHAR,
                                     KS_SCALAR_SHORT, KS_SCALAR_ULLONG, KS_SCALAR_INT64_T,
                                     KS_SCALAR_SIZE_T, KS_SCALAR_FLOAT, KS_SCALAR_DOUBLE};
    static const long size[] = {1, 1, 1, 1, 2, 8, 8, 8, 4, 8};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const ks_param *p = param_of("s", i);
        ck_assert_int_eq(p->type.base, KS_BASE_SCALAR);
        ck_assert_msg(p->type.scalar == want[i], "parameter %zu: scalar %s, want %s", i,
                      ks_scalar_c_name(p->type.scalar), ks_scalar_c_name(want[i]));
        ck_assert_uint_eq(p->type.nptrs, 0);
        ck_assert_int_eq(p->size, size[i]);
        ck_assert_int_eq(p->offset % p->align, 0);
    }
    /* nvcc's layout: each at the next multiple of its alignment. */
    ck_assert_int_eq(param_of("s", 4)->offset, 4);
    ck_assert_int_eq(param_of("s", 5)->offset, 8);
}
END_TEST

START_TEST(pointer_qualifiers_per_level)
{
    PARSES("__global__ void p(const float *__restrict__ x, float **y, volatile int *const z,\n"
           "                  const void *v) {}\n");
    const ks_param *x = param_of("p", 0);
    ck_assert_int_eq(x->type.base, KS_BASE_SCALAR);
    ck_assert_int_eq(x->type.scalar, KS_SCALAR_FLOAT);
    ck_assert_uint_eq(x->type.quals, KS_QUAL_CONST);
    ck_assert_uint_eq(x->type.nptrs, 1);
    ck_assert_uint_eq(x->type.ptr_quals[0], KS_QUAL_RESTRICT);
    const ks_param *y = param_of("p", 1);
    ck_assert_uint_eq(y->type.nptrs, 2);
    ck_assert_uint_eq(y->type.quals, 0);
    const ks_param *z = param_of("p", 2);
    ck_assert_uint_eq(z->type.quals, KS_QUAL_VOLATILE);
    /* The parameter's own const is the kernel's business, not the caller's. */
    ck_assert_uint_eq(z->type.ptr_quals[0], 0);
    const ks_param *v = param_of("p", 3);
    ck_assert_int_eq(v->type.base, KS_BASE_VOID);
    ck_assert_uint_eq(v->type.quals, KS_QUAL_CONST);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(param_of("p", (size_t)i)->size, 8);
}
END_TEST

START_TEST(pointer_to_array)
{
    PARSES("__global__ void a(float (*rows)[28]) {}\n");
    const ks_param *p = param_of("a", 0);
    ck_assert_uint_eq(p->type.nptrs, 1);
    const ks_def *d = def_of(&p->type);
    ck_assert_int_eq(d->kind, KS_DEF_ARRAY);
    ck_assert_uint_eq(d->nfields, 1);
    ck_assert_int_eq(d->fields[0].type.scalar, KS_SCALAR_FLOAT);
    ck_assert_uint_eq(d->fields[0].type.ndims, 1);
    ck_assert_int_eq(d->fields[0].type.dims[0], 28);
}
END_TEST

/* ---- records and enums ------------------------------------------------------------------- */

START_TEST(record_by_value_with_layout)
{
    PARSES("namespace ns { struct P { char c; double d; int v[3]; }; }\n"
           "__global__ void r(ns::P p, int after) {}\n");
    const ks_param *p = param_of("r", 0);
    ck_assert_int_eq(p->type.base, KS_BASE_RECORD);
    ck_assert_uint_eq(p->type.nptrs, 0);
    const ks_def *d = def_of(&p->type);
    ck_assert_int_eq(d->kind, KS_DEF_STRUCT);
    ck_assert_str_eq(d->qname, "ns::P");
    ck_assert(d->complete);
    ck_assert_int_eq(d->size, 32);
    ck_assert_int_eq(d->align, 8);
    ck_assert_uint_eq(d->nfields, 3);
    ck_assert_str_eq(d->fields[0].name, "c");
    ck_assert_int_eq(d->fields[1].offset, 8);
    ck_assert_int_eq(d->fields[2].offset, 16);
    ck_assert_uint_eq(d->fields[2].type.ndims, 1);
    ck_assert_int_eq(d->fields[2].type.dims[0], 3);
    ck_assert_int_eq(p->size, 32);
    ck_assert_int_eq(param_of("r", 1)->offset, 32);
}
END_TEST

START_TEST(record_through_a_pointer_is_declared)
{
    PARSES("struct Opaque;\n__global__ void o(Opaque *h) {}\n");
    const ks_param *p = param_of("o", 0);
    ck_assert_int_eq(p->type.base, KS_BASE_RECORD);
    ck_assert_uint_eq(p->type.nptrs, 1);
    ck_assert(!def_of(&p->type)->complete);
    ck_assert_uint_eq(model.ndecl_order, 1);
}
END_TEST

START_TEST(union_by_value)
{
    PARSES("union U { float f; unsigned u; };\n__global__ void u(U x) {}\n");
    const ks_def *d = def_of(&param_of("u", 0)->type);
    ck_assert_int_eq(d->kind, KS_DEF_UNION);
    ck_assert_int_eq(d->size, 4);
    ck_assert_uint_eq(d->nfields, 2);
}
END_TEST

START_TEST(enums_with_underlying_types)
{
    PARSES("enum class Mode : unsigned char { A = 1, B = 200 };\n"
           "namespace nn { enum Act { RELU, GELU = -3 }; }\n"
           "__global__ void e(Mode m, nn::Act a) {}\n");
    const ks_param *m = param_of("e", 0);
    ck_assert_int_eq(m->type.base, KS_BASE_ENUM);
    const ks_def *d = def_of(&m->type);
    ck_assert_int_eq(d->kind, KS_DEF_ENUM);
    ck_assert_int_eq(d->underlying, KS_SCALAR_UCHAR);
    ck_assert_int_eq(d->size, 1);
    ck_assert(d->scoped);
    ck_assert_uint_eq(d->nenumerators, 2);
    ck_assert_str_eq(d->enumerators[1].name, "B");
    ck_assert_int_eq(d->enumerators[1].value, 200);
    const ks_def *a = def_of(&param_of("e", 1)->type);
    ck_assert_str_eq(a->qname, "nn::Act");
    ck_assert(a->is_signed);
    ck_assert_int_eq(a->enumerators[1].value, -3);
    ck_assert_int_eq(param_of("e", 1)->size, 4);
}
END_TEST

START_TEST(class_template_specialization)
{
    PARSES("template <typename T, int N> struct Vec { T v[N]; };\n"
           "__global__ void t(Vec<float, 4> x) {}\n");
    const ks_def *d = def_of(&param_of("t", 0)->type);
    ck_assert_str_eq(d->template_name, "Vec");
    ck_assert_str_eq(d->template_args, "float, 4");
    ck_assert_int_eq(d->size, 16);
}
END_TEST

/* ---- CUDA's types and tags ---------------------------------------------------------------- */

START_TEST(vector_and_special_types)
{
    PARSES("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
           "__global__ void v(float4 a, const __half *h, __nv_bfloat16 b, int2 *q) {}\n");
    const ks_param *a = param_of("v", 0);
    ck_assert_int_eq(a->type.base, KS_BASE_VECTOR);
    ck_assert_str_eq(a->type.vector, "float4");
    ck_assert_int_eq(a->size, 16);
    ck_assert_int_eq(a->align, 16);
    const ks_param *h = param_of("v", 1);
    ck_assert_int_eq(h->type.base, KS_BASE_SPECIAL);
    ck_assert_int_eq(h->type.special, KS_SPECIAL_HALF);
    ck_assert_uint_eq(h->type.quals, KS_QUAL_CONST);
    ck_assert_int_eq(param_of("v", 2)->type.special, KS_SPECIAL_BFLOAT16);
    ck_assert_int_eq(param_of("v", 3)->type.base, KS_BASE_VECTOR);
    ck_assert_uint_eq(param_of("v", 3)->type.nptrs, 1);
    ck_assert(model.needs_vector_types);
}
END_TEST

START_TEST(empty_class_is_a_tag)
{
    PARSES("#include <type_traits>\nstruct Tag {};\n"
           "__global__ void g(std::integral_constant<int, 4> four, Tag t, std::true_type yes, int n) {}\n");
    for (size_t i = 0; i < 3; i++) {
        const ks_param *p = param_of("g", i);
        ck_assert_msg(p->type.tag, "parameter %zu is no tag", i);
        ck_assert_int_eq(p->type.base, KS_BASE_SCALAR);
        ck_assert_int_eq(p->type.scalar, KS_SCALAR_UCHAR);
        ck_assert_int_eq(p->size, 1);
    }
    ck_assert(!param_of("g", 3)->type.tag);
}
END_TEST

/* A class with base classes: each non-virtual base's fields first, in base
 * order and recursively, at their offsets in the derived class (a POD
 * base's tail padding kept, an empty base taking no room), marked with
 * the declaring class's own name. */
START_TEST(base_fields_are_flattened)
{
    PARSES("struct E {};\n"
           "struct Pod { int a; char b; };\n"
           "template <typename T> struct TB { T t; };\n"
           "struct L1 : Pod { short s; };\n"
           "struct D : E, L1, TB<double> { char b; };\n"
           "__global__ void r(D d) {}\n");
    const ks_def *d = def_of(&param_of("r", 0)->type);
    ck_assert(d->has_bases);
    ck_assert_int_eq(d->size, 32);
    ck_assert_int_eq(d->align, 8);
    ck_assert_uint_eq(d->nfields, 5);
    const char *names[] = {"a", "b", "s", "t", "b"}, *from[] = {"Pod", "Pod", "L1", "TB", NULL};
    const long offsets[] = {0, 4, 8, 16, 24};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_str_eq(d->fields[i].name, names[i]);
        ck_assert_int_eq(d->fields[i].offset, offsets[i]);
        if (from[i])
            ck_assert_str_eq(d->fields[i].from, from[i]);
        else
            ck_assert_ptr_null(d->fields[i].from);
    }
    ck_assert_int_eq(d->fields[3].type.scalar, KS_SCALAR_DOUBLE);
}
END_TEST

START_TEST(virtual_base_refused)
{
    REFUSES("struct B { int x; };\nstruct D : virtual B { int y; };\n__global__ void v(D d) {}\n",
            "D has a virtual base class 'B'");
    teardown();
    setup();
    REFUSES("struct B { virtual void f() {} int x; };\nstruct D : B { int y; };\n"
            "__global__ void v(D d) {}\n", "D: its base class 'B' has virtual functions");
}
END_TEST

/* ---- refusals ------------------------------------------------------------------------------ */

START_TEST(reference_refused)
{
    REFUSES("__global__ void r(int &x) {}\n", "is a reference");
}
END_TEST

START_TEST(bit_field_refused)
{
    REFUSES("struct B { int a : 3; int b : 5; };\n__global__ void b(B x) {}\n", "bit-field");
}
END_TEST

START_TEST(function_pointer_refused)
{
    /* A pointer to a function is typed (issue 18 #9): a KS_DEF_FUNCTION
     * def, its return type then its parameters' as fields; a variadic one
     * cannot be called from C's side of the ABI and is refused. */
    PARSES("__global__ void f(int (*fn)(int, float *)) {}\n");
    const ks_type *t = &model.kernels[0].params[0].type;
    ck_assert_int_eq(t->nptrs, 1);
    ck_assert_int_eq(t->base, KS_BASE_RECORD);
    const ks_def *d = &model.defs[t->def];
    ck_assert_int_eq(d->kind, KS_DEF_FUNCTION);
    ck_assert_uint_eq(d->nfields, 3);
    ck_assert_int_eq(d->fields[0].type.scalar, KS_SCALAR_INT);
    ck_assert_int_eq(d->fields[2].type.nptrs, 1);
    ck_assert_int_eq(d->size, 8);
    teardown();
    setup();
    REFUSES("__global__ void v(int (*fn)(int, ...)) {}\n", "variadic");
}
END_TEST

START_TEST(unnamed_enum_refused)
{
    /* (A typedef names an enum: "typedef enum { X } E;" is accepted.) */
    REFUSES("struct S { enum { A, B } m; };\n__global__ void e(S x) {}\n",
            "k.cu:2:21: error: kernel 'e', parameter 1 'x': S: an unnamed enum; give the enum a name");
}
END_TEST

static Suite *typemap_suite(void)
{
    Suite *s = suite_create("typemap");
    struct { const char *name; const TTest *tests[8]; } cases[] = {
        {"scalars", {scalars_by_name, pointer_qualifiers_per_level, pointer_to_array}},
        {"records", {record_by_value_with_layout, record_through_a_pointer_is_declared, union_by_value,
                     enums_with_underlying_types, class_template_specialization,
                     base_fields_are_flattened}},
        {"cuda", {vector_and_special_types, empty_class_is_a_tag}},
        {"refused", {reference_refused, bit_field_refused, function_pointer_refused, unnamed_enum_refused,
                     virtual_base_refused}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);     /* libclang parses CUDA's headers; slow under ASan */
        for (const TTest *const *t = cases[i].tests; *t; t++)
            tcase_add_test(tc, *t);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(typemap_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
