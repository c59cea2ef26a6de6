/*
 * optable.c — kstub's options, one table (optable.h): each option's
 * spellings (nvcc's among them: -arch, --gpu-architecture, -gencode, …),
 * how it takes its value, which commands take it and its --help text.
 * parse_args (main.c) matches with ks_opt_match and acts on the id;
 * usage.c prints the help from here.
 */
#include "cli/optable.h"
#include "base/util.h"

#include <string.h>

#define G KS_FOR_GEN
#define L KS_FOR_LIST
#define C KS_FOR_CHECK

const ks_optdef ks_optdefs[] = {
    {KS_OPT_O, "-o", KS_OPT_VALUE, "-o OUTBASE", KS_FOR_ALL, KS_SEC_OPTIONS,
     "write OUTBASE.h and OUTBASE.c (-o x.h or -o x.c: x.h and x.c);\n"
     "missing directories are created, for every output"},
    {KS_OPT_LIST, "--list", KS_OPT_FLAG, "--list", L, KS_SEC_OPTIONS,
     "print each kernel's stub prototype (text, or --format=json)\n"
     "and write nothing; -o is not needed"},
    {KS_OPT_ALL, "--all", KS_OPT_FLAG, "--all", L, KS_SEC_OPTIONS,
     "with --list: also each stub's _n and graph entry points,\n"
     "the typed device variables' accessors and the one C name\n"
     "over a template's instances"},
    {KS_OPT_MANIFEST, "--manifest", KS_OPT_VALUE, "--manifest FILE", G | C, KS_SEC_OPTIONS,
     "also write the signature manifest (JSON)"},
    {KS_OPT_EMBED, "--embed", KS_OPT_VALUE, "--embed FILE", G | C, KS_SEC_OPTIONS,
     "embed an nvcc-built image (PTX, cubin or fatbin) in OUTBASE.c;\n"
     "refused when it does not define every kernel of INPUT.cu"},
    {KS_OPT_EMBED_SOURCE, "--embed-source", KS_OPT_FLAG, "--embed-source", G | C, KS_SEC_OPTIONS,
     "embed INPUT.cu itself; libkstub compiles it with NVRTC at run time"},
    {KS_OPT_SKIP_BODIES, "--skip-bodies", KS_OPT_FLAG, "--skip-bodies", KS_FOR_ALL, KS_SEC_OPTIONS,
     "skip function bodies where they cannot change the output\n"
     "(the same stubs; about 2% faster with the prelude cache)"},
    {KS_OPT_BODY_ERRORS, "--body-errors", KS_OPT_FLAG, "--body-errors", KS_FOR_ALL, KS_SEC_OPTIONS,
     "an error inside a function body refuses the file (default: a\n"
     "warning: bodies are nvcc's to check, not kstub's)"},
    {KS_OPT_CACHE_DIR, "--cache-dir", KS_OPT_VALUE, "--cache-dir DIR", KS_FOR_ALL, KS_SEC_OPTIONS,
     "where the precompiled CUDA prelude is kept (default\n"
     "$KSTUB_CACHE_DIR, else $XDG_CACHE_HOME/kstub or ~/.cache/kstub)"},
    {KS_OPT_NO_CACHE, "--no-cache", KS_OPT_FLAG, "--no-cache", KS_FOR_ALL, KS_SEC_OPTIONS,
     "parse without the precompiled prelude, the result cache\n"
     "or the host trials' cache (also KSTUB_CACHE=0)"},
    {KS_OPT_KERNELS_IN, "--kernels-in", KS_OPT_VALUE, "--kernels-in WHERE", KS_FOR_ALL, KS_SEC_OPTIONS,
     "whose kernels get stubs: 'project' (default: the input and\n"
     "every non-system header it includes), 'input' (the input\n"
     "only), or a header's path (repeatable: the input and those)"},
    {KS_OPT_RDC, "--rdc|-rdc=true|-fgpu-rdc|--relocatable-device-code=true", KS_OPT_FLAG, "--rdc",
     KS_FOR_ALL, KS_SEC_OPTIONS,
     "relocatable device code (nvcc -rdc=true), for kernels that\n"
     "launch kernels; -p takes it from the compile command"},
    {KS_OPT_I, "-I", KS_OPT_VALUE, "-I DIR", KS_FOR_ALL, KS_SEC_OPTIONS, "add an include directory"},
    {KS_OPT_D, "-D", KS_OPT_VALUE, "-D NAME[=VALUE]", KS_FOR_ALL, KS_SEC_OPTIONS, "define a macro"},
    {KS_OPT_U, "-U", KS_OPT_VALUE, "-U NAME", KS_FOR_ALL, KS_SEC_OPTIONS, "undefine a macro"},
    {KS_OPT_STD, "-std=", KS_OPT_PREFIX, "-std=c++NN", KS_FOR_ALL, KS_SEC_OPTIONS,
     "C++ standard of the kernels (default c++17, as nvcc)"},
    {KS_OPT_CUDA_PATH, "--cuda-path", KS_OPT_VALUE, "--cuda-path DIR", KS_FOR_ALL, KS_SEC_OPTIONS,
     "CUDA toolkit (default $CUDA_PATH or /usr/local/cuda)"},
    {KS_OPT_ARCH, "--arch|-arch|--gpu-architecture|-code|--gpu-code|-gencode|--generate-code",
     KS_OPT_VALUE, "--arch sm_NN", KS_FOR_ALL, KS_SEC_OPTIONS,
     "device architecture to parse for (default sm_90); also in\n"
     "nvcc's spellings: -arch=sm_90, -arch sm_80, --gpu-architecture,\n"
     "compute_NN, -code, -gencode arch=...,code=..."},
    {KS_OPT_P, "-p", KS_OPT_VALUE, "-p BUILD_DIR", KS_FOR_ALL, KS_SEC_OPTIONS,
     "take -I, -isystem, -D, -U, -std and the architecture from\n"
     "the input's entry in BUILD_DIR/compile_commands.json;\n"
     "options given here come after (and win)"},
    {KS_OPT_T, "-T", KS_OPT_VALUE, "-T DIR", KS_FOR_ALL, KS_SEC_OPTIONS,
     "use the templates in DIR instead of the built-in ones; a DIR\n"
     "with a target.json is an output target of its own (kstub(1))"},
    {KS_OPT_TARGET, "--target", KS_OPT_VALUE, "--target NAME", KS_FOR_ALL, KS_SEC_OPTIONS,
     "generate for one of kstub's own targets: c (the default)\n"
     "or python (a CPython extension module and its .pyi);\n"
     "the same as -T with that target's installed templates"},
    {KS_OPT_HELP, "--help|-h", KS_OPT_FLAG, "--help", KS_FOR_ALL, KS_SEC_OPTIONS, "show this help"},
    {KS_OPT_VERSION, "--version", KS_OPT_FLAG, "--version", KS_FOR_ALL, KS_SEC_OPTIONS,
     "show the version (also: kstub version)"},
    {KS_OPT_MD, "-MD", KS_OPT_FLAG, "-MD", G | C, KS_SEC_DEPFILES,
     "write a make depfile, OUTBASE.d unless -MF names it: the\n"
     "input and every header it includes, each header also as an\n"
     "empty rule (-MP) so a deleted header does not break make"},
    {KS_OPT_MMD, "-MMD", KS_OPT_FLAG, "-MMD", G | C, KS_SEC_DEPFILES,
     "the same without system headers (CUDA toolkit, -isystem)"},
    {KS_OPT_MF, "-MF", KS_OPT_VALUE, "-MF FILE", G | C, KS_SEC_DEPFILES,
     "write the depfile to FILE (implies -MD)"},
    {KS_OPT_MT, "-MT", KS_OPT_VALUE, "-MT TARGET", G | C, KS_SEC_DEPFILES,
     "the rule's target, as written (repeatable; default: the\n"
     "outputs OUTBASE.h OUTBASE.c and the manifest)"},
    {KS_OPT_MQ, "-MQ", KS_OPT_VALUE, "-MQ TARGET", G | C, KS_SEC_DEPFILES,
     "the same, quoted for make ('$' and spaces)"},
    {KS_OPT_MP, "-MP", KS_OPT_FLAG, "-MP", G | C, KS_SEC_DEPFILES,
     "accepted; the empty header rules are always written"},
    {KS_OPT_FIX_COMMAND, "--fix-command", KS_OPT_VALUE, "--fix-command CMD", C, KS_SEC_CHECK,
     "the command to print instead (kstub.mk's kstub-check: make)"},
    {KS_OPT_FORMAT, "--format", KS_OPT_VALUE, "--format=F", L | C, KS_SEC_FORMAT,
     "report as text (file:line:col: error: ..., the default),\n"
     "json, or github (workflow annotations); --list: text or json"},
};
const unsigned ks_noptdefs = sizeof ks_optdefs / sizeof ks_optdefs[0];

