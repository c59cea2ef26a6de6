/*
 * check_docs.c — what README.md, docs/ (each .md) and man/kstub.1 show, checked
 * against the tool (issue 30).
 *
 * CI gates: every code block of the three (a fenced block; each `run:` step
 * of a yaml block; a man page .nf/.fi block) that runs `kstub check` or
 * `kstub diff` is a gate, found by that pattern alone, so a gate added to
 * the docs is run without anyone listing it. Each gate runs, as written,
 * under `bash -e -o pipefail` (as a CI step runs it) and under plain `sh`,
 * in a git repository laid out as the docs assume (scale.cu, its stubs and
 * manifest in gen/, the previous manifest in old/ and on origin/main, kstub
 * on PATH and as build/bin/kstub), against: no change and a compatible
 * change (it passes); a breaking change, stale (a gate running check fails)
 * or regenerated (a gate running diff fails); a malformed manifest (it
 * fails); the old manifest unreadable (a gate running diff fails).
 *
 * Output: a block marked <!-- output: SCRIPT --> is SCRIPT's output (the
 * scripts are in tests/docs/), and a block that looks like output (kstub's
 * messages and reports, a "$ command" transcript, kstub.mk's and deps.sh's
 * lines) must be marked: every documented command whose output is shown runs.
 *
 * Claims: each sentence about internal-linkage kernels matches what kstub
 * does with them; each sentence about the breaking bit (8) warns that
 * testing it alone lets tool errors pass (one gating rule everywhere).
 *
 * Prototypes: each one shown for a generated function of kernels/*.cu is
 * what kstub --list --all prints, parameter names included.
 *
 * Markdown tables: no row outside a table (a blank line inside one ends it).
 *
 * The kstub.mk include line: each documented one stops with "kstub is not
 * on PATH" when it is not, and includes kstub.mk from beside kstub when it is.
 *
 *   KSTUB=build/bin/kstub build/tests/check_docs
 *
 * Run from the repository root (make check-docs does).
 */
#include "testutil.h"

#include <check.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *kstub_bin(void)
{
    static char abs[PATH_MAX];
    const char *k = getenv("KSTUB") ? getenv("KSTUB") : "build/bin/kstub";
    return realpath(k, abs) ? abs : k;
}

static char tmpdir[PATH_MAX];

static void make_tmpdir(void)
{
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/kstub-docs-XXXXXX", t);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char *out;
    run(&out, "rm -rf '%s'", tmpdir);
    free(out);
}

/* The documents: README.md, docs/ (each .md, in name order), man/kstub.1. */
static char *doc_list(void)
{
    char *list;
    ck_assert_int_eq(run(&list, "echo README.md; ls docs/*.md | LC_ALL=C sort; echo man/kstub.1"), 0);
    return list;
}

/* ---- code blocks -------------------------------------------------------------------------------- */

typedef struct block {
    char where[PATH_MAX + 32];  /* file:line of its first line */
    char lang[32];              /* the fence's language; "man" for .nf/.fi */
    char *text;                 /* its lines, each ending in '\n' */
    char output[256];           /* "<!-- output: SCRIPT -->" on the line above: SCRIPT, else "" */
} block;

typedef struct blocks {
    block *v;
    size_t n, cap;
} blocks;

static void blocks_add(blocks *b, const char *file, int line, const char *lang, char *text,
                       const char *output)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 32;
        b->v = realloc(b->v, b->cap * sizeof *b->v);
        ck_assert_ptr_nonnull(b->v);
    }
    block *k = &b->v[b->n++];
    snprintf(k->where, sizeof k->where, "%s:%d", file, line);
    snprintf(k->lang, sizeof k->lang, "%s", lang);
    k->text = text;
    snprintf(k->output, sizeof k->output, "%s", output);
}

static void blocks_free(blocks *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].text);
    free(b->v);
}

static void append(char **s, size_t *len, const char *p, size_t n)
{
    *s = realloc(*s, *len + n + 2);
    ck_assert_ptr_nonnull(*s);
    memcpy(*s + *len, p, n);
    *len += n;
    (*s)[(*len)++] = '\n';
    (*s)[*len] = '\0';
}

/* A man page line as it reads: \- is -, \e is \, fonts and \& dropped. */
static size_t man_unescape(const char *p, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\\' || i + 1 == n) {
            out[o++] = p[i];
            continue;
        }
        char c = p[++i];
        if (c == '-')
            out[o++] = '-';
        else if (c == 'e')
            out[o++] = '\\';
        else if (c == 'f' && i + 1 < n)
            i++;
        else if (c == '(' && i + 2 < n) {
            out[o++] = strncmp(p + i + 1, "aq", 2) == 0 ? '\'' : '?';
            i += 2;
        } else if (c != '&')
            out[o++] = c;
    }
    return o;
}

