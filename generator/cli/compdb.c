/*
 * compdb.c — parse options from a build's compile_commands.json (-p DIR).
 *
 * The entry for the .cu file is usually an nvcc command. kstub keeps what
 * decides how the kernels' signatures read — include directories, macros,
 * the C++ standard and one device architecture — and drops what only shapes
 * code generation or the host side (-O3, -G, -lineinfo, -rdc, -Xptxas, -o,
 * -ccbin …), since clang rejects most nvcc spellings.
 *
 * The file is read with jansson rather than libclang's CXCompilationDatabase:
 * libclang would also guess a command for a file that has no entry
 * (interpolating from a neighbour), which silently parses with the wrong
 * flags; here a missing entry is an error.
 */
#include "cli/compdb.h"
#include "base/inputs.h"
#include "base/util.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void push(char ***list, size_t *n, char *s)
{
    *list = ks_xrealloc(*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = s;
}

static char *path_in(const char *directory, const char *path)
{
    if (path[0] == '/' || !directory || !*directory)
        return ks_xstrdup(path);
    if (strcmp(path, ".") == 0)
        return ks_xstrdup(directory);
    if (strncmp(path, "./", 2) == 0)
        path += 2;
    size_t n = strlen(directory);
    return ks_xasprintf("%s%s%s", directory, n && directory[n - 1] == '/' ? "" : "/", path);
}

/* "sm_80" from "sm_80", "compute_80", "sm_90a"; NULL for native, all, lto_… */
char *ks_compdb_arch_of(const char *v)
{
    const char *digits = NULL;
    if (strncmp(v, "sm_", 3) == 0)
        digits = v + 3;
    else if (strncmp(v, "compute_", 8) == 0)
        digits = v + 8;
    if (!digits || *digits < '0' || *digits > '9')
        return NULL;
    size_t n = strspn(digits, "0123456789abf");
    return ks_xasprintf("sm_%.*s", (int)n, digits);
}

/* "arch=compute_80,code=sm_80" or "arch=compute_80,code=[sm_80,compute_80]" */
char *ks_compdb_arch_of_gencode(const char *v)
{
    const char *code = strstr(v, "code=");
    const char *arch = strstr(v, "arch=");
    char *r = NULL;
    if (code) {
        const char *c = code + 5;
        if (*c == '[' || *c == '"' || *c == '\'')
            c++;
        r = ks_compdb_arch_of(c);
    }
    if (!r && arch)
        r = ks_compdb_arch_of(arch + 5);
    return r;
}

static void set_arch(ks_compdb *db, char *arch)
{
    /* The first architecture named wins: any one of them gives the
     * signatures, unless the source tests __CUDA_ARCH__ in a signature. */
    if (arch && !db->arch)
        db->arch = arch;
    else
        free(arch);
}

/* nvcc and clang options whose value is the next argument (when not joined
 * with '='), and which kstub drops. */
static const char *const dropped_with_value[] = {
    "-o", "--output-file", "-ccbin", "--compiler-bindir", "-code", "--gpu-code",
    "-Xptxas", "--ptxas-options", "-Xlinker", "--linker-options", "-Xnvlink",
    "--nvlink-options", "-Xarchive", "--archive-options", "-Xcudafe", "-x", "--x",
    "-t", "--threads", "-maxrregcount", "--maxrregcount", "--default-stream",
    "-default-stream", "-MF", "--dependency-output", "-MT", "--dependency-target-name",
    "-MQ", "-odir", "--output-directory", "-L", "--library-path", "-l", "--library",
    "-rdc", "--relocatable-device-code", "-cudart", "--cudart",
    "--diag-suppress", "-diag-suppress", "--diag-warn", "--diag-error", "-split-compile",
    "--split-compile", "-ddp", "--dependency-drive-prefix", "-arch-ls", "--list-gpu-arch",
    "--machine", "-m", "-Xclang", "-target", "--target", "-Xarch_device", "-Xarch_host",
    NULL,
};

static int in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return 1;
    return 0;
}

/* Value of "-X V", "-XV" (joined allowed) or "--opt=V" / "-opt=V"; advances *i. */
static const char *value_of(const char *const *argv, size_t argc, size_t *i, const char *opt,
                            int joined)
{
    const char *a = argv[*i];
    size_t n = strlen(opt);
    if (strncmp(a, opt, n) != 0)
        return NULL;
    if (a[n] == '\0')
        return *i + 1 < argc ? argv[++*i] : NULL;
    if (a[n] == '=')
        return a + n + 1;
    return joined ? a + n : NULL;
}

