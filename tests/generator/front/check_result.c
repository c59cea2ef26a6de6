/*
 * check_result.c — Check suite for the result cache (generator/cli/result_cache.c,
 * front/fileguard_seen.c), run by make check-pch beside the prelude cache's
 * suite: the kstub binary ($KSTUB) over every file of kernels/, tests/corpus/
 * and tests/corpus/real/ gives the same bytes (outputs, depfile, manifest,
 * messages) on a miss, on a hit and with --no-cache; every change that could
 * change an output is a miss (the input, a header's bytes under the same size
 * and times, a header that shadows one found before, -D, -I, the templates,
 * the target); a header touched but not changed still hits; warnings are
 * said again on a hit; a run that failed is not stored; racing runs both
 * succeed; KSTUB_RESULT_CACHE=0 and --no-cache keep it off; kstub cache
 * counts, prunes and clears its entries. The host trials' cache (issue
 * 38): a trial's verdict the same cold, warm and off, and fresh after an
 * edit of the header or of one it includes, a -D, or a shadowing header.
 *
 * Hits and misses are read from KSTUB_DEBUG_PCH=1's "result hit" and
 * "result miss" lines, and from `kstub cache --stats`.
 */
#include "testutil.h"

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];
static const char *kstub;
static char root[PATH_MAX];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/kstub-result-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_int_eq(run(NULL, "mkdir -m 700 '%s/cache' && mkdir '%s/a' '%s/b'", tmpdir, tmpdir, tmpdir), 0);
}

static void remove_tmpdir(void)
{
    run(NULL, "rm -rf '%s'", tmpdir);
}

static void put(const char *rel, const char *text)
{
    write_text_in(tmpdir, rel, text);
}

/* kstub in tmpdir on x.cu with -Ia -Ib, the test's cache and
 * KSTUB_DEBUG_PCH=1 (env: more variables); out holds stderr and stdout.
 * Outputs: out.h, out.c, out.json, out.d. */
static int gen_env(char **out, const char *env, const char *extra)
{
    return run(out, "cd '%s' && %s KSTUB_CACHE_DIR='%s/cache' KSTUB_DEBUG_PCH=1 '%s' x.cu -Ia -Ib %s -o out "
               "--manifest out.json -MD", tmpdir, env, tmpdir, kstub, extra);
}

static int gen(char **out, const char *extra)
{
    return gen_env(out, "", extra);
}

/* One run: a hit (1) or a miss (0), failing the test unless it succeeded. */
static int hit_of(const char *extra)
{
    char *out;
    int rc = gen(&out, extra);
    ck_assert_msg(rc == 0, "kstub failed:\n%s", out);
    int hit = strstr(out, "result hit ") != NULL;
    ck_assert_msg(hit || strstr(out, "result miss "), "no result cache line:\n%s", out);
    free(out);
    return hit;
}

static char *text_of(const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    return read_text(path);
}

/* Whether out.h holds needle; said short (a header is longer than Check's messages). */
static void header_has(const char *needle, int want)
{
    char *h = text_of("out.h");
    ck_assert_msg((strstr(h, needle) != NULL) == want, "out.h %s \"%s\"", want ? "lacks" : "holds", needle);
    free(h);
}

/* Whether the manifest gives a parameter the C type c ("float *"). */
static void param_type(const char *c, int want)
{
    char *j = text_of("out.json"), needle[64];
    snprintf(needle, sizeof needle, "\"c_type\": \"%s\"", c);
    ck_assert_msg((strstr(j, needle) != NULL) == want, "out.json %s %s", want ? "lacks" : "holds", needle);
    free(j);
}

static int result_files(void)
{
    char *out;
    run(&out, "ls -A '%s/cache' | grep -c '\\.result$'", tmpdir);
    int n = atoi(out);
    free(out);
    return n;
}

/* A file and a header its kernel's type comes from, found in b/. */
static void project(void)
{
    put("x.cu", "#include \"h.h\"\n__global__ void k(T *p, int n) {}\n");
    put("b/h.h", "typedef float T;\n");
}

/* ---- the same bytes ---------------------------------------------------------------------------- */

/* Every .cu of kernels/, tests/corpus/ and tests/corpus/real/ (each with the
 * flags of its "// abi-kstub:" lines) three ways in one directory, outputs
 * removed before each: --no-cache, then with the cache twice (a miss that
 * stores, then a hit that writes what was stored); outputs, manifests,
 * depfiles, messages and exit statuses identical, and every file's second
 * run a hit. */
