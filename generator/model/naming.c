/*
 * naming.c — every identifier kstub generates is decided here, and every
 * collision checked: kernels' C names (qualified names flattened, template
 * arguments, overload tags, "kstub:name" renames, the names each kernel
 * brings along: _n, _node, _node_set, _nodes_set, _node_t, _args, _kernel,
 * ks__params_, ks__pack_),
 * parameter names (unnamed ones, C-only keywords, names the stub itself
 * uses), the C names of mirrored types and enum constants, padding and
 * anonymous members, the names of records' field offset assertions, how
 * C++ names the application's own types, the image symbol and the include
 * guard; device
 * variables' C names (the same rules as kernels', and the names each brings
 * along: _write, _read, _set, _get, _address, _node, _global).
 *
 * The rule for a user's name that collides with a generated one, a name the
 * runtime reserves (ks_..., KS_...: libkstub never declares a name ending
 * in '_') or a C-only keyword: append '_' until it is free, and say so.
 * Two kernels wanting the same C name is an error naming both, since only
 * the user can say which should keep it.
 */
#include "model/namer.h"
#include "base/util.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "ns::(anonymous)::k" -> "ns_k": an anonymous namespace adds nothing to a C name. */
char *ks_c_identifier(const char *qualified)
{
    static const char anon[] = "(anonymous)::";
    ks_buf b = {0};
    for (const char *p = qualified; *p; p++) {
        int starts = p == qualified || (p >= qualified + 2 && p[-1] == ':' && p[-2] == ':');
        if (starts && strncmp(p, anon, sizeof anon - 1) == 0) {
            p += sizeof anon - 2;
        } else if (p[0] == ':' && p[1] == ':') {
            ks_buf_puts(&b, "_");
            p++;
        } else {
            ks_buf_put(&b, p, 1);
        }
    }
    return ks_buf_take(&b);
}

char *ks_identifier_stem(const char *path)
{
    char *stem = ks_xstrdup(ks_basename(path));
    char *dot = strchr(stem, '.');
    if (dot)
        *dot = '\0';
    for (char *p = stem; *p; p++)
        if (!isalnum((unsigned char)*p))
            *p = '_';
    if (!*stem || isdigit((unsigned char)stem[0])) {
        char *r = ks_xasprintf("k_%s", stem);
        free(stem);
        return r;
    }
    return stem;
}

/* The nth anonymous member of a record (the front end leaves it unnamed). */
static char *anonymous_member_name(unsigned n)
{
    return ks_xasprintf("ks__anon%u", n);
}

static int member_taken(const ks_def *def, const char *name)
{
    for (size_t i = 0; i < def->nfields; i++)
        if (strcmp(def->fields[i].c_name, name) == 0)
            return 1;
    return 0;
}

/* The C names of def's padding members (ks_def_gaps), from the target's
 * patterns: "ks__pad0", "ks__pad1", ...; an empty record's one byte is
 * "ks__empty"; each clear of the record's fields' names. */
static void name_padding(const ks_naming_table *t, ks_def *def)
{
    ks_gap *gaps = ks_xmalloc((def->nfields + 1) * sizeof *gaps);
    size_t n = ks_def_gaps(def, gaps);
    unsigned npad = 0;
    def->pad_names = ks_xmalloc((n ? n : 1) * sizeof *def->pad_names);
    def->npad_names = n;
    for (size_t i = 0; i < n; i++) {
        char num[16];
        snprintf(num, sizeof num, "%u", npad);
        char *name = gaps[i].empty ? ks_xstrdup(t->empty) : ks_target_fill(t->padding, "n", num);
        npad += !gaps[i].empty;
        while (member_taken(def, name)) {
            char *longer = ks_xasprintf("%s_", name);
            free(name);
            name = longer;
        }
        def->pad_names[i] = name;
    }
    free(gaps);
}

/* pattern with {type} and {field} filled. */
static char *fill_type_field(const char *pattern, const char *type, const char *field)
{
    char *typed = ks_target_fill(pattern, "type", type);
    char *name = ks_target_fill(typed, "field", field);
    free(typed);
    return name;
}

/* The names of a record's field offset assertions, from the target's
 * patterns: in the mirror "Box_lo" (field_assert), unless that is the name
 * the templates give the record's own size or alignment assertion
 * ("<type>_size", "<type>_align"): then "Box_field_size" (own_field_assert);
 * where the record is the application's own, always own_field_assert, with
 * the field's own name (the C99 form declares a typedef of each). */
