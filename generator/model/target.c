/*
 * target.c — output targets: the C target built in, or a template folder's
 * target.json (target.h says what it holds). The only place template file
 * names and the per-target naming patterns are written.
 */
#include "model/target.h"
#include "base/inputs.h"
#include "base/util.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The C target: a header and its source, named as kstub always has. */
static const ks_target_output c_outputs[] = {
    {"header.h.in", ".h"},
    {"source.c.in", ".c"},
};
static const ks_naming_table c_names = {"KSTUB_{HEADER}", "{prefix}_kstub_image", "{c_name}_kernel",
                                        "{template}", "ks__pad{n}", "ks__empty", "{type}_{field}",
                                        "{type}_field_{field}"};

#define TARGET_FILE "target.json"

char *ks_target_fill(const char *pattern, const char *key, const char *value)
{
    ks_buf b = {0};
    size_t klen = strlen(key);
    ks_buf_put(&b, "", 0);
    for (const char *p = pattern; *p;) {
        if (p[0] == '{' && strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '}') {
            ks_buf_puts(&b, value);
            p += klen + 2;
        } else {
            ks_buf_put(&b, p++, 1);
        }
    }
    return ks_buf_take(&b);
}

char *ks_target_template_path(const ks_target *t, size_t i)
{
    return ks_xasprintf("%s/%s", t->dir, t->outputs[i].template_name);
}

/* A template name or suffix from target.json: a plain file name, no folder. */
static int plain_name(const char *s, int suffix)
{
    if (!s || !*s || strchr(s, '/') || (!suffix && (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)))
        return 0;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20)
            return 0;
    return 1;
}

static int read_target_file(const char *path, ks_target *t)
{
    size_t len;
    char *text = ks_read_file(path, &len);
    if (!text) {
        ks_error_at(path, 0, 0, "cannot read the target: %s", ks_file_error());
        return -1;
    }
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    free(text);
    if (!root) {
        ks_error_at(path, (unsigned)err.line, (unsigned)err.column, "not a target: %s", err.text);
        return -1;
    }
    int rc = 0;
    json_t *outs = json_object_get(root, "outputs");
    if (!json_is_array(outs) || json_array_size(outs) == 0 ||
        json_array_size(outs) > KS_TARGET_MAX_OUTPUTS) {
        ks_error_at(path, 0, 0, "\"outputs\" must list 1 to %d {\"template\", \"suffix\"} objects",
                    KS_TARGET_MAX_OUTPUTS);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(outs); i++) {
        const char *tpl = json_string_value(json_object_get(json_array_get(outs, i), "template"));
        const char *suf = json_string_value(json_object_get(json_array_get(outs, i), "suffix"));
        if (!plain_name(tpl, 0) || !plain_name(suf, 1)) {
            ks_error_at(path, 0, 0, "output %zu: \"template\" and \"suffix\" must be file names "
                        "in the target's folder", i + 1);
            rc = -1;
            break;
        }
        t->outputs[i].template_name = ks_xstrdup(tpl);
        t->outputs[i].suffix = ks_xstrdup(suf);
        t->noutputs = i + 1;
    }
    json_t *names = json_object_get(root, "names");
    char **slots[] = {&t->names.guard, &t->names.image, &t->names.descriptor,
                      &t->names.generic, &t->names.padding, &t->names.empty,
                      &t->names.field_assert, &t->names.own_field_assert};
    const char *keys[] = {"guard", "image", "descriptor", "generic", "padding", "empty",
                          "field_assert", "own_field_assert"};
    for (size_t i = 0; rc == 0 && i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(names, keys[i]);
        if (v && !json_is_string(v)) {
            ks_error_at(path, 0, 0, "\"names\".\"%s\" must be a string", keys[i]);
            rc = -1;
        } else if (v) {
            free(*slots[i]);
            *slots[i] = ks_xstrdup(json_string_value(v));
        }
    }
    json_decref(root);
    return rc;
}

int ks_target_load(const char *dir, int user, ks_target *t)
{
    memset(t, 0, sizeof *t);
    t->dir = ks_xstrdup(dir);
    t->user = user;
    t->names.guard = ks_xstrdup(c_names.guard);
    t->names.image = ks_xstrdup(c_names.image);
    t->names.descriptor = ks_xstrdup(c_names.descriptor);
    t->names.generic = ks_xstrdup(c_names.generic);
    t->names.padding = ks_xstrdup(c_names.padding);
    t->names.empty = ks_xstrdup(c_names.empty);
    t->names.field_assert = ks_xstrdup(c_names.field_assert);
    t->names.own_field_assert = ks_xstrdup(c_names.own_field_assert);
    char *path = ks_xasprintf("%s/%s", dir, TARGET_FILE);
    int rc = 0;
    if (user && access(path, F_OK) == 0) {
        t->file = ks_xstrdup(path);
        rc = read_target_file(path, t);
    } else {
        for (size_t i = 0; i < sizeof c_outputs / sizeof *c_outputs; i++) {
            t->outputs[i].template_name = ks_xstrdup(c_outputs[i].template_name);
            t->outputs[i].suffix = ks_xstrdup(c_outputs[i].suffix);
        }
        t->noutputs = sizeof c_outputs / sizeof *c_outputs;
    }
    free(path);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ks_target_named(const char *builtin_dir, const char *name, char **dir)
{
    *dir = NULL;
    if (strcmp(name, "c") == 0)
        return 0;
    if (plain_name(name, 0)) {
        char *d = ks_xasprintf("%s/%s", builtin_dir, name);
        char *file = ks_xasprintf("%s/%s", d, TARGET_FILE);
        int ok = access(file, R_OK) == 0;
        free(file);
        if (ok) {
            *dir = d;
            return 0;
        }
        free(d);
    }
    /* Unknown: name the known ones, "c" and each folder of builtin_dir with a target.json. */
    char **names = NULL;
    size_t n = 0;
    DIR *dp = opendir(builtin_dir);
    for (struct dirent *e; dp && (e = readdir(dp));) {
        if (e->d_name[0] == '.')
            continue;
        char *file = ks_xasprintf("%s/%s/%s", builtin_dir, e->d_name, TARGET_FILE);
        if (access(file, R_OK) == 0) {
            names = ks_xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = ks_xstrdup(e->d_name);
        }
        free(file);
    }
    if (dp)
        closedir(dp);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);
    ks_buf b = {0};
    ks_buf_puts(&b, "c");
    for (size_t i = 0; i < n; i++) {
        ks_buf_printf(&b, ", %s", names[i]);
        free(names[i]);
    }
    free(names);
    char *known = ks_buf_take(&b);
    ks_error_at(NULL, 0, 0, "unknown target '%s'; the targets: %s (or -T DIR for templates of your own)", name,
                known);
    free(known);
    return -1;
}

void ks_target_free(ks_target *t)
{
    for (size_t i = 0; i < KS_TARGET_MAX_OUTPUTS; i++) {
        free(t->outputs[i].template_name);
        free(t->outputs[i].suffix);
    }
    free(t->names.guard);
    free(t->names.image);
    free(t->names.descriptor);
    free(t->names.generic);
    free(t->names.padding);
    free(t->names.empty);
    free(t->names.field_assert);
    free(t->names.own_field_assert);
    free(t->dir);
    free(t->file);
    memset(t, 0, sizeof *t);
}
