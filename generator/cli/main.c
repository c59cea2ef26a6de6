/*
 * main.c — the kstub command line: reads options, runs the pipeline
 * parse (walk.h) -> name(target) (naming.h) -> emit(target) (emit.h), and
 * writes the target's outputs (OUTBASE.h, OUTBASE.c for the C target), the
 * manifest and the depfile all or nothing. The only place results become
 * exit statuses.
 *
 *   kstub [options] INPUT.cu -o OUTBASE          generate
 *   kstub --list [options] INPUT.cu              print each kernel's stub prototype
 *   kstub check [options] INPUT.cu -o OUTBASE    compare with what is on disk
 *   kstub diff OLD.json NEW.json                 classify manifest changes
 */
#include "cli/cache_cmd.h"
#include "cli/cli.h"
#include "cli/compdb.h"
#include "cli/depfile.h"
#include "cli/diff_cmd.h"
#include "cli/optable.h"
#include "cli/result_cache.h"
#include "cli/usage.h"
#include "drift/drift.h"
#include "emit/emit.h"
#include "front/fileguard.h"
#include "image/image.h"
#include "base/inputs.h"
#include "drift/manifest.h"
#include "model/naming.h"
#include "base/outputs.h"
#include "emit/render.h"
#include "model/target.h"
#include "base/util.h"
#include "front/walk.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef KSTUB_TEMPLATE_DIR
#define KSTUB_TEMPLATE_DIR "templates"
#endif

/* The built-in templates: beside an installed kstub (PREFIX/bin/kstub finds
 * PREFIX/share/kstub/templates from its own path), else the source tree's. */
static const char *default_template_dir(void)
{
    static char dir[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char probe[PATH_MAX + 64];
            snprintf(dir, sizeof dir, "%.*s/../share/kstub/templates", PATH_MAX - 64, exe);
            snprintf(probe, sizeof probe, "%s/header.h.in", dir);
            if (access(probe, R_OK) == 0)
                return dir;
        }
    }
    return KSTUB_TEMPLATE_DIR;
}

/* Everything the command line says, beyond ks_options. */
typedef struct cli {
    ks_options o;
    int check;                /* kstub check */
    int depfile;              /* 0, 1 = -MD, 2 = -MMD */
    const char *depfile_path; /* -MF */
    const char **targets;     /* -MT / -MQ, ready to write */
    size_t ntargets;
    const char *build_dir;    /* -p */
    const char *fix;          /* check --fix-command: the fix to print, or NULL: this command */
    int arch_given, std_given;
    int info;                 /* 1: --help, 2: --version asked for */
    int list;                 /* --list: print the kernels, write nothing */
    int list_all;             /* --all: --list prints every entry point and template name */
    int format;
    int format_given;
    int templates_given;      /* -T DIR (or --target NAME): templates other than the built-in C's */
    int t_given;              /* -T DIR itself */
    const char *target_name;  /* --target NAME */
    ks_target target;         /* what the run generates: templates, suffixes, naming table */
    char **owned;             /* strings to free at exit */
    size_t nowned;
} cli;