START_TEST(outputs_identical_on_a_miss_a_hit_and_without_the_cache)
{
    char *out;
    int rc = run(&out,
                 "set -e; cd '%s'; root='%s'; mkdir none miss hit work; n=0;"
                 "for f in $root/kernels/*.cu $root/tests/corpus/*.cu $root/tests/corpus/real/*.cu;"
                 "do b=$(basename $f .cu); fl=$(sed -n 's,^// abi-kstub:,,p' $f); n=$((n+1));"
                 "  for m in none miss hit; do o=; [ $m = none ] && o=--no-cache;"
                 "    (cd work && rm -f $b.* && KSTUB_CACHE_DIR=../cache '%s' $f $fl $o -o $b --manifest $b.json"
                 "       -MD > $b.err 2>&1; echo $? > $b.rc; mv $b.* ../$m/); done;"
                 "done; diff -r none miss; diff -r none hit; echo files $n;"
                 "KSTUB_CACHE_DIR=cache '%s' cache --stats | grep '^result hits'",
                 tmpdir, root, kstub, kstub);
    ck_assert_msg(rc == 0, "outputs differ between a miss, a hit and --no-cache:\n%s", out);
    int files = 0;
    unsigned long long hits = 0, misses = 0;
    const char *f = strstr(out, "files ");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sscanf(f, "files %d\nresult hits       %llu, misses %llu", &files, &hits, &misses), 3);
    ck_assert_int_ge(files, 25);
    ck_assert_msg(hits == (unsigned long long)files && misses == (unsigned long long)files,
                  "not one miss and one hit per file:\n%s", out);
    free(out);
    run(&out, "cd '%s/hit' && grep -L '^0$' *.rc", tmpdir);
    ck_assert_msg(out[0] == '\0', "files refused:\n%s", out);
    free(out);
}
END_TEST

/* A hit writes what a miss writes through the same writer: an output that
 * is already right keeps its time, one removed is written again, the
 * depfile included, with the -MT and -MF the command line gave. */
START_TEST(depfile_and_unchanged_outputs_on_a_hit)
{
    project();
    ck_assert_int_eq(hit_of("-MT stubs -MF deps/out.d"), 0);
    char *d1 = text_of("deps/out.d");
    expect_has(d1, "stubs:");
    expect_has(d1, "b/h.h");
    struct stat before, after;
    char h[PATH_MAX];
    snprintf(h, sizeof h, "%s/out.h", tmpdir);
    ck_assert_int_eq(stat(h, &before), 0);
    ck_assert_int_eq(run(NULL, "rm '%s/deps/out.d'", tmpdir), 0);
    usleep(20000);
    ck_assert_int_eq(hit_of("-MT stubs -MF deps/out.d"), 1);
    char *d2 = text_of("deps/out.d");
    ck_assert_str_eq(d1, d2);
    ck_assert_int_eq(stat(h, &after), 0);
    ck_assert_msg(before.st_mtim.tv_sec == after.st_mtim.tv_sec && before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
                  "an unchanged output was written again on a hit");
    free(d1);
    free(d2);
}
END_TEST

/* ---- what makes a miss ------------------------------------------------------------------------- */

START_TEST(edited_input_misses)
{
    project();
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(hit_of(""), 1);
    put("x.cu", "#include \"h.h\"\n__global__ void k2(T *p, int n) {}\n");
    ck_assert_int_eq(hit_of(""), 0);
    header_has("k2(", 1);
    ck_assert_int_eq(hit_of(""), 1);
}
END_TEST

/* A header rewritten with other bytes of the same size, its modification
 * time set back to the old one to the nanosecond (utimensat): the change
 * time still moves, so the header is hashed again, and the run misses. */