/* Every fenced block of a markdown file, every .nf/.fi block of a man page. */
static void read_blocks(const char *file, blocks *b)
{
    char *text = read_text(file);
    int man = strstr(file, ".md") == NULL;
    int lineno = 0, start = 0, in = 0;
    char lang[32] = "", output[256] = "", prev_output[256] = "";
    char *body = NULL;
    size_t len = 0;
    for (char *p = text; *p;) {
        char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        lineno++;
        if (!man && strncmp(p, "```", 3) == 0) {
            if (!in) {
                size_t l = n - 3 < sizeof lang - 1 ? n - 3 : sizeof lang - 1;
                memcpy(lang, p + 3, l);
                lang[l] = '\0';
                in = 1, start = lineno + 1, body = NULL, len = 0;
                snprintf(output, sizeof output, "%s", prev_output);
            } else {
                blocks_add(b, file, start, lang, body ? body : calloc(1, 1), output);
                in = 0;
            }
        } else if (man && (strncmp(p, ".nf", 3) == 0 || strncmp(p, ".fi", 3) == 0)) {
            if (p[1] == 'n')
                in = 1, start = lineno + 1, body = NULL, len = 0;
            else if (in) {
                blocks_add(b, file, start, "man", body ? body : calloc(1, 1), "");
                in = 0;
            }
        } else if (in && !(man && (p[0] == '.' || p[0] == '\''))) {
            char *line = malloc(n + 1);
            size_t m = man ? man_unescape(p, n, line) : (memcpy(line, p, n), n);
            append(&body, &len, line, m);
            free(line);
        }
        if (!in) {
            /* The marker of an output block, on the line just above it. */
            prev_output[0] = '\0';
            static const char mark[] = "<!-- output: ";
            if (strncmp(p, mark, sizeof mark - 1) == 0 && n > sizeof mark + 3 &&
                strncmp(p + n - 4, " -->", 4) == 0)
                snprintf(prev_output, sizeof prev_output, "%.*s", (int)(n - 4 - (sizeof mark - 1)),
                         p + sizeof mark - 1);
        }
        p = e ? e + 1 : p + n;
    }
    ck_assert_msg(!in, "%s: a code block opened at line %d is not closed", file, start);
    free(text);
}

static void all_blocks(blocks *b)
{
    memset(b, 0, sizeof *b);
    char *list = doc_list(), *save = NULL;
    for (char *f = strtok_r(list, "\n", &save); f; f = strtok_r(NULL, "\n", &save))
        read_blocks(f, b);
    free(list);
}

/* ---- gates -------------------------------------------------------------------------------------- */

/* Does this line run `kstub check` or `kstub diff` (as a command, not a
 * synopsis with [options], not output such as "kstub check: …", not a
 * comment)? Sets *check or *diff. */
static int runs_kstub(const char *line, int *check, int *diff)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    for (char *h = buf; (h = strchr(h, '#')) != NULL; h++)
        if (h == buf || isspace((unsigned char)h[-1])) {
            *h = '\0';
            break;
        }
    int found = 0;
    static const char *const verbs[] = {"kstub check", "kstub diff"};
    for (int v = 0; v < 2; v++) {
        size_t vn = strlen(verbs[v]);
        for (const char *p = buf; (p = strstr(p, verbs[v])) != NULL; p += vn) {
            if (p != buf && !strchr(" \t/;(|&`", p[-1]))
                continue;
            const char *q = p + vn;
            if (*q != '\0' && *q != ' ')
                continue;
            while (*q == ' ')
                q++;
            if (*q == '[')
                continue;
            *(v == 0 ? check : diff) = 1;
            found = 1;
        }
    }
    return found;
}

typedef struct gate {
    char where[PATH_MAX + 48];
    char *script;
    int check, diff;   /* it runs kstub check, kstub diff */
} gate;

/* The gate in text (a whole block, or a yaml step's body), if it is one. */
static int as_gate(const char *where, const char *text, gate *g)
{
    memset(g, 0, sizeof *g);
    int found = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        found |= runs_kstub(l, &g->check, &g->diff);
    free(copy);
    if (!found)
        return 0;
    snprintf(g->where, sizeof g->where, "%s", where);
    g->script = strdup(text);
    return 1;
}