static void push(const char ***list, size_t *n, const char *s)
{
    *list = ks_xrealloc(*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = s;
}

static const char *own(cli *c, char *s)
{
    c->owned = ks_xrealloc(c->owned, (c->nowned + 1) * sizeof *c->owned);
    c->owned[c->nowned++] = s;
    return s;
}

/* -o names the outputs' common stem; "-o out.h" or "-o out.c" means the
 * same as "-o out" (out.h and out.c, not out.h.h). A directory is not a
 * stem. */
static int out_base(cli *c)
{
    const char *b = c->o.outbase;
    size_t n = strlen(b);
    if (n == 0 || b[n - 1] == '/' || strcmp(ks_basename(b), ".") == 0 ||
        strcmp(ks_basename(b), "..") == 0) {
        ks_error_at(NULL, 0, 0, "-o takes the outputs' base name (OUTBASE.h and OUTBASE.c are "
                    "written), not a directory: '%s'", b);
        return -1;
    }
    const char *base = ks_basename(b);
    size_t nb = strlen(base);
    if (nb > 2 && base[nb - 2] == '.' && (base[nb - 1] == 'h' || base[nb - 1] == 'c'))
        c->o.outbase = own(c, ks_xasprintf("%.*s", (int)(n - 2), b));
    return 0;
}

/* What one option of the table does: a = the argument as given, v its
 * value (NULL for a flag), spelled the spelling it matched. */
static int parse_option(cli *c, const ks_optdef *d, const char *a, const char *v, const char *spelled)
{
    ks_options *o = &c->o;
    switch (d->id) {
    case KS_OPT_HELP: c->info = 1; break;
    case KS_OPT_VERSION: c->info = 2; break;
    case KS_OPT_MD: c->depfile = c->depfile ? c->depfile : 1; break;
    case KS_OPT_MMD: c->depfile = 2; break;
    case KS_OPT_MP: break;   /* always on */
    case KS_OPT_MF:
        c->depfile_path = v;
        c->depfile = c->depfile ? c->depfile : 1;
        break;
    case KS_OPT_MT: push(&c->targets, &c->ntargets, v); break;
    case KS_OPT_MQ: {
        char *q = ks_make_quote(v);
        if (!q)
            return -1;
        push(&c->targets, &c->ntargets, own(c, q));
        break;
    }
    case KS_OPT_FORMAT:
        if ((c->format = ks_format_parse(v)) < 0) {
            ks_error_at(NULL, 0, 0, "--format takes text, json or github, not '%s'", v);
            return -1;
        }
        c->format_given = 1;
        break;
    case KS_OPT_LIST: c->list = 1; break;
    case KS_OPT_ALL: c->list_all = 1; break;
    case KS_OPT_O: o->outbase = v; break;
    case KS_OPT_P: c->build_dir = v; break;
    case KS_OPT_MANIFEST: o->manifest = v; break;
    case KS_OPT_SKIP_BODIES: o->skip_bodies = 1; break;
    case KS_OPT_KERNELS_IN:
        if (strcmp(v, "project") == 0) {
            o->kernels_in = KS_KERNELS_PROJECT;
        } else if (strcmp(v, "input") == 0) {
            o->kernels_in = KS_KERNELS_INPUT;
        } else if (*v) {
            o->kernels_in = KS_KERNELS_NAMED;
            push(&o->kernel_headers, &o->nkernel_headers, v);
        } else {
            ks_error_at(NULL, 0, 0, "--kernels-in takes 'project', 'input' or a header's path");
            return -1;
        }
        break;
    case KS_OPT_FIX_COMMAND: c->fix = v; break;
    case KS_OPT_CACHE_DIR: o->cache_dir = v; break;
    case KS_OPT_NO_CACHE: o->no_cache = 1; break;
    case KS_OPT_RDC: o->rdc = 1; break;
    case KS_OPT_BODY_ERRORS: o->body_errors = 1; break;
    case KS_OPT_EMBED_SOURCE: o->embed_source = 1; break;
    case KS_OPT_EMBED: o->embed = v; break;
    case KS_OPT_CUDA_PATH: o->cuda_path = v; break;
    case KS_OPT_ARCH: {
        /* nvcc's spellings map as -p maps a compile command's (compdb.c). */
        int gencode = strncmp(spelled, "-gencode", 8) == 0 || strncmp(spelled, "--generate-code", 15) == 0;
        char *arch = gencode ? ks_compdb_arch_of_gencode(v) : ks_compdb_arch_of(v);
        if (!arch) {
            ks_error_at(NULL, 0, 0, "%.*s takes one architecture, sm_NN or compute_NN (kstub parses for "
                        "one), not '%s'", (int)strcspn(spelled, "|="), spelled, v);
            return -1;
        }
        o->arch = own(c, arch);
        c->arch_given = 1;
        break;
    }
    case KS_OPT_STD:
        if (strncmp(v, "c++", 3) != 0 && strncmp(v, "gnu++", 5) != 0) {
            ks_error_at(NULL, 0, 0, "'%s': CUDA sources are C++; use -std=c++NN", a);
            return -1;
        }
        o->std = v;
        c->std_given = 1;
        break;
    case KS_OPT_T:
        o->template_dir = v;
        c->templates_given = c->t_given = 1;
        break;
    case KS_OPT_TARGET:
        c->target_name = v;
        break;
    case KS_OPT_I: push(&o->includes, &o->nincludes, v); break;
    case KS_OPT_D: push(&o->defines, &o->ndefines, own(c, ks_xasprintf("-D%s", v))); break;
    case KS_OPT_U: push(&o->defines, &o->ndefines, own(c, ks_xasprintf("-U%s", v))); break;
    }
    return 0;
}

/* The command line, matched option by option against the table
 * (optable.c); what each option does is here. */
static int parse_args(int argc, char **argv, int first, cli *c)
{
    ks_options *o = &c->o;
    const char *env_cuda = getenv("CUDA_PATH");
    o->cuda_path = env_cuda && *env_cuda ? env_cuda : "/usr/local/cuda";
    o->arch = "sm_90";
    o->std = "c++17";
    o->template_dir = o->builtin_template_dir = default_template_dir();
    for (int i = first; i < argc; i++) {
        const char *a = argv[i], *v, *spelled;
        int missing;
        const ks_optdef *d = ks_opt_match(argc, argv, &i, &v, &spelled, &missing);
        if (missing)
            return -1;          /* reported */
        if (!d) {
            if (a[0] == '-' && a[1] != '\0') {
                ks_error_at(NULL, 0, 0, "unknown option '%s' (see kstub --help)", a);
                return -1;
            }
            if (o->input) {
                ks_error_at(NULL, 0, 0, "more than one input file ('%s' and '%s')", o->input, a);
                return -1;
            }
            o->input = a;
            continue;
        }
        if (parse_option(c, d, a, v, spelled) != 0)
            return -1;
        if (c->info)
            return 0;
    }
    if (c->list_all && !c->list) {
        ks_error_at(NULL, 0, 0, "--all is for --list");
        return -1;
    }
    if (c->fix && !c->check) {
        ks_error_at(NULL, 0, 0, "--fix-command is for kstub check");
        return -1;
    }
    if (c->list && c->check) {
        ks_error_at(NULL, 0, 0, "--list is not for kstub check; run kstub --list INPUT.cu");
        return -1;
    }
    if (c->format_given && !c->check && !c->list) {
        ks_error_at(NULL, 0, 0, "--format is for --list, kstub check and kstub diff");
        return -1;
    }
    if (c->list && c->format == KS_FORMAT_GITHUB) {
        ks_error_at(NULL, 0, 0, "--list prints text or json, not github annotations");
        return -1;
    }
    if (c->target_name) {
        char *dir;
        if (c->t_given) {
            ks_error_at(NULL, 0, 0, "-T and --target both choose the templates; give one");
            return -1;
        }
        if (ks_target_named(o->builtin_template_dir, c->target_name, &dir) != 0)
            return -1;
        if (dir) {
            o->template_dir = own(c, dir);
            c->templates_given = 1;
        }
    }
    if (!o->input) {
        ks_error_at(NULL, 0, 0, "no input file (see kstub --help)");
        return -1;
    }
    if (c->list && !o->outbase) {
        /* The base is the input's own name here: a directory given as the
         * input is said of the input, not of an -o the user never gave. */
        struct stat st;
        size_t n = strlen(o->input);
        if ((stat(o->input, &st) == 0 && S_ISDIR(st.st_mode)) || n == 0 ||
            o->input[n - 1] == '/' || strcmp(ks_basename(o->input), ".") == 0 ||
            strcmp(ks_basename(o->input), "..") == 0) {
            ks_error_at(o->input, 0, 0, "is a directory, not a CUDA source file");
            return -1;
        }
        o->outbase = o->input;   /* names the header's guard, which --list does not print */
    }
    if (!o->outbase) {
        ks_error_at(NULL, 0, 0, "no output given; use -o OUTBASE");
        return -1;
    }
    if (out_base(c) != 0)
        return -1;
    if (o->embed && o->embed_source) {
        ks_error_at(NULL, 0, 0, "--embed and --embed-source both give the image; choose one");
        return -1;
    }
    return 0;
}

/* Puts the compile command's includes and macros before the command line's,
 * so that what the user typed wins; -std and the architecture only when the
 * command line does not set them. */
static void apply_compdb(cli *c, ks_compdb *db)
{
    ks_options *o = &c->o;
    const char **inc = ks_xmalloc((db->nincludes + o->nincludes + 1) * sizeof *inc);
    size_t n = 0;
    for (size_t i = 0; i < db->nincludes; i++)
        inc[n++] = db->includes[i];
    for (size_t i = 0; i < o->nincludes; i++)
        inc[n++] = o->includes[i];
    free(o->includes);
    o->includes = inc;
    o->nincludes = n;

    const char **def = ks_xmalloc((db->ndefines + o->ndefines + 1) * sizeof *def);
    n = 0;
    for (size_t i = 0; i < db->ndefines; i++)
        def[n++] = db->defines[i];
    for (size_t i = 0; i < o->ndefines; i++)
        def[n++] = o->defines[i];
    free(o->defines);
    o->defines = def;
    o->ndefines = n;

    if (db->std && !c->std_given)
        o->std = db->std;
    if (db->arch && !c->arch_given)
        o->arch = db->arch;
    if (db->rdc)
        o->rdc = 1;
}

/* Shell-quotes s onto b when it needs it. */
static void put_shell_word(ks_buf *b, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@%",
                    *p))
            plain = 0;
    if (plain) {
        ks_buf_puts(b, s);
        return;
    }
    ks_buf_puts(b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            ks_buf_puts(b, "'\\''");
        else
            ks_buf_put(b, p, 1);
    }
    ks_buf_puts(b, "'");
}