static void name_field_asserts(const ks_naming_table *t, ks_def *def)
{
    char *size_id = ks_xasprintf("%s_size", def->c_name), *align_id = ks_xasprintf("%s_align", def->c_name);
    for (size_t i = 0; i < def->nfields; i++) {
        ks_field *f = &def->fields[i];
        char *id = fill_type_field(t->field_assert, def->c_name, f->c_name);
        if (strcmp(id, size_id) == 0 || strcmp(id, align_id) == 0) {
            free(id);
            id = fill_type_field(t->own_field_assert, def->c_name, f->c_name);
        }
        f->assert_id = id;
        f->own_assert_id = f->name ? fill_type_field(t->own_field_assert, def->c_name, f->name) : NULL;
    }
    free(size_id);
    free(align_id);
}

/* "float, 4" -> "float_4"; "unsigned int *" -> "unsigned_int_p"; "-1" -> "m1". */
static char *args_identifier(const char *args)
{
    ks_buf b = {0};
    int sep = 0;
    for (const char *p = args; *p; p++) {
        char c = *p;
        if (isalnum((unsigned char)c) || c == '_') {
            if (sep && b.len)
                ks_buf_puts(&b, "_");
            sep = 0;
            ks_buf_put(&b, &c, 1);
        } else if (c == '*' || c == '-') {
            ks_buf_puts(&b, b.len ? "_" : "");
            ks_buf_puts(&b, c == '*' ? "p" : "m");
            sep = 0;
        } else {
            sep = 1;
        }
    }
    return ks_buf_take(&b);
}

static const char *base_tag_name(const ks_model *m, const ks_type *t, int *is_union)
{
    *is_union = 0;
    switch (t->base) {
    case KS_BASE_VOID: return "void";
    case KS_BASE_SCALAR: return ks_scalar_tag(t->scalar);
    case KS_BASE_RECORD:
        *is_union = m->defs[t->def].kind == KS_DEF_UNION;
        return m->defs[t->def].c_name;
    case KS_BASE_ENUM: return m->defs[t->def].c_name;
    case KS_BASE_VECTOR: return t->vector;
    case KS_BASE_SPECIAL: return ks_special_c_name(t->special);
    }
    return "";
}

char *ks_type_tag(const ks_model *m, const ks_type *t)
{
    ks_buf b = {0};
    int is_union;
    const char *base = base_tag_name(m, t, &is_union);
    ks_buf_printf(&b, "%s%s%s%s", t->quals & KS_QUAL_CONST ? "c" : "",
                  t->quals & KS_QUAL_VOLATILE ? "v" : "", is_union ? "union" : "", base);
    for (size_t i = 0; i < t->nptrs; i++)
        ks_buf_printf(&b, "p%s%s", t->ptr_quals[i] & KS_QUAL_CONST ? "c" : "",
                      t->ptr_quals[i] & KS_QUAL_VOLATILE ? "v" : "");
    return ks_buf_take(&b);
}

/* ---- files ---------------------------------------------------------------------------------------- */

static char *upper_identifier(const char *s)
{
    char *r = ks_xstrdup(s);
    for (char *p = r; *p; p++)
        *p = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    return r;
}

/* The folders of path (absolute, "." and ".." taken lexically), the file
 * itself left out. */
static size_t folders_of(const char *path, char ***out)
{
    size_t n = ks_path_parts(path, out);
    if (n)
        free((*out)[--n]);         /* the file itself */
    return n;
}

/*
 * The folders an output mirrors from its input: below their common
 * ancestor, the trailing folders the two paths share. kstub.mk writes
 * DIR/NAME.cu's stubs to $(KSTUB_OUT)/DIR/NAME.kstub, so "a/util.cu" and
 * "b/util.cu" give "a" and "b"; an output beside its input, or in a folder
 * that does not repeat the input's (build/gen/ for kernels/), gives "".
 * Returned as an identifier fragment ("src_a"), or NULL for none.
 */
static char *mirrored_folders(const char *input, const char *outbase)
{
    char **in, **out;
    size_t nin = folders_of(input, &in), nout = folders_of(outbase, &out);
    size_t common = 0;
    while (common < nin && common < nout && strcmp(in[common], out[common]) == 0)
        common++;
    size_t tail = 0;
    while (tail < nin - common && tail < nout - common &&
           strcmp(in[nin - 1 - tail], out[nout - 1 - tail]) == 0)
        tail++;
    char *r = NULL;
    if (tail) {
        ks_buf b = {0};
        for (size_t i = nin - tail; i < nin; i++) {
            if (b.len)
                ks_buf_puts(&b, "_");
            for (const char *c = in[i]; *c; c++)
                ks_buf_put(&b, isalnum((unsigned char)*c) ? c : "_", 1);
        }
        r = ks_buf_take(&b);
    }
    ks_path_parts_free(in, nin);
    ks_path_parts_free(out, nout);
    return r;
}

