/*
 * target.h — an output target (target.c): the templates one run renders,
 * each output's file name suffix, and the naming table the naming stage
 * follows. The pipeline is parse (walk.h) -> name(target) (naming.h) ->
 * emit(target) (emit.h); the front end knows no target.
 *
 * The built-in target is C: header.h.in -> OUTBASE.h, source.c.in ->
 * OUTBASE.c. A template folder (-T DIR) holding a "target.json" is a target
 * of its own:
 *
 *   { "outputs": [ { "template": "header.hpp.in", "suffix": ".hpp" } ],
 *     "names": { "guard": "{HEADER}_INCLUDED", "image": "{prefix}_image",
 *                "descriptor": "{c_name}_kernel", "generic": "{template}",
 *                "padding": "ks__pad{n}", "empty": "ks__empty",
 *                "field_assert": "{type}_{field}",
 *                "own_field_assert": "{type}_field_{field}" } }
 *
 * outputs[0] is the header: the one whose named pieces spell the manifest's
 * c_type ({{*manifest_c_type}}) and --list's prototype ({{*prototype}}).
 * In a naming pattern, {HEADER} is the header's file name (after the
 * folders the output mirrors) as an upper-case identifier, {prefix} the
 * output's identifier stem, {c_name} a kernel's C name, {template} a kernel
 * template's identifier (its one C name over its instances; a header's
 * kernel template's gets the {prefix}_ as its instances do), {n} a padding
 * member's number in its record, {type} a record's C name and {field} a
 * field's; a name left out keeps the C target's. A padding name that meets
 * a field's steps aside with a trailing '_'; a field's assertion name that
 * meets its record's size or alignment assertion's ({type}_size,
 * {type}_align, as the templates spell them) takes the "own_field_assert"
 * pattern.
 */
#ifndef KSTUB_TARGET_H
#define KSTUB_TARGET_H

#include <stddef.h>

#define KS_TARGET_MAX_OUTPUTS 4

typedef struct ks_target_output {
    char *template_name;       /* "header.h.in", in the target's folder */
    char *suffix;              /* appended to OUTBASE: ".h" */
} ks_target_output;

/* How the target names the file-level and per-kernel symbols (patterns). */
typedef struct ks_naming_table {
    char *guard;               /* the header's include guard: "KSTUB_{HEADER}" */
    char *image;               /* the embedded image's symbol: "{prefix}_kstub_image" */
    char *descriptor;          /* a kernel's exported ks_kernel: "{c_name}_kernel" */
    char *generic;             /* a kernel template's one name over its instances: "{template}" */
    char *padding;             /* a mirror's nth padding member: "ks__pad{n}" */
    char *empty;               /* the one byte of an empty record's mirror: "ks__empty" */
    char *field_assert;        /* a mirror's field offset assertion: "{type}_{field}" */
    char *own_field_assert;    /* the same for the application's own record: "{type}_field_{field}" */
} ks_naming_table;

typedef struct ks_target {
    char *dir;                 /* the templates' folder */
    char *file;                /* its target.json as read; NULL: the built-in C target */
    int user;                  /* -T: the templates are inputs of the run (depfile) */
    ks_target_output outputs[KS_TARGET_MAX_OUTPUTS];
    size_t noutputs;           /* outputs[0] is the header */
    ks_naming_table names;
} ks_target;

/* The target in dir: its target.json when there is one, else the C
 * target's templates and names. user: dir came from -T. Returns 0, or -1
 * after an error at target.json. */
int ks_target_load(const char *dir, int user, ks_target *t);
/* --target NAME: the installed target of that name, "c" (the built-in
 * target: *dir NULL) or a folder of builtin_dir with a target.json (*dir
 * its path, malloc'd). Returns 0, or -1 after an error naming the known
 * targets. */
int ks_target_named(const char *builtin_dir, const char *name, char **dir);
void ks_target_free(ks_target *t);
/* "dir/template" of output i; malloc'd. */
char *ks_target_template_path(const ks_target *t, size_t i);
/* pattern with each "{key}" replaced by value; malloc'd. */
char *ks_target_fill(const char *pattern, const char *key, const char *value);

#endif /* KSTUB_TARGET_H */