/* The generate command equivalent to this check: argv without "check" and --format. */
static char *fix_command(int argc, char **argv)
{
    ks_buf b = {0};
    put_shell_word(&b, argv[0]);
    for (int i = 2; i < argc; i++) {
        if (strncmp(argv[i], "--format=", 9) == 0)
            continue;
        if (strcmp(argv[i], "--format") == 0) {
            i++;
            continue;
        }
        ks_buf_puts(&b, " ");
        put_shell_word(&b, argv[i]);
    }
    return ks_buf_take(&b);
}

/* What one run generates, in memory: the same for writing and for check. */
typedef struct generated {
    ks_model model;
    ks_deps deps;
    ks_image_blob image;
    int have_image;
    char *text[KS_TARGET_MAX_OUTPUTS];  /* per target output; text[0] is the header */
    char *path[KS_TARGET_MAX_OUTPUTS];
    size_t noutputs;
    char *json, *dtext, *dpath;
    char *image_stale;  /* check: the --embed image lacks kernels or variables of the input (a message) */
} generated;

/* The image to embed, if any. */
static int read_image(const ks_options *o, generated *g)
{
    if (o->embed || o->embed_source) {
        int rc = o->embed ? ks_image_read(o->embed, &g->image) : ks_source_read(o->input, &g->image);
        if (rc != 0)
            return -1;
        g->have_image = 1;
    }
    return 0;
}