/*
 * The file-level names: the prefix (the output's stem, after the folders it
 * mirrors from the input), the image symbol "<prefix>_kstub_image" and the
 * include guard "KSTUB_<MIRRORED_FOLDERS>_<HEADER>". Two .cu files of one
 * name in two folders (a/util.cu, b/util.cu) cannot be written to one
 * output; kstub.mk's layout (or any that mirrors the folders) gives them
 * a_util_kstub_image and b_util_kstub_image, and distinct output names give
 * distinct prefixes.
 */
static void name_files(namer *nm)
{
    ks_model *m = nm->m;
    char *stem = ks_identifier_stem(nm->opts->outbase);
    char *mirror = mirrored_folders(nm->opts->input, nm->opts->outbase);
    if (mirror) {
        m->prefix = ks_xasprintf("%s_%s", mirror, stem);
        free(stem);
    } else {
        m->prefix = stem;
    }
    m->header = ks_xasprintf("%s%s", ks_basename(nm->opts->outbase), nm->target->outputs[0].suffix);
    char *guarded = mirror ? ks_xasprintf("%s_%s", mirror, m->header) : ks_xstrdup(m->header);
    char *upper = upper_identifier(guarded);
    m->guard = ks_target_fill(nm->target->names.guard, "HEADER", upper);
    /* The runtime's own headers guard themselves as KSTUB_H and
     * KSTUB_TYPES_H: "-o types" must not take kstub_types.h's guard, nor
     * "-o version" the name of KSTUB_VERSION. */
    while (ks__runtime_macro(m->guard)) {
        char *longer = ks_xasprintf("%s_", m->guard);
        free(m->guard);
        m->guard = longer;
    }
    free(upper);
    free(guarded);
    free(mirror);
    m->image = ks_target_fill(nm->target->names.image, "prefix", m->prefix);
    ks__claim(nm, m->guard);
    json_object_set_new(nm->macros, m->guard, json_true());
    ks__claim(nm, m->image);
}

/* ---- types ---------------------------------------------------------------------------------------- */

/* A class template specialization's mirror: "// kstub:name ns::Params<float, 4>
 * = ParamsF" when the source names it so (marked used, for apply_renames),
 * else the template's name and its arguments as one identifier, as a
 * template kernel's stub is named: "ns_Params_float_4". */
/* "// kstub:name TYPE = C_NAME" naming def (by its C++ name, as the
 * header's comment on it spells it): that name (the rename marked used,
 * for apply_renames), or NULL. */
static char *type_renamed(namer *nm, const ks_def *d)
{
    ks_model *m = nm->m;
    for (size_t r = 0; r < m->nrenames; r++) {
        ks_rename *rn = &m->renames[r];
        if (strcmp(rn->kernel, d->qname) == 0) {
            rn->type = 1;
            return ks_xstrdup(rn->c_name);
        }
    }
    return NULL;
}

static char *specialization_c_name(namer *nm, const ks_def *d)
{
    char *renamed = type_renamed(nm, d);
    if (renamed)
        return renamed;
    char *base = ks_c_identifier(d->template_name), *suffix = args_identifier(d->template_args);
    char *name = *suffix ? ks_xasprintf("%s_%s", base, suffix) : ks_xstrdup(base);
    free(base);
    free(suffix);
    return name;
}

/* The typedef of an array a parameter points to: its element's C name,
 * "_arr" and the dimensions, "float_arr28", "float_arr5_5", "Params_float_arr4". */