static void add_include(ks_compdb *db, const char *directory, const char *dir, int is_system)
{
    char *p = path_in(directory, dir);
    if (is_system)
        push(&db->system_dirs, &db->nsystem_dirs, ks_xstrdup(p));
    push(&db->includes, &db->nincludes, p);
}

/* Host-compiler flags, comma-separated: keep -I, -isystem, -D, -U, drop the rest. */
static void unwrap_host_flags(ks_compdb *db, const char *directory, const char *list)
{
    char *copy = ks_xstrdup(list);
    char *save = NULL;
    char *prev = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (prev && strcmp(prev, "-isystem") == 0)
            add_include(db, directory, t, 1);
        else if (prev && strcmp(prev, "-I") == 0)
            add_include(db, directory, t, 0);
        else if (strncmp(t, "-I", 2) == 0 && t[2])
            add_include(db, directory, t + 2, 0);
        else if (strncmp(t, "-isystem", 8) == 0 && t[8])
            add_include(db, directory, t + 8, 1);
        else if ((strncmp(t, "-D", 2) == 0 || strncmp(t, "-U", 2) == 0) && t[2])
            push(&db->defines, &db->ndefines, ks_xstrdup(t));
        prev = t;
    }
    free(copy);
}

static int shell_split(const char *s, const char *file, char ***out, size_t *argc);
static int translate(const char *directory, const char *const *argv, size_t argc,
                     ks_compdb *db, int depth);

/* Options files nest (an @file may name another); a cycle must end. */
#define KS_OPTIONS_FILE_DEPTH 16

/* nvcc's --options-file / -optf (a comma-separated list of files) and the
 * @file response files of nvcc, clang and gcc: each file is read relative to
 * the entry's directory, split as a shell would, and its words translated as
 * if they stood in the command. CMake with Ninja puts the include paths there.
 * Returns the number of warnings, or -1 after an error. */
static int options_file(const char *directory, const char *path, ks_compdb *db, int depth)
{
    if (depth >= KS_OPTIONS_FILE_DEPTH) {
        ks_error_at(path, 0, 0, "compile command: options files nest more than %d deep",
                    KS_OPTIONS_FILE_DEPTH);
        return -1;
    }
    char *full = path_in(directory, path);
    size_t size = 0;
    char *text = ks_read_file(full, &size);
    if (!text) {
        ks_error_at(full, 0, 0, "cannot read the compile command's options file: %s",
                    ks_file_error());
        free(full);
        return -1;
    }
    int rc = -1;
    if (memchr(text, '\0', size)) {
        ks_error_at(full, 0, 0, "the compile command's options file holds a NUL byte");
    } else {
        size_t argc = 0;
        char **words = NULL;
        if (shell_split(text, full, &words, &argc) == 0) {
            /* argv[0] is the compiler in a command: an empty one stands in. */
            const char **argv = ks_xmalloc((argc + 1) * sizeof *argv);
            argv[0] = "";
            for (size_t k = 0; k < argc; k++)
                argv[k + 1] = words[k];
            rc = translate(directory, argv, argc + 1, db, depth + 1);
            for (size_t k = 0; k < argc; k++)
                free(words[k]);
            free(words);
            free(argv);
        }
    }
    free(text);
    free(full);
    return rc;
}

static int options_files(const char *directory, const char *list, ks_compdb *db, int depth)
{
    int warned = 0;
    char *copy = ks_xstrdup(list);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int w = options_file(directory, t, db, depth);
        if (w < 0) {
            warned = -1;
            break;
        }
        warned += w;
    }
    free(copy);
    return warned;
}

int ks_compdb_translate(const char *directory, const char *const *argv, size_t argc,
                        ks_compdb *db)
{
    return translate(directory, argv, argc, db, 0) < 0 ? -1 : 0;
}