static void add_dep(void *deps, const char *path)
{
    ks_deps_add(deps, path);
}

/* The depfile's text, from the inclusions the parse recorded (and, for a
 * -T target, its templates, their partials and its target.json). */
static int depfile_text(const cli *c, const ks_compdb *db, generated *g)
{
    const ks_options *o = &c->o;
    if (!g->deps.collected) {
        ks_error_at(o->input, 0, 0, "internal error: the includes for the depfile were not collected");
        return -1;
    }
    if (o->embed)
        ks_deps_add(&g->deps, o->embed);
    if (c->target.user) {
        for (size_t i = 0; i < c->target.noutputs; i++) {
            char *t = ks_target_template_path(&c->target, i);
            ks_deps_add(&g->deps, t);
            size_t len;
            char *text = ks_read_file(t, &len);
            if (text)
                (void)ks_render_partials(t, text, len, o->builtin_template_dir, add_dep, &g->deps);
            free(text);
            free(t);
        }
        if (c->target.file)
            ks_deps_add(&g->deps, c->target.file);
    }
    const char **targets = c->targets;
    size_t ntargets = c->ntargets;
    char *q[KS_TARGET_MAX_OUTPUTS + 1] = {NULL};
    if (ntargets == 0) {
        for (size_t i = 0; i < g->noutputs; i++)
            q[ntargets++] = ks_make_quote(g->path[i]);
        if (o->manifest)
            q[ntargets++] = ks_make_quote(o->manifest);
        targets = (const char **)q;
    }
    const char *sysdirs[64];
    size_t nsys = 0;
    sysdirs[nsys++] = o->cuda_path;
    for (size_t i = 0; i < db->nsystem_dirs && nsys < 64; i++)
        sysdirs[nsys++] = db->system_dirs[i];
    g->dtext = ks_depfile_text(&g->deps, targets, ntargets, c->depfile == 2, sysdirs, nsys);
    for (size_t i = 0; i < KS_TARGET_MAX_OUTPUTS + 1; i++)
        free(q[i]);
    return g->dtext ? 0 : -1;
}