START_TEST(header_edited_under_the_same_size_and_time_misses)
{
    project();
    char hp[PATH_MAX];
    snprintf(hp, sizeof hp, "%s/b/h.h", tmpdir);
    struct stat st;
    ck_assert_int_eq(stat(hp, &st), 0);
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(hit_of(""), 1);
    put("b/h.h", "typedef int   T;\n");            /* the same 17 bytes */
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    ck_assert_int_eq(utimensat(AT_FDCWD, hp, t, 0), 0);
    struct stat now;
    ck_assert_int_eq(stat(hp, &now), 0);
    ck_assert_int_eq(now.st_size, st.st_size);
    ck_assert(now.st_mtim.tv_sec == st.st_mtim.tv_sec && now.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
    ck_assert_int_eq(hit_of(""), 0);
    param_type("int *", 1);
    param_type("float *", 0);
}
END_TEST

/* A header touched, its bytes the same: hashed again, and a hit, which
 * renews the header's stamp in the entry: the next hit hashes nothing. */
START_TEST(header_touched_but_unchanged_hits)
{
    project();
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(hit_of(""), 1);
    ck_assert_int_eq(run(NULL, "touch -d '2001-02-03 04:05:06' '%s/b/h.h'", tmpdir), 0);
    char *out;
    ck_assert_int_eq(gen(&out, ""), 0);
    expect_has(out, "result hit ");
    expect_has(out, "result restamped ");
    free(out);
    ck_assert_int_eq(gen(&out, ""), 0);
    expect_has(out, "result hit ");
    expect_lacks(out, "restamped");
    free(out);
}
END_TEST

/* A header that appears, after a run was stored, where an include looks
 * before the one it found: an earlier -I, the includer's own folder, a
 * folder an include spelled with a directory did not find in an earlier
 * -I. Each is a miss, and the run takes the new header. */
START_TEST(shadowing_header_misses)
{
    project();
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(hit_of(""), 1);
    put("a/h.h", "typedef double T;\n");            /* -Ia comes before -Ib */
    ck_assert_int_eq(hit_of(""), 0);
    param_type("double *", 1);
    ck_assert_int_eq(hit_of(""), 1);
    put("h.h", "typedef short T;\n");               /* "h.h" is looked for beside x.cu first */
    ck_assert_int_eq(hit_of(""), 0);
    param_type("short *", 1);
    /* "sub/s.h" found in b/sub: a/sub does not exist, so clang never
     * opened a/sub/s.h; that a/sub is missing is what is kept. */
    ck_assert_int_eq(run(NULL, "mkdir '%s/b/sub' && rm '%s/h.h'", tmpdir, tmpdir), 0);
    put("b/sub/s.h", "typedef float S;\n");
    put("x.cu", "#include \"h.h\"\n#include \"sub/s.h\"\n__global__ void k(T *p, S *q) {}\n");
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(hit_of(""), 1);
    ck_assert_int_eq(run(NULL, "mkdir '%s/a/sub'", tmpdir), 0);
    put("a/sub/s.h", "typedef char S;\n");
    ck_assert_int_eq(hit_of(""), 0);
    param_type("char *", 1);
}
END_TEST

START_TEST(options_are_in_the_key)
{
    project();
    put("x.cu", "#include \"h.h\"\n#ifdef WIDE\ntypedef double W;\n#else\ntypedef T W;\n#endif\n"
                "__global__ void k(W *p) {}\n");
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(hit_of(""), 1);
    ck_assert_int_eq(hit_of("-DWIDE"), 0);
    param_type("double *", 1);
    ck_assert_int_eq(hit_of("-DWIDE"), 1);
    ck_assert_int_eq(run(NULL, "mkdir '%s/c'", tmpdir), 0);
    put("c/h.h", "typedef long T;\n");
    ck_assert_int_eq(hit_of("-Ic"), 0);             /* after -Ia -Ib: still b/h.h */
    ck_assert_int_eq(hit_of("-Ic"), 1);
    ck_assert_int_eq(hit_of(""), 1);                /* each command line its entry */
    ck_assert_int_eq(result_files(), 3);
}
END_TEST

/* -T: a template edited is a miss (the templates are files the run read);
 * --target: another target is another key. */
START_TEST(templates_and_target_are_seen)
{
    project();
    ck_assert_int_eq(run(NULL, "cp -r '%s/templates' '%s/tpl'", root, tmpdir), 0);
    ck_assert_int_eq(hit_of("-T tpl"), 0);
    ck_assert_int_eq(hit_of("-T tpl"), 1);
    ck_assert_int_eq(run(NULL, "printf '/* restyled */\\n' >> '%s/tpl/header.h.in'", tmpdir), 0);
    ck_assert_int_eq(hit_of("-T tpl"), 0);
    header_has("/* restyled */", 1);
    ck_assert_int_eq(hit_of("-T tpl"), 1);
    ck_assert_int_eq(hit_of("--target python"), 0);
    ck_assert_int_eq(hit_of("--target python"), 1);
}
END_TEST

/* ---- what a hit says, what is never stored ------------------------------------------------------- */

/* A warning and a note the run printed are printed again on a hit, the
 * same bytes (without the debug lines). */
START_TEST(warnings_are_said_again_on_a_hit)
{
    put("x.cu", "__global__ void k(int *p) { undeclared_thing(p); }\nstatic void unused_host() {}\n");
    char *a, *b;
    int rc = run(&a, "cd '%s' && KSTUB_CACHE_DIR=cache '%s' x.cu -o out 2>&1", tmpdir, kstub);
    ck_assert_msg(rc == 0, "%s", a);
    expect_has(a, "warning:");
    rc = run(&b, "cd '%s' && KSTUB_CACHE_DIR=cache '%s' x.cu -o out 2>&1", tmpdir, kstub);
    ck_assert_msg(rc == 0, "%s", b);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    ck_assert_int_eq(run(&a, "cd '%s' && KSTUB_CACHE_DIR=cache '%s' cache --stats", tmpdir, kstub), 0);
    expect_has(a, "result hits       1, misses 1");
    free(a);
}
END_TEST

START_TEST(failed_run_is_not_stored)
{
    put("x.cu", "__global__ void k(int *p) {}\nint broken = ;\n");
    char *a, *b;
    ck_assert_int_ne(gen(&a, ""), 0);
    ck_assert_int_ne(gen(&b, ""), 0);
    expect_has(a, "error:");
    expect_has(b, "error:");
    expect_lacks(b, "result hit");
    ck_assert_int_eq(result_files(), 0);
    free(a);
    free(b);
    /* An output that cannot be written fails the run too: nothing stored. */
    put("x.cu", "__global__ void k(int *p) {}\n");
    ck_assert_int_eq(run(NULL, "mkdir '%s/out.h'", tmpdir), 0);
    ck_assert_int_ne(gen(&a, ""), 0);
    free(a);
    ck_assert_int_eq(result_files(), 0);
}
END_TEST

/* Off: KSTUB_RESULT_CACHE=0 (the prelude cache still on) and --no-cache. */
START_TEST(result_cache_turned_off)
{
    project();
    char *out;
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(gen_env(&out, "KSTUB_RESULT_CACHE=0", ""), 0);
        expect_lacks(out, "result ");
        free(out);
        ck_assert_int_eq(gen(&out, "--no-cache"), 0);
        expect_lacks(out, "result ");
        free(out);
    }
    ck_assert_int_eq(result_files(), 0);
    ck_assert_int_eq(run(&out, "ls '%s/cache' | grep -c '\\.prelude$'", tmpdir), 0);
    free(out);
}
END_TEST