static size_t indent_of(const char *l)
{
    return strspn(l, " ");
}

/* A yaml block's `run:` steps, each as a script (dedented). */
static size_t yaml_gates(const block *k, gate *out, size_t max)
{
    size_t n = 0;
    const char *p = k->text;
    int lineno = 0;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = (size_t)(e - p);
        lineno++;
        const char *key = p + indent_of(p);
        if (strncmp(key, "- ", 2) == 0)
            key += 2;
        if (strncmp(key, "run:", 4) != 0) {
            p = e + 1;
            continue;
        }
        size_t keycol = (size_t)(key - p);
        const char *v = key + 4;
        while (*v == ' ')
            v++;
        char *script = NULL;
        size_t slen = 0;
        int first = lineno;
        if (*v == '|' || *v == '>') {
            size_t body = 0;
            for (p = e + 1; *p; p = e + 1) {
                e = strchr(p, '\n');
                if ((size_t)(e - p) > indent_of(p) && indent_of(p) <= keycol)
                    break;   /* the next key: the body ended */
                if ((size_t)(e - p) == indent_of(p)) {   /* blank */
                    append(&script, &slen, "", 0);
                } else {
                    if (!body)
                        body = indent_of(p);
                    if (indent_of(p) < body)
                        break;
                    append(&script, &slen, p + body, (size_t)(e - p) - body);
                }
                lineno++;
            }
        } else {
            append(&script, &slen, v, len - (size_t)(v - p));
            p = e + 1;
        }
        char where[PATH_MAX + 48];
        snprintf(where, sizeof where, "%s (a yaml run: step, block line %d)", k->where, first);
        if (script && n < max && as_gate(where, script, &out[n]))
            n++;
        free(script);
    }
    return n;
}

static size_t find_gates(gate *out, size_t max)
{
    blocks b;
    all_blocks(&b);
    size_t n = 0;
    for (size_t i = 0; i < b.n && n < max; i++) {
        const block *k = &b.v[i];
        if (strcmp(k->lang, "yaml") == 0 || strcmp(k->lang, "yml") == 0)
            n += yaml_gates(k, out + n, max - n);
        else if (as_gate(k->where, k->text, &out[n]))
            n++;
    }
    blocks_free(&b);
    return n;
}

/* The project every gate runs in: a git repository whose main holds
 * scale.cu and its generated files (gen/), origin/main the previous
 * version, old/ the previous manifest; kstub on PATH and as build/bin/kstub. */
static const char scale_cu[] =
    "__global__ void scale(float *y, const float *x, float s, int n)\n"
    "{ int i = threadIdx.x; if (i < n) y[i] = s * x[i]; }\n";
static const char scale_breaking_cu[] =
    "__global__ void scale(float *y, const float *x, float s, long n)\n"
    "{ long i = threadIdx.x; if (i < n) y[i] = s * x[i]; }\n";
static const char scale_added_cu[] =
    "__global__ void scale(float *y, const float *x, float s, int n)\n"
    "{ int i = threadIdx.x; if (i < n) y[i] = s * x[i]; }\n"
    "__global__ void twice(float *y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 2; }\n";

enum expect { PASS, FAIL, ANY };

typedef struct gate_case {
    const char *name;
    const char *change;   /* shell run after the first commit */
    enum expect if_check, if_diff;  /* for a gate running check, diff (both: FAIL wins) */
} gate_case;

#define GEN "kstub scale.cu -o gen/scale.kstub --manifest gen/scale.kstub.json"
#define COMMIT "git add -A . && git -c user.name=t -c user.email=t@t commit -qm change"

static const gate_case gate_cases[] = {
    {"no change", "true", PASS, PASS},
    {"a compatible change (a kernel added, regenerated)",
     "cp scale_added.cu scale.cu && " GEN " && " COMMIT, PASS, PASS},
    {"a breaking change, stubs not regenerated", "cp scale_breaking.cu scale.cu && " COMMIT, FAIL, ANY},
    {"a breaking change, regenerated", "cp scale_breaking.cu scale.cu && " GEN " && " COMMIT, ANY, FAIL},
    {"the new manifest malformed", "printf '{\"format\": 1, \"kernels\": [' > gen/scale.kstub.json && "
     COMMIT, FAIL, FAIL},
    {"the old manifest unreadable", "rm old/scale.kstub.json && printf '{\"format\": 1, \"kernels\": ['"
     " > gen/scale.kstub.json && " COMMIT " && git update-ref refs/remotes/origin/main HEAD && "
     "git reset -q --hard HEAD~1", ANY, FAIL},
};