/* Refuses an OUTBASE.h named as a header the generated header includes
 * with <...>, as -o kstub would write kstub.h: wherever the folder holding
 * it is on the include path (the usual -I for generated code), it would
 * stand in for the runtime's <kstub.h> (or <kstub_types.h>, <stdint.h>,
 * <cuda.h> ...), and the stubs would not compile or, worse, would. The
 * names come from the header's own text, so a -T template's includes count
 * too. Returns 0, or -1 after an error. */
static int shadows_an_include(const char *hpath, const char *text)
{
    const char *name = ks_basename(hpath);
    size_t n = strlen(name);
    for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s != '#')
            continue;
        s++;
        while (*s == ' ' || *s == '\t')
            s++;
        if (strncmp(s, "include", 7) != 0)
            continue;
        s += 7;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '<' && strncmp(s + 1, name, n) == 0 && s[1 + n] == '>') {
            ks_error_at(NULL, 0, 0, "-o: the header '%s' would shadow <%s>, which it includes "
                        "(wherever its folder is on the include path); choose another name "
                        "for -o", hpath, name);
            return -1;
        }
    }
    return 0;
}

/* Parses the input and renders every output in memory. Returns 0, or -1
 * after errors (counted by the diagnostic sink). */
static int generate(cli *c, const ks_compdb *db, generated *g)
{
    ks_options *o = &c->o;
    const ks_target *target = &c->target;
    memset(g, 0, sizeof *g);
    g->noutputs = target->noutputs;
    for (size_t i = 0; i < g->noutputs; i++)
        g->path[i] = ks_xasprintf("%s%s", o->outbase, target->outputs[i].suffix);
    g->dpath = c->depfile_path ? ks_xstrdup(c->depfile_path) : ks_xasprintf("%s.d", o->outbase);
    /* libclang would say "could not parse (error 1)" of a directory. */
    struct stat st;
    if (stat(o->input, &st) == 0 && S_ISDIR(st.st_mode)) {
        ks_error_at(o->input, 0, 0, "is a directory, not a CUDA source file");
        return -1;
    }
    if (c->templates_given && stat(o->template_dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        ks_error_at(o->template_dir, 0, 0, "-T takes a directory of templates; this is not a "
                    "directory");
        return -1;
    }
    if (ks_input_readable(o) != 0 || read_image(o, g) != 0)
        return -1;
    /* The included files are collected depfile or not: each is an input
     * that no output may replace (check_output_paths). */
    int want_deps = c->depfile && !c->check;
    o->tu_hook = ks_deps_hook;
    o->tu_hook_data = &g->deps;
    g->deps.want_system = want_deps && c->depfile == 2;      /* -MMD leaves system headers out */
    if (ks_parse(o, &g->model) != 0 || ks_name_model(target, o, &g->model) != 0)
        return -1;
    if (g->model.nkernels == 0)
        ks_note_at(o->input, 0, 0, "no __global__ kernels found; the stubs declare none");
    /* check reports drift first: a kernel whose signature changed is not
     * in an image built before the change, and that is what check is for. */
    if (o->embed && ks_image_check(o->embed, &g->image, o, &g->model,
                                   c->check ? &g->image_stale : NULL) != 0)
        return -1;
    const ks_image_blob *img = g->have_image ? &g->image : NULL;
    for (size_t i = 0; i < g->noutputs; i++) {
        if (ks_emit(target, i, o, &g->model, img, &g->text[i]) != 0)
            return -1;
        if (i == 0 && shadows_an_include(g->path[0], g->text[0]) != 0)
            return -1;
    }
    /* check compares kernels through manifests, so it always makes one */
    if (o->manifest || c->check) {
        ks_spellings sp;
        if (ks_emit_spellings(target, o, &g->model, &sp) != 0)
            return -1;
        g->json = ks_manifest_json(o, &g->model, &sp);
        ks_spellings_free(&sp);
        if (!g->json)
            return -1;
    }
    return want_deps ? depfile_text(c, db, g) : 0;
}

static void generated_free(generated *g)
{
    for (size_t i = 0; i < KS_TARGET_MAX_OUTPUTS; i++) {
        free(g->text[i]);
        free(g->path[i]);
    }
    free(g->json);
    free(g->dtext);
    free(g->dpath);
    free(g->image_stale);
    ks_deps_free(&g->deps);
    ks_model_free(&g->model);
    if (g->have_image)
        free(g->image.data);
}

/* kstub --list: parses the input and prints each kernel's stub prototype,
 * one a line (or the --list document as JSON); writes no file, so neither
 * -o, --embed nor the depfile options have any effect. */
static int list(cli *c)
{
    ks_options *o = &c->o;
    struct stat st;
    if (stat(o->input, &st) == 0 && S_ISDIR(st.st_mode)) {
        ks_error_at(o->input, 0, 0, "is a directory, not a CUDA source file");
        return -1;
    }
    if (ks_input_readable(o) != 0)
        return -1;
    ks_model m;
    memset(&m, 0, sizeof m);
    if (ks_parse(o, &m) != 0 || ks_name_model(&c->target, o, &m) != 0) {
        ks_model_free(&m);
        return -1;
    }
    if (m.nkernels == 0)
        ks_note_at(o->input, 0, 0, "no __global__ kernels found");
    ks_spellings sp;
    int rc = ks_emit_spellings(&c->target, o, &m, &sp);
    if (rc == 0 && c->list_all && ks_emit_entry_points(&c->target, o, &m, &sp) != 0) {
        ks_spellings_free(&sp);
        rc = -1;
    }
    if (rc == 0 && c->format == KS_FORMAT_JSON) {
        char *text = ks_list_json(o, &m, &sp);
        if (text)
            fputs(text, stdout);
        else
            rc = -1;
        free(text);
    } else if (rc == 0) {
        for (size_t i = 0; i < m.nkernels; i++) {
            printf("%s;\n", sp.prototypes[i]);
            for (size_t j = 0; sp.entry_points && sp.entry_points[i][j]; j++)
                printf("    %s;\n", sp.entry_points[i][j]);
        }
        for (size_t j = 0; sp.generics && sp.generics[j]; j++)
            printf("/* %s */\n", sp.generics[j]);
        for (size_t i = 0; sp.var_entry_points && i < sp.nvars; i++)
            for (size_t j = 0; sp.var_entry_points[i][j]; j++)
                printf("%s;\n", sp.var_entry_points[i][j]);
    }
    if (rc == 0)
        ks_spellings_free(&sp);
    ks_model_free(&m);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        ks_error_at(NULL, 0, 0, "cannot write the list to standard output");
        rc = -1;
    }
    return rc;
}

