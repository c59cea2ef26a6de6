/*
 * check_abi.c — the ABI oracle: for every .cu file named on the command
 * line, compiles it with `nvcc -ptx -arch=sm_90`, runs `kstub --manifest`
 * on it, and checks that each kernel in the manifest packs its parameters
 * exactly as nvcc's PTX `.entry` declares them: same count, and per
 * parameter the same size, alignment and offset. It also checks that every
 * `.entry` in the PTX has a kernel in the manifest (kstub found them all).
 *
 *   KSTUB=build/bin/kstub NVCC=nvcc build/tests/check_abi FILE.cu...
 *
 * One test case per input file, named after it, so a failure names the file;
 * the message lists every mismatch of that file (kernel, parameter index and
 * name, nvcc's value and kstub's). The PTX parser and the comparison have
 * their own unit tests on literal snippets, including mismatches the oracle
 * must catch.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbol.h"

#define ABI_ARCH "sm_90"

/* ---- a growable message buffer --------------------------------------------------------- */

typedef struct msgbuf {
    char *data;
    size_t len, cap;
} msgbuf;

static void msg_add(msgbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg_add(msgbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->data = realloc(b->data, b->cap);
        ck_assert_ptr_nonnull(b->data);
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* ---- the PTX entry parser ---------------------------------------------------------------- */

typedef struct ptx_param {
    char *name;
    long size;         /* bytes */
    long align;        /* bytes */
    long offset;       /* bytes from the start of the parameter buffer */
} ptx_param;

typedef struct ptx_entry {
    char *symbol;
    bool external;     /* .visible or .weak: a kernel other files can launch */
    bool toolkit;      /* a library's kernel (CUB, Thrust) instantiated from a toolkit header */
    ptx_param *params;
    size_t nparams;
} ptx_entry;

typedef struct ptx_module {
    ptx_entry *entries;
    size_t nentries;
} ptx_module;

typedef struct ptx_lexer {
    const char *p;     /* comment-free copy of the text */
    unsigned line;
    char tok[256];
} ptx_lexer;

/* A copy of text with // and block comments blanked out (newlines kept, so
 * line numbers stay right); string literals (.file names) are left alone. */
static char *ptx_strip_comments(const char *text)
{
    char *s = strdup(text), *p = s;
    while (*p) {
        if (*p == '"') {
            for (p++; *p && *p != '"' && *p != '\n'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (*p == '"')
                p++;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
        } else if (p[0] == '/' && p[1] == '*') {
            for (; *p && !(p[0] == '*' && p[1] == '/'); p++)
                if (*p != '\n')
                    *p = ' ';
            if (*p)
                p[0] = p[1] = ' ', p += 2;
        } else {
            p++;
        }
    }
    return s;
}

static bool ptx_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c == '%';
}

/* The next token into lx->tok: a directive (".param"), an identifier or
 * number, a string, or one punctuation character. Returns false at the end. */
static bool ptx_next(ptx_lexer *lx)
{
    for (; *lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r' || *lx->p == '\n'; lx->p++)
        if (*lx->p == '\n')
            lx->line++;
    if (!*lx->p)
        return false;
    const char *start = lx->p;
    if (*lx->p == '"') {
        for (lx->p++; *lx->p && *lx->p != '"' && *lx->p != '\n'; lx->p++)
            if (*lx->p == '\\' && lx->p[1])
                lx->p++;
        if (*lx->p == '"')
            lx->p++;
    } else if (*lx->p == '.' || ptx_ident_char(*lx->p)) {
        for (lx->p++; ptx_ident_char(*lx->p); lx->p++)
            ;
    } else {
        lx->p++;
    }
    size_t n = (size_t)(lx->p - start);
    if (n >= sizeof lx->tok)
        n = sizeof lx->tok - 1;
    memcpy(lx->tok, start, n);
    lx->tok[n] = '\0';
    return true;
}

static bool ptx_number(const char *tok, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(tok, &end, 10);
    if (errno || end == tok || *end || v <= 0)
        return false;
    *out = v;
    return true;
}

/* The width in bytes of a fundamental type directive (.u8 … .f64, .b128), or 0. */
static long ptx_type_bytes(const char *tok)
{
    if (tok[0] != '.' || !strchr("usbf", tok[1]))
        return 0;
    if (!strcmp(tok + 2, "8"))
        return 1;
    if (!strcmp(tok + 2, "16"))
        return 2;
    if (!strcmp(tok + 2, "32"))
        return 4;
    if (!strcmp(tok + 2, "64"))
        return 8;
    if (!strcmp(tok + 2, "128") && tok[1] == 'b')
        return 16;
    return 0;
}

#define PTX_FAIL(...) (snprintf(err, errlen, __VA_ARGS__), false)

/* Parses one parameter, lx positioned after ".param"; stops at ',' or ')'
 * (left in lx->tok). Forms: ".param .u32 n", ".param .align 8 .b8 n[24]",
 * ".param .u64 .ptr .global .align 4 n" (that .align is the pointee's). */
static bool ptx_parse_param(ptx_lexer *lx, ptx_param *out, char *err, size_t errlen)
{
    long align = 0, elem = 0, count = 1;
    bool ptr = false;
    out->name = NULL;
    while (ptx_next(lx)) {
        const char *t = lx->tok;
        long n;
        if (!strcmp(t, ",") || !strcmp(t, ")")) {
            if (!out->name)
                return PTX_FAIL("line %u: parameter without a name", lx->line);
            out->size = elem * count;
            out->align = align ? align : elem;
            return true;
        } else if (!strcmp(t, ".align")) {
            if (!ptx_next(lx) || !ptx_number(lx->tok, &n))
                return PTX_FAIL("line %u: .align without a number", lx->line);
            if (!elem)
                align = n;          /* the parameter's own alignment */
            else if (!ptr)
                return PTX_FAIL("line %u: .align after the type", lx->line);
        } else if (!strcmp(t, ".ptr")) {
            if (!elem)
                return PTX_FAIL("line %u: .ptr before the type", lx->line);
            ptr = true;
        } else if (!strcmp(t, ".global") || !strcmp(t, ".const") || !strcmp(t, ".shared") ||
                   !strcmp(t, ".local")) {
            if (!ptr)
                return PTX_FAIL("line %u: state space %s without .ptr", lx->line, t);
        } else if (ptx_type_bytes(t)) {
            if (elem)
                return PTX_FAIL("line %u: second type %s", lx->line, t);
            elem = ptx_type_bytes(t);
        } else if (!strcmp(t, "[")) {
            if (!out->name || !ptx_next(lx) || !ptx_number(lx->tok, &n) || !ptx_next(lx) ||
                strcmp(lx->tok, "]"))
                return PTX_FAIL("line %u: bad array size", lx->line);
            count *= n;
        } else if (t[0] != '.' && ptx_ident_char(t[0]) && !(t[0] >= '0' && t[0] <= '9')) {
            if (!elem || out->name)
                return PTX_FAIL("line %u: unexpected name '%s'", lx->line, t);
            out->name = strdup(t);
        } else {
            return PTX_FAIL("line %u: unexpected '%s' in a parameter", lx->line, t);
        }
    }
    return PTX_FAIL("line %u: parameter list not closed", lx->line);
}

static void ptx_free(ptx_module *m)
{
    for (size_t i = 0; i < m->nentries; i++) {
        for (size_t j = 0; j < m->entries[i].nparams; j++)
            free(m->entries[i].params[j].name);
        free(m->entries[i].params);
        free(m->entries[i].symbol);
    }
    free(m->entries);
    m->entries = NULL;
    m->nentries = 0;
}

/* Parses every `.entry` (with or without .visible/.weak) of a PTX text and
 * lays its parameters out: each offset is the running size aligned up. On a
 * malformed declaration returns false with a message in err. */
static bool ptx_parse(const char *text, ptx_module *m, char *err, size_t errlen)
{
    char *clean = ptx_strip_comments(text);
    ptx_lexer lx = {clean, 1, ""};
    bool ok = true;
    m->entries = NULL;
    m->nentries = 0;
    bool external = false;    /* the directive before .entry */
    while (ok && ptx_next(&lx)) {
        if (strcmp(lx.tok, ".entry")) {
            external = !strcmp(lx.tok, ".visible") || !strcmp(lx.tok, ".weak");
            continue;
        }
        if (!ptx_next(&lx) || !ptx_ident_char(lx.tok[0])) {
            ok = PTX_FAIL("line %u: .entry without a name", lx.line);
            break;
        }
        m->entries = realloc(m->entries, (m->nentries + 1) * sizeof *m->entries);
        ptx_entry *e = &m->entries[m->nentries++];
        e->symbol = strdup(lx.tok);
        e->external = external;
        e->toolkit = false;
        external = false;
        e->params = NULL;
        e->nparams = 0;
        const char *after_name = lx.p;
        unsigned line = lx.line;
        if (!ptx_next(&lx) || strcmp(lx.tok, "(")) {
            lx.p = after_name;      /* ".entry k {": no parameter list at all */
            lx.line = line;
            continue;
        }
        long end = 0;
        for (;;) {
            if (!ptx_next(&lx)) {
                ok = PTX_FAIL("line %u: parameter list of %s not closed", lx.line, e->symbol);
                break;
            }
            if (!strcmp(lx.tok, ")") && e->nparams == 0)
                break;
            if (strcmp(lx.tok, ".param")) {
                ok = PTX_FAIL("line %u: expected .param in %s, found '%s'", lx.line, e->symbol,
                              lx.tok);
                break;
            }
            e->params = realloc(e->params, (e->nparams + 1) * sizeof *e->params);
            ptx_param *p = &e->params[e->nparams++];
            p->name = NULL;
            if (!(ok = ptx_parse_param(&lx, p, err, errlen)))
                break;
            p->offset = (end + p->align - 1) / p->align * p->align;
            end = p->offset + p->size;
            if (!strcmp(lx.tok, ")"))
                break;
        }
    }
    free(clean);
    if (!ok) {
        ptx_free(m);
        return ok;
    }
    /* A kernel launched from the device is declared before its definition
     * (".weak .entry k (...)" then ".weak .entry k(...) {"): one kernel. */
    size_t kept = 0;
    for (size_t i = 0; i < m->nentries; i++) {
        size_t j = 0;
        while (j < kept && strcmp(m->entries[j].symbol, m->entries[i].symbol))
            j++;
        if (j < kept) {
            free(m->entries[i].symbol);
            for (size_t p = 0; p < m->entries[i].nparams; p++)
                free(m->entries[i].params[p].name);
            free(m->entries[i].params);
        } else {
            m->entries[kept++] = m->entries[i];
        }
    }
    m->nentries = kept;
    return ok;
}

/* The entry \p symbol names: itself, or for a pattern (internal linkage,
 * common/symbol.h) the one entry it matches; *nmatch says how many did. */
static const ptx_entry *ptx_find(const ptx_module *m, const char *symbol, size_t *nmatch)
{
    const ptx_entry *found = NULL;
    *nmatch = 0;
    for (size_t i = 0; i < m->nentries; i++)
        if (ks__symbol_match(symbol, m->entries[i].symbol, 0)) {
            found = found ? found : &m->entries[i];
            ++*nmatch;
        }
    return found;
}

/* ---- the comparison ---------------------------------------------------------------------- */

static const char *json_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "?";
}

/* Compares a manifest's "kernels" array against the PTX, appending one line
 * per mismatch to msg ("expected" is nvcc's value, "actual" kstub's).
 * Returns the number of mismatches. */
static int abi_compare(const char *file, const ptx_module *ptx, const json_t *kernels, msgbuf *msg)
{
    int bad = 0;
    size_t nk = json_array_size(kernels);
    for (size_t k = 0; k < nk; k++) {
        const json_t *kern = json_array_get(kernels, k);
        const char *name = json_str(kern, "name"), *sym = json_str(kern, "symbol");
        const json_t *params = json_object_get(kern, "params");
        size_t nmatch;
        const ptx_entry *e = ptx_find(ptx, sym, &nmatch);
        for (size_t j = 0; j < k; j++)
            if (!strcmp(sym, json_str(json_array_get(kernels, j), "symbol"))) {
                msg_add(msg, "%s: kernel %s: symbol %s appears twice in the manifest\n", file,
                        name, sym);
                bad++;
            }
        if (!e) {
            msg_add(msg, "%s: kernel %s: no .entry %s in nvcc's PTX\n", file, name, sym);
            bad++;
            continue;
        }
        if (nmatch > 1) {
            msg_add(msg, "%s: kernel %s: %s matches %zu .entry lines in nvcc's PTX\n", file, name, sym,
                    nmatch);
            bad++;
            continue;
        }
        if (!json_is_array(params) || json_array_size(params) != e->nparams) {
            msg_add(msg, "%s: kernel %s (%s): parameter count: expected %zu (nvcc), actual %zu (kstub)\n",
                    file, name, sym, e->nparams, json_array_size(params));
            bad++;
            continue;
        }
        for (size_t i = 0; i < e->nparams; i++) {
            const json_t *p = json_array_get(params, i);
            static const char *const fields[] = {"size", "align", "offset"};
            const long want[] = {e->params[i].size, e->params[i].align, e->params[i].offset};
            for (size_t f = 0; f < 3; f++) {
                const json_t *v = json_object_get(p, fields[f]);
                if (json_is_integer(v) && json_integer_value(v) == want[f])
                    continue;
                msg_add(msg, "%s: kernel %s (%s): parameter %zu '%s' (%s): %s: expected %ld (nvcc), "
                        "actual %s%lld (kstub)\n", file, name, sym, i, json_str(p, "name"),
                        json_str(p, "type"), fields[f], want[f], json_is_integer(v) ? "" : "missing ",
                        json_is_integer(v) ? (long long)json_integer_value(v) : 0LL);
                bad++;
            }
        }
    }
    for (size_t i = 0; i < ptx->nentries; i++) {
        if (ptx->entries[i].toolkit)
            continue;     /* the toolkit's own kernel: not the project's (--kernels-in) */
        size_t k = 0;
        while (k < nk && !ks__symbol_match(json_str(json_array_get(kernels, k), "symbol"), ptx->entries[i].symbol, 0))
            k++;
        if (k == nk) {
            msg_add(msg, "%s: .entry %s (%zu parameters) in nvcc's PTX has no kernel in kstub's manifest\n",
                    file, ptx->entries[i].symbol, ptx->entries[i].nparams);
            bad++;
        }
    }
    return bad;
}

/* ---- running nvcc and kstub -------------------------------------------------------------- */

/* ---- device variables: the .const/.global declarations -------------------------------- */

typedef struct ptx_var {
    char symbol[512];
    long size, align;
    bool matched;
} ptx_var;

/* Every module-scope ".const"/".global" declaration of a PTX text (its
 * symbol, size: elements times the type's bytes, and alignment: .align or
 * the type's size), leaving out nvcc's own ($str...) and the per-compilation
 * internal names (_INTERNAL_, __nv_static_), which kstub gives no accessors.
 * Returns how many (at most max). */
static size_t ptx_vars(const char *text, ptx_var *out, size_t max)
{
    size_t n = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char buf[1024];
        size_t len = strcspn(line, "\n");
        if (len >= sizeof buf)
            continue;
        memcpy(buf, line, len);
        buf[len] = '\0';
        char *save = NULL, *tok = strtok_r(buf, " \t;", &save);
        bool is_var = false;
        long align = 0, elem = 0;
        while (tok && (!strcmp(tok, ".visible") || !strcmp(tok, ".weak") || !strcmp(tok, ".common")))
            tok = strtok_r(NULL, " \t;", &save);
        if (!tok || (strcmp(tok, ".global") && strcmp(tok, ".const")))
            continue;
        char *name = NULL;
        while ((tok = strtok_r(NULL, " \t;", &save)) != NULL) {
            if (!strcmp(tok, ".align")) {
                tok = strtok_r(NULL, " \t;", &save);
                align = tok ? strtol(tok, NULL, 10) : 0;
            } else if (!strncmp(tok, ".attribute", 10)) {
                continue;
            } else if (tok[0] == '.') {
                elem = ptx_type_bytes(tok);
            } else {
                name = tok;
                is_var = true;
                break;
            }
        }
        if (!is_var || !name || name[0] == '$' || !strncmp(name, "__unnamed_", 10) || strstr(name, "_INTERNAL_") || strstr(name, "__nv_static_") ||
            n == max)
            continue;
        long count = 1;
        char *br = strchr(name, '[');
        if (br) {
            count = strtol(br + 1, NULL, 10);
            *br = '\0';
        }
        char *eq = strchr(name, '=');
        if (eq)
            *eq = '\0';
        ptx_var *v = &out[n++];
        snprintf(v->symbol, sizeof v->symbol, "%s", name);
        v->size = count * elem;
        v->align = align ? align : elem;
        v->matched = false;
    }
    return n;
}

/* Compares a manifest's "variables" with the PTX's declarations: each one
 * kstub lists must be declared with its size and alignment, and each one
 * declared must be listed. One line per mismatch; returns their count. */
static int abi_compare_vars(const char *file, ptx_var *pv, size_t npv, const json_t *vars, msgbuf *msg)
{
    int bad = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(vars, i, v) {
        const char *sym = json_string_value(json_object_get(v, "symbol"));
        long size = (long)json_integer_value(json_object_get(v, "size"));
        long align = (long)json_integer_value(json_object_get(v, "align"));
        ptx_var *hit = NULL;
        for (size_t j = 0; sym && j < npv && !hit; j++)
            if (!strcmp(pv[j].symbol, sym))
                hit = &pv[j];
        if (!hit) {
            msg_add(msg, "%s: variable %s: no .const/.global %s in nvcc's PTX\n", file, sym ? sym : "?",
                    sym ? sym : "?");
            bad++;
            continue;
        }
        hit->matched = true;
        if (hit->size != size || hit->align != align) {
            msg_add(msg, "%s: variable %s: kstub says %ld bytes %ld-aligned, nvcc's PTX %ld bytes "
                    "%ld-aligned\n", file, sym, size, align, hit->size, hit->align);
            bad++;
        }
    }
    for (size_t j = 0; j < npv; j++)
        if (!pv[j].matched) {
            msg_add(msg, "%s: .const/.global %s (%ld bytes) in nvcc's PTX has no variable in kstub's "
                    "manifest\n", file, pv[j].symbol, pv[j].size);
            bad++;
        }
    return bad;
}

static const char *g_kstub, *g_nvcc;   /* from $KSTUB, $NVCC */
static char g_tmp[PATH_MAX];           /* scratch directory, removed at exit */
static char **g_files;                 /* the .cu inputs */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* Runs argv with stdout and stderr in log; returns the exit status (or -1). */
static int run_tool(char *const argv[], const char *log)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0)
            _exit(126);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The tool's output for a failure message, cut to a readable length. */