static int translate(const char *directory, const char *const *argv, size_t argc,
                     ks_compdb *db, int depth)
{
    int warned = 0;
    const char *v;
    for (size_t i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '@' && a[1]) {
            int w = options_file(directory, a + 1, db, depth);
            if (w < 0)
                return -1;
            warned += w;
            continue;
        }
        if (a[0] != '-')
            continue;   /* the input, other inputs, or a value we skip */
        if ((v = value_of(argv, argc, &i, "-optf", 0)) ||
            (v = value_of(argv, argc, &i, "--options-file", 0))) {
            if (!*v) {
                ks_error_at(NULL, 0, 0, "compile command: '%s' names no file", a);
                return -1;
            }
            int w = options_files(directory, v, db, depth);
            if (w < 0)
                return -1;
            warned += w;
        } else if (strcmp(a, "-optf") == 0 || strcmp(a, "--options-file") == 0) {
            ks_error_at(NULL, 0, 0, "compile command: '%s' without a file", a);
            return -1;
        } else if ((v = value_of(argv, argc, &i, "-isystem", 1)) ||
            (v = value_of(argv, argc, &i, "--system-include", 0))) {
            add_include(db, directory, v, 1);
        } else if ((v = value_of(argv, argc, &i, "-I", 1)) ||
                   (v = value_of(argv, argc, &i, "--include-path", 0))) {
            add_include(db, directory, v, 0);
        } else if ((v = value_of(argv, argc, &i, "-D", 1)) ||
                   (v = value_of(argv, argc, &i, "--define-macro", 0))) {
            push(&db->defines, &db->ndefines, ks_xasprintf("-D%s", v));
        } else if ((v = value_of(argv, argc, &i, "-U", 1)) ||
                   (v = value_of(argv, argc, &i, "--undefine-macro", 0))) {
            push(&db->defines, &db->ndefines, ks_xasprintf("-U%s", v));
        } else if ((v = value_of(argv, argc, &i, "-std", 0)) ||
                   (v = value_of(argv, argc, &i, "--std", 0))) {
            /* nvcc also spells it "c++17" alone; clang wants the prefix. */
            free(db->std);
            db->std = strncmp(v, "c++", 3) == 0 || strncmp(v, "gnu++", 5) == 0
                          ? ks_xstrdup(v) : ks_xasprintf("c++%s", v);
        } else if ((v = value_of(argv, argc, &i, "-arch", 0)) ||
                   (v = value_of(argv, argc, &i, "--gpu-architecture", 0)) ||
                   (v = value_of(argv, argc, &i, "--cuda-gpu-arch", 0)) ||
                   (v = value_of(argv, argc, &i, "--offload-arch", 0))) {
            set_arch(db, ks_compdb_arch_of(v));
        } else if ((v = value_of(argv, argc, &i, "-gencode", 0)) ||
                   (v = value_of(argv, argc, &i, "--generate-code", 0))) {
            set_arch(db, ks_compdb_arch_of_gencode(v));
        } else if ((v = value_of(argv, argc, &i, "-Xcompiler", 0)) ||
                   (v = value_of(argv, argc, &i, "--compiler-options", 0))) {
            unwrap_host_flags(db, directory, v);
        } else if ((v = value_of(argv, argc, &i, "-rdc", 0)) ||
                   (v = value_of(argv, argc, &i, "--relocatable-device-code", 0))) {
            db->rdc = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
        } else if (strcmp(a, "-dc") == 0 || strcmp(a, "--device-c") == 0 ||
                   strcmp(a, "-fgpu-rdc") == 0) {
            db->rdc = 1;   /* nvcc's -dc is -c -rdc=true */
        } else if (strcmp(a, "-fno-gpu-rdc") == 0) {
            db->rdc = 0;
        } else if (strcmp(a, "-include") == 0 || strcmp(a, "--pre-include") == 0) {
            /* kstub has no forced include yet: say so rather than parse differently. */
            ks_warning_at(NULL, 0, 0, "compile command: '%s %s' is not passed to the parse",
                       a, i + 1 < argc ? argv[i + 1] : "");
            i++;
            warned++;
        } else if (in_list(dropped_with_value, a)) {
            i++;
        }
        /* Everything else is a flag without a value that kstub drops:
         * -c, -G, -g, -lineinfo, -O3, -Xcompiler=…, -w, -W…,
         * --expt-relaxed-constexpr, --extended-lambda, -use_fast_math, … */
    }
    return warned;
}

/* Splits a "command" string as a POSIX shell would (quotes, backslashes).
 * Returns 0, or -1 after an error (file names the text) when a quote is not
 * closed: the shell would refuse the command too. */