#undef G
#undef L
#undef C

/* The value of spelling s (n bytes) in argv[*i], or NULL when s is not it. */
static int match_spelling(const ks_optdef *d, const char *s, size_t n, int argc, char **argv, int *i,
                          const char **value, int *missing)
{
    const char *a = argv[*i];
    if (strncmp(a, s, n) != 0)
        return 0;
    switch (d->kind) {
    case KS_OPT_FLAG:
        return a[n] == '\0';
    case KS_OPT_PREFIX:
        *value = a + n;
        return 1;
    case KS_OPT_VALUE:
        break;
    }
    if (a[n] == '\0') {
        if (*i + 1 >= argc) {
            ks_error_at(NULL, 0, 0, "option '%.*s' needs a value", (int)n, s);
            *missing = 1;
            return 1;
        }
        *value = argv[++*i];
        return 1;
    }
    /* "--opt=V" and nvcc's "-opt=V"; a one-letter "-X" (and -MF & co.)
     * takes its value joined: -Ipath, -MFfile. */
    if (a[n] == '=' && (s[1] == '-' || n > 3)) {
        *value = a + n + 1;
        return 1;
    }
    if (s[1] != '-' && n <= 3) {
        *value = a + n;
        return 1;
    }
    return 0;
}

const ks_optdef *ks_opt_match(int argc, char **argv, int *i, const char **value,
                              const char **spelled, int *missing)
{
    *value = NULL;
    *spelled = NULL;
    *missing = 0;
    if (argv[*i][0] != '-')
        return NULL;
    for (unsigned k = 0; k < ks_noptdefs; k++) {
        const ks_optdef *d = &ks_optdefs[k];
        for (const char *s = d->names; *s;) {
            size_t n = strcspn(s, "|");
            if (match_spelling(d, s, n, argc, argv, i, value, missing)) {
                *spelled = s;
                return d;
            }
            s += n + (s[n] == '|');
        }
    }
    return NULL;
}

void ks_opt_print(FILE *f, ks_opt_section section, unsigned for_)
{
    for (unsigned k = 0; k < ks_noptdefs; k++) {
        const ks_optdef *d = &ks_optdefs[k];
        if (d->section != section || !(d->for_ & for_))
            continue;
        const char *h = d->help;
        int first = 1;
        while (*h) {
            size_t n = strcspn(h, "\n");
            fprintf(f, "  %-21s%.*s\n", first ? d->shown : "", (int)n, h);
            h += n + (h[n] == '\n');
            first = 0;
        }
    }
}