static void setup_project(const char *dir, const gate_case *c)
{
    char *out;
    int rc = run(&out, "mkdir -p '%s' && cd '%s' && mkdir -p bin build/bin gen old && "
                 "ln -s '%s' bin/kstub && ln -s '%s' build/bin/kstub && export PATH=\"$PWD/bin:$PATH\" && "
                 "printf '%%s' '%s' > scale.cu && printf '%%s' '%s' > scale_breaking.cu && "
                 "printf '%%s' '%s' > scale_added.cu && " GEN " && cp gen/scale.kstub.json old/ && "
                 "git init -q -b main && printf 'scale_*.cu\\nbin\\nbuild\\nold\\n' > .gitignore && "
                 COMMIT " && git update-ref refs/remotes/origin/main HEAD && %s",
                 dir, dir, kstub_bin(), kstub_bin(), scale_cu, scale_breaking_cu, scale_added_cu,
                 c->change);
    ck_assert_msg(rc == 0, "setting up '%s': %s", c->name, out);
    free(out);
}

START_TEST(every_documented_gate_fails_a_failure)
{
    gate gates[64];
    size_t n = find_gates(gates, 64);
    /* ci.md's drift and compatibility steps and the man page's example. */
    ck_assert_msg(n >= 3, "found %zu gates in README.md, docs/ and man/kstub.1", n);
    make_tmpdir();
    static const char *const shells[] = {"bash -e -o pipefail", "sh"};
    for (size_t c = 0; c < sizeof gate_cases / sizeof *gate_cases; c++) {
        const gate_case *gc = &gate_cases[c];
        for (size_t i = 0; i < n; i++) {
            enum expect want = gates[i].check && gc->if_check == FAIL ? FAIL
                             : gates[i].diff && gc->if_diff == FAIL ? FAIL
                             : (gates[i].check ? gc->if_check : gc->if_diff);
            if (want == ANY)
                continue;
            for (size_t s = 0; s < 2; s++) {
                char dir[PATH_MAX + 64], script[PATH_MAX + 64];
                snprintf(dir, sizeof dir, "%s/c%zu-g%zu-s%zu", tmpdir, c, i, s);
                snprintf(script, sizeof script, "%s/gate%zu.sh", tmpdir, i);
                setup_project(dir, gc);
                FILE *f = fopen(script, "w");
                ck_assert_ptr_nonnull(f);
                fputs(gates[i].script, f);
                fclose(f);
                char *out;
                int rc = run(&out, "cd '%s' && PATH=\"$PWD/bin:$PATH\" %s '%s' 2>&1", dir, shells[s],
                             script);
                ck_assert_msg(want == PASS ? rc == 0 : rc != 0,
                              "the gate at %s, run by %s, %s with %s (exit %d):\n%s\n--- output:\n%s",
                              gates[i].where, shells[s], want == PASS ? "fails" : "passes", gc->name,
                              rc, gates[i].script, out);
                free(out);
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        free(gates[i].script);
    remove_tmpdir();
}
END_TEST

/* ---- the kstub.mk include line ------------------------------------------------------------ */

/* Issue 30 #10: every documented line that finds kstub.mk through the kstub
 * on PATH (in a make block of the docs, or an example's Makefile) says so
 * when kstub is not on PATH (it said "../share/kstub/kstub.mk: No such file
 * or directory"), and includes kstub.mk from beside the kstub that is. */
START_TEST(include_line_says_kstub_is_not_on_path)
{
    blocks b;
    all_blocks(&b);
    char *lines = NULL;
    size_t len = 0;
    for (size_t i = 0; i < b.n; i++) {
        if (strcmp(b.v[i].lang, "make") != 0)
            continue;
        char *copy = strdup(b.v[i].text), *save = NULL;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            if (strncmp(l, "include ", 8) == 0 && strstr(l, "kstub.mk") && strstr(l, "command -v kstub"))
                append(&lines, &len, l, strlen(l));
        free(copy);
    }
    blocks_free(&b);
    char *ex;
    ck_assert_int_eq(run(&ex, "grep -h '^include .*command -v kstub.*kstub.mk' examples/*/Makefile"), 0);
    append(&lines, &len, ex, strlen(ex));
    free(ex);
    char root[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(root, sizeof root));
    make_tmpdir();
    char *out;
    int rc = run(&out, "cd '%s' && mkdir -p p/bin p/share/kstub && ln -s '%s' p/bin/kstub && "
                 "cp '%s/kstub.mk' p/share/kstub/", tmpdir, kstub_bin(), root);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    int n = 0;
    char *save = NULL;
    for (char *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!*l)
            continue;
        char mk[PATH_MAX + 32];
        snprintf(mk, sizeof mk, "%s/Makefile", tmpdir);
        FILE *f = fopen(mk, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%s\nshow:\n\t@echo included $(KSTUB)\n", l);
        fclose(f);
        rc = run(&out, "cd '%s' && env -i PATH=/usr/bin:/bin make -s show", tmpdir);
        ck_assert_msg(rc == 2 && strstr(out, "kstub is not on PATH"), "'%s' without kstub on PATH: "
                      "exit %d\n%s", l, rc, out);
        free(out);
        rc = run(&out, "cd '%s' && env -i PATH=\"$PWD/p/bin:/usr/bin:/bin\" make -s show", tmpdir);
        ck_assert_msg(rc == 0 && strcmp(out, "included kstub\n") == 0, "'%s' with kstub on PATH: "
                      "exit %d\n%s", l, rc, out);
        free(out);
        n++;
    }
    /* README.md, docs/build-systems.md, examples/first/Makefile */
    ck_assert_int_ge(n, 3);
    free(lines);
    remove_tmpdir();
}
END_TEST

/* ---- markdown tables --------------------------------------------------------------------- */

/* Issue 30 #11: a table row (a line starting with '|', outside code blocks)
 * continues a table or starts one: after a blank line or text it must be a
 * header, followed by its delimiter row (| --- |). A blank line inside a
 * table ends it, and the rows after it print as text. */
static int table_errors(const char *file, const char *text, char **report, size_t *rlen)
{
    int errors = 0, lineno = 0, in_code = 0;
    const char *prev = "";
    size_t prevn = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        lineno++;
        if (strncmp(p, "```", 3) == 0)
            in_code = !in_code;
        else if (!in_code && n > 0 && p[0] == '|' && !(prevn > 0 && prev[0] == '|')) {
            const char *next = e ? e + 1 : "";
            int delim = next[0] == '|' && strspn(next, "|-: ") >= strcspn(next, "\n") &&
                        strchr(next, '-') && strchr(next, '-') < next + strcspn(next, "\n");
            if (!delim) {
                char msg[PATH_MAX + 200];
                snprintf(msg, sizeof msg, "%s:%d: a table row outside a table (a blank line or text "
                         "above it ended the table): %.60s", file, lineno, p);
                append(report, rlen, msg, strlen(msg));
                errors++;
            }
        }
        prev = p, prevn = n;
        p = e ? e + 1 : p + n;
    }
    return errors;
}

START_TEST(markdown_tables_are_whole)
{
    char *list, *save = NULL, *report = NULL;
    size_t rlen = 0;
    int errors = 0, files = 0;
    ck_assert_int_eq(run(&list, "echo README.md; ls docs/*.md examples/*/README.md 2>/dev/null | "
                         "LC_ALL=C sort"), 0);
    for (char *f = strtok_r(list, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
        char *text = read_text(f);
        errors += table_errors(f, text, &report, &rlen);
        free(text);
        files++;
    }
    ck_assert_msg(errors == 0, "%s", report);
    ck_assert_int_ge(files, 9);
    /* The lint itself: a table cut by a blank line is caught. */
    report = NULL, rlen = 0;
    ck_assert_int_eq(table_errors("t.md", "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| 3 | 4 |\n",
                                  &report, &rlen), 1);
    ck_assert_msg(strstr(report, "t.md:5: a table row outside a table"), "%s", report);
    free(report);
    free(list);
}
END_TEST

/* ---- what the docs say of internal-linkage kernels ------------------------------------------- */

/* Issue 30 #13: every sentence of README.md, docs/ and kstub(1) about
 * kernels with internal linkage says what kstub does with them now: the
 * man page said they were refused, while kstub skipped them with a note.
 * A sentence (to its '.' or ';') that says "refused" claims an error, one
 * that says "skipped" or "no stub" a note and no stub, one that says
 * "stub" otherwise a stub; kstub --list on a static and an anonymous-
 * namespace kernel is the judge. */
enum linkage_claim { CLAIM_NONE, CLAIM_REFUSED, CLAIM_SKIPPED, CLAIM_STUB };

static enum linkage_claim classify(const char *s)
{
    if (strstr(s, "refused"))
        return CLAIM_REFUSED;
    if (strstr(s, "skipped") || strstr(s, "no stub"))
        return CLAIM_SKIPPED;
    if (strstr(s, "stub"))
        return CLAIM_STUB;
    return CLAIM_NONE;
}

START_TEST(internal_linkage_claims_are_true)
{
    make_tmpdir();
    write_text_in(tmpdir, "st.cu", "static __global__ void k_static(float *p) { p[0] = 1; }\n"
                                    "namespace { __global__ void k_anon(float *p) { p[0] = 2; } }\n"
                                    "__global__ void k_plain(float *p) { p[0] = 3; }\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s --list st.cu 2>&1", tmpdir, kstub_bin());
    enum linkage_claim does = rc != 0 ? CLAIM_REFUSED
                            : strstr(out, "k_static(") && strstr(out, "k_anon(") ? CLAIM_STUB
                            : !strstr(out, "k_static(") && !strstr(out, "k_anon(") &&
                              strstr(out, "note: kernel 'k_static'") && strstr(out, "note: kernel '")
                            ? CLAIM_SKIPPED : CLAIM_NONE;
    ck_assert_msg(does != CLAIM_NONE, "kstub --list does something the test cannot name:\n%s", out);
    ck_assert_msg(strstr(out, "k_plain(") || does == CLAIM_REFUSED, "%s", out);
    static const char *const names[] = {"nothing", "refuses them", "skips them with a note",
                                        "makes stubs for them"};
    char *list = doc_list(), *save = NULL;
    int claims = 0;
    for (char *f = strtok_r(list, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
        char *text = read_text(f);
        /* The text as one line (a sentence spans lines), the man page unescaped. */
        size_t n = strlen(text);
        char *flat = malloc(n + 1);
        n = strstr(f, ".md") ? (memcpy(flat, text, n), n) : man_unescape(text, n, flat);
        flat[n] = '\0';
        for (char *c = flat; *c; c++)
            if (*c == '\n')
                *c = ' ';
        for (const char *p = flat; (p = strstr(p, "nternal linkage")) != NULL; p++) {
            const char *e = p;
            while (*e && *e != ';' && !(*e == '.' && (e[1] == ' ' || e[1] == '\0')))
                e++;
            char *sentence = strndup(p - 1, (size_t)(e - p) + 1);
            enum linkage_claim says = classify(sentence);
            if (says != CLAIM_NONE) {
                ck_assert_msg(says == does, "%s says kernels with internal linkage: '%s', but kstub %s:\n%s",
                              f, sentence, names[does], out);
                claims++;
            }
            free(sentence);
        }
        free(flat);
        free(text);
    }
    /* kstub(1)'s DESCRIPTION and two in docs/usage.md */
    ck_assert_int_ge(claims, 3);
    free(list);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 39 #15: one rule for gating on check's and diff's status, everywhere.
 * A sentence that speaks of the breaking bit (bit 8, $? & 8) must warn that
 * testing it alone lets tool errors through, never advise it. */
START_TEST(no_doc_gates_on_the_breaking_bit)
{
    char *list = doc_list(), *save = NULL;
    int mentions = 0;
    for (char *f = strtok_r(list, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
        char *text = read_text(f);
        size_t n = strlen(text);
        char *flat = malloc(n + 1);
        n = strstr(f, ".md") ? (memcpy(flat, text, n), n) : man_unescape(text, n, flat);
        flat[n] = '\0';
        for (char *c = flat; *c; c++)
            if (*c == '\n')
                *c = ' ';
        static const char *const marks[] = {"bit 8", "& 8", "breaking bit"};
        for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++)
            for (const char *p = flat; (p = strstr(p, marks[m])) != NULL; p++) {
                const char *b = p, *e = p;
                while (b > flat && !(b[-1] == '.' && b[0] == ' ') && b[-1] != '|')
                    b--;
                while (*e && *e != '|' && !(*e == '.' && (e[1] == ' ' || e[1] == '\0')))
                    e++;
                char *sentence = strndup(b, (size_t)(e - b));
                ck_assert_msg(strstr(sentence, "let") && (strstr(sentence, "pass") || strstr(sentence, "through")),
                              "%s: '%s' speaks of the breaking bit without saying that testing it alone "
                              "lets tool errors (1, 2) pass", f, sentence);
                mentions++;
                free(sentence);
            }
        free(flat);
        free(text);
    }
    /* kstub(1)'s EXIT STATUS and EXAMPLES, docs/ci.md */
    ck_assert_int_ge(mentions, 3);
    free(list);
}
END_TEST

/* Issue 39 #16: a prototype the docs show for a generated function is the
 * one kstub declares, parameter names included. Every `ks_status NAME(...);`
 * in a C block of the docs whose NAME kstub --list --all prints for one of
 * kernels/*.cu is compared with it, whitespace aside ("…" ends the comparison). */
static char *squeeze(const char *p, size_t n)
{
    char *o = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (isspace((unsigned char)p[i])) {
            if (k > 0 && o[k - 1] != ' ' && o[k - 1] != '(')
                o[k++] = ' ';
            continue;
        }
        if ((p[i] == ')' || p[i] == ',' || p[i] == ';') && k > 0 && o[k - 1] == ' ')
            k--;
        o[k++] = p[i];
    }
    o[k] = '\0';
    return o;
}

START_TEST(prototypes_shown_are_generated)
{
    char *listed;
    ck_assert_int_eq(run(&listed, "for f in kernels/*.cu; do '%s' --list --all \"$f\" 2>/dev/null; done",
                         kstub_bin()), 0);
    blocks b;
    all_blocks(&b);
    int compared = 0;
    for (size_t i = 0; i < b.n; i++) {
        const block *k = &b.v[i];
        if (strcmp(k->lang, "c") != 0)
            continue;
        for (const char *p = k->text; (p = strstr(p, "ks_status ")) != NULL; p++) {
            if (p > k->text && !isspace((unsigned char)p[-1]))
                continue;
            const char *name = p + 10, *paren = name;
            while (isalnum((unsigned char)*paren) || *paren == '_')
                paren++;
            if (*paren != '(' || paren == name)
                continue;
            /* A declaration: the matching ')' and then ';' (not a call in a comment). */
            const char *end = paren;
            for (int depth = 0; *end; end++)
                if (*end == '(')
                    depth++;
                else if (*end == ')' && --depth == 0)
                    break;
            const char *semi = *end ? end + 1 : end;
            while (*semi == ' ' || *semi == '\n')
                semi++;
            if (*end != ')' || *semi != ';')
                continue;
            end = semi - 1;
            char key[256];
            snprintf(key, sizeof key, "ks_status %.*s(", (int)(paren - name), name);
            const char *l = strstr(listed, key);
            while (l && l > listed && l[-1] != ' ' && l[-1] != '\n')
                l = strstr(l + 1, key);
            if (l == NULL)
                continue;
            char *want = squeeze(l, strcspn(l, "\n"));
            char *shown = squeeze(p, (size_t)(end + 2 - p));  /* up to the ';' */
            /* "…" elides the rest of the parameters: what comes before it must match. */
            const char *dots = strstr(shown, "\xe2\x80\xa6");
            size_t cmp = dots ? (size_t)(dots - shown) : strlen(shown) + 1;
            ck_assert_msg(strncmp(want, shown, cmp) == 0, "%s shows\n  %s\nbut kstub declares\n  %s",
                          k->where, shown, want);
            compared++;
            free(want);
            free(shown);
        }
    }
    blocks_free(&b);
    free(listed);
    /* README.md's five for saxpy, docs/generated-api.md's graph entry points */
    ck_assert_int_ge(compared, 8);
}
END_TEST

/* docs/generated-api.md's reason for the ks__ names: a program's macros
 * named as the graph entry points' parameters do not break the generated
 * header. (kstub.h's own prototypes use plain names: it comes first; and
 * node is the public member of <kernel>_node_t.) */
START_TEST(graph_parameter_names_survive_user_macros)
{
    make_tmpdir();
    write_text_in(tmpdir, "app.c",
                  "#include \"kstub.h\"\n" /* its own prototypes say graph and exec */
                  "#define graph 1\n#define deps 2\n#define ndeps 3\n#define exec 5\n"
                  "#define count 6\n#define nodes 7\n#define launches 8\n#define values 9\n"
                  "#include \"vector_ops.kstub.h\"\n"
                  "int main(void) { return graph + deps + ndeps + exec + count + nodes + "
                  "launches + values == 41 ? 0 : 1; }\n");
    char *out;
    int rc = run(&out, "'%s' kernels/vector_ops.cu -o '%s/vector_ops.kstub' 2>&1 && "
                 "cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude/kstub -I'%s' -fsyntax-only '%s/app.c' 2>&1",
                 kstub_bin(), tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- output shown in the docs ------------------------------------------------------------- */

/* Issue 30 #12: output a page shows is what the tool prints. A block with
 * "<!-- output: SCRIPT -->" on the line above is SCRIPT's output (run from
 * the repository root, kstub from KSTUB), byte for byte; and a block that
 * looks like kstub's output (a file:line: error|warning|note line, a
 * "kstub check:" summary, a "to fix, run:" hint, a JSON report) must have
 * such a marker, so shown output cannot go stale unnoticed. */
static int looks_like_output(const char *text)
{
    char *copy = strdup(text), *save = NULL;
    int hit = 0;
    for (char *l = strtok_r(copy, "\n", &save); l && !hit; l = strtok_r(NULL, "\n", &save)) {
        size_t w = strcspn(l, " :");
        const char *p = l + w;
        if (w > 0 && *p == ':' && isdigit((unsigned char)p[1])) {
            p++;
            p += strspn(p, "0123456789");
            if (*p == ':' && isdigit((unsigned char)p[1])) {
                p++;
                p += strspn(p, "0123456789");
            }
            hit = strncmp(p, ": error: ", 9) == 0 || strncmp(p, ": warning: ", 11) == 0 ||
                  strncmp(p, ": note: ", 8) == 0;
        }
        hit |= strncmp(l, "kstub check: ", 13) == 0 || strncmp(l, "kstub diff: ", 12) == 0 ||
               strncmp(l, "to fix, run:", 12) == 0 || strstr(l, "\"exit_status\": ") != NULL;
        /* Issue 39 #17: a shell transcript ("$ command", then what it
         * printed), kstub's own messages and kstub.mk's and deps.sh's. */
        hit |= strncmp(l, "$ ", 2) == 0 || strncmp(l, "\\$ ", 3) == 0 ||
               strncmp(l, "kstub: ", 7) == 0 || strncmp(l, "kstub-check: ", 13) == 0 ||
               strncmp(l, "deps: ", 6) == 0;
    }
    free(copy);
    return hit;
}

START_TEST(output_shown_is_what_kstub_prints)
{
    blocks b;
    all_blocks(&b);
    int verified = 0;
    for (size_t i = 0; i < b.n; i++) {
        const block *k = &b.v[i];
        if (!k->output[0]) {
            ck_assert_msg(!looks_like_output(k->text), "%s: this block shows kstub's output: put "
                          "<!-- output: SCRIPT --> above it, SCRIPT making that output (tests/docs/):\n%s",
                          k->where, k->text);
            continue;
        }
        char *out;
        int rc = run(&out, "KSTUB='%s' sh '%s' 2>&1", kstub_bin(), k->output);
        ck_assert_msg(rc == 0, "%s: %s failed (%d):\n%s", k->where, k->output, rc, out);
        ck_assert_msg(strcmp(out, k->text) == 0, "%s: the block is not what %s prints; it prints:\n%s",
                      k->where, k->output, out);
        free(out);
        verified++;
    }
    blocks_free(&b);
    /* docs/ci.md: kstub check's report, kstub diff's JSON */
    ck_assert_int_ge(verified, 2);
    /* The lint itself. */
    ck_assert(looks_like_output("a.cu:5:28: error: kernel k removed\n"));
    ck_assert(looks_like_output("x.json:3: warning: kernel k added\n"));
    ck_assert(!looks_like_output("kstub check [options] INPUT.cu -o OUTBASE\n"));
    ck_assert(looks_like_output("$ kstub a.cu -o a -MMD\n$ cat a.d\n"));
    ck_assert(looks_like_output("kstub: error: no input file\n"));
    ck_assert(looks_like_output("kstub-check: note: x.fatbin is not built\n"));
    ck_assert(!looks_like_output("kstub a.cu -o a -MMD\ncat a.d\n"));
}
END_TEST

static Suite *docs_suite(void)
{
    Suite *s = suite_create("docs");
    TCase *tc = tcase_create("gates");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, every_documented_gate_fails_a_failure);
    suite_add_tcase(s, tc);
    tc = tcase_create("kstub.mk");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, include_line_says_kstub_is_not_on_path);
    suite_add_tcase(s, tc);
    tc = tcase_create("markdown");
    tcase_add_test(tc, markdown_tables_are_whole);
    suite_add_tcase(s, tc);
    tc = tcase_create("output");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, output_shown_is_what_kstub_prints);
    suite_add_tcase(s, tc);
    tc = tcase_create("claims");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, internal_linkage_claims_are_true);
    tcase_add_test(tc, no_doc_gates_on_the_breaking_bit);
    tcase_add_test(tc, prototypes_shown_are_generated);
    tcase_add_test(tc, graph_parameter_names_survive_user_macros);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(docs_suite(), CK_FORK_GETENV);
}