/* Two runs of one command at once: both succeed, one entry stays, and
 * the next run hits it. */
START_TEST(racing_runs_both_succeed)
{
    project();
    char *out;
    int rc = run(&out, "cd '%s' && for i in 1 2 3; do (KSTUB_CACHE_DIR=cache '%s' x.cu -Ia -Ib -o out --manifest "
                 "out.json -MD > r$i.log 2>&1; echo $? > r$i.rc) & done; wait; cat r1.rc r2.rc r3.rc",
                 tmpdir, kstub);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(out, "0\n0\n0\n");
    free(out);
    ck_assert_int_eq(result_files(), 1);
    ck_assert_int_eq(hit_of(""), 1);
}
END_TEST

/* kstub cache: --stats counts the entries and the lookups, --clear and
 * --prune (to a cap below one entry) remove them. */
START_TEST(cache_command_counts_and_removes_results)
{
    project();
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(hit_of(""), 1);
    ck_assert_int_eq(hit_of("-DX"), 0);
    char *out;
    ck_assert_int_eq(run(&out, "KSTUB_CACHE_DIR='%s/cache' '%s' cache --stats", tmpdir, kstub), 0);
    expect_has(out, "\nresults           2 (");
    expect_has(out, "\nresult hits       1, misses 2 ");
    free(out);
    ck_assert_int_eq(run(&out, "KSTUB_CACHE_DIR='%s/cache' '%s' cache --prune --max-size 1", tmpdir, kstub), 0);
    free(out);
    ck_assert_int_eq(result_files(), 0);
    ck_assert_int_eq(hit_of(""), 0);
    ck_assert_int_eq(result_files(), 1);
    ck_assert_int_eq(run(&out, "KSTUB_CACHE_DIR='%s/cache' '%s' cache --clear", tmpdir, kstub), 0);
    free(out);
    ck_assert_int_eq(result_files(), 0);
}
END_TEST

/* ---- the host trials' cache -------------------------------------------------------------------- */

