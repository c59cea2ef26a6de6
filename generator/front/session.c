/*
 * session.c — one libclang translation unit of the input, parsed device-side
 * as nvcc's device pass sees it, with its diagnostics, and the cursor helpers
 * the rest of the front end shares.
 *
 * Device-side parsing (--cuda-device-only) matters: it gives the symbol names
 * and type layouts of the device compiler, where a host-side parse would give
 * __device_stub__ wrappers.
 */
#include "front/fileguard.h"
#include "base/util.h"
#include "base/options.h"
#include "front/session_files.h"
#include "front/prelude/prelude.h"
#include "front/session.h"
#include "front/cursor.h"
#include "front/source.h"
#include "front/compat.h"
#include "front/latedefs.h"
#include "front/redecl.h"
#include "base/inputs.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the toolkit: what nvcc would define, and where clang's own headers are ------------------ */

#define KS_TOOLKIT_MAX_FLAGS 16

/* "release 13.0, V13.0.88" from "<cuda>/bin/nvcc --version": the version of
 * the toolkit actually used, build number included. */
static int nvcc_version(const char *cuda_path, int *major, int *minor, int *build)
{
    char *nvcc = ks_xasprintf("%s/bin/nvcc", cuda_path);
    int fd[2];
    if (access(nvcc, X_OK) != 0 || pipe(fd) != 0) {
        free(nvcc);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 2);
        }
        execl(nvcc, nvcc, "--version", (char *)NULL);
        _exit(127);
    }
    free(nvcc);
    close(fd[1]);
    char out[4096];
    size_t n = 0;
    ssize_t r;
    while (pid > 0 && n + 1 < sizeof out && (r = read(fd[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fd[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    const char *v = strstr(out, ", V");
    return v && sscanf(v + 3, "%d.%d.%d", major, minor, build) == 3 ? 0 : -1;
}

/* CUDA_VERSION from <cuda>/include/cuda.h (13000 for 13.0), when nvcc
 * cannot be run. */
static int cuda_h_version(const char *cuda_path, int *major, int *minor)
{
    char *path = ks_xasprintf("%s/include/cuda.h", cuda_path);
    char *text = ks_read_file(path, NULL);
    free(path);
    const char *d = text ? strstr(text, "#define CUDA_VERSION ") : NULL;
    long v = d ? strtol(d + strlen("#define CUDA_VERSION "), NULL, 10) : 0;
    free(text);
    if (v <= 0)
        return -1;
    *major = (int)(v / 1000);
    *minor = (int)(v % 1000 / 10);
    return 0;
}

/* <folder>/clang/<major> if it holds clang's CUDA wrapper headers. */
static char *resource_dir_in(const char *lib_path, int major)
{
    const char *slash = strrchr(lib_path, '/');
    if (!slash)
        return NULL;
    char *dir = ks_xasprintf("%.*s/clang/%d", (int)(slash - lib_path), lib_path, major);
    char *probe = ks_xasprintf("%s/include/cuda_wrappers/new", dir);
    int ok = access(probe, R_OK) == 0;
    free(probe);
    if (!ok) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* clang's resource directory (its own headers, cuda_wrappers among them)
 * beside the libclang in use: libclang's default is relative to the working
 * directory, so CUB's and Thrust's placement new and the like were not
 * found. The folder the library was loaded from comes first (Debian's
 * /usr/lib/llvm-22/lib/clang/22), then the one its links resolve to
 * (libclang-22.so.22 itself lives in /usr/lib/<triplet>, which has no
 * clang/ folder). */
static char *resource_dir(void)
{
    Dl_info info;
    union { CXString (*fn)(void); void *p; } sym = {clang_getClangVersion};
    if (!dladdr(sym.p, &info) || !info.dli_fname)
        return NULL;
    char *version = ks_take(clang_getClangVersion());
    const char *v = strstr(version, "version ");
    int major = v ? atoi(v + 8) : 0;
    free(version);
    char *dir = resource_dir_in(info.dli_fname, major);
    if (!dir) {
        char *lib = realpath(info.dli_fname, NULL);
        dir = lib ? resource_dir_in(lib, major) : NULL;
        free(lib);
    }
    return dir;
}

static const char *own(ks_session *s, char *str)
{
    s->owned[s->nowned++] = str;
    return str;
}

/*
 * The flags that make clang see a .cu file as nvcc's device pass does:
 * nvcc's predefined macros for the toolkit found (code tests __NVCC__ and
 * __CUDACC_VER_MAJOR__, and a struct laid out under them must get nvcc's
 * layout, never clang's), the toolkit's SDK version (clang 22 finds none in
 * CUDA 13 and falls back to the pre-CUDA-9 launch API, so host code's
 * <<<>>> failed), and the resource directory. Returns 0, or -1 after an error.
 */
static int toolkit_flags(ks_session *s)
{
    const ks_options *opts = s->opts;
    int major, minor, build;
    if (nvcc_version(opts->cuda_path, &major, &minor, &build) != 0) {
        if (cuda_h_version(opts->cuda_path, &major, &minor) != 0) {
            ks_error_at(opts->input, 0, 0, "cannot tell the CUDA version of '%s' (neither "
                        "bin/nvcc --version nor include/cuda.h); set --cuda-path or CUDA_PATH",
                        opts->cuda_path);
            return -1;
        }
        build = 0;
        ks_warning_at(opts->input, 0, 0, "cannot run %s/bin/nvcc: __CUDACC_VER_BUILD__ is "
                      "taken as 0 (pass -D__CUDACC_VER_BUILD__=N to set it)", opts->cuda_path);
    }
    int sm = atoi(opts->arch + 3);
#define KS_ARG(...) (s->args[s->nargs++] = own(s, ks_xasprintf(__VA_ARGS__)))
    KS_ARG("-D__NVCC__");
    KS_ARG("-D__CUDACC_VER_MAJOR__=%d", major);
    KS_ARG("-D__CUDACC_VER_MINOR__=%d", minor);
    KS_ARG("-D__CUDACC_VER_BUILD__=%d", build);
    KS_ARG("-D__CUDA_API_VER_MAJOR__=%d", major);
    KS_ARG("-D__CUDA_API_VER_MINOR__=%d", minor);
    KS_ARG("-D__CUDA_ARCH_LIST__=%d", sm * 10);
    KS_ARG("-D__NVCC_DIAG_PRAGMA_SUPPORT__=1");
    KS_ARG("-DCUDA_DOUBLE_MATH_FUNCTIONS");
    KS_ARG("-D__KSTUB__=1");
    s->args[s->nargs++] = "-Xclang";
    KS_ARG("-target-sdk-version=%d.%d", major, minor);
#undef KS_ARG
    char *rd = resource_dir();
    if (rd) {
        s->args[s->nargs++] = "-resource-dir";
        s->args[s->nargs++] = own(s, rd);
    }
    return 0;
}

/* The command line libclang parses with. */
static int build_args(ks_session *s)
{
    const ks_options *opts = s->opts;
    size_t cap = 20 + KS_TOOLKIT_MAX_FLAGS + KS_COMPAT_MAX_ARGS + opts->ndefines + 2 * opts->nincludes;
    s->args = ks_xmalloc(cap * sizeof *s->args);
    s->owned = ks_xmalloc(cap * sizeof *s->owned);
    s->args[s->nargs++] = "-x";
    s->args[s->nargs++] = "cuda";
    s->args[s->nargs++] = "--cuda-device-only";
    s->args[s->nargs++] = "-nocudalib";
    s->args[s->nargs++] = "-Wno-unknown-cuda-version";
    s->args[s->nargs++] = own(s, ks_xasprintf("--cuda-path=%s", opts->cuda_path));
    s->args[s->nargs++] = own(s, ks_xasprintf("--cuda-gpu-arch=%s", opts->arch));
    s->args[s->nargs++] = own(s, ks_xasprintf("-std=%s", opts->std));
    if (opts->rdc)
        s->args[s->nargs++] = "-fgpu-rdc";
    /* nvcc mangles a template parameter object (an enable_if<..., int>::type
     * = 0 non-type parameter) the way clang did up to 17 ("Li0E"); clang 18
     * and later write "TnN...E" there, a symbol nvcc never emits, so the
     * stub's lookup would fail. Layout is not touched: check-abi compares
     * every kernel's symbol and layout with nvcc's PTX. */
    s->args[s->nargs++] = "-fclang-abi-compat=17";
    if (toolkit_flags(s) != 0)
        return -1;
    s->nargs += ks_compat_args(opts, s->args + s->nargs, KS_COMPAT_MAX_ARGS);
    s->args[s->nargs++] = "-include";
    s->args[s->nargs++] = KS_COMPAT_PATH;
    /* CUDA 13 keeps libcu++ (cuda/std/...) under include/cccl, which nvcc
     * adds to the search path by itself. */
    char *cccl = ks_xasprintf("%s/include/cccl", opts->cuda_path);
    if (access(cccl, F_OK) == 0) {
        s->args[s->nargs++] = "-isystem";
        s->args[s->nargs++] = own(s, cccl);
    } else {
        free(cccl);
    }
    size_t user = s->nargs;   /* the input's own: last, for the prelude to tell apart */
    for (size_t i = 0; i < opts->nincludes; i++) {
        s->args[s->nargs++] = "-I";
        s->args[s->nargs++] = opts->includes[i];
    }
    for (size_t i = 0; i < opts->ndefines; i++)
        s->args[s->nargs++] = opts->defines[i];
    s->nuser = s->nargs - user;
    return 0;
}

/* The byte ranges of every function body in the translation unit. */
typedef struct body_ranges {
    struct body { CXFile file; unsigned start, end; } *b;
    size_t n;
    const ks_prelude *prelude; /* the PCH the parse used, or NULL */
    struct seen_file { CXFile file; int in_prelude; } *seen;
    size_t nseen;
} body_ranges;

/* Whether a top-level declaration starts in a file of the precompiled
 * prelude: then all of it is in the PCH, which was built without errors,
 * so no diagnostic lies in its bodies, and its thousands of declarations
 * need not be read back from the PCH to find them. */
static int in_prelude(body_ranges *r, CXCursor c)
{
    CXFile f;
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
    if (!f)
        return 0;
    for (size_t i = 0; i < r->nseen; i++)
        if (r->seen[i].file == f)
            return r->seen[i].in_prelude;
    char *name = ks_take(clang_getFileName(f));
    int found = 0;
    for (size_t i = 0; !found && i < r->prelude->nfiles; i++)
        found = strcmp(name, r->prelude->files[i]) == 0;
    free(name);
    r->seen = ks_xrealloc(r->seen, (r->nseen + 1) * sizeof *r->seen);
    r->seen[r->nseen].file = f;
    r->seen[r->nseen++].in_prelude = found;
    return found;
}

static enum CXChildVisitResult collect_bodies(CXCursor c, CXCursor parent, CXClientData data)
{
    body_ranges *r = data;
    enum CXCursorKind pk = clang_getCursorKind(parent);
    if (pk == CXCursor_TranslationUnit && r->prelude && in_prelude(r, c))
        return CXChildVisit_Continue;
    if (clang_getCursorKind(c) == CXCursor_CompoundStmt &&
        (pk == CXCursor_FunctionDecl || pk == CXCursor_CXXMethod || pk == CXCursor_FunctionTemplate ||
         pk == CXCursor_Constructor || pk == CXCursor_Destructor || pk == CXCursor_ConversionFunction ||
         pk == CXCursor_LambdaExpr)) {
        CXSourceRange ext = clang_getCursorExtent(c);
        CXFile f1, f2;
        unsigned o1, o2;
        clang_getSpellingLocation(clang_getRangeStart(ext), &f1, NULL, NULL, &o1);
        clang_getSpellingLocation(clang_getRangeEnd(ext), &f2, NULL, NULL, &o2);
        if (f1 && clang_File_isEqual(f1, f2)) {
            if ((r->n & (r->n + 1)) == 0 || r->n == 0)
                r->b = ks_xrealloc(r->b, (r->n * 2 + 2) * sizeof *r->b);
            r->b[r->n].file = f1;
            r->b[r->n].start = o1;
            r->b[r->n++].end = o2;
        }
        return CXChildVisit_Continue;   /* a body in a body (a lambda's) lies inside it anyway */
    }
    return CXChildVisit_Recurse;
}

static int inside_body(const body_ranges *r, CXSourceLocation loc)
{
    CXFile f;
    unsigned off;
    clang_getSpellingLocation(loc, &f, NULL, NULL, &off);
    for (size_t i = 0; f && i < r->n; i++)
        if (clang_File_isEqual(f, r->b[i].file) && off >= r->b[i].start && off < r->b[i].end)
            return 1;
    return 0;
}

/* A diagnostic as clang formats it, with its place. Where the place is
 * spelled in clang's command-line buffer (a -D's value: "-DN=10" in cuda.h's
 * "size_t N"), clang prints none (or kstub's in-memory latedefs.h): the
 * expansion's place is given instead. */
static char *format_diagnostic(CXDiagnostic d, char **file, unsigned *line, unsigned *col)
{
    unsigned opts = CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn | CXDiagnostic_DisplayOption;
    CXSourceLocation loc = clang_getDiagnosticLocation(d);
    CXFile sf = NULL, ef = NULL;
    clang_getSpellingLocation(loc, &sf, line, col, NULL);
    char *sname = sf ? ks_take(clang_getFileName(sf)) : NULL;
    int cmdline = !sf || strcmp(sname, KS_LATEDEFS_PATH) == 0;   /* or where kstub moved the -D */
    if (cmdline) {
        clang_getExpansionLocation(loc, &ef, line, col, NULL);
        free(sname);
        sname = ef ? ks_take(clang_getFileName(ef)) : NULL;
    }
    *file = sname;
    if (!cmdline || !ef)
        return ks_take(clang_formatDiagnostic(d, opts));
    char *bare = ks_take(clang_formatDiagnostic(d, opts & ~(unsigned)CXDiagnostic_DisplaySourceLocation));
    char *out = ks_xasprintf("%s:%u:%u: %s", sname, *line, *col, bare);
    free(bare);
    return out;
}

/* Prints libclang's error diagnostics (the parse call returns success even
 * when the source has errors); returns how many count. nvcc is the compiler
 * of record and kstub needs the signatures, not the bodies: an error inside
 * a function body (clang and nvcc differ there: host math overloads,
 * intrinsics, inline asm) changes no kernel's signature, so it is a
 * warning, unless opts->body_errors asks for errors. */
static int report_diagnostics(ks_session *s, int print)
{
    int errors = 0;
    unsigned n = clang_getNumDiagnostics(s->tu);
    body_ranges bodies = {NULL, 0, s->prelude.fd >= 0 ? &s->prelude : NULL, NULL, 0};
    int have_bodies = 0;
    ks_fileguard_said said = {NULL, NULL};
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(s->tu, i);
        /* what nvcc accepts and only clang's CUDA mode refuses is no error (redecl.c) */
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error && !ks_redecl_nvcc_merges(s->tu, d)) {
            if (!have_bodies && !s->opts->body_errors) {
                clang_visitChildren(clang_getTranslationUnitCursor(s->tu), collect_bodies, &bodies);
                have_bodies = 1;
            }
            /* escaped: a file name in it may hold a newline ("x\n::error::") */
            char *file;
            unsigned line, col;
            char *raw = format_diagnostic(d, &file, &line, &col);
            char *msg = ks_escape_controls(raw);
            free(raw);
            /* a file the guard refused is an error in a body too */
            int guard = ks_fileguard_explain(&msg, &said);
            size_t probe = ks_probe_at(s->probes, s->nprobes, clang_getDiagnosticLocation(d));
            if (probe < s->nprobes) {
                if (print)         /* kstub's own reference failed: held back (walk.c) */
                    ks_probe_keep(&s->probe_errors, &s->nprobe_errors, probe, d, &msg, &file, line, col);
            } else if (guard < 0) {
                errors++;              /* said at this place already */
            } else if (!guard && !s->opts->body_errors && inside_body(&bodies, clang_getDiagnosticLocation(d))) {
                char *e = strstr(msg, ": error: ");
                if (print != 1)
                    ;                  /* not printed, or printed by the parse before */
                else if (e) {
                    char *w = ks_xasprintf("%.*s: warning: %s [in a function body: kstub reads signatures, "
                                           "bodies are nvcc's to check; --body-errors makes this an error]",
                                           (int)(e - msg), msg, e + 9);
                    ks_diag_line(w);
                    free(w);
                } else {
                    ks_diag_line(msg);
                }
            } else {
                if (print) {
                    ks_diag_line(msg);
                    ks_count_error();
                    char *what = ks_take(clang_getDiagnosticSpelling(d));   /* for --format=json/github */
                    ks_error_keep(file && file[0] ? file : NULL, file && file[0] ? line : 0, col, what);
                    free(what);
                }
                errors++;
            }
            free(file);
            free(msg);
        }
        clang_disposeDiagnostic(d);
    }
    free(bodies.b);
    free(bodies.seen);
    ks_fileguard_said_free(&said);
    return errors;
}

/* The session whose translation unit used the prelude, for ks_session_prelude_files. */
static const ks_session *prelude_session;

/* KSTUB_DEBUG_PCH=1 says "parse N" for each parse of the input, a parse
 * again included (tests count them: a file with errors of its own is
 * parsed once, one with explicit instantiations once where oneparse.c
 * can read them from that parse). */
static void count_parse(const char *how)
{
    static unsigned parses;
    ks_prelude_debug("parse %u of the input, %s", ++parses, how);
}

/* Whether an error of the parse with the prelude could be the prelude's
 * doing, so that a parse without it could differ: an error with no place
 * (libclang's own refusals of a PCH), one inside the prelude's files or
 * the compat header, or one that speaks of the PCH. An error in the
 * input or a header of its own is the file's: the parse without the
 * prelude would say the same, and only cost the time of a second parse
 * (issue 19 #10). */
static int errors_could_be_the_preludes(const ks_session *s)
{
    int could = 0;
    for (unsigned i = 0, n = clang_getNumDiagnostics(s->tu); i < n && !could; i++) {
        CXDiagnostic d = clang_getDiagnostic(s->tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error && !ks_redecl_nvcc_merges(s->tu, d)) {
            CXFile f = NULL;
            clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, NULL, NULL, NULL);
            char *name = f ? ks_take(clang_getFileName(f)) : NULL;
            could = !name || !name[0] || strcmp(name, KS_COMPAT_PATH) == 0 || strcmp(name, KS_PRELUDE_PATH) == 0;
            for (size_t j = 0; !could && j < s->prelude.nfiles; j++)
                could = strcmp(name, s->prelude.files[j]) == 0;
            free(name);
            char *msg = ks_take(clang_getDiagnosticSpelling(d));
            could = could || strstr(msg, "PCH") || strstr(msg, "precompiled") || strstr(msg, "AST file") ||
                    strstr(msg, "module file");
            free(msg);
        }
        clang_disposeDiagnostic(d);
    }
    return could;
}

size_t ks_session_prelude_files(CXTranslationUnit tu,
                                void (*fn)(const char *path, int is_system, void *data), void *data)
{
    const ks_session *s = prelude_session;
    if (!s || !tu || s->tu != tu)
        return 0;
    for (size_t i = 0; i < s->prelude.nfiles; i++)
        fn(s->prelude.files[i], s->prelude.is_system[i], data);
    return s->prelude.nfiles;
}

typedef struct reentry_ctx {
    const ks_prelude *p;
    int found;
} reentry_ctx;

/* A header the input includes directly that is one of the prelude's
 * leading includes and was entered again: it has no working guard, and the
 * parse with the prelude is not the parse without it. */
static void find_reentry(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    (void)stack;
    reentry_ctx *r = data;
    if (depth != 1 || r->found)
        return;
    char *path = ks_take(clang_getFileName(file));
    const char *base = ks_basename(path);
    for (size_t i = 0; i < r->p->nleading; i++)
        if (strcmp(base, ks_basename(r->p->leading[i])) == 0)
            for (size_t j = 0; j < r->p->nfiles && !r->found; j++)
                if (strcmp(path, r->p->files[j]) == 0) {
                    ks_prelude_debug("'%s' was entered again", path);
                    r->found = 1;
                }
    free(path);
}

enum { PRELUDE_USED, PRELUDE_NONE, PRELUDE_REFUSED };

/*
 * Parses with the precompiled prelude: the arguments less the compat
 * -include (the PCH holds it), plus -include-pch of the verified PCH. The
 * index leaves the PCH's declarations out of the cursor walk (none of them
 * is the input's). PRELUDE_USED with s->tu set and nothing printed (its
 * errors, when it has some, are the file's own); PRELUDE_NONE when there
 * is no prelude to use; PRELUDE_REFUSED when libclang refused it or the
 * parse had errors the prelude may have caused: the caller parses without it
 * (which reports the file's own errors as always) and decides whether the
 * entry was at fault.
 */
static int parse_with_prelude(ks_session *s, const char *text, size_t len, struct CXUnsavedFile *unsaved,
                              unsigned nunsaved, unsigned flags)
{
    const ks_options *opts = s->opts;
    char **leading = NULL;
    char *blanked = text ? ks_xmalloc(len + 1) : NULL;
    if (blanked) {
        memcpy(blanked, text, len);
        blanked[len] = '\0';
    }
    size_t nleading = text ? ks_prelude_leading(text, len, &leading, blanked) : 0;
    if (ks_prelude_open(&s->prelude, opts, s->args, s->nargs, s->nuser, leading, nleading) != 0) {
        free(blanked);
        return PRELUDE_NONE;
    }
    /* The input as the parse with the prelude reads it: its leading
     * includes, which the prelude holds, blanked. The tokens are then the
     * parse's without it, in the same order and state, whether or not a
     * header has a guard; every line and column stays. */
    struct CXUnsavedFile files[2] = {unsaved[0], {opts->input, blanked, (unsigned long)len}};
    nleading = s->prelude.nleading;     /* none where a layer would not pay (prelude_seen.c) */
    if (nleading) {
        for (unsigned i = 0; i < nunsaved; i++)
            if (strcmp(unsaved[i].Filename, opts->input) != 0)
                files[0] = unsaved[i];
        unsaved = files;
        nunsaved = 2;
        s->owned = ks_xrealloc(s->owned, (s->nowned + 1) * sizeof *s->owned);
        s->owned[s->nowned++] = blanked;       /* libclang may read it until the session ends */
    } else {
        free(blanked);
    }
    const char **args = ks_xmalloc((s->nargs + 2) * sizeof *args);
    size_t n = 0;
    for (size_t i = 0; i < s->nargs; i++) {
        if (strcmp(s->args[i], "-include") == 0 && i + 1 < s->nargs && strcmp(s->args[i + 1], KS_COMPAT_PATH) == 0) {
            i++;
            continue;
        }
        args[n++] = s->args[i];
    }
    args[n++] = "-include-pch";
    args[n++] = s->prelude.pch_arg;
    s->index = clang_createIndex(s->local_decls, 0);
    count_parse("with the prelude");
    ks_fileguard_parse_begin(s->prelude.files, s->prelude.nfiles);   /* read before the input */
    enum CXErrorCode ec = clang_parseTranslationUnit2(s->index, opts->input, args, (int)n, unsaved, nunsaved,
                                                      flags, &s->tu);
    free(args);
    reentry_ctx r = {&s->prelude, 0};
    if (ec == CXError_Success && s->tu) {
        clang_getInclusions(s->tu, find_reentry, &r);
        if (!r.found && (report_diagnostics(s, 0) == 0 || !errors_could_be_the_preludes(s))) {
            prelude_session = s;
            return PRELUDE_USED;
        }
    }
    ks_file_top_forget();      /* nothing of the unit outlives it */
    ks_source_forget_unit();
    if (s->tu)
        clang_disposeTranslationUnit(s->tu);
    clang_disposeIndex(s->index);
    s->tu = NULL;
    s->index = NULL;
    /* A header without a guard is no fault of the entry: keep it. */
    ks_prelude_debug("%s: parsing without it", r.found ? "a leading include was entered again"
                     : ec != CXError_Success ? "libclang refused the parse" : "the parse with it has errors");
    return r.found ? PRELUDE_NONE : PRELUDE_REFUSED;
}

/* The translation unit and its index gone, and the prelude it used closed. */
static void drop_parse(ks_session *s)
{
    /* The translation unit must go before the index that owns it. */
    ks_file_top_forget();
    ks_source_forget_unit();
    if (s->tu)
        clang_disposeTranslationUnit(s->tu);
    if (s->index)
        clang_disposeIndex(s->index);
    s->tu = NULL;
    s->index = NULL;
    if (prelude_session == s)
        prelude_session = NULL;
    ks_prelude_close(&s->prelude);
}

/* After a parse with errors in headers the input never includes, at an
 * expansion of one of its -D/-U (latedefs.c): those given after clang's
 * CUDA wrapper from now on, with a note. 1 when moved (parse again). */
static int move_defines(ks_session *s)
{
    const ks_options *opts = s->opts;
    unsigned char *move = ks_xmalloc(opts->ndefines);
    char where[PATH_MAX + 64];
    if (!ks_latedefs_find(s->tu, opts->input, opts->defines, opts->ndefines, move, where, sizeof where)) {
        free(move);
        return 0;
    }
    s->late = ks_latedefs_text(opts->defines, opts->ndefines, move);
    ks_buf names = {0};
    size_t n = 0, moved = 0;
    const char **args = ks_xmalloc((s->nargs + 2) * sizeof *args);
    for (size_t i = 0; i < s->nargs; i++) {
        int skip = 0;
        for (size_t j = 0; j < opts->ndefines; j++)
            if (move[j] && s->args[i] == opts->defines[j])
                skip = 1;
        if (skip) {
            ks_buf_printf(&names, "%s'%s'", moved++ ? ", " : "", s->args[i]);
            continue;
        }
        if (strcmp(s->args[i], "-include") == 0 && i + 1 < s->nargs && strcmp(s->args[i + 1], KS_COMPAT_PATH) == 0) {
            args[n++] = "-include";             /* before the compat header, after the wrapper */
            args[n++] = KS_LATEDEFS_PATH;
        }
        args[n++] = s->args[i];
    }
    free(s->args);
    s->args = args;
    s->nargs = n;
    s->nuser -= moved;                          /* they were the input's own, last */
    char *list = ks_buf_take(&names);
    ks_note_at(opts->input, 0, 0, "%s break%s %s, in a header clang's CUDA wrapper includes and nvcc's "
               "cuda_runtime.h does not, which this file never includes: %s given after the wrapper, "
               "for this file and what it includes", list, moved == 1 ? "s" : "", where,
               moved == 1 ? "it is" : "they are");
    free(list);
    free(move);
    return 1;
}

/* One parse of the input with these flags: with the prelude when it can be
 * used, else without it. scan is the input's text (for its leading
 * includes). 0, or -1 after reporting errors. */
static int parse(ks_session *s, const char *scan, size_t scan_len, struct CXUnsavedFile *unsaved,
                 unsigned nunsaved, unsigned flags)
{
    const ks_options *opts = s->opts;
    struct CXUnsavedFile files[3], *given = unsaved;
    unsigned ngiven = nunsaved;
    if (s->late) {                  /* its header given, and no prelude: built without it */
        memcpy(files, unsaved, nunsaved * sizeof *files);
        files[nunsaved++] = (struct CXUnsavedFile){KS_LATEDEFS_PATH, s->late, (unsigned long)strlen(s->late)};
        unsaved = files;
    }
    int pre = s->late ? PRELUDE_NONE : parse_with_prelude(s, scan, scan_len, unsaved, nunsaved, flags);
    if (pre == PRELUDE_USED)
        return report_diagnostics(s, s->quiet ? 2 : 1) ? -1 : 0;
    s->index = clang_createIndex(s->local_decls, 0);
    count_parse("without the prelude");
    ks_fileguard_parse_begin(NULL, 0);
    enum CXErrorCode ec = clang_parseTranslationUnit2(s->index, opts->input, s->args, (int)s->nargs,
                                                      unsaved, nunsaved, flags, &s->tu);
    if (ec != CXError_Success || !s->tu) {
        ks_error_at(opts->input, 0, 0, "libclang could not parse the file (error %d)", (int)ec);
        s->tu = NULL;
        ks_prelude_close(&s->prelude);
        return -1;
    }
    if (!s->late && opts->ndefines && report_diagnostics(s, 0) && move_defines(s)) {
        drop_parse(s);
        return parse(s, scan, scan_len, given, ngiven, flags);
    }
    int errors = report_diagnostics(s, s->quiet ? 2 : 1);
    /* The prelude failed where a parse without it succeeds: the entry was
     * at fault (another libclang's, stale headers, damage libclang found). */
    if (pre == PRELUDE_REFUSED && errors == 0)
        ks_prelude_rebuild(&s->prelude, opts);
    ks_prelude_close(&s->prelude);
    return errors ? -1 : 0;
}

/* ---- --skip-bodies: only where no body can change the output ------------------------------ */

/*
 * A parse without function bodies finds every kernel definition, explicit
 * instantiation and parameter, but two things kstub reads from bodies:
 *
 *  - template kernels instantiated by a launch or an address use
 *    (k<float><<<g, b>>>(...), &k<int>), in host and device bodies and the
 *    bodies of the function templates those call (walk.c's find_launches);
 *  - whether a kernel, or a function it calls, uses an extern __shared__
 *    array (walk.c's uses_dynamic_shared: no <name>_n then).
 *
 * So bodies are skipped only where neither can occur: the input's text has
 * no template kernel ("template" and "__global__" anywhere in it) and no
 * "shared" in any spelling (case aside: __shared__, __attribute__((shared)),
 * a macro named so), else it is parsed with bodies at once; and the parse
 * without bodies shows no template kernel outside system headers, and no
 * "shared" in a project header's text or a -D (else it is parsed again with
 * bodies). Under --kernels-in naming headers a system header may count, so
 * there system headers are looked at for template kernels too. Anything new
 * that reads a body must add its test here.
 */
static int has_shared(const char *text, size_t len)
{
    for (size_t i = 0; i + 6 <= len; i++)
        if ((text[i] | 0x20) == 's' && strncasecmp(text + i, "shared", 6) == 0)
            return 1;
    return 0;
}

static int text_needs_bodies(const char *text, size_t len)
{
    /* the words anywhere, comments and literals included: no reading of
     * the text can miss one */
    return has_shared(text, len) ||
           (memmem(text, len, "template", 8) && memmem(text, len, "__global__", 10));
}

static enum CXChildVisitResult find_template_kernel(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    int *found = data;   /* in: 1 when system headers count; out: 2 when one was found */
    if (*found == 0 && clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
        return CXChildVisit_Continue;
    switch (clang_getCursorKind(c)) {
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
    case CXCursor_ClassDecl:
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
    case CXCursor_ClassTemplate:
    case CXCursor_FriendDecl:
        return CXChildVisit_Recurse;
    case CXCursor_FunctionTemplate:
        if (ks_cursor_is_kernel(c)) {
            *found = 2;
            return CXChildVisit_Break;
        }
        return CXChildVisit_Continue;
    default:
        return CXChildVisit_Continue;
    }
}

typedef struct shared_ctx {
    CXTranslationUnit tu;
    int found;
} shared_ctx;

/* A header (not a system one, not the compat header) whose text says "shared". */
static void find_shared_header(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    (void)stack;
    shared_ctx *sc = data;
    if (depth == 0 || sc->found || clang_Location_isInSystemHeader(clang_getLocation(sc->tu, file, 1, 1)))
        return;
    char *name = ks_take(clang_getFileName(file));
    int compat = strcmp(name, KS_COMPAT_PATH) == 0;
    free(name);
    size_t size = 0;
    const char *text = compat ? NULL : clang_getFileContents(sc->tu, file, &size);
    sc->found = text && has_shared(text, size);
}

/* After a parse without bodies: whether one with them could differ. */
static int tu_needs_bodies(const ks_session *s)
{
    for (size_t i = 0; i < s->opts->ndefines; i++)
        if (has_shared(s->opts->defines[i], strlen(s->opts->defines[i])))
            return 1;
    int found = s->opts->kernels_in == KS_KERNELS_NAMED;
    clang_visitChildren(clang_getTranslationUnitCursor(s->tu), find_template_kernel, &found);
    if (found == 2)
        return 1;
    shared_ctx sc = {s->tu, 0};
    clang_getInclusions(s->tu, find_shared_header, &sc);
    return sc.found;
}

/* KSTUB_DEBUG_ARGS=DIR: the parse's arguments written to DIR/args, one a
 * line, and the compat header to DIR/compat.h, which the -include among
 * them then names: clang -fsyntax-only with them parses the file as kstub
 * does without the prelude (bench/generator.py's parse floor). */
static void debug_args(const ks_session *s)
{
    const char *dir = getenv("KSTUB_DEBUG_ARGS");
    if (!dir || !dir[0])
        return;
    char *hpath = ks_xasprintf("%s/compat.h", dir), *apath = ks_xasprintf("%s/args", dir);
    size_t clen;
    const char *compat = ks_compat_header(&clen);
    FILE *h = fopen(hpath, "w"), *a = fopen(apath, "w");
    if (h)
        fwrite(compat, 1, clen, h);
    for (size_t i = 0; a && i < s->nargs; i++)
        fprintf(a, "%s\n", strcmp(s->args[i], KS_COMPAT_PATH) == 0 ? hpath : s->args[i]);
    if ((h && fclose(h) != 0) | (a && fclose(a) != 0) || !h || !a)
        fprintf(stderr, "kstub: KSTUB_DEBUG_ARGS: cannot write %s or %s\n", apath, hpath);
    free(hpath);
    free(apath);
}

int ks_session_open(ks_session *s, const ks_options *opts, const char *text, size_t len)
{
    int local_decls = s->local_decls, quiet = s->quiet;
    const size_t *probes = s->probes;
    size_t nprobes = s->nprobes;
    memset(s, 0, sizeof *s);
    s->opts = opts;
    s->local_decls = local_decls;
    s->quiet = quiet;
    s->probes = probes;
    s->nprobes = nprobes;
    s->prelude.fd = s->prelude.dirfd = -1;
    if (build_args(s) != 0)
        return -1;
    debug_args(s);
    size_t clen;
    const char *compat = ks_compat_header(&clen);
    struct CXUnsavedFile unsaved[2] = {{KS_COMPAT_PATH, compat, (unsigned long)clen},
                                       {opts->input, text, (unsigned long)len}};
    unsigned nunsaved = text ? 2 : 1;
    const char *scan = text;
    size_t scan_len = len;
    char *own_text = NULL;
    if (!scan)
        scan = own_text = ks_read_file(opts->input, &scan_len);
    unsigned flags = CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord;
    int skip = opts->skip_bodies && scan && !text_needs_bodies(scan, scan_len);
    int rc = parse(s, scan, scan_len, unsaved, nunsaved,
                   flags | (skip ? CXTranslationUnit_SkipFunctionBodies : 0));
    if (rc == 0 && skip && tu_needs_bodies(s)) {
        ks_prelude_debug("a header's template kernel or shared memory: parsing again with function bodies");
        drop_parse(s);
        rc = parse(s, scan, scan_len, unsaved, nunsaved, flags);
    }
    free(own_text);
    return rc;
}

static int reparse(ks_session *s, const char *text, size_t len, int print)
{
    size_t clen;
    const char *compat = ks_compat_header(&clen);
    struct CXUnsavedFile unsaved[3] = {{KS_COMPAT_PATH, compat, (unsigned long)clen},
                                       {s->opts->input, text, (unsigned long)len},
                                       {KS_LATEDEFS_PATH, s->late, s->late ? (unsigned long)strlen(s->late) : 0}};
    count_parse("again, with what kstub writes in");
    /* The unit keeps its handle but not its files: a first byte looked up before the
     * reparse points into the source manager it frees (filetop.c), and a CXFile's
     * address may come back as another file's. */
    size_t forgot = ks_file_top_forget();
    ks_source_forget_unit();
    ks_prelude_debug("parsing again: %zu files' first bytes forgotten", forgot);
    int rc = clang_reparseTranslationUnit(s->tu, s->late ? 3 : 2, unsaved, clang_defaultReparseOptions(s->tu));
    if (rc != 0) {
        ks_error_at(s->opts->input, 0, 0, "libclang could not parse the file again (error %d)", rc);
        return -1;
    }
    return report_diagnostics(s, print) ? -1 : 0;
}

int ks_session_reparse(ks_session *s, const char *text, size_t len)
{
    return reparse(s, text, len, 1);
}

int ks_session_reparse_quiet(ks_session *s, const char *text, size_t len)
{
    return reparse(s, text, len, 2);
}

void ks_session_close(ks_session *s)
{
    drop_parse(s);
    ks_probe_errors_free(&s->probe_errors, &s->nprobe_errors);
    for (size_t i = 0; i < s->nowned; i++)
        free(s->owned[i]);
    free(s->owned);
    free(s->args);
    free(s->late);
    memset(s, 0, sizeof *s);
}