static int shell_split(const char *s, const char *file, char ***out, size_t *argc)
{
    char **argv = NULL;
    size_t n = 0;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        ks_buf b = {0};
        ks_buf_put(&b, "", 0);
        int open = 0;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (*p == '\'') {
                const char *e = strchr(p + 1, '\'');
                if (!e) {
                    open = '\'';
                    break;
                }
                ks_buf_put(&b, p + 1, (size_t)(e - p - 1));
                p = e + 1;
            } else if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
                        p++;
                    ks_buf_put(&b, p, 1);
                }
                if (!*p) {
                    open = '"';
                    break;
                }
                p++;
            } else if (*p == '\\' && p[1]) {
                ks_buf_put(&b, p + 1, 1);
                p += 2;
            } else {
                ks_buf_put(&b, p++, 1);
            }
        }
        argv = ks_xrealloc(argv, (n + 1) * sizeof *argv);
        argv[n++] = ks_buf_take(&b);
        if (open) {
            ks_error_at(file, 0, 0, "compile command: unterminated %c quote", open);
            for (size_t k = 0; k < n; k++)
                free(argv[k]);
            free(argv);
            *out = NULL;
            *argc = 0;
            return -1;
        }
    }
    *out = argv;
    *argc = n;
    return 0;
}

static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb))
        return 0;
    return strcmp(ra, rb) == 0;
}

int ks_compdb_load(const char *build_dir, const char *input, ks_compdb *db)
{
    char *path = ks_xasprintf("%s/compile_commands.json", build_dir);
    /* Read as every input is (a FIFO refused, never waited on; remembered
     * so that no output replaces it), then parsed from memory. */
    size_t size = 0;
    char *text = ks_read_file(path, &size);
    if (!text) {
        ks_error_at(path, 0, 0, "cannot read the compilation database: %s", ks_file_error());
        free(path);
        return -1;
    }
    json_error_t err;
    json_t *root = json_loadb(text, size, 0, &err);
    free(text);
    int rc = -1;
    if (!root) {
        ks_error_at(path, (unsigned)(err.line > 0 ? err.line : 0),
                    (unsigned)(err.column > 0 ? err.column : 0), "%s", err.text);
        free(path);
        return -1;
    }
    if (!json_is_array(root)) {
        ks_error_at(path, 0, 0, "not a compilation database (expected a JSON array)");
        goto done;
    }
    size_t idx;
    json_t *entry;
    json_array_foreach(root, idx, entry) {
        const char *rel = json_string_value(json_object_get(entry, "directory"));
        const char *file = json_string_value(json_object_get(entry, "file"));
        if (!rel || !file)
            continue;
        /* A relative "directory" is taken from the database's own directory
         * (as clang's JSONCompilationDatabase does), not from where kstub runs. */
        char *dir = path_in(build_dir, rel);
        char *full = path_in(dir, file);
        int match = same_file(full, input);
        free(full);
        if (!match) {
            free(dir);
            continue;
        }
        json_t *arguments = json_object_get(entry, "arguments");
        const char *command = json_string_value(json_object_get(entry, "command"));
        const char **argv = NULL;
        char **split = NULL;
        size_t argc = 0;
        if (json_is_array(arguments)) {
            argc = json_array_size(arguments);
            argv = ks_xmalloc((argc + 1) * sizeof *argv);
            for (size_t k = 0; k < argc; k++) {
                const char *s = json_string_value(json_array_get(arguments, k));
                argv[k] = s ? s : "";
            }
        } else if (command) {
            if (shell_split(command, path, &split, &argc) != 0) {
                free(dir);
                goto done;
            }
            argv = ks_xmalloc((argc + 1) * sizeof *argv);
            for (size_t k = 0; k < argc; k++)
                argv[k] = split[k];
        } else {
            ks_error_at(path, 0, 0, "the entry for '%s' has neither \"arguments\" nor "
                        "\"command\"", file);
            free(dir);
            goto done;
        }
        db->directory = dir;
        rc = translate(dir, argv, argc, db, 0) < 0 ? -1 : 0;
        for (size_t k = 0; split && k < argc; k++)
            free(split[k]);
        free(split);
        free(argv);
        goto done;
    }
    ks_error_at(path, 0, 0, "no compile command for '%s'; is it part of the build in '%s'?",
                input, build_dir);
done:
    json_decref(root);
    free(path);
    return rc;
}

void ks_compdb_free(ks_compdb *db)
{
    for (size_t i = 0; i < db->nincludes; i++)
        free(db->includes[i]);
    for (size_t i = 0; i < db->nsystem_dirs; i++)
        free(db->system_dirs[i]);
    for (size_t i = 0; i < db->ndefines; i++)
        free(db->defines[i]);
    free(db->includes);
    free(db->system_dirs);
    free(db->defines);
    free(db->std);
    free(db->arch);
    free(db->directory);
    memset(db, 0, sizeof *db);
}
