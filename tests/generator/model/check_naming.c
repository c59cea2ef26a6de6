/*
 * check_naming.c — naming.c on its own: models built by hand with model.c's
 * builders (no parse), named with ks_name_model, and the names and
 * diagnostics it gives: plain and qualified names, the file's prefix, guard
 * and image, keyword escapes, the runtime's reserved names and macros,
 * collisions, overload tags, template instance names, renames, the stubs'
 * own parameters stepping aside, and ks_name_is_free afterwards.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "model/naming.h"
#include "base/options.h"
#include "model/target.h"
#include "base/util.h"

static ks_model model;
static ks_options opts;
static char *diagnostics;      /* what the last name_all printed */

static void setup(void)
{
    memset(&model, 0, sizeof model);
    memset(&opts, 0, sizeof opts);
    opts.input = "in.cu";
    opts.outbase = "in.kstub";
    diagnostics = NULL;
}

static void teardown(void)
{
    ks_model_free(&model);
    free(diagnostics);
}

/* A kernel named name (qualified C++), its symbol the same, at line
 * <its index + 1>, column 1 of in.cu. */
static ks_kern *kernel(const char *name)
{
    ks_kern *k = ks_model_add_kernel(&model);
    k->name = ks_xstrdup(name);
    k->symbol = ks_xstrdup(name);
    k->line = (unsigned)model.nkernels;
    k->col = 1;
    return k;
}

/* A scalar parameter of k, a pointer to it when pointer is set. */
static ks_param *param(ks_kern *k, const char *name, ks_scalar s, int pointer)
{
    ks_param *p = ks_kern_add_param(k);
    p->name = name ? ks_xstrdup(name) : NULL;
    p->type.base = KS_BASE_SCALAR;
    p->type.scalar = s;
    if (pointer)
        ks_type_add_ptr(&p->type, 0);
    return p;
}

/* ks_name_model under the target in dir (user: a -T folder) with its
 * diagnostics captured; returns its result. */
static int name_in(const char *dir, int user)
{
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *cap = tmpfile();
    ck_assert_ptr_nonnull(cap);
    dup2(fileno(cap), STDERR_FILENO);
    ks_target target;
    ck_assert_int_eq(ks_target_load(dir, user, &target), 0);
    int rc = ks_name_model(&target, &opts, &model);
    ks_target_free(&target);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    long n = ftell(cap);
    rewind(cap);
    free(diagnostics);
    diagnostics = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    if (n > 0)
        ck_assert_uint_eq(fread(diagnostics, 1, (size_t)n, cap), (size_t)n);
    fclose(cap);
    return rc;
}

/* ... under the built-in C target. */
static int name_all(void)
{
    return name_in("templates", 0);
}

#define NAMES_CLEANLY() ck_assert_msg(name_all() == 0, "naming failed: %s", diagnostics)
#define SAID(text) ck_assert_msg(strstr(diagnostics, (text)) != NULL, "diagnostics lack \"%s\": %s", (text), diagnostics)

/* ---- plain names ------------------------------------------------------------------- */

START_TEST(identifiers_from_names)
{
    char *s = ks_c_identifier("ns::inner::name");
    ck_assert_str_eq(s, "ns_inner_name");
    free(s);
    s = ks_identifier_stem("dir/vector_ops.cu");
    ck_assert_str_eq(s, "vector_ops");
    free(s);
    s = ks_identifier_stem("a-b.c.cu");
    ck_assert_msg(s[0] && strspn(s, "abcdefghijklmnopqrstuvwxyz_0123456789") == strlen(s),
                  "stem of a-b.c.cu is no identifier: %s", s);
    free(s);
}
END_TEST

START_TEST(file_names)
{
    kernel("saxpy");
    NAMES_CLEANLY();
    ck_assert_str_eq(model.prefix, "in");
    ck_assert_str_eq(model.header, "in.kstub.h");
    ck_assert_str_eq(model.guard, "KSTUB_IN_KSTUB_H");
    ck_assert_str_eq(model.image, "in_kstub_image");
}
END_TEST