static char *log_text(const char *log)
{
    char *s = read_file(log);
    if (!s || !*s) {
        free(s);
        return strdup("(no output)");
    }
    if (strlen(s) > 2000)
        strcpy(s + 1980, "\n[...]");
    return s;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* ---- per-file oracle test ---------------------------------------------------------------- */

/* Extra arguments a corpus file asks for in a comment line of its own,
 * "// abi-nvcc: -rdc=true" and "// abi-kstub: --rdc" (space-separated),
 * appended to argv (at most max in all). */
static void file_flags(const char *cu, const char *which, char **argv, size_t *argc, size_t max)
{
    char *text = read_file(cu);
    if (!text)
        return;
    char key[32];
    snprintf(key, sizeof key, "// abi-%s:", which);
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!strncmp(line, key, strlen(key))) {
            char *save = NULL;
            for (char *w = strtok_r(line + strlen(key), " \t", &save); w && *argc + 1 < max;
                 w = strtok_r(NULL, " \t", &save))
                argv[(*argc)++] = strdup(w);
        }
        line = next;
    }
    argv[*argc] = NULL;
    free(text);
}

/* The generated header on its own, as every caller's language compiles it
 * (issue 31 #7: a header that compiled as C broke C++ callers). */
static void header_compiles(const char *cu, const char *base, const char *log)
{
    static const char *const langs[][3] = {
        {"gcc", "c", "-std=c99"},       {"gcc", "c", "-std=c11"},
        {"gcc", "c", "-std=gnu17"},     {"clang", "c", "-std=c11"},
        {"g++", "c++", "-std=c++17"},   {"clang++", "c++", "-std=c++17"},
    };
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    char header[PATH_MAX + 40], cuda_inc[PATH_MAX];
    snprintf(header, sizeof header, "%s.h", base);
    snprintf(cuda_inc, sizeof cuda_inc, "-I%s/include", cuda);
    /* cuda.h (CUtensorMap, driver handles) has anonymous unions: C11 on. */
    char *text = read_file(header);
    ck_assert_msg(text != NULL, "%s: no generated header %s", cu, header);
    int needs_c11 = strstr(text, "#include <cuda.h>") != NULL;
    free(text);
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
        if (needs_c11 && strcmp(langs[i][2], "-std=c99") == 0)
            continue;
        char *argv[] = {(char *)langs[i][0], "-x", (char *)langs[i][1], (char *)langs[i][2],
                        "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-Iinclude/kstub", cuda_inc,
                        "-fsyntax-only", header, NULL};
        int rc = run_tool(argv, log);
        ck_assert_msg(rc == 0, "%s: the generated header does not compile with %s %s:\n%s", cu,
                      langs[i][0], langs[i][2], log_text(log));
    }
}