/* kstub check: compare with the files on disk. */
static int check(const cli *c, const generated *g, int argc, char **argv)
{
    const ks_options *o = &c->o;
    ks_output outs[KS_TARGET_MAX_OUTPUTS + 1];
    size_t n = 0;
    for (size_t i = 0; i < g->noutputs; i++)
        outs[n].path = g->path[i], outs[n++].text = g->text[i];
    if (o->manifest)
        outs[n].path = o->manifest, outs[n++].text = g->json;
    char *fix = c->fix ? ks_xstrdup(c->fix) : fix_command(argc, argv);
    ks_check_input in = {o->input, g->json, outs, n, o->manifest, fix, (ks_format)c->format,
                         o->embed, g->image_stale};
    int status;
    int rc = ks_check_run(&in, &status);
    free(fix);
    return rc == 0 ? status : KS_DRIFT_ERROR;
}

/* Which file a path names, by device and inode: the file itself when it
 * exists, else the nearest directory above it that exists and the rest of
 * the path below that, made canonical ("new/./x.h" and "new//x.h" are
 * "new/x.h"): an output not written yet, perhaps in folders to be created. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    char *name;   /* NULL: the file exists and dev/ino are its own */
} file_id;

/* The components of rest joined by '/', without "" and "."; ".." drops the
 * one before it (those folders do not exist yet, so none is a link). */
