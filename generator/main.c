/*
 * main.c — the kstub command line: reads options, runs the front end, and
 * writes OUTBASE.h, OUTBASE.c and the manifest all or nothing.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KSTUB_TEMPLATE_DIR
#define KSTUB_TEMPLATE_DIR "templates"
#endif

static void usage(FILE *f)
{
    fputs("usage: kstub [options] INPUT.cu -o OUTBASE\n"
          "\n"
          "Generates typed C launch stubs for every __global__ kernel in INPUT.cu:\n"
          "OUTBASE.h (declarations) and OUTBASE.c (definitions, linked with libkstub).\n"
          "\n"
          "options:\n"
          "  -o OUTBASE           write OUTBASE.h and OUTBASE.c\n"
          "  --manifest FILE      also write the signature manifest (JSON)\n"
          "  --embed FILE         embed an nvcc-built image (PTX, cubin or fatbin) in OUTBASE.c\n"
          "  -I DIR               add an include directory\n"
          "  -D NAME[=VALUE]      define a macro\n"
          "  -U NAME              undefine a macro\n"
          "  -std=c++NN           C++ standard of the kernels (default c++17, as nvcc)\n"
          "  --cuda-path DIR      CUDA toolkit (default $CUDA_PATH or /usr/local/cuda)\n"
          "  --arch sm_NN         device architecture to parse for (default sm_90)\n"
          "  -T DIR               use the templates in DIR instead of the built-in ones\n"
          "  --help               show this help\n"
          "  --version            show the version\n",
          f);
}

/* The value of an option given as "-X VALUE", "-XVALUE" or "--opt=VALUE". */
static const char *option_value(int argc, char **argv, int *i, const char *opt)
{
    const char *a = argv[*i];
    size_t n = strlen(opt);
    if (strncmp(a, opt, n) != 0)
        return NULL;
    if (a[n] == '\0') {
        if (*i + 1 >= argc) {
            ks_error_at(NULL, 0, 0, "option '%s' needs a value", opt);
            exit(2);
        }
        return argv[++*i];
    }
    if (opt[1] == '-' && a[n] == '=')
        return a + n + 1;
    if (opt[1] != '-' && strlen(opt) == 2)
        return a + n;
    return NULL;
}

static void push(const char ***list, size_t *n, const char *s)
{
    *list = ks_xrealloc(*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = s;
}

static int parse_args(int argc, char **argv, ks_options *o)
{
    const char *v;
    const char *env_cuda = getenv("CUDA_PATH");
    o->cuda_path = env_cuda && *env_cuda ? env_cuda : "/usr/local/cuda";
    o->arch = "sm_90";
    o->std = "c++17";
    o->template_dir = KSTUB_TEMPLATE_DIR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("kstub %s (manifest format %d)\n", KSTUB_VERSION, KSTUB_MANIFEST_FORMAT);
            exit(0);
        } else if ((v = option_value(argc, argv, &i, "-o"))) {
            o->outbase = v;
        } else if ((v = option_value(argc, argv, &i, "--manifest"))) {
            o->manifest = v;
        } else if ((v = option_value(argc, argv, &i, "--embed"))) {
            o->embed = v;
        } else if ((v = option_value(argc, argv, &i, "--cuda-path"))) {
            o->cuda_path = v;
        } else if ((v = option_value(argc, argv, &i, "--arch"))) {
            if (strncmp(v, "sm_", 3) != 0) {
                ks_error_at(NULL, 0, 0, "--arch takes sm_NN, not '%s'", v);
                return -1;
            }
            o->arch = v;
        } else if (strncmp(a, "-std=", 5) == 0) {
            if (strncmp(a + 5, "c++", 3) != 0 && strncmp(a + 5, "gnu++", 5) != 0) {
                ks_error_at(NULL, 0, 0, "'%s': CUDA sources are C++; use -std=c++NN", a);
                return -1;
            }
            o->std = a + 5;
        } else if ((v = option_value(argc, argv, &i, "-T"))) {
            o->template_dir = v;
        } else if ((v = option_value(argc, argv, &i, "-I"))) {
            push(&o->includes, &o->nincludes, v);
        } else if ((v = option_value(argc, argv, &i, "-D"))) {
            push(&o->defines, &o->ndefines, ks_xasprintf("-D%s", v));
        } else if ((v = option_value(argc, argv, &i, "-U"))) {
            push(&o->defines, &o->ndefines, ks_xasprintf("-U%s", v));
        } else if (a[0] == '-' && a[1] != '\0') {
            ks_error_at(NULL, 0, 0, "unknown option '%s' (see kstub --help)", a);
            return -1;
        } else if (o->input) {
            ks_error_at(NULL, 0, 0, "more than one input file ('%s' and '%s')", o->input, a);
            return -1;
        } else {
            o->input = a;
        }
    }
    if (!o->input) {
        ks_error_at(NULL, 0, 0, "no input file (see kstub --help)");
        return -1;
    }
    if (!o->outbase) {
        ks_error_at(NULL, 0, 0, "no output given; use -o OUTBASE");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    ks_options o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o) != 0)
        return 2;

    ks_image_blob image, *img = NULL;
    if (o.embed) {
        if (ks_image_read(o.embed, &image) != 0)
            return 1;
        img = &image;
    }

    ks_model model;
    int errors = ks_parse(&o, &model);
    int rc = 1;
    char *h = NULL, *c = NULL, *json = NULL;
    if (errors == 0 && model.nkernels == 0)
        ks_note_at(o.input, 0, 0, "no __global__ kernels found; the stubs declare none");
    if (errors == 0) {
        h = ks_emit(&o, &model, img, "header.h.in");
        c = h ? ks_emit(&o, &model, img, "source.c.in") : NULL;
        json = c && o.manifest ? ks_manifest_json(&o, &model) : NULL;
    }
    if (h && c && (json || !o.manifest)) {
        char *hpath = ks_xasprintf("%s.h", o.outbase);
        char *cpath = ks_xasprintf("%s.c", o.outbase);
        ks_output outs[3] = {{hpath, h}, {cpath, c}, {o.manifest, json}};
        rc = ks_write_outputs(outs, o.manifest ? 3 : 2) == 0 ? 0 : 1;
        free(hpath);
        free(cpath);
    } else if (errors) {
        fprintf(stderr, "kstub: %d error%s; nothing written\n", errors, errors == 1 ? "" : "s");
    }
    free(h);
    free(c);
    free(json);
    ks_model_free(&model);
    if (img)
        free(image.data);
    for (size_t i = 0; i < o.ndefines; i++)
        free((char *)o.defines[i]);
    free(o.defines);
    free(o.includes);
    return rc;
}