static char *array_c_name(const ks_model *m, const ks_def *d)
{
    const ks_type *t = &d->fields[0].type;
    int is_union;
    ks_buf b = {0};
    char *elem = ks_c_identifier(base_tag_name(m, t, &is_union));
    for (char *p = elem; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            *p = '_';
    ks_buf_printf(&b, "%s_arr", elem);
    free(elem);
    for (size_t i = 0; i < t->ndims; i++)
        ks_buf_printf(&b, "%s%lld", i ? "_" : "", t->dims[i]);
    return ks_buf_take(&b);
}

/* Only letters, digits and '_': "Ops<float>::f" -> "Ops_float___f". */
static void identifier_chars(char *s)
{
    for (char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            *p = '_';
}

/* The typedef of a function type a parameter points to. Spelled through a
 * typedef (of the pointer, "typedef float (*unary_t)(float)", or of the
 * function): that name and "_fn", "unary_t_fn" (never the user's own name,
 * which a C header of theirs may define: C99 forbids a second typedef).
 * Else its return type's overload tag, "_fn", and each parameter's:
 * "float_fn_float", "void_fn_cfloatp_int", "int_fn_void" (no parameters).
 * "// kstub:name float (float) = unary" (or "unary_t = unary") names it. */
static char *function_c_name(namer *nm, const ks_def *d)
{
    const ks_model *m = nm->m;
    char *renamed = type_renamed(nm, d);
    if (renamed)
        return renamed;
    if (d->fn_typedef) {
        char *id = ks_c_identifier(d->fn_typedef);
        identifier_chars(id);
        char *name = ks_xasprintf("%s_fn", id);
        free(id);
        return name;
    }
    ks_buf b = {0};
    for (size_t i = 0; i < d->nfields; i++) {
        char *tag = ks_type_tag(m, &d->fields[i].type);
        identifier_chars(tag);
        ks_buf_printf(&b, "%s%s", tag, i == 0 ? "_fn" : "");
        if (i + 1 < d->nfields)
            ks_buf_puts(&b, "_");
        free(tag);
    }
    if (d->nfields < 2)
        ks_buf_puts(&b, "_void");
    return ks_buf_take(&b);
}

/* How C++ names the application's own record or enum: its qualified name
 * from the global scope, "::ns::Params<float>". An anonymous namespace's
 * part is left out: the header puts the type in the including file's own
 * anonymous namespace, whose names its scope finds ("::Hidden"). */
static char *cxx_type_name(const char *qname)
{
    static const char *const anon[] = {"(anonymous namespace)::", "(anonymous)::"};
    ks_buf b = {0};
    ks_buf_puts(&b, "::");
    for (const char *p = qname; *p;) {
        size_t skip = 0;
        for (size_t i = 0; i < 2 && !skip; i++)
            if (strncmp(p, anon[i], strlen(anon[i])) == 0)
                skip = strlen(anon[i]);
        if (skip) {
            p += skip;
            continue;
        }
        ks_buf_put(&b, p++, 1);
    }
    return ks_buf_take(&b);
}

/* How many of d's fields are called name in C. */
static size_t fields_named(const ks_def *d, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < d->nfields; i++)
        n += d->fields[i].c_name && strcmp(d->fields[i].c_name, name) == 0;
    return n;
}

/* A class's fields flattened from its bases (ks_field.from): a base's field
 * keeps its name where no other field of the record has it; else, as C++
 * would write "d.Base::x", it is "Base_x" (the declaring class's own name,
 * then "_" added until the record has no other field of that name). The
 * record's own fields always keep their names. */
static void name_base_fields(ks_def *d)
{
    char **want = ks_xmalloc((d->nfields ? d->nfields : 1) * sizeof *want);
    for (size_t j = 0; j < d->nfields; j++) {
        const ks_field *f = &d->fields[j];
        want[j] = f->from && f->name && fields_named(d, f->c_name) > 1
                      ? ks_xasprintf("%s_%s", f->from, f->name) : NULL;
    }
    for (size_t j = 0; j < d->nfields; j++) {
        if (!want[j])
            continue;
        ks_field *f = &d->fields[j];
        free(f->c_name);
        f->c_name = want[j];
        while (fields_named(d, f->c_name) > 1) {
            char *r = ks_xasprintf("%s_", f->c_name);
            free(f->c_name);
            f->c_name = r;
        }
    }
    free(want);
}

/* Members: their own names, an anonymous one ks__anonN (N counting the
 * record's anonymous members); a member's unnamed record learns the
 * member's name, from which its own derives. */
static void name_members(namer *nm)
{
    ks_model *m = nm->m;
    for (size_t i = 0; i < m->ndefs; i++) {
        ks_def *d = &m->defs[i];
        unsigned nanon = 0;
        for (size_t j = 0; j < d->nfields; j++)
            d->fields[j].c_name = d->fields[j].name ? ks_xstrdup(d->fields[j].name)
                                                    : anonymous_member_name(nanon++);
        if (d->has_bases)
            name_base_fields(d);
    }
    for (size_t i = 0; i < m->ndefs; i++) {
        ks_def *d = &m->defs[i];
        if (d->in_member && d->member_field < m->defs[d->owner].nfields)
            d->member = ks_xstrdup(m->defs[d->owner].fields[d->member_field].c_name);
    }
}

static void name_defs(namer *nm)
{
    ks_model *m = nm->m;
    name_members(nm);
    /* Defs are created owner first, so an anonymous record's owner is named. */
    for (size_t i = 0; i < m->ndefs; i++) {
        ks_def *d = &m->defs[i];
        char *want = d->member ? ks_xasprintf("%s_%s", m->defs[d->owner].c_name, d->member)
                     : d->kind == KS_DEF_ARRAY ? array_c_name(m, d)
                     : d->kind == KS_DEF_FUNCTION ? function_c_name(nm, d)
                     : d->template_name ? specialization_c_name(nm, d)
                                        : ks_c_identifier(d->qname);
        char *name = ks__step_aside_type(nm, ks_xstrdup(want));
        if (strcmp(name, want) != 0)
            ks_note_at(nm->opts->input, 0, 0, "type '%s' is '%s' in C ('%s' is %s)", d->qname,
                       name, want, ks__why_taken(want));
        free(want);
        d->c_name = name;
        if ((d->kind == KS_DEF_STRUCT || d->kind == KS_DEF_UNION || d->kind == KS_DEF_ENUM) &&
            !d->in_member)
            d->cxx_name = cxx_type_name(d->qname);
        ks__claim(nm, name);
        char *guard = ks_xasprintf("KS_TYPE_%s", name);
        ks__claim(nm, guard);
        json_object_set_new(nm->macros, guard, json_true());
        free(guard);
    }
    /* Enum constants are macros: file-scope names of their own. */
    for (size_t i = 0; i < m->ndefs; i++) {
        ks_def *d = &m->defs[i];
        for (size_t j = 0; j < d->nenumerators; j++) {
            ks_enumerator *e = &d->enumerators[j];
            char *name = ks_xasprintf("%s_%s", d->c_name, e->name);
            while (ks__taken(nm, name) || ks__system_macro(name) || ks__system_decl(name)) {
                char *longer = ks_xasprintf("%s_", name);
                free(name);
                name = longer;
            }
            e->c_name = name;
            ks__claim(nm, name);
            json_object_set_new(nm->macros, name, json_true());
        }
    }
    /* A member named like a macro (the runtime's KS_..., an enum constant,
     * a guard) or a C-only keyword cannot be written in C: it steps aside
     * too. Members named by kstub (anonymous, padding) are left alone. */
    for (size_t i = 0; i < m->ndefs; i++) {
        ks_def *d = &m->defs[i];
        for (size_t j = 0; j < d->nfields; j++) {
            ks_field *f = &d->fields[j];
            if (!f->name)
                continue;
            while (ks__is_c_only_keyword(f->c_name) || ks__runtime_reserved(f->c_name) ||
                   json_object_get(nm->macros, f->c_name) || ks__system_macro(f->c_name)) {
                char *r = ks_xasprintf("%s_", f->c_name);
                free(f->c_name);
                f->c_name = r;
            }
        }
    }
    /* Last: the padding steps aside for the fields' final names, and the
     * layout assertions are named after them. */
    for (size_t i = 0; i < m->ndefs; i++) {
        name_padding(&nm->target->names, &m->defs[i]);
        if (m->defs[i].kind == KS_DEF_STRUCT || m->defs[i].kind == KS_DEF_UNION)
            name_field_asserts(&nm->target->names, &m->defs[i]);
    }
}

/* ---- kernels -------------------------------------------------------------------------------------- */

/* Overloads share a C name; give each "<name>__<tag>_<tag>..." or
 * "<name>__void" for no parameters. */
static void disambiguate(namer *nm)
{
    ks_model *m = nm->m;
    json_t *count = json_object();
    for (size_t i = 0; i < m->nkernels; i++) {
        json_t *c = json_object_get(count, m->kernels[i].c_name);
        json_object_set_new(count, m->kernels[i].c_name,
                            json_integer(c ? json_integer_value(c) + 1 : 1));
    }
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_kern *k = &m->kernels[i];
        if (json_integer_value(json_object_get(count, k->c_name)) < 2)
            continue;
        ks_buf b = {0};
        ks_buf_printf(&b, "%s_", k->c_name);
        for (size_t p = 0; p < k->nparams; p++) {
            char *tag = ks_type_tag(m, &k->params[p].type);
            ks_buf_printf(&b, "_%s", tag);
            free(tag);
        }
        if (k->nparams == 0)
            ks_buf_puts(&b, "_void");
        free(k->c_name);
        k->c_name = ks_buf_take(&b);
    }
    json_decref(count);
}