static char *canonical_rest(const char *rest)
{
    ks_buf b = {0};
    ks_buf_put(&b, "", 0);
    while (*rest) {
        size_t n = strcspn(rest, "/");
        if (n == 2 && strncmp(rest, "..", 2) == 0) {
            char *slash = strrchr(b.data, '/');
            b.len = slash ? (size_t)(slash - b.data) : 0;
            b.data[b.len] = '\0';
        } else if (n > 0 && !(n == 1 && rest[0] == '.')) {
            ks_buf_printf(&b, "%s%.*s", b.len ? "/" : "", (int)n, rest);
        }
        rest += n;
        while (*rest == '/')
            rest++;
    }
    return ks_buf_take(&b);
}

static int file_id_of(const char *path, file_id *id)
{
    struct stat st;
    id->name = NULL;
    if (stat(path, &st) == 0) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return 0;
    }
    /* Walk up until a directory exists: the path's own folder, its parent... */
    char *dir = ks_xstrdup(path);
    const char *rest = path;
    int rc = -1;
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) {
            rc = stat(".", &st);
            rest = path;
            break;
        }
        rest = path + (slash - dir) + 1;
        if (slash == dir) {
            rc = stat("/", &st);
            break;
        }
        *slash = '\0';
        if (stat(dir, &st) == 0) {
            rc = S_ISDIR(st.st_mode) ? 0 : -1;
            break;
        }
    }
    free(dir);
    if (rc != 0)
        return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->name = canonical_rest(rest);
    return 0;
}

static int file_id_same(const file_id *a, const file_id *b)
{
    if (a->dev != b->dev || a->ino != b->ino)
        return 0;
    if (!a->name || !b->name)
        return !a->name && !b->name;
    return strcmp(a->name, b->name) == 0;
}

/* Refuses outputs that are an input (writing would destroy it) or that are
 * each other (one would silently replace the other). Names are not enough:
 * "x.cu" and "./x.cu", or a link, are the same file; so an output is
 * compared by device and inode with every file the run read (inputs.h):
 * the .cu, each header libclang opened, the compile database and its
 * options files, the templates, the image. */
static int check_output_paths(const ks_output *outs, size_t n)
{
    int rc = 0;
    file_id ids[KS_TARGET_MAX_OUTPUTS + 2];
    int have[KS_TARGET_MAX_OUTPUTS + 2];
    for (size_t i = 0; i < n; i++) {
        have[i] = file_id_of(outs[i].path, &ids[i]) == 0;
        if (!have[i])
            continue;
        const char *in = ids[i].name ? NULL : ks_inputs_find(ids[i].dev, ids[i].ino);
        if (in) {
            ks_error_at(NULL, 0, 0, "output '%s' is the input '%s', which this run read; "
                        "refusing to overwrite it", outs[i].path, in);
            rc = -1;
        }
        for (size_t j = 0; j < i; j++)
            if (have[j] && file_id_same(&ids[i], &ids[j])) {
                ks_error_at(NULL, 0, 0, "outputs '%s' and '%s' are the same file", outs[j].path,
                            outs[i].path);
                rc = -1;
            }
    }
    for (size_t i = 0; i < n; i++)
        if (have[i])
            free(ids[i].name);
    return rc;
}

/* "kstub: N errors; nothing written" (listed, checked) after the errors; 1. */
static int nothing_done(const char *what)
{
    int errors = ks_error_count();
    fprintf(stderr, "kstub: %d error%s; nothing %s\n", errors, errors == 1 ? "" : "s", what);
    return 1;
}