START_TEST(abi_matches_nvcc)
{
    const char *cu = g_files[_i];
    char ptx_path[PATH_MAX + 32], base[PATH_MAX + 32], json_path[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(ptx_path, sizeof ptx_path, "%s/%d.ptx", g_tmp, _i);
    snprintf(base, sizeof base, "%s/%d.kstub", g_tmp, _i);
    snprintf(json_path, sizeof json_path, "%s/%d.json", g_tmp, _i);
    snprintf(log, sizeof log, "%s/%d.log", g_tmp, _i);

    char *nvcc_argv[16] = {(char *)g_nvcc, "-ptx", "-arch=" ABI_ARCH, (char *)cu, "-o", ptx_path, NULL};
    size_t nn = 6, nk = 6;
    file_flags(cu, "nvcc", nvcc_argv, &nn, 16);
    int rc = run_tool(nvcc_argv, log);
    ck_assert_msg(rc == 0, "%s: %s -ptx -arch=" ABI_ARCH " failed (status %d):\n%s", cu, g_nvcc, rc,
                  log_text(log));
    char *kstub_argv[16] = {(char *)g_kstub, (char *)cu, "-o", base, "--manifest", json_path, NULL};
    file_flags(cu, "kstub", kstub_argv, &nk, 16);
    rc = run_tool(kstub_argv, log);
    ck_assert_msg(rc == 0, "%s: kstub rejected it (status %d):\n%s", cu, rc, log_text(log));

    char *text = read_file(ptx_path), err[256] = "";
    ck_assert_msg(text != NULL, "%s: cannot read nvcc's output %s", cu, ptx_path);
    static ptx_var pvars[256];
    size_t npvars = ptx_vars(text, pvars, sizeof pvars / sizeof pvars[0]);
    ptx_module ptx;
    ck_assert_msg(ptx_parse(text, &ptx, err, sizeof err), "%s: cannot parse nvcc's PTX: %s", cu, err);
    free(text);
    ck_assert_msg(ptx.nentries > 0, "%s: nvcc's PTX has no .entry; the file tests nothing", cu);
    /* "// abi-toolkit: PREFIX ...": entries whose symbol starts so are the
     * toolkit's kernels (CUB's, Thrust's) that the file's host code
     * instantiates from toolkit headers; kstub gives stubs to the
     * project's kernels only. */
    char *toolkit[16];
    size_t ntk = 0;
    file_flags(cu, "toolkit", toolkit, &ntk, 16);
    size_t ntoolkit = 0;
    for (size_t i = 0; i < ptx.nentries; i++)
        for (size_t t = 0; t < ntk; t++)
            if (!strncmp(ptx.entries[i].symbol, toolkit[t], strlen(toolkit[t]))) {
                ptx.entries[i].toolkit = true;
                ntoolkit++;
                break;
            }
    for (size_t t = 0; t < ntk; t++)
        free(toolkit[t]);

    json_error_t jerr;
    json_t *root = json_load_file(json_path, 0, &jerr);
    ck_assert_msg(root != NULL, "%s: manifest is not JSON: %s:%d: %s", cu, json_path, jerr.line, jerr.text);
    const json_t *kernels = json_object_get(root, "kernels");
    ck_assert_msg(json_integer_value(json_object_get(root, "format")) == 1 && json_is_array(kernels),
                  "%s: manifest lacks \"format\": 1 or a \"kernels\" array", cu);

    msgbuf msg = {0};
    int bad = abi_compare(cu, &ptx, kernels, &msg);
    const json_t *vars = json_object_get(root, "variables");
    size_t nvars = json_array_size(vars);
    bad += abi_compare_vars(cu, pvars, npvars, vars, &msg);
    ck_assert_msg(bad == 0, "%d ABI mismatch(es) against nvcc -ptx -arch=" ABI_ARCH ":\n%s", bad,
                  msg.data);
    header_compiles(cu, base, log);
    size_t nparams = 0, nkernels = 0, ninternal = 0;
    for (size_t i = 0; i < ptx.nentries; i++)
        if (!ptx.entries[i].toolkit) {
            nkernels++;
            ninternal += !ptx.entries[i].external;
            nparams += ptx.entries[i].nparams;
        }
    printf("abi: %s: %zu kernels (%zu of internal linkage), %zu parameters match nvcc (%zu toolkit "
           "entries left out)\n", cu, nkernels, ninternal, nparams, ntoolkit);
    if (nvars)
        printf("abi: %s: %zu device variables match nvcc's .const/.global declarations\n", cu, nvars);
    for (size_t i = 6; i < nn; i++)
        free(nvcc_argv[i]);
    for (size_t i = 6; i < nk; i++)
        free(kstub_argv[i]);
    json_decref(root);
    ptx_free(&ptx);
}
END_TEST

/* ---- parser and comparison unit tests ---------------------------------------------------- */

static ptx_module parse_ok(const char *text)
{
    ptx_module m;
    char err[256] = "";
    ck_assert_msg(ptx_parse(text, &m, err, sizeof err), "parse failed: %s", err);
    return m;
}

static void check_param(const ptx_entry *e, size_t i, const char *name, long size, long align,
                        long offset)
{
    ck_assert_msg(i < e->nparams, "%s has %zu parameters, wanted index %zu", e->symbol, e->nparams, i);
    const ptx_param *p = &e->params[i];
    ck_assert_str_eq(p->name, name);
    ck_assert_msg(p->size == size && p->align == align && p->offset == offset,
                  "%s param %zu %s: size/align/offset %ld/%ld/%ld, wanted %ld/%ld/%ld", e->symbol, i,
                  name, p->size, p->align, p->offset, size, align, offset);
}

START_TEST(scalars_are_aligned_to_their_size)
{
    ptx_module m = parse_ok(".version 8.0\n.target sm_90\n.address_size 64\n\n"
                            ".visible .entry _Z3mixcdsxbPf(\n"
                            "\t.param .u8 _Z3mixcdsxbPf_param_0,\n"
                            "\t.param .f64 _Z3mixcdsxbPf_param_1,\n"
                            "\t.param .s16 _Z3mixcdsxbPf_param_2,\n"
                            "\t.param .u64 _Z3mixcdsxbPf_param_3,\n"
                            "\t.param .b8 _Z3mixcdsxbPf_param_4,\n"
                            "\t.param .f32 _Z3mixcdsxbPf_param_5\n"
                            ")\n.maxntid 256, 1, 1\n{\n\tret;\n}\n");
    ck_assert_uint_eq(m.nentries, 1);
    const ptx_entry *e = &m.entries[0];
    ck_assert_str_eq(e->symbol, "_Z3mixcdsxbPf");
    ck_assert_uint_eq(e->nparams, 6);
    check_param(e, 0, "_Z3mixcdsxbPf_param_0", 1, 1, 0);
    check_param(e, 1, "_Z3mixcdsxbPf_param_1", 8, 8, 8);
    check_param(e, 2, "_Z3mixcdsxbPf_param_2", 2, 2, 16);
    check_param(e, 3, "_Z3mixcdsxbPf_param_3", 8, 8, 24);
    check_param(e, 4, "_Z3mixcdsxbPf_param_4", 1, 1, 32);
    check_param(e, 5, "_Z3mixcdsxbPf_param_5", 4, 4, 36);
    ptx_free(&m);
}
END_TEST

START_TEST(aligned_byte_arrays)
{
    ptx_module m = parse_ok(".visible .entry k(.param .u8 c, .param .align 8 .b8 s[24],\n"
                            "  .param .align 4 .b8 t[12], .param .u16 h, .param .align 16 .b8 v[16],\n"
                            "  .param .b32 w[3])\n{\n ret;\n}\n");
    ck_assert_uint_eq(m.nentries, 1);
    const ptx_entry *e = &m.entries[0];
    ck_assert_uint_eq(e->nparams, 6);
    check_param(e, 0, "c", 1, 1, 0);
    check_param(e, 1, "s", 24, 8, 8);
    check_param(e, 2, "t", 12, 4, 32);
    check_param(e, 3, "h", 2, 2, 44);
    check_param(e, 4, "v", 16, 16, 48);
    check_param(e, 5, "w", 12, 4, 64);
    ptx_free(&m);
}
END_TEST

START_TEST(pointer_params_ignore_pointee_alignment)
{
    ptx_module m = parse_ok(".entry p(\n"
                            "\t.param .u32 n,\n"
                            "\t.param .u64 .ptr .global .align 4 x,\n"
                            "\t.param .u8 b,\n"
                            "\t.param .u64 .ptr .align 16 y\n"
                            ")\n{\n ret;\n}\n");
    const ptx_entry *e = &m.entries[0];
    ck_assert_uint_eq(e->nparams, 4);
    check_param(e, 0, "n", 4, 4, 0);
    check_param(e, 1, "x", 8, 8, 8);
    check_param(e, 2, "b", 1, 1, 16);
    check_param(e, 3, "y", 8, 8, 24);
    ptx_free(&m);
}
END_TEST

START_TEST(entries_without_parameters)
{
    ptx_module m = parse_ok(".visible .entry empty()\n{\n ret;\n}\n"
                            ".entry bare\n{\n ret;\n}\n"
                            ".weak .entry _Z1kIfEvv(\n)\n{\n ret;\n}\n");
    ck_assert_uint_eq(m.nentries, 3);
    ck_assert_str_eq(m.entries[0].symbol, "empty");
    ck_assert_str_eq(m.entries[1].symbol, "bare");
    ck_assert_str_eq(m.entries[2].symbol, "_Z1kIfEvv");
    /* Linkage: .visible and .weak entries are external, a bare one internal. */
    ck_assert(m.entries[0].external);
    ck_assert(!m.entries[1].external);
    ck_assert(m.entries[2].external);
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(m.entries[i].nparams == 0, "%s: %zu params", m.entries[i].symbol,
                      m.entries[i].nparams);
    ptx_free(&m);
}
END_TEST

START_TEST(only_real_entries_count)
{
    ptx_module m = parse_ok("// .visible .entry in_a_comment(.param .u32 a)\n"
                            "/* .entry in_a_block(\n .param .u32 a) */\n"
                            ".file 1 \"/tmp//x.cu\"\n"
                            ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
                            ".visible .func f(.param .u32 a)\n{\n ret;\n}\n"
                            ".visible .entry one( // a trailing comment\n"
                            "\t.param .u32 one_param_0 /* inline */ ,\n"
                            "\t.param .u64 one_param_1\n"
                            ")\n{\n\tld.param.u32 %r1, [one_param_0];\n ret;\n}\n"
                            ".visible .entry two(.param .f64 a)\n{\n ret;\n}\n");
    ck_assert_uint_eq(m.nentries, 2);
    ck_assert_str_eq(m.entries[0].symbol, "one");
    check_param(&m.entries[0], 0, "one_param_0", 4, 4, 0);
    check_param(&m.entries[0], 1, "one_param_1", 8, 8, 8);
    ck_assert_str_eq(m.entries[1].symbol, "two");
    check_param(&m.entries[1], 0, "a", 8, 8, 0);
    ptx_free(&m);
}
END_TEST

/* A kernel launched from the device is declared, then defined: one entry. */
START_TEST(declared_then_defined_is_one_entry)
{
    ptx_module m = parse_ok(".weak .entry _Z1kIyEvPT_\n(\n\t.param .u64 _Z1kIyEvPT__param_0\n)\n;\n"
                            ".visible .entry p(.param .u32 a)\n{}\n"
                            ".weak .entry _Z1kIyEvPT_(\n\t.param .u64 _Z1kIyEvPT__param_0\n)\n{\n ret;\n}\n");
    ck_assert_uint_eq(m.nentries, 2);
    ck_assert_str_eq(m.entries[0].symbol, "_Z1kIyEvPT_");
    check_param(&m.entries[0], 0, "_Z1kIyEvPT__param_0", 8, 8, 0);
    ck_assert_str_eq(m.entries[1].symbol, "p");
    ptx_free(&m);
}
END_TEST

/* An internal-linkage entry (static kernel, nvcc's __nv_static_ name) needs
 * a kernel too, whose symbol pattern matches it once. */
START_TEST(oracle_matches_internal_entries)
{
    ptx_module m = parse_ok(".entry __nv_static_26__1bb079f7_5_st_cu_4766a884__Z6helperPf(.param .u64 a)\n{}\n"
                            ".entry _ZN37_GLOBAL__N__1bb079f7_5_st_cu_4766a8846k_anonEPf(.param .u64 a)\n{}\n"
                            ".entry _ZN37_GLOBAL__N__22b079f7_5_st_cu_4766a8846k_anonEPf(.param .u64 a)\n{}\n"
                            ".visible .entry _Z3pubPf(.param .u64 a)\n{}\n");
    json_error_t jerr;
    json_t *none = json_loads("[{\"name\": \"helper\", \"symbol\": \"{static:5_st_cu}_Z6helperPf\", "
                              "\"params\": [{\"size\": 8, \"align\": 8, \"offset\": 0}]},"
                              "{\"name\": \"k_anon\", \"symbol\": \"{static:5_st_cu}_ZN{anon:5_st_cu}6k_anonEPf\", "
                              "\"params\": [{\"size\": 8, \"align\": 8, \"offset\": 0}]}]", 0, &jerr);
    ck_assert_ptr_nonnull(none);
    msgbuf msg = {0};
    int nbad = abi_compare("x.cu", &m, none, &msg);
    ck_assert_msg(nbad == 2, "%d:\n%s", nbad, msg.data);
    ck_assert_msg(strstr(msg.data, ".entry _Z3pubPf (1 parameters) in nvcc's PTX has no kernel"),
                  "%s", msg.data);
    ck_assert_msg(strstr(msg.data, "kernel k_anon: {static:5_st_cu}_ZN{anon:5_st_cu}6k_anonEPf matches 2 "
                         ".entry lines"), "%s", msg.data);
    ck_assert_msg(!strstr(msg.data, "helper"), "%s", msg.data);
    free(msg.data);
    json_decref(none);
    ptx_free(&m);
}
END_TEST

START_TEST(malformed_entries_are_errors)
{
    static const char *const bad[] = {
        ".entry k(.param .u64)\n{}",                     /* no name */
        ".entry k(.param .pred p)\n{}",                  /* not a parameter type */
        ".entry k(.param .u32 a, .param .u32 b\n",       /* list not closed */
        ".entry k(.param .align .b8 s[8])\n{}",          /* .align without a number */
        ".entry k(.param .align 8 .b8 s[])\n{}",         /* array without a size */
        ".entry k(.reg .u32 a)\n{}",                     /* not .param */
        ".entry k(.param .u32 .global a)\n{}",           /* state space without .ptr */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ptx_module m;
        char err[256] = "";
        ck_assert_msg(!ptx_parse(bad[i], &m, err, sizeof err), "accepted: %s", bad[i]);
        ck_assert_msg(err[0] != '\0', "no message for: %s", bad[i]);
    }
}
END_TEST

static const char oracle_ptx[] = ".visible .entry _ZN2ns3mixEcdPf(.param .u8 a, .param .f64 b, .param .u64 c)\n{}\n"
                                 ".visible .entry plain(.param .u32 n)\n{}\n";

/* Compares a manifest (given as JSON text) with oracle_ptx; returns the message. */
static char *compare_text(const char *manifest_kernels, int expect_bad)
{
    ptx_module m = parse_ok(oracle_ptx);
    json_error_t jerr;
    json_t *kernels = json_loads(manifest_kernels, 0, &jerr);
    ck_assert_msg(kernels != NULL, "bad test JSON: %s", jerr.text);
    msgbuf msg = {0};
    int bad = abi_compare("x.cu", &m, kernels, &msg);
    ck_assert_msg(bad == expect_bad, "%d mismatches, wanted %d:\n%s", bad, expect_bad,
                  msg.data ? msg.data : "");
    json_decref(kernels);
    ptx_free(&m);
    return msg.data ? msg.data : strdup("");
}

#define MIX_OK "{\"name\":\"ns::mix\",\"symbol\":\"_ZN2ns3mixEcdPf\",\"params\":[" \
               "{\"name\":\"a\",\"type\":\"char\",\"size\":1,\"align\":1,\"offset\":0}," \
               "{\"name\":\"b\",\"type\":\"double\",\"size\":8,\"align\":8,\"offset\":8}," \
               "{\"name\":\"c\",\"type\":\"float *\",\"size\":8,\"align\":8,\"offset\":16}]}"
#define PLAIN_OK "{\"name\":\"plain\",\"symbol\":\"plain\",\"params\":[" \
                 "{\"name\":\"n\",\"type\":\"int\",\"size\":4,\"align\":4,\"offset\":0}]}"

START_TEST(oracle_accepts_a_matching_manifest)
{
    char *msg = compare_text("[" MIX_OK "," PLAIN_OK "]", 0);
    ck_assert_str_eq(msg, "");
    free(msg);
}
END_TEST

START_TEST(oracle_names_each_layout_mismatch)
{
    /* b packed like a float (size 4, align 4) and c placed right after it. */
    char *msg = compare_text("[{\"name\":\"ns::mix\",\"symbol\":\"_ZN2ns3mixEcdPf\",\"params\":["
                             "{\"name\":\"a\",\"type\":\"char\",\"size\":1,\"align\":1,\"offset\":0},"
                             "{\"name\":\"b\",\"type\":\"float\",\"size\":4,\"align\":4,\"offset\":4},"
                             "{\"name\":\"c\",\"type\":\"float *\",\"size\":8,\"align\":8,\"offset\":8}]},"
                             PLAIN_OK "]", 4);
    ck_assert_msg(strstr(msg, "x.cu: kernel ns::mix (_ZN2ns3mixEcdPf): parameter 1 'b' (float): "
                              "size: expected 8 (nvcc), actual 4 (kstub)"), "%s", msg);
    ck_assert_msg(strstr(msg, "parameter 1 'b' (float): align: expected 8 (nvcc), actual 4"), "%s", msg);
    ck_assert_msg(strstr(msg, "parameter 1 'b' (float): offset: expected 8 (nvcc), actual 4"), "%s", msg);
    ck_assert_msg(strstr(msg, "parameter 2 'c' (float *): offset: expected 16 (nvcc), actual 8"), "%s", msg);
    free(msg);
}
END_TEST

START_TEST(oracle_catches_count_and_symbol_mismatches)
{
    /* plain with one parameter too many; a kernel nvcc never emitted; mix missing. */
    char *msg = compare_text("[{\"name\":\"plain\",\"symbol\":\"plain\",\"params\":["
                             "{\"name\":\"n\",\"size\":4,\"align\":4,\"offset\":0},"
                             "{\"name\":\"m\",\"size\":4,\"align\":4,\"offset\":4}]},"
                             "{\"name\":\"ns::mix\",\"symbol\":\"_Z3mixcdPf\",\"params\":[]}]", 3);
    ck_assert_msg(strstr(msg, "x.cu: kernel plain (plain): parameter count: expected 1 (nvcc), actual 2 (kstub)"),
                  "%s", msg);
    ck_assert_msg(strstr(msg, "x.cu: kernel ns::mix: no .entry _Z3mixcdPf in nvcc's PTX"), "%s", msg);
    ck_assert_msg(strstr(msg, "x.cu: .entry _ZN2ns3mixEcdPf (3 parameters) in nvcc's PTX has no kernel "
                              "in kstub's manifest"), "%s", msg);
    free(msg);
}
END_TEST

START_TEST(oracle_catches_missing_fields_and_duplicates)
{
    char *msg = compare_text("[" MIX_OK "," PLAIN_OK ",{\"name\":\"plain\",\"symbol\":\"plain\",\"params\":["
                             "{\"name\":\"n\",\"size\":4,\"offset\":0}]}]", 2);
    ck_assert_msg(strstr(msg, "symbol plain appears twice in the manifest"), "%s", msg);
    ck_assert_msg(strstr(msg, "parameter 0 'n' (?): align: expected 4 (nvcc), actual missing 0 (kstub)"),
                  "%s", msg);
    free(msg);
}
END_TEST

/* ---- suite ------------------------------------------------------------------------------- */

static Suite *abi_suite(int nfiles)
{
    Suite *s = suite_create("abi");
    TCase *tc = tcase_create("ptx_parser");
    tcase_add_test(tc, scalars_are_aligned_to_their_size);
    tcase_add_test(tc, aligned_byte_arrays);
    tcase_add_test(tc, pointer_params_ignore_pointee_alignment);
    tcase_add_test(tc, entries_without_parameters);
    tcase_add_test(tc, only_real_entries_count);
    tcase_add_test(tc, malformed_entries_are_errors);
    tcase_add_test(tc, oracle_matches_internal_entries);
    tcase_add_test(tc, declared_then_defined_is_one_entry);
    suite_add_tcase(s, tc);

    tc = tcase_create("oracle");
    tcase_add_test(tc, oracle_accepts_a_matching_manifest);
    tcase_add_test(tc, oracle_names_each_layout_mismatch);
    tcase_add_test(tc, oracle_catches_count_and_symbol_mismatches);
    tcase_add_test(tc, oracle_catches_missing_fields_and_duplicates);
    suite_add_tcase(s, tc);

    /* One case per input, named by its path: nvcc and kstub take seconds each. */
    for (int i = 0; i < nfiles; i++) {
        tc = tcase_create(g_files[i]);
        tcase_set_timeout(tc, 300);
        tcase_add_loop_test(tc, abi_matches_nvcc, i, i + 1);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: KSTUB=kstub NVCC=nvcc %s FILE.cu...\n", argv[0]);
        return 2;
    }
    g_files = argv + 1;
    g_kstub = getenv("KSTUB") ? getenv("KSTUB") : "build/bin/kstub";
    g_nvcc = getenv("NVCC") ? getenv("NVCC") : "nvcc";
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_tmp, sizeof g_tmp, "%s/kstub-abi-XXXXXX", tmp);
    if (!mkdtemp(g_tmp)) {
        fprintf(stderr, "check_abi: cannot create %s: %s\n", g_tmp, strerror(errno));
        return 2;
    }

    SRunner *sr = srunner_create(abi_suite(argc - 1));
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    nftw(g_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