static int is_identifier(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* "// kstub:name KERNEL = C_NAME", by qualified name or device symbol. */
static void apply_renames(namer *nm)
{
    ks_model *m = nm->m;
    const char *input = nm->opts->input;
    for (size_t r = 0; r < m->nrenames; r++) {
        const ks_rename *rn = &m->renames[r];
        if (!is_identifier(rn->c_name)) {
            ks_error_at(input, rn->line, rn->col, "'%s' is not a C identifier", rn->c_name);
            continue;
        }
        /* A name the user asks for is taken as given, so one the language
         * or the system's headers hold is refused, not renamed: a stub named
         * free would interpose the C library's. */
        const char *why = ks__keyword(rn->c_name) ? "a C or C++ keyword"
                          : ks__system_macro(rn->c_name) ? "a macro of the system's C headers"
                          : ks__system_decl(rn->c_name) ? "declared by the system's C headers"
                          : NULL;
        if (why) {
            ks_error_at(input, rn->line, rn->col, "kstub:name '%s' = '%s': '%s' is %s; choose "
                        "another C name", rn->kernel, rn->c_name, rn->c_name, why);
            continue;
        }
        if (rn->type)
            continue;          /* named a class template specialization's mirror */
        int hit = 0;
        for (size_t i = 0; i < m->nkernels; i++) {
            ks_kern *k = &m->kernels[i];
            if (strcmp(k->name, rn->kernel) == 0 || strcmp(k->symbol, rn->kernel) == 0) {
                free(k->c_name);
                k->c_name = ks_xstrdup(rn->c_name);
                hit++;
            }
        }
        for (size_t i = 0; i < m->nvars; i++) {
            ks_var *v = &m->vars[i];
            if (strcmp(v->name, rn->kernel) == 0 || strcmp(v->symbol, rn->kernel) == 0) {
                free(v->c_name);
                v->c_name = ks_xstrdup(rn->c_name);
                hit++;
            }
        }
        if (hit != 1)
            ks_error_at(input, rn->line, rn->col, "kstub:name '%s' %s", rn->kernel,
                        hit ? "matches several kernels (overloads): name one by its device symbol"
                            : "matches no kernel or device variable (give the qualified name as "
                              "in the manifest, e.g. 'ns::k<float, 4>', or the symbol) and no class template "
                              "specialization or function type a kernel takes (as the header's "
                              "comment on its mirror or typedef spells it, e.g. 'Params<float>', "
                              "'float (float)')");
    }
}

/* Two kernels may not share a C name: only the user can say which keeps
 * it. (A kernel named like another's _n, _node, ... steps aside below.) */
static int check_unique(namer *nm)
{
    ks_model *m = nm->m;
    const char *input = nm->opts->input;
    int errors = 0;
    json_t *seen = json_object();      /* c_name -> index */
    for (size_t i = 0; i < m->nkernels; i++) {
        json_t *j = json_object_get(seen, m->kernels[i].c_name);
        if (j) {
            const ks_kern *o = &m->kernels[json_integer_value(j)], *k = &m->kernels[i];
            ks_error_at(k->file ? k->file : input, k->line, k->col, "kernels '%s' (%s:%u) and "
                        "'%s' both get the C name '%s'; name one with a '// kstub:name KERNEL = "
                        "C_NAME' comment", o->name, o->file ? o->file : input, o->line, k->name,
                        k->c_name);
            errors++;
        } else {
            json_object_set_new(seen, m->kernels[i].c_name, json_integer((json_int_t)i));
        }
    }
    /* A variable's C name is one more such name: against kernels' and each other's. */
    json_t *vseen = json_object();
    for (size_t i = 0; i < m->nvars; i++) {
        const ks_var *v = &m->vars[i];
        json_t *j = json_object_get(seen, v->c_name);
        json_t *jv = json_object_get(vseen, v->c_name);
        if (j || jv) {
            const char *what = j ? "kernel" : "variable";
            const char *oname = j ? m->kernels[json_integer_value(j)].name : m->vars[json_integer_value(jv)].name;
            const char *ofile = j ? m->kernels[json_integer_value(j)].file : m->vars[json_integer_value(jv)].file;
            unsigned oline = j ? m->kernels[json_integer_value(j)].line : m->vars[json_integer_value(jv)].line;
            ks_error_at(v->file ? v->file : input, v->line, v->col, "%s '%s' (%s:%u) and variable "
                        "'%s' both get the C name '%s'; name one with a '// kstub:name NAME = "
                        "C_NAME' comment", what, oname, ofile ? ofile : input, oline, v->name,
                        v->c_name);
            errors++;
        } else {
            json_object_set_new(vseen, v->c_name, json_integer((json_int_t)i));
        }
    }
    json_decref(vseen);
    json_decref(seen);
    return errors;
}

/* A name for one of the stub's own parameters: want, or "ks_<want>_"
 * with '_' appended, until neither this kernel's parameters (local) nor a
 * file-scope type or macro has it. Claimed in local. */
static char *stub_param_name(const namer *nm, json_t *local, const char *want)
{
    char *name = ks_xstrdup(want);
    while (json_object_get(local, name) || ks__taken_for_param(nm, name) ||
           ks__system_macro(name)) {
        char *next = strcmp(name, want) == 0 ? ks_xasprintf("ks_%s_", want)
                                             : ks_xasprintf("%s_", name);
        free(name);
        name = next;
    }
    json_object_set_new(local, name, json_true());
    return name;
}

/* A kernel whose C name the runtime headers #define (KSTUB_VERSION, ...)
 * cannot be called from C under that name: the macro would replace it at
 * every call. Names under ks_/KS_ are documented as the runtime's and step
 * aside with a note like any reserved name; a macro outside that prefix
 * (KSTUB_H, KSTUB_VERSION_MAJOR) is a name the user could not know was
 * taken, and a silent rename would break their call, so it is an error
 * that says how to name the kernel. */
static int check_runtime_macros(namer *nm)
{
    int errors = 0;
    for (size_t i = 0; i < nm->m->nkernels; i++) {
        const ks_kern *k = &nm->m->kernels[i];
        if (!ks__runtime_macro(k->c_name) || ks__runtime_reserved(k->c_name))
            continue;
        ks_error_at(k->file ? k->file : nm->opts->input, k->line, k->col, "kernel '%s' would be "
                    "the C function '%s', a macro the runtime's headers define; name it with a "
                    "'// kstub:name %s = C_NAME' comment", k->name, k->c_name, k->name);
        errors++;
    }
    return errors;
}

static void name_kernel_params(namer *nm, ks_kern *k)
{
    json_t *local = json_object();
    for (size_t j = 0; j < k->nparams; j++) {
        ks_param *p = &k->params[j];
        char *name = p->name ? ks_xstrdup(p->name) : ks_xasprintf("arg%zu", j);
        for (;;) {
            name = ks__step_aside(nm, name, NULL, 0);
            if (!json_object_get(local, name))
                break;
            char *longer = ks_xasprintf("%s_", name);   /* a parameter pack's repeated name */
            free(name);
            name = longer;
        }
        json_object_set_new(local, name, json_true());
        p->c_name = name;
    }
    /* The stub's own parameters step aside for the kernel's (and for any
     * name a parameter may not take): "launch", else "ks_launch_",
     * "ks_launch__", ... until no parameter of this kernel has it. */
    k->launch_name = stub_param_name(nm, local, "launch");
    k->stream_name = stub_param_name(nm, local, "stream");
    k->n_items_name = stub_param_name(nm, local, "n_items");
    json_decref(local);
}

static void name_kernels(namer *nm)
{
    ks_model *m = nm->m;
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_kern *k = &m->kernels[i];
        if (k->template_args) {
            char *base = ks_c_identifier(k->base_name), *suffix = args_identifier(k->template_args);
            k->c_name = ks_xasprintf("%s_%s", base, suffix);
            free(base);
            free(suffix);
        } else {
            k->c_name = ks_c_identifier(k->name);
        }
        if (ks__is_c_only_keyword(k->c_name)) {
            char *r = ks_xasprintf("%s_", k->c_name);
            free(k->c_name);
            k->c_name = r;
        }
    }
    disambiguate(nm);
    /* A project header's kernel: every .cu including the header gets a stub
     * for it, each linked into the same program, so its C name carries
     * this file's prefix ("train_gpt2_" + "layernorm_forward"). Name the
     * header with --kernels-in (this file then owns its kernels under their
     * own names) or rename with kstub:name. After disambiguate: overloads
     * are told apart first, and a prefixed name that meets another kernel's
     * is the error below, naming both. */
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_kern *k = &m->kernels[i];
        if (k->tu_prefixed) {
            char *r = ks_xasprintf("%s_%s", m->prefix, k->c_name);
            free(k->c_name);
            k->c_name = r;
        }
    }
    for (size_t i = 0; i < m->nvars; i++) {
        ks_var *v = &m->vars[i];
        char *c = ks_c_identifier(v->name);
        v->c_name = v->tu_prefixed ? ks_xasprintf("%s_%s", m->prefix, c) : ks_xstrdup(c);
        free(c);
    }
    apply_renames(nm);
    if (check_unique(nm) + check_runtime_macros(nm))
        return;
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_kern *k = &m->kernels[i];
        char *want = ks_xstrdup(k->c_name);
        k->c_name = ks__step_aside(nm, k->c_name, ks__kernel_names, ks__nkernel_names);
        if (strcmp(want, k->c_name) != 0)
            ks_note_at(k->file ? k->file : nm->opts->input, k->line, k->col, "kernel '%s' is '%s' in "
                       "C ('%s' is %s)", k->name, k->c_name, want, ks__why_taken(want));
        free(want);
        /* The descriptor is exported as <c_name>_kernel: a user's name of
         * that spelling steps aside, not the descriptor. */
        k->descriptor = ks_target_fill(nm->target->names.descriptor, "c_name", k->c_name);
        ks__claim_made(nm, k->c_name, ks__kernel_names, ks__nkernel_names);
    }
    /* A template's instances share one C name over them (a _Generic, when
     * emit finds them fit for one): the template's identifier, prefixed as
     * its instances are. Emit checks it is free before it uses it. */
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_kern *k = &m->kernels[i];
        if (!k->base_name)
            continue;
        char *stem = ks_c_identifier(k->base_name);
        char *name = ks_target_fill(nm->target->names.generic, "template", stem);
        free(stem);
        k->generic_name = k->tu_prefixed ? ks_xasprintf("%s_%s", m->prefix, name) : ks_xstrdup(name);
        free(name);
    }
    for (size_t i = 0; i < m->nkernels; i++)
        name_kernel_params(nm, &m->kernels[i]);
    for (size_t i = 0; i < m->nvars; i++) {
        ks_var *v = &m->vars[i];
        char *want = ks_xstrdup(v->c_name);
        v->c_name = ks__step_aside(nm, v->c_name, ks__var_names, ks__nvar_names);
        if (strcmp(want, v->c_name) != 0)
            ks_note_at(v->file ? v->file : nm->opts->input, v->line, v->col, "variable '%s' is "
                       "'%s' in C ('%s' is %s)", v->name, v->c_name, want, ks__why_taken(want));
        free(want);
        v->descriptor = ks__made_name(&ks__var_names[ks__nvar_names - 1], v->c_name);
        ks__claim_made(nm, v->c_name, ks__var_names, ks__nvar_names);
    }
}