START_TEST(qualified_kernel)
{
    ks_kern *k = kernel("ns::scale");
    param(k, "x", KS_SCALAR_FLOAT, 1);
    param(k, NULL, KS_SCALAR_INT, 0);
    NAMES_CLEANLY();
    k = &model.kernels[0];
    ck_assert_str_eq(k->c_name, "ns_scale");
    ck_assert_str_eq(k->descriptor, "ns_scale_kernel");
    ck_assert_str_eq(k->params[0].c_name, "x");
    ck_assert_str_eq(k->params[1].c_name, "arg1");       /* unnamed */
    ck_assert_str_eq(k->launch_name, "launch");
    ck_assert_str_eq(k->stream_name, "stream");
    ck_assert_str_eq(k->n_items_name, "n_items");
    ck_assert_str_eq(diagnostics, "");
}
END_TEST

/* ---- keywords and reserved names ----------------------------------------------------- */

START_TEST(c_keywords_step_aside)
{
    ks_kern *k = kernel("restrict");
    param(k, "_Bool", KS_SCALAR_INT, 0);
    param(k, "_Atomic", KS_SCALAR_INT, 0);
    NAMES_CLEANLY();
    k = &model.kernels[0];
    ck_assert_str_eq(k->c_name, "restrict_");
    ck_assert_str_eq(k->params[0].c_name, "_Bool_");
    ck_assert_str_eq(k->params[1].c_name, "_Atomic_");
}
END_TEST

START_TEST(runtime_names_step_aside)
{
    ks_kern *k = kernel("ks_launch");
    param(k, "ks_status", KS_SCALAR_INT, 0);
    param(k, "KS_OK", KS_SCALAR_INT, 0);
    param(k, "size_t", KS_SCALAR_INT, 0);       /* a name the generated code uses */
    NAMES_CLEANLY();
    k = &model.kernels[0];
    ck_assert_str_eq(k->c_name, "ks_launch_");
    SAID("note: kernel 'ks_launch' is 'ks_launch_' in C");
    ck_assert_str_eq(k->params[0].c_name, "ks_status_");
    ck_assert_str_eq(k->params[1].c_name, "KS_OK_");
    ck_assert_str_eq(k->params[2].c_name, "size_t_");
}
END_TEST

START_TEST(runtime_macros_reserved)
{
    /* The table comes from the runtime's headers. */
    int found = 0;
    for (const char *const *p = ks_runtime_macros; *p; p++)
        found += strcmp(*p, "KS_RESTRICT") == 0 || strcmp(*p, "KSTUB_VERSION_MAJOR") == 0;
    ck_assert_int_eq(found, 2);
    /* A parameter of a macro's name steps aside... */
    ks_kern *k = kernel("k");
    param(k, "KSTUB_VERSION_MAJOR", KS_SCALAR_INT, 0);
    NAMES_CLEANLY();
    ck_assert_str_eq(model.kernels[0].params[0].c_name, "KSTUB_VERSION_MAJOR_");
}
END_TEST

START_TEST(kernel_named_like_a_runtime_macro)
{
    /* ... a kernel outside ks_/KS_ of a macro's name is an error that says how to rename it. */
    kernel("KSTUB_VERSION_MAJOR");
    ck_assert_int_ne(name_all(), 0);
    SAID("in.cu:1:1: error: kernel 'KSTUB_VERSION_MAJOR' would be the C function 'KSTUB_VERSION_MAJOR', a macro");
    SAID("kstub:name KSTUB_VERSION_MAJOR = C_NAME");
}
END_TEST

START_TEST(guard_of_a_runtime_header)
{
    /* -o types: the guard kstub_types.h uses would be taken. */
    opts.outbase = "types";
    kernel("k");
    NAMES_CLEANLY();
    ck_assert_str_ne(model.guard, "KSTUB_TYPES_H");
    ck_assert_str_eq(model.guard, "KSTUB_TYPES_H_");
}
END_TEST

START_TEST(stub_parameters_step_aside)
{
    ks_kern *k = kernel("k");
    param(k, "launch", KS_SCALAR_INT, 0);
    param(k, "stream", KS_SCALAR_INT, 0);
    param(k, "ks_launch_", KS_SCALAR_INT, 0);
    NAMES_CLEANLY();
    k = &model.kernels[0];
    ck_assert_str_eq(k->params[0].c_name, "launch");
    ck_assert_str_eq(k->launch_name, "ks_launch__");
    ck_assert_str_eq(k->stream_name, "ks_stream_");
    ck_assert_str_eq(k->n_items_name, "n_items");
}
END_TEST