/* A kernel's parameter type from b/h.h, which C cannot compile alone
 * (P is no C type name) and C++ can; it includes <inner.h>, found in b/
 * after a/ was searched. The result cache is off (KSTUB_RESULT_CACHE=0):
 * every run parses, and its trials ask the trial cache. */
static void trial_project(void)
{
    put("x.cu", "#include \"h.h\"\n__global__ void k(P p, int n) {}\n");
    put("b/h.h", "#include <inner.h>\nstruct P { V a; };\ninline int pf(P p) { return (int)p.a; }\n");
    put("b/inner.h", "typedef float V;                                                \n");
}

/* A run with the trial cache (mode "cold" or "warm": its lines say so;
 * "off": --no-cache) under extra: *note is the run's mirroring note
 * ("" when none), checked equal to a run without any cache's, and out.h
 * too. */
static void trial_run(const char *mode, const char *extra, char **note)
{
    char *out, *off, *h_off, args[512];
    snprintf(args, sizeof args, "%s --no-cache", extra);
    ck_assert_int_eq(gen_env(&off, "KSTUB_RESULT_CACHE=0", args), 0);
    ck_assert_msg(strstr(off, "trial ") == NULL, "--no-cache asked the trial cache:\n%s", off);
    h_off = text_of("out.h");
    if (strcmp(mode, "off") == 0) {
        out = off;
    } else {
        free(off);
        ck_assert_int_eq(gen_env(&out, "KSTUB_RESULT_CACHE=0", extra), 0);
        int warm = strcmp(mode, "warm") == 0;
        ck_assert_msg((strstr(out, "trial hit ") != NULL) == warm && (strstr(out, "trial miss ") != NULL) == !warm,
                      "not a %s run:\n%s", mode, out);
        char *h = text_of("out.h");
        ck_assert_msg(strcmp(h, h_off) == 0, "out.h differs from the run without the cache");
        free(h);
    }
    free(h_off);
    const char *n = strstr(out, "note: the generated header mirrors");
    const char *e = n ? strchr(n, '\n') : NULL;
    *note = n ? strndup(n, e ? (size_t)(e - n) : strlen(n)) : strdup("");
    free(out);
}