int ks_name_model(const ks_target *target, const ks_options *opts, ks_model *m)
{
    int before = ks_error_count();
    namer nm = {opts, target, m, json_object(), json_object()};
    ks__claim_language_names(&nm);
    name_files(&nm);
    name_defs(&nm);
    name_kernels(&nm);
    json_decref(nm.taken);
    json_decref(nm.macros);
    return ks_error_count() == before ? 0 : -1;
}

/*
 * Whether name is free for one more file-scope name in the generated C: no
 * C-only keyword, no runtime name, none of the language's or the headers'
 * names, and none kstub gives a kernel (ks__kernel_names), a type, an enum
 * constant, the image or the guard. For what emit.c adds after naming, as a
 * template's one C name over its instances.
 */
int ks_name_is_free(const ks_model *m, const char *name)
{
    if (ks__is_c_only_keyword(name) || ks__runtime_reserved(name) || strcmp(name, m->image) == 0 ||
        strcmp(name, m->guard) == 0 || ks__system_macro(name) || ks__system_decl(name))
        return 0;
    namer nm = {NULL, NULL, (ks_model *)m, json_object(), json_object()};
    ks__claim_language_names(&nm);
    int busy = ks__taken(&nm, name);
    json_decref(nm.taken);
    json_decref(nm.macros);
    for (size_t i = 0; !busy && i < m->nkernels; i++)
        for (size_t j = 0; !busy && j < ks__nkernel_names; j++) {
            char *n = ks__made_name(&ks__kernel_names[j], m->kernels[i].c_name);
            busy = strcmp(n, name) == 0;
            free(n);
        }
    for (size_t i = 0; !busy && i < m->nvars; i++)
        for (size_t j = 0; !busy && j < ks__nvar_names; j++) {
            char *n = ks__made_name(&ks__var_names[j], m->vars[i].c_name);
            busy = strcmp(n, name) == 0;
            free(n);
        }
    for (size_t i = 0; !busy && i < m->ndefs; i++) {
        busy = strcmp(m->defs[i].c_name, name) == 0;
        for (size_t j = 0; !busy && j < m->defs[i].nenumerators; j++)
            busy = strcmp(m->defs[i].enumerators[j].c_name, name) == 0;
    }
    return !busy;
}