START_TEST(repeated_parameter_names)
{
    /* A parameter pack's expansion repeats its name. */
    ks_kern *k = kernel("k");
    param(k, "x", KS_SCALAR_INT, 0);
    param(k, "x", KS_SCALAR_INT, 0);
    param(k, "x", KS_SCALAR_INT, 0);
    NAMES_CLEANLY();
    k = &model.kernels[0];
    ck_assert_str_eq(k->params[0].c_name, "x");
    ck_assert_str_eq(k->params[1].c_name, "x_");
    ck_assert_str_eq(k->params[2].c_name, "x__");
}
END_TEST

/* ---- collisions ------------------------------------------------------------------------ */

START_TEST(two_kernels_one_c_name)
{
    /* Same C name, same parameter types: the overload tags cannot tell them apart. */
    kernel("a::k");
    kernel("a_k");
    ck_assert_int_ne(name_all(), 0);
    SAID("in.cu:2:1: error: kernels 'a::k' (in.cu:1) and 'a_k' both get the C name 'a_k__void'");
    SAID("kstub:name KERNEL = C_NAME");
}
END_TEST

START_TEST(kernel_named_like_another_kernels_entry_point)
{
    /* a_n is the 1-D launch of kernel a: the kernel a_n steps aside. */
    kernel("a");
    kernel("a_n");
    kernel("a_node");
    NAMES_CLEANLY();
    ck_assert_str_eq(model.kernels[0].c_name, "a");
    ck_assert_str_eq(model.kernels[1].c_name, "a_n_");
    ck_assert_str_eq(model.kernels[2].c_name, "a_node_");
    ck_assert_str_eq(model.kernels[1].descriptor, "a_n__kernel");
}
END_TEST

/* ---- overloads and templates ------------------------------------------------------------- */

START_TEST(overload_tags)
{
    ks_kern *f = kernel("scale");
    param(f, "x", KS_SCALAR_FLOAT, 1);
    param(f, "a", KS_SCALAR_FLOAT, 0);
    ks_kern *d = kernel("scale");
    param(d, "x", KS_SCALAR_DOUBLE, 1);
    param(d, "a", KS_SCALAR_DOUBLE, 0);
    kernel("scale");       /* no parameters */
    model.kernels[1].symbol[0] = 'S';    /* symbols differ, as the mangled ones do */
    model.kernels[2].symbol[1] = 'C';
    NAMES_CLEANLY();
    ck_assert_str_eq(model.kernels[0].c_name, "scale__floatp_float");
    ck_assert_str_eq(model.kernels[1].c_name, "scale__doublep_double");
    ck_assert_str_eq(model.kernels[2].c_name, "scale__void");
}
END_TEST

START_TEST(type_tags)
{
    ks_type t = {0};
    t.base = KS_BASE_SCALAR;
    t.scalar = KS_SCALAR_FLOAT;
    t.quals = KS_QUAL_CONST;
    ks_type_add_ptr(&t, 0);
    char *tag = ks_type_tag(&model, &t);
    ck_assert_str_eq(tag, "cfloatp");
    free(tag);
    ks_type_free(&t);
    ks_type u = {0};
    u.base = KS_BASE_SCALAR;
    u.scalar = KS_SCALAR_ULLONG;
    tag = ks_type_tag(&model, &u);
    ck_assert_str_eq(tag, "ulonglong");
    free(tag);
    ks_type_free(&u);
}
END_TEST