/* Replaces rel's bytes with text padded with spaces to its size, its times kept. */
static void same_size_edit(const char *rel, const char *text)
{
    char p[PATH_MAX], padded[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    size_t n = strlen(text);
    ck_assert((size_t)st.st_size >= n + 1 && (size_t)st.st_size < sizeof padded);
    memcpy(padded, text, n);
    memset(padded + n, ' ', (size_t)st.st_size - n - 1);
    padded[st.st_size - 1] = '\n';
    padded[st.st_size] = '\0';
    put(rel, padded);
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    ck_assert_int_eq(utimensat(AT_FDCWD, p, t, 0), 0);
    struct stat now;
    ck_assert_int_eq(stat(p, &now), 0);
    ck_assert(now.st_size == st.st_size && now.st_mtim.tv_sec == st.st_mtim.tv_sec &&
              now.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
}

static int trial_files(void)
{
    char *out;
    run(&out, "ls -A '%s/cache' | grep -c '\\.trial$'", tmpdir);
    int n = atoi(out);
    free(out);
    return n;
}

/* Cold, warm and off: the same verdicts, note and header. */
START_TEST(trial_verdicts_same_cold_warm_and_off)
{
    trial_project();
    char *off, *cold, *warm;
    trial_run("off", "", &off);
    ck_assert_msg(strstr(off, "for C callers") && strstr(off, "must use 'struct' tag"), "%s", off);
    ck_assert_int_eq(trial_files(), 0);
    trial_run("cold", "", &cold);
    ck_assert_int_eq(trial_files(), 2);                /* C11 and C++17 */
    trial_run("warm", "", &warm);
    ck_assert_str_eq(cold, off);
    ck_assert_str_eq(warm, off);
    char *out;
    ck_assert_int_eq(gen_env(&out, "KSTUB_RESULT_CACHE=0 KSTUB_CACHE=0", ""), 0);
    ck_assert_msg(strstr(out, "trial ") == NULL, "KSTUB_CACHE=0 asked the trial cache:\n%s", out);
    free(out);
    ck_assert_int_eq(gen_env(&out, "KSTUB_RESULT_CACHE=0 KSTUB_TRIAL_CACHE=0", ""), 0);
    ck_assert_msg(strstr(out, "trial ") == NULL && strstr(out, "must use 'struct' tag"),
                  "KSTUB_TRIAL_CACHE=0 asked the trial cache:\n%s", out);
    free(out);
    ck_assert_int_eq(run(&out, "KSTUB_CACHE_DIR='%s/cache' '%s' cache --clear", tmpdir, kstub), 0);
    free(out);
    ck_assert_int_eq(trial_files(), 0);
    free(off), free(cold), free(warm);
}
END_TEST

/* The header itself, or a header it includes, edited under the same size
 * and times: a fresh verdict, the stale one never used. */
START_TEST(trial_header_or_its_include_edited_misses)
{
    trial_project();
    char *a, *b, *c;
    trial_run("cold", "", &a);
    ck_assert_msg(strstr(a, "for C callers"), "%s", a);
    same_size_edit("b/h.h", "#include <inner.h>\ntypedef struct P { V a; } P;");
    trial_run("cold", "", &b);                          /* C compiles it now */
    ck_assert_str_eq(b, "");
    same_size_edit("b/inner.h", "typedef float V;\n#ifndef __CUDA__\n#error host\n#endif");
    trial_run("cold", "", &c);                          /* neither compiles it now */
    ck_assert_msg(strstr(c, "for C and C++ callers") && strstr(c, "inner.h:3:2: host"), "%s", c);
    free(a), free(b), free(c);
}
END_TEST

/* -D is in the key; a header that shadows one the trial found later in
 * the search path (a/inner.h before b/inner.h) is seen. */
START_TEST(trial_define_and_shadowing_header_miss)
{
    trial_project();
    put("b/inner.h", "typedef float V;\n#if defined WARN && !defined __CUDA__\n#error warned\n#endif\n");
    char *a, *b, *c, *d;
    trial_run("cold", "", &a);
    trial_run("warm", "", &b);
    ck_assert_str_eq(a, b);
    trial_run("cold", "-DWARN", &c);
    ck_assert_msg(strstr(c, "for C and C++ callers") && strstr(c, "warned"), "%s", c);
    put("a/inner.h", "typedef float V;\n#ifndef __CUDA__\n#error shadow\n#endif\n");
    trial_run("cold", "", &d);
    ck_assert_msg(strstr(d, "for C and C++ callers") && strstr(d, "shadow"), "%s", d);
    free(a), free(b), free(c), free(d);
}
END_TEST

static Suite *result_suite(void)
{
    Suite *s = suite_create("result");
    TCase *tc = tcase_create("identical");
    tcase_set_tags(tc, "corpus");    /* check-asan leaves it out: CK_EXCLUDE_TAGS=corpus */
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 1800);     /* a hang guard: three runs over the corpus, CUB and Thrust among it */
    tcase_add_test(tc, outputs_identical_on_a_miss_a_hit_and_without_the_cache);
    suite_add_tcase(s, tc);

    tc = tcase_create("lookup");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, depfile_and_unchanged_outputs_on_a_hit);
    tcase_add_test(tc, edited_input_misses);
    tcase_add_test(tc, header_edited_under_the_same_size_and_time_misses);
    tcase_add_test(tc, header_touched_but_unchanged_hits);
    tcase_add_test(tc, shadowing_header_misses);
    tcase_add_test(tc, options_are_in_the_key);
    tcase_add_test(tc, templates_and_target_are_seen);
    tcase_add_test(tc, warnings_are_said_again_on_a_hit);
    tcase_add_test(tc, failed_run_is_not_stored);
    tcase_add_test(tc, result_cache_turned_off);
    tcase_add_test(tc, racing_runs_both_succeed);
    tcase_add_test(tc, cache_command_counts_and_removes_results);
    suite_add_tcase(s, tc);

    tc = tcase_create("trial");
    tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, trial_verdicts_same_cold_warm_and_off);
    tcase_add_test(tc, trial_header_or_its_include_edited_misses);
    tcase_add_test(tc, trial_define_and_shadowing_header_miss);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    kstub = getenv("KSTUB");
    if (!kstub) {
        fprintf(stderr, "check_result: set KSTUB to the kstub binary (make check-pch does)\n");
        return 2;
    }
    static char abs[PATH_MAX];
    if (kstub[0] != '/' && realpath(kstub, abs))
        kstub = abs;
    if (!getcwd(root, sizeof root) || access("kernels/vector_ops.cu", R_OK) != 0) {
        fprintf(stderr, "check_result: run from the repository root\n");
        return 2;
    }
    unsetenv("KSTUB_RESULT_CACHE");
    return run_suite(result_suite(), CK_FORK_GETENV);
}