/* Every output of the run, in the order they are written. */
static size_t outputs_of(const cli *c, const generated *g, ks_output outs[KS_TARGET_MAX_OUTPUTS + 2])
{
    size_t n = 0;
    for (size_t i = 0; i < g->noutputs; i++)
        outs[n].path = g->path[i], outs[n++].text = g->text[i];
    if (c->o.manifest)
        outs[n].path = c->o.manifest, outs[n++].text = g->json;
    if (g->dtext)
        outs[n].path = g->dpath, outs[n++].text = g->dtext;
    return n;
}

/* Writes every output, all or nothing: a parse's, or a result cache hit's. */
static int write_set(const ks_output *outs, size_t n)
{
    if (check_output_paths(outs, n) == 0 && ks_write_outputs(outs, n) == 0)
        return 0;
    return nothing_done("written");     /* the summary other errors end with (issue 39 #10) */
}

/* A parse's outputs, then its entry in the result cache. */
static int write_outputs(const cli *c, const generated *g, ks_result *rs)
{
    ks_output outs[KS_TARGET_MAX_OUTPUTS + 2];
    size_t n = outputs_of(c, g, outs);
    int rc = write_set(outs, n);
    if (rc == 0)
        ks_result_store(rs, outs, n, &g->deps);
    return rc;
}

static void cli_free(cli *c)
{
    for (size_t i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    free(c->owned);
    free(c->targets);
    free(c->o.defines);
    free(c->o.includes);
    free(c->o.kernel_headers);
    ks_target_free(&c->target);
}

int main(int argc, char **argv)
{
    ks_fileguard_install();    /* nothing but a regular file (or a folder) is read from here on */
    if (argc > 1 && strcmp(argv[1], "diff") == 0)
        return ks_diff_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "cache") == 0)
        return ks_cache_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "trace") == 0)
        return ks_trace_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "version") == 0 && argc > 2) {
        ks_error_at(NULL, 0, 0, "kstub version takes no arguments");
        return 2;
    }
    cli c;
    memset(&c, 0, sizeof c);
    c.check = argc > 1 && strcmp(argv[1], "check") == 0;
    int rc = 0;
    if (argc == 2 && strcmp(argv[1], "version") == 0)
        c.info = 2;   /* a subcommand spelling of --version, never an input named "version" */
    else
        rc = parse_args(argc, argv, c.check ? 2 : 1, &c) == 0 ? 0 : 2;
    if (rc == 0 && c.info == 1)
        (c.check ? ks_check_usage : ks_usage)(stdout);
    else if (rc == 0 && c.info == 2)
        printf("kstub %s (manifest format %d)\n", KSTUB_VERSION_TEXT, KSTUB_MANIFEST_FORMAT);
    if (rc != 0 || c.info) {
        cli_free(&c);
        return rc;
    }
    ks_result rs;
    ks_result_begin(&rs, !c.check && !c.list);   /* keeps what the run asks the file system */
    ks_compdb db;
    memset(&db, 0, sizeof db);
    generated g;
    memset(&g, 0, sizeof g);
    if ((c.build_dir && ks_compdb_load(c.build_dir, c.o.input, &db) != 0) ||
        ks_target_load(c.o.template_dir, c.templates_given, &c.target) != 0) {
        rc = 1;
    } else {
        if (c.build_dir)
            apply_compdb(&c, &db);
        if (c.list) {
            if (list(&c) != 0)
                rc = nothing_done("listed");
        } else if (!c.check && ks_result_lookup(&rs, &c.o, argc, argv)) {
            rc = write_set(rs.outs, rs.nouts);      /* as the parse that stored it wrote them */
        } else if (generate(&c, &db, &g) == 0) {
            ks_result_generated(&rs);
            rc = c.check ? check(&c, &g, argc, argv) : write_outputs(&c, &g, &rs);
        } else {
            rc = nothing_done(c.check ? "checked" : "written");
        }
    }
    if (c.check && rc == KS_DRIFT_ERROR)           /* tool errors as findings too (issue 39 #7) */
        ks_report_print_errors((ks_format)c.format, "check");
    generated_free(&g);
    ks_result_free(&rs);
    ks_compdb_free(&db);
    cli_free(&c);
    ks_inputs_forget();
    return rc;
}