START_TEST(template_instance_names)
{
    ks_kern *k = kernel("ns::k<float, 4>");
    k->base_name = ks_xstrdup("ns::k");
    k->template_args = ks_xstrdup("float, 4");
    k = kernel("ns::k<unsigned int, -1>");
    k->base_name = ks_xstrdup("ns::k");
    k->template_args = ks_xstrdup("unsigned int, -1");
    NAMES_CLEANLY();
    ck_assert_str_eq(model.kernels[0].c_name, "ns_k_float_4");
    /* Two instances never share a name, and each is an identifier. */
    const char *c = model.kernels[1].c_name;
    ck_assert_str_ne(c, model.kernels[0].c_name);
    ck_assert_int_eq(strncmp(c, "ns_k_", 5), 0);
    ck_assert_uint_eq(strspn(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"), strlen(c));
}
END_TEST

/* ---- renames --------------------------------------------------------------------------- */

static void rename_to(const char *kernel_name, const char *c_name)
{
    model.renames = ks_xrealloc(model.renames, (model.nrenames + 1) * sizeof *model.renames);
    ks_rename *r = &model.renames[model.nrenames++];
    memset(r, 0, sizeof *r);
    r->kernel = ks_xstrdup(kernel_name);
    r->c_name = ks_xstrdup(c_name);
    r->line = 7;
    r->col = 4;
}

START_TEST(rename_by_name_and_symbol)
{
    kernel("ns::k");
    ks_kern *b = kernel("other");
    free(b->symbol);
    b->symbol = ks_xstrdup("_Z5otherv");
    rename_to("ns::k", "first");
    rename_to("_Z5otherv", "second");
    NAMES_CLEANLY();
    ck_assert_str_eq(model.kernels[0].c_name, "first");
    ck_assert_str_eq(model.kernels[1].c_name, "second");
}
END_TEST

START_TEST(rename_refused)
{
    kernel("k");
    rename_to("k", "1bad");
    rename_to("nothere", "fine");
    ck_assert_int_ne(name_all(), 0);
    SAID("in.cu:7:4: error: '1bad' is not a C identifier");
    SAID("kstub:name 'nothere' matches no kernel");
}
END_TEST

/* ---- after naming ----------------------------------------------------------------------- */

START_TEST(names_free_after_naming)
{
    kernel("scale");
    NAMES_CLEANLY();
    ck_assert(!ks_name_is_free(&model, "scale"));
    ck_assert(!ks_name_is_free(&model, "scale_node"));
    ck_assert(!ks_name_is_free(&model, "scale_kernel"));
    ck_assert(!ks_name_is_free(&model, "ks__pack_scale"));
    ck_assert(!ks_name_is_free(&model, "ks_anything"));
    ck_assert(!ks_name_is_free(&model, "restrict"));
    ck_assert(!ks_name_is_free(&model, "KS_RESTRICT"));
    ck_assert(!ks_name_is_free(&model, model.image));
    ck_assert(!ks_name_is_free(&model, model.guard));
    ck_assert(ks_name_is_free(&model, "fresh_name"));
}
END_TEST

START_TEST(anonymous_members)
{
    /* Anonymous members (named in naming.c since issue 20 #3): ks__anonN,
     * N counting the record's anonymous members. */
    {
        int is_new;
        size_t sidx = ks_model_def(&model, KS_DEF_STRUCT, "WithAnon", &is_new);
        ks_def *sd = &model.defs[sidx];
        sd->complete = 1;
        ks_field *named = ks_def_add_field(sd);
        named->name = ks_xstrdup("x");
        ks_def_add_field(sd);
        ks_def_add_field(sd);
        ck_assert_int_eq(name_all(), 0);
        sd = &model.defs[sidx];
        ck_assert_str_eq(sd->fields[0].c_name, "x");
        ck_assert_str_eq(sd->fields[1].c_name, "ks__anon0");
        ck_assert_str_eq(sd->fields[2].c_name, "ks__anon1");
    }
}
END_TEST

/* A record of size bytes (align 8) with fields (name, offset, size); NULL names end. */
static size_t record(const char *qname, long size, const char *const *names, const long *offsets,
                     const long *sizes)
{
    int is_new;
    size_t idx = ks_model_def(&model, KS_DEF_STRUCT, qname, &is_new);
    ks_def *d = &model.defs[idx];
    d->complete = 1;
    d->size = size;
    d->align = 8;
    for (size_t i = 0; names && names[i]; i++) {
        ks_field *f = ks_def_add_field(d);
        f->name = ks_xstrdup(names[i]);
        f->offset = offsets[i];
        f->size = sizes[i];
    }
    return idx;
}

/* Fields flattened from base classes (ks_field.from) keep their names
 * unless another field of the record has it: then "<Base>_<name>", and
 * "_" added while that too is taken; the record's own fields never move. */
START_TEST(base_fields_renamed_only_on_clashes)
{
    const char *names[] = {"x", "y", "y", "z", "A_y", "x", NULL};
    const long offsets[] = {0, 4, 8, 12, 16, 20}, sizes[] = {4, 4, 4, 4, 4, 4};
    size_t d_idx = record("D", 24, names, offsets, sizes);
    ks_def *d = &model.defs[d_idx];
    d->has_bases = 1;
    const char *from[] = {"A", "A", "B", "B", NULL, NULL};
    for (size_t i = 0; i < 6; i++)
        d->fields[i].from = from[i] ? ks_xstrdup(from[i]) : NULL;
    NAMES_CLEANLY();
    d = &model.defs[d_idx];
    const char *want[] = {"A_x", "A_y_", "B_y", "z", "A_y", "x"};
    for (size_t i = 0; i < 6; i++)
        ck_assert_str_eq(d->fields[i].c_name, want[i]);
}
END_TEST

/* The padding members of a mirror are model slots naming fills, numbered
 * by the table's pattern; an empty record's one byte has a name of its own. */
START_TEST(padding_names_are_model_slots)
{
    const char *names[] = {"a", "ks__pad0", NULL};
    const long offsets[] = {0, 4}, sizes[] = {1, 4};
    size_t gappy = record("Gappy", 16, names, offsets, sizes);
    size_t empty = record("Empty", 1, NULL, NULL, NULL);
    NAMES_CLEANLY();
    const ks_def *d = &model.defs[gappy];
    ck_assert_uint_eq(d->npad_names, 2);
    ck_assert_str_eq(d->pad_names[0], "ks__pad0");
    ck_assert_str_eq(d->pad_names[1], "ks__pad1");
    ck_assert_str_ne(d->fields[1].c_name, "ks__pad0");  /* the field stepped aside (ks__ is kstub's) */
    d = &model.defs[empty];
    ck_assert_uint_eq(d->npad_names, 1);
    ck_assert_str_eq(d->pad_names[0], "ks__empty");
}
END_TEST

/* A template's one C name over its instances is a model slot too, the
 * same on every instance, prefixed as a header's kernels are. */
START_TEST(generic_name_is_a_model_slot)
{
    ks_kern *k = kernel("ns::k<float>");
    k->base_name = ks_xstrdup("ns::k");
    k->template_args = ks_xstrdup("float");
    k = kernel("ns::k<int>");
    k->base_name = ks_xstrdup("ns::k");
    k->template_args = ks_xstrdup("int");
    k = kernel("plain");
    k = kernel("hdr<int>");
    k->base_name = ks_xstrdup("hdr");
    k->template_args = ks_xstrdup("int");
    k->tu_prefixed = 1;
    NAMES_CLEANLY();
    ck_assert_str_eq(model.kernels[0].generic_name, "ns_k");
    ck_assert_str_eq(model.kernels[1].generic_name, "ns_k");
    ck_assert_ptr_null(model.kernels[2].generic_name);
    ck_assert_str_eq(model.kernels[3].generic_name, "in_hdr");
}
END_TEST

/* The names of a record's field offset assertions are model slots too
 * (issue 27): "<type>_<field>" in the mirror, "<type>_field_<field>" where
 * that would be the record's size or alignment assertion the templates
 * name "<type>_size" and "<type>_align", and always for the application's
 * own record (its own field names; none for an anonymous member). */
START_TEST(field_assert_names_are_model_slots)
{
    const char *names[] = {"lo", "size", "align", "Box_size", NULL};
    const long offsets[] = {0, 4, 8, 12}, sizes[] = {4, 4, 4, 4};
    size_t box = record("geo::Box", 16, names, offsets, sizes);
    ks_field *anon = ks_def_add_field(&model.defs[box]);   /* an anonymous member */
    anon->offset = 16;
    NAMES_CLEANLY();
    const ks_def *d = &model.defs[box];
    ck_assert_str_eq(d->fields[0].assert_id, "geo_Box_lo");
    ck_assert_str_eq(d->fields[1].assert_id, "geo_Box_field_size");
    ck_assert_str_eq(d->fields[2].assert_id, "geo_Box_field_align");
    ck_assert_str_eq(d->fields[3].assert_id, "geo_Box_Box_size");
    ck_assert_str_eq(d->fields[4].assert_id, "geo_Box_ks__anon0");
    ck_assert_str_eq(d->fields[0].own_assert_id, "geo_Box_field_lo");
    ck_assert_str_eq(d->fields[1].own_assert_id, "geo_Box_field_size");
    ck_assert_ptr_null(d->fields[4].own_assert_id);
}
END_TEST

/* How C++ names the application's own record or enum is a model slot
 * (issue 30 #6): from the global scope, an anonymous namespace left out
 * (the including file's own finds it); none for an unnamed member's record. */
START_TEST(cxx_names_are_model_slots)
{
    size_t spec = record("ns::Params<float>", 16, NULL, NULL, NULL);
    size_t hidden = record("(anonymous)::Hidden", 8, NULL, NULL, NULL);
    int is_new;
    size_t color = ks_model_def(&model, KS_DEF_ENUM, "geo::(anonymous)::Color", &is_new);
    model.defs[color].complete = 1;
    size_t member = record("Outer::(anonymous 0)", 8, NULL, NULL, NULL);
    model.defs[member].in_member = 1;
    model.defs[member].owner = spec;
    NAMES_CLEANLY();
    ck_assert_str_eq(model.defs[spec].cxx_name, "::ns::Params<float>");
    ck_assert_str_eq(model.defs[hidden].cxx_name, "::Hidden");
    ck_assert_str_eq(model.defs[color].cxx_name, "::geo::Color");
    ck_assert_ptr_null(model.defs[member].cxx_name);
}
END_TEST

/* A target's naming table spells them: target.json's "generic", "padding",
 * "empty", "field_assert" and "own_field_assert" patterns; a padding name
 * steps aside for a field's. */
START_TEST(target_table_names_generic_and_padding)
{
    char dir[] = "/tmp/check-naming-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/target.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"outputs\": [{\"template\": \"h.in\", \"suffix\": \".h\"}], \"names\": "
          "{\"generic\": \"{template}_any\", \"padding\": \"gap{n}\", \"empty\": \"nothing\", "
          "\"field_assert\": \"{type}_at_{field}\", \"own_field_assert\": \"{field}_in_{type}\"}}\n", f);
    fclose(f);
    ks_kern *k = kernel("t<int>");
    k->base_name = ks_xstrdup("t");
    k->template_args = ks_xstrdup("int");
    const char *names[] = {"a", "gap0", NULL};
    const long offsets[] = {0, 8}, sizes[] = {1, 8};
    size_t gappy = record("Gappy", 16, names, offsets, sizes);
    size_t empty = record("Empty", 1, NULL, NULL, NULL);
    int rc = name_in(dir, 1);
    unlink(path);
    rmdir(dir);
    ck_assert_msg(rc == 0, "naming failed: %s", diagnostics);
    ck_assert_str_eq(model.kernels[0].generic_name, "t_any");
    ck_assert_uint_eq(model.defs[gappy].npad_names, 1);
    ck_assert_str_eq(model.defs[gappy].pad_names[0], "gap0_");
    ck_assert_str_eq(model.defs[empty].pad_names[0], "nothing");
    ck_assert_str_eq(model.defs[gappy].fields[0].assert_id, "Gappy_at_a");
    ck_assert_str_eq(model.defs[gappy].fields[1].own_assert_id, "gap0_in_Gappy");
}
END_TEST

static Suite *naming_suite(void)
{
    Suite *s = suite_create("naming");
    struct { const char *name; const TTest *tests[8]; } cases[] = {
        {"plain", {identifiers_from_names, file_names, qualified_kernel}},
        {"reserved", {c_keywords_step_aside, runtime_names_step_aside, runtime_macros_reserved,
                      kernel_named_like_a_runtime_macro, guard_of_a_runtime_header,
                      stub_parameters_step_aside, repeated_parameter_names}},
        {"collisions", {two_kernels_one_c_name, kernel_named_like_another_kernels_entry_point}},
        {"overloads", {overload_tags, type_tags, template_instance_names}},
        {"renames", {rename_by_name_and_symbol, rename_refused}},
        {"after", {names_free_after_naming, anonymous_members, base_fields_renamed_only_on_clashes}},
        {"slots", {padding_names_are_model_slots, generic_name_is_a_model_slot,
                   target_table_names_generic_and_padding, cxx_names_are_model_slots,
                   field_assert_names_are_model_slots}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (const TTest *const *t = cases[i].tests; *t; t++)
            tcase_add_test(tc, *t);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(naming_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
