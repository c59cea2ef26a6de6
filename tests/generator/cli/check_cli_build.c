/*
 * check_cli_build.c — check-cli's builds as a user runs them: make -q and
 * make -n with kstub.mk after a complete build, make kstub-check's exit
 * statuses and its hint, <kernel>_n left out for kernels that use dynamic
 * shared memory, KS_CHECK printing the call, the prelude cache's one line
 * on a terminal, and the README's shell commands (Quick start, Your first
 * project) run as written. Part of check-cli (check_cli.c).
 */
#include "check_cli.h"
#include "testutil.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- make -q and make -n with kstub.mk ----------------------------------------------------- */

START_TEST(make_q_and_n_after_a_complete_build)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "cd '%s' && mkdir k && cat > k/two.cu <<'EOF'\n%sEOF\n"
        "printf '#include \"two.kstub.h\"\\nint main(void) {\\n    ks_status (*f)(ks_launch, int *, int, unsigned) = fill;\\n    (void)f;\\n    return 0;\\n}\\n' > main.c && "
        "printf 'KSTUB_KERNELS := k/two.cu\\nKSTUB_OUT := out\\nKSTUB_ARCHS := 90\\n"
        "include $(KSTUB_MK)\\napp: main.o $(KSTUB_OBJS)\\n\\t$(CC) $^ -o $@ $(KSTUB_LIBS)\\n"
        "main.o: main.c | $(KSTUB_HEADERS)\\n\\t$(CC) -std=c11 -Wall -Werror $(KSTUB_CPPFLAGS) "
        "-MMD -MP -c $< -o $@\\n-include main.d\\n' > Makefile",
        tmpdir, two_cu);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char mk[4 * PATH_MAX];
    snprintf(mk, sizeof mk, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make KSTUB_MK=%s/kstub.mk "
             "KSTUB=%s KSTUB_INCLUDE=%s/include/kstub KSTUB_LIBDIR=%s CUDA_PATH=%s NVCC=%s", cwd,
             kstub_bin(), cwd, getenv("KSTUB_LIBDIR") ? getenv("KSTUB_LIBDIR") : "build/lib",
             cuda_path(), nvcc_bin());
    rc = run(&out, "cd '%s' && %s app && ./app", tmpdir, mk);
    ck_assert_msg(rc == 0, "build failed:\n%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s -q app", tmpdir, mk);
    ck_assert_msg(rc == 0, "make -q after a complete build: exit %d\n%s", rc, out);
    ck_assert_str_eq(out, "");
    free(out);
    rc = run(&out, "cd '%s' && %s -n app", tmpdir, mk);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_str_eq(out, "make: 'app' is up to date.\n");
    free(out);
    /* And both still see real work: a touched kernel file. */
    rc = run(&out, "cd '%s' && sleep 1 && touch k/two.cu && %s -q app", tmpdir, mk);
    ck_assert_msg(rc == 1, "make -q after touching k/two.cu: exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && %s -n app", tmpdir, mk);
    ck_assert_msg(rc == 0 && strstr(out, "-fatbin") && strstr(out, "--embed out/k/two.fatbin"),
                  "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* make kstub-check (kstub.mk) builds nothing (NVCC=false: a fatbin rebuilt
 * would fail) and keeps kstub's verdict: up to date after a touch, "Error 4"
 * for an added kernel (compatible), "Error 12" for a changed parameter type
 * (breaking). Before, it rebuilt the fatbins and folded 4 and 12 into 1. */
START_TEST(make_kstub_check_builds_nothing_and_keeps_4_and_12)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "cd '%s' && mkdir k && cat > k/two.cu <<'EOF'\n%sEOF\n"
        "printf 'KSTUB_KERNELS := k/two.cu\\nKSTUB_OUT := out\\nKSTUB_ARCHS := 90\\n"
        "include $(KSTUB_MK)\\nall: $(KSTUB_HEADERS) $(KSTUB_SOURCES)\\n' > Makefile",
        tmpdir, two_cu);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char mk[4 * PATH_MAX];
    snprintf(mk, sizeof mk, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make KSTUB_MK=%s/kstub.mk "
             "KSTUB=%s KSTUB_INCLUDE=%s/include/kstub CUDA_PATH=%s", cwd, kstub_bin(), cwd, cuda_path());
    rc = run(&out, "cd '%s' && %s NVCC=%s all", tmpdir, mk, nvcc_bin());
    ck_assert_msg(rc == 0, "build failed:\n%s", out);
    free(out);
    rc = run(&out, "cd '%s' && sleep 1 && touch k/two.cu && %s NVCC=false kstub-check", tmpdir, mk);
    ck_assert_msg(rc == 0 && !strstr(out, "false"), "kstub-check after a touch: exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && echo '__global__ void more(int *p) { *p = 1; }' >> k/two.cu && "
             "%s NVCC=false kstub-check", tmpdir, mk);
    ck_assert_msg(rc == 2 && strstr(out, "] Error 4\n") && strstr(out, "compatible (4)") &&
                  !strstr(out, "Error 1\n"), "an added kernel: exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && sed -i 's/float s)/double s)/' k/two.cu && %s NVCC=false kstub-check",
             tmpdir, mk);
    ck_assert_msg(rc == 2 && strstr(out, "] Error 12\n") && strstr(out, "BREAKING"),
                  "a changed parameter: exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 30 #12: in a kstub.mk project the fix kstub-check prints is make
 * (kstub.mk passes --fix-command), not a raw kstub command line; applied as
 * printed, it brings everything up to date. Two ways to be stale: the
 * kernel's line moved (no signature changed: kstub check's own report) and a
 * kernel added (kstub diff's, summed up by kstub-check). */
static char *hint(const char *out, const char *before)
{
    const char *h = strstr(out, before);
    ck_assert_msg(h != NULL, "no '%s' in:\n%s", before, out);
    h += strlen(before);
    return strndup(h, strcspn(h, "\n"));
}

START_TEST(kstub_check_hint_in_a_kstub_mk_project_is_make)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "cd '%s' && mkdir k && cat > k/two.cu <<'EOF'\n%sEOF\n"
        "printf 'KSTUB_KERNELS := k/two.cu\\nKSTUB_OUT := out\\nKSTUB_ARCHS := 90\\n"
        "KSTUB_MK := %s/kstub.mk\\nKSTUB := %s\\nKSTUB_INCLUDE := %s/include/kstub\\nCUDA_PATH := %s\\n"
        "NVCC := %s\\ninclude $(KSTUB_MK)\\nall: $(KSTUB_HEADERS) $(KSTUB_SOURCES)\\n' > Makefile",
        tmpdir, two_cu, cwd, kstub_bin(), cwd, cuda_path(), nvcc_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    const char *mk = "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make";
    rc = run(&out, "cd '%s' && %s && %s kstub-check", tmpdir, mk, mk);
    ck_assert_msg(rc == 0, "build failed:\n%s", out);
    free(out);
    rc = run(&out, "cd '%s' && sleep 1 && sed -i '1i // a comment: the kernels move down a line' k/two.cu && "
             "%s kstub-check", tmpdir, mk);
    ck_assert_msg(rc == 2 && strstr(out, "] Error 4\n"), "exit %d\n%s", rc, out);
    char *fix = hint(out, "to fix, run:\n  ");
    ck_assert_str_eq(fix, "make");
    free(out);
    rc = run(&out, "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL %s && %s kstub-check", tmpdir, fix, mk);
    ck_assert_msg(rc == 0, "after '%s': exit %d\n%s", fix, rc, out);
    free(out);
    free(fix);
    rc = run(&out, "cd '%s' && sleep 1 && echo '__global__ void more(int *p) { *p = 1; }' >> k/two.cu && "
             "%s kstub-check", tmpdir, mk);
    ck_assert_msg(rc == 2 && strstr(out, "] Error 4\n"), "exit %d\n%s", rc, out);
    fix = hint(out, "compatible (4); to fix, run: ");
    ck_assert_str_eq(fix, "make");
    free(out);
    rc = run(&out, "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL %s && %s kstub-check", tmpdir, fix, mk);
    ck_assert_msg(rc == 0, "after '%s': exit %d\n%s", fix, rc, out);
    free(out);
    free(fix);
    /* --fix-command is check's alone. */
    rc = run(&out, "cd '%s' && %s k/two.cu --fix-command x -o y", tmpdir, kstub_bin());
    ck_assert_msg(rc == 2 && strstr(out, "--fix-command is for kstub check"), "exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- <kernel>_n and dynamic shared memory --------------------------------------------------- */

/* _n launches with 0 bytes of dynamic shared memory, so kernels that use an
 * extern __shared__ array (in their body, through a __device__ function
 * they call, at file scope, or in a template's body) get none; the others
 * keep theirs, a kernel with a static __shared__ array included. */
static const char shared_cu[] =
    "extern __shared__ float file_scope[];\n"
    "__device__ float stage(const float *x) { extern __shared__ float buf[]; buf[threadIdx.x] = x[threadIdx.x];\n"
    "  __syncthreads(); return buf[0]; }\n"
    "__device__ float twice(const float *x) { return 2 * stage(x); }\n"
    "__global__ void in_body(const float *x, float *y) { extern __shared__ float s[]; s[threadIdx.x] = x[0];\n"
    "  y[0] = s[0]; }\n"
    "__global__ void through_calls(const float *x, float *y) { y[0] = twice(x); }\n"
    "__global__ void at_file_scope(float *y) { file_scope[threadIdx.x] = 1; y[0] = file_scope[0]; }\n"
    "template <typename T> __global__ void templ(T *y) { extern __shared__ unsigned char raw[];\n"
    "  T *s = reinterpret_cast<T *>(raw); s[threadIdx.x] = y[0]; y[0] = s[0]; }\n"
    "template __global__ void templ<double>(double *);\n"
    "__global__ void static_only(float *y) { __shared__ float s[32]; s[threadIdx.x] = 1; y[0] = s[0]; }\n"
    "__global__ void plain(float *y, int n) { if ((int)threadIdx.x < n) y[threadIdx.x] = 0; }\n";

START_TEST(n_is_left_out_for_dynamic_shared_memory)
{
    make_tmpdir();
    write_file("shared.cu", shared_cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s shared.cu -o shared.kstub", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    const char *const without[] = {"in_body", "through_calls", "at_file_scope", "templ_double"};
    const char *const with[] = {"static_only", "plain"};
    for (size_t i = 0; i < 4; i++) {
        rc = run(&out, "cd '%s' && grep -c '%s_n\\b' shared.kstub.c; grep -c 'ks_status %s_n(' "
                 "shared.kstub.h; grep -c '^/\\* No %s_n: the kernel uses an extern __shared__' "
                 "shared.kstub.h", tmpdir, without[i], without[i], without[i]);
        ck_assert_msg(strcmp(out, "0\n0\n1\n") == 0, "%s: %s", without[i], out);
        free(out);
        rc = run(&out, "cd '%s' && grep -m1 -c '^ks_status %s(' shared.kstub.h shared.kstub.c", tmpdir,
                 without[i]);
        ck_assert_msg(strcmp(out, "shared.kstub.h:1\nshared.kstub.c:1\n") == 0, "%s: %s", without[i], out);
        free(out);
    }
    for (size_t i = 0; i < 2; i++) {
        rc = run(&out, "cd '%s' && grep -m1 -c '^ks_status %s_n(' shared.kstub.h shared.kstub.c", tmpdir,
                 with[i]);
        ck_assert_msg(strcmp(out, "shared.kstub.h:1\nshared.kstub.c:1\n") == 0, "%s: %s", with[i], out);
        free(out);
    }
    /* The header and source still compile, strict mode and C++ included. */
    rc = run(&out, "cd '%s' && for s in '' -DKSTUB_STRICT; do "
             "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror $s -I%s/include/kstub -c shared.kstub.c -o c.o && "
             "printf '#include \"shared.kstub.h\"\\n' > u.cc && "
             "g++ -std=c++17 -Wall -Wextra -Wpedantic -Werror $s -I%s/include/kstub -c u.cc -o u.o || exit 1; done",
             tmpdir, cwd, cwd);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- KS_CHECK (kstub.h) ------------------------------------------------------------------------ */

/* KS_CHECK passes KS_OK through, and on a failure prints file:line, the
 * call, the status name and ks_last_error_message() and exits 1; it compiles
 * warning-free as C11 and C++17 (gcc, g++), and a program's own KS_CHECK
 * defined before kstub.h wins. */
START_TEST(ks_check_prints_the_call_and_exits)
{
    make_tmpdir();
    write_file("t.c", "#include \"kstub.h\"\n"
                      "int main(void)\n"
                      "{\n"
                      "    KS_CHECK(KS_OK);\n"
                      "    fputs(\"after ok\\n\", stderr);\n"
                      "    KS_CHECK(ks_image_set_file(NULL, \"x.cubin\"));\n"
                      "    fputs(\"not reached\\n\", stderr);\n"
                      "    return 0;\n"
                      "}\n");
    write_file("own.c", "#define KS_CHECK(x) ((void)(x))\n"
                        "#include \"kstub.h\"\n"
                        "int main(void) { KS_CHECK(ks_image_set_file(NULL, \"x\")); return 0; }\n");
    const char *libdir = getenv("KSTUB_LIBDIR") ? getenv("KSTUB_LIBDIR") : "build/lib";
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    /* Under make check-asan libkstub.a is the sanitized build: the programs
     * link it with the same -fsanitize flags, and exit(1) is not leak-checked. */
    const char *san = getenv("SAN_FLAGS") ? getenv("SAN_FLAGS") : "";
    char *out;
    int rc = run(&out, "cd '%s' && cp t.c t.cc && "
                 "gcc %s -std=c11 -Wall -Wextra -Wpedantic -Werror -I'%s/include/kstub' -I'%s/include' t.c -o t_c "
                 "'%s/libkstub.a' -ldl -lpthread -lm && "
                 "g++ %s -std=c++17 -Wall -Wextra -Wpedantic -Werror -I'%s/include/kstub' -I'%s/include' t.cc -o t_cc "
                 "'%s/libkstub.a' -ldl -lpthread -lm && "
                 "gcc %s -std=c11 -Wall -Wextra -Wpedantic -Werror -I'%s/include/kstub' -I'%s/include' own.c -o own "
                 "'%s/libkstub.a' -ldl -lpthread -lm",
                 tmpdir, san, cwd, cuda, libdir, san, cwd, cuda, libdir, san, cwd, cuda, libdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    const char *const progs[] = {"t_c", "t_cc"};
    for (size_t i = 0; i < 2; i++) {
        rc = run(&out, "cd '%s' && ASAN_OPTIONS=detect_leaks=0 ./%s", tmpdir, progs[i]);
        ck_assert_msg(rc == 1, "%s: exit %d\n%s", progs[i], rc, out);
        ck_assert_msg(strstr(out, "after ok\n") && !strstr(out, "not reached"), "%s", out);
        ck_assert_msg(strstr(out, ":6: ks_image_set_file(NULL, \"x.cubin\"): KS_ERR_INVALID_VALUE: "),
                      "%s: %s", progs[i], out);
        free(out);
    }
    rc = run(&out, "cd '%s' && ASAN_OPTIONS=detect_leaks=0 ./own", tmpdir);
    ck_assert_msg(rc == 0 && out[0] == '\0', "the program's own KS_CHECK: %d %s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- the prelude cache's one line ----------------------------------------------------------- */

/* Issue 30 #17: a run that builds the precompiled prelude (seconds) says so
 * in one line on a terminal; a run that finds it in the cache, a run with
 * --no-cache, and a run whose stderr is not a terminal (a log, a test that
 * compares messages) say nothing. script(1) gives the run a terminal. */
START_TEST(building_the_prelude_says_so_once_on_a_terminal)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    const char *line = "kstub: precompiling the CUDA headers for these options, once (a few seconds); later "
                       "runs with them reuse it from the cache";
    char *out;
    int rc = run(&out, "cd '%s' && for c in c1 c1 c2; do "
                 "script -qec \"KSTUB_CACHE_DIR=$c '%s' --list two.cu >/dev/null\" /dev/null | "
                 "grep -c 'precompiling the CUDA headers'; done; "
                 "script -qec \"KSTUB_CACHE_DIR=c3 '%s' --no-cache --list two.cu >/dev/null\" /dev/null | "
                 "grep -c 'precompiling'; "
                 "KSTUB_CACHE_DIR=c4 '%s' two.cu -o a 2>a.err; '%s' two.cu -o b --no-cache 2>b.err; "
                 "cmp a.err b.err && wc -c < a.err", tmpdir, kstub_bin(), kstub_bin(), kstub_bin(),
                 kstub_bin());
    ck_assert_msg(strcmp(out, "1\n0\n1\n0\n0\n") == 0, "exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && script -qec \"KSTUB_CACHE_DIR=c5 '%s' --list two.cu >/dev/null\" /dev/null",
             tmpdir, kstub_bin());
    ck_assert_msg(strstr(out, line) == out, "%s", out);
    free(out);
    /* A second prelude in the same cache: roughly as long as the last one took. */
    rc = run(&out, "cd '%s' && script -qec \"KSTUB_CACHE_DIR=c5 '%s' --arch sm_80 --list two.cu >/dev/null\" "
             "/dev/null", tmpdir, kstub_bin());
    ck_assert_msg(strncmp(out, "kstub: precompiling the CUDA headers for these options, once (about ", 68) == 0 &&
                  strstr(out, " s, as the last time); later runs with them reuse it from the cache"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- the README -------------------------------------------------------------------------------- */

static char *doc(const char *path)
{
    return read_text(path);
}

static char *readme(void)
{
    return doc("README.md");
}

/* The text of a section: from its heading line to the next heading of the
 * same or a higher level. */
static char *section(const char *text, const char *heading)
{
    char want[256];
    snprintf(want, sizeof want, "\n%s\n", heading);
    const char *start = strstr(text, want);
    ck_assert_msg(start != NULL, "README.md has no '%s'", heading);
    start += strlen(want);
    size_t level = strspn(heading, "#");
    const char *end = start;
    for (;;) {
        end = strstr(end, "\n#");
        if (!end || strspn(end + 1, "#") <= level)
            break;
        end++;
    }
    size_t n = end ? (size_t)(end - start) : strlen(start);
    char *r = malloc(n + 1);
    memcpy(r, start, n);
    r[n] = '\0';
    return r;
}

/* The bodies of the fenced blocks opened with "```lang" in text, joined. */
static char *blocks(const char *text, const char *lang)
{
    char open[32];
    snprintf(open, sizeof open, "```%s\n", lang);
    size_t cap = strlen(text) + 1, len = 0;
    char *r = malloc(cap);
    r[0] = '\0';
    for (const char *p = text; (p = strstr(p, open)) != NULL;) {
        if (p != text && p[-1] != '\n') {
            p++;
            continue;
        }
        p += strlen(open);
        const char *e = strstr(p, "\n```");
        ck_assert_msg(e != NULL, "an unclosed ```%s block", lang);
        memcpy(r + len, p, (size_t)(e - p) + 1);
        len += (size_t)(e - p) + 1;
        r[len] = '\0';
        p = e + 4;
    }
    return r;
}

/* The first project's files shown in the README are the files in the tree
 * (the Makefile and saxpy.cu below their opening comment). */
static void expect_shown(const char *shown, const char *path)
{
    char *out;
    int rc = run(&out, "sed -n '/^[^#/]/,$p' %s", path);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(shown, out) != NULL, "README.md does not show %s as it is:\n%s", path, out);
    free(out);
}

START_TEST(readme_first_project_is_the_tree)
{
    char *text = readme();
    char *sec = section(text, "## Your first project");
    char *mk = blocks(sec, "make"), *cu = blocks(sec, "cuda");
    expect_shown(mk, "examples/first/Makefile");
    expect_shown(cu, "examples/first/saxpy.cu");
    free(mk);
    free(cu);
    free(sec);
    free(text);
}
END_TEST

/* Every ```sh block of README.md, then of docs/ (each .md, in name order), run as
 * written, each in a fresh shell: env -i with only HOME (a scratch folder,
 * so make install PREFIX=$HOME/.local lands there), a system PATH and
 * LANG, started at the root of a copy of the tree (the sources' times kept,
 * so that the build directory of this test run is up to date for it: make
 * gets B through MAKEFLAGS). A block sets up what it needs, as a reader
 * would; the pkg-config block's program runs with no LD_LIBRARY_PATH. The
 * one exception is 'make check', which this test is part of: it runs as
 * 'make -n check'. */
static int write_block_script(const char *path, char *block)
{
    FILE *sh = fopen(path, "w");
    ck_assert_ptr_nonnull(sh);
    fputs("set -e\n", sh);
    int ncommands = 0;
    char *save = NULL;
    for (char *line = strtok_r(block, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *hash = strstr(line, " #");
        if (line[0] == '#')
            continue;
        if (hash)
            *hash = '\0';
        size_t n = strlen(line);
        while (n && line[n - 1] == ' ')
            line[--n] = '\0';
        if (n == 0)
            continue;
        if (strcmp(line, "make check") == 0)
            fprintf(sh, "echo '$ make -n check'\nmake -n check >/dev/null\n");
        else
            fprintf(sh, "echo '$ %s'\n%s\n", line, line);
        ncommands++;
    }
    ck_assert_int_eq(fclose(sh), 0);
    return ncommands;
}

START_TEST(readme_commands_run)
{
    make_tmpdir();
    /* The files, README first. */
    char *list;
    ck_assert_int_eq(run(&list, "echo README.md; ls docs/*.md | LC_ALL=C sort"), 0);
    const char *b = getenv("KSTUB_BUILD") ? getenv("KSTUB_BUILD") : "build";
    char babs[PATH_MAX];
    ck_assert_msg(realpath(b, babs) != NULL, "%s: no build directory", b);
    char *out;
    int rc = run(&out, "mkdir -p '%s/tree' '%s/home' && git ls-files -co --exclude-standard -z | "
                 "grep -zv '^examples/first/\\(build/\\|first$\\|first_driver$\\)' | "
                 "tar --null -T - -cf - | tar -C '%s/tree' -xf -", tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "copying the tree: %s", out);
    free(out);
    /* Under make check-asan the installed libkstub is the sanitized build:
     * programs link it with the same -fsanitize flags (ASan's runtime must
     * come first), and are not leak-checked (they are the user's, with
     * cudart_static inside). A CUDA_PATH other than the default is passed
     * on, as a reader's shell would have it. */
    const char *san = getenv("SAN_FLAGS") ? getenv("SAN_FLAGS") : "";
    const char *asan = getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "";
    const char *cuda = getenv("CUDA_PATH");
    char env[2 * PATH_MAX + 1024];
    snprintf(env, sizeof env, "env -i HOME='%s/home' PATH=/usr/local/bin:/usr/bin:/bin LANG=C MAKEFLAGS='B=%s'"
             "%s%s%s%s%s%s%s", tmpdir, babs,
             cuda && strcmp(cuda, "/usr/local/cuda") != 0 ? " CUDA_PATH='" : "",
             cuda && strcmp(cuda, "/usr/local/cuda") != 0 ? cuda : "",
             cuda && strcmp(cuda, "/usr/local/cuda") != 0 ? "'" : "",
             *san ? " CC='cc " : "", san, *san ? "' ASAN_OPTIONS='" : "",
             *san ? asan : "");
    if (*san)
        strncat(env, ":detect_leaks=0'", sizeof env - strlen(env) - 1);
    char *all = strdup("");
    int nblocks = 0, ncommands = 0;
    char *fsave = NULL;
    for (char *file = strtok_r(list, "\n", &fsave); file; file = strtok_r(NULL, "\n", &fsave)) {
        /* docs/python.md loads a module linked with libkstub.a into python3:
         * under check-asan that is the sanitized library, which cannot load
         * into the uninstrumented interpreter (as check-python, left out
         * there too). make check runs its blocks. */
        if (*san && strcmp(file, "docs/python.md") == 0)
            continue;
        char *text = doc(file);
        /* Each block, in order: blocks() joins them, so find them one by one. */
        for (const char *p = text; (p = strstr(p, "\n```sh\n")) != NULL;) {
            p += 7;
            const char *e = strstr(p, "\n```");
            ck_assert_msg(e != NULL, "%s: an unclosed ```sh block", file);
            char *block = strndup(p, (size_t)(e - p) + 1);
            char script[PATH_MAX + 64];
            snprintf(script, sizeof script, "%s/block%d.sh", tmpdir, nblocks);
            ncommands += write_block_script(script, block);
            free(block);
            rc = run(&out, "cd '%s/tree' && %s bash '%s' 2>&1", tmpdir, env, script);
            all = realloc(all, strlen(all) + strlen(out) + 1);
            ck_assert_ptr_nonnull(all);
            strcat(all, out);
            const char *tail = strlen(out) > 3000 ? out + strlen(out) - 3000 : out;
            ck_assert_msg(rc == 0, "%s: the %s command block (#%d) failed (%d):\n...%s", file,
                          nblocks == 0 ? "first" : "next", nblocks, rc, tail);
            free(out);
            nblocks++;
            p = e + 4;
        }
        free(text);
        /* After the README's blocks, a second make in the first project has
         * nothing to do (docs/ installs kstub again: a newer kstub, which
         * rightly regenerates). */
        if (strcmp(file, "README.md") == 0) {
            rc = run(&out, "cd '%s/tree/examples/first' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u KSTUB "
                     "-u KSTUB_LIBDIR -u KSTUB_INCLUDE PATH='%s/home/.local/bin':\"$PATH\" make -q", tmpdir, tmpdir);
            ck_assert_msg(rc == 0, "make -q in examples/first after make: %d\n%s", rc, out);
            free(out);
        }
    }
    free(list);
    ck_assert_int_ge(nblocks, 5);
    ck_assert_int_ge(ncommands, 16);
    char *o = all;
    /* make demo and the programs: what they say without a driver, or with one. */
    ck_assert_msg(strstr(o, "demo: no CUDA driver on this machine") || strstr(o, "kernels passed"), "%s", o);
    ck_assert_msg(strstr(o, "\nfirst: no CUDA driver on this machine (") ||
                  strstr(o, "\nfirst: saxpy over 1048576 elements: PASS"), "%s", o);
    ck_assert_msg(strstr(o, "\nfirst_driver: no CUDA driver on this machine (") ||
                  strstr(o, "\nfirst_driver: saxpy over 1048576 elements: PASS"), "%s", o);
    /* Issue 30 #15: make demo lists every kernel it generated a stub for
     * (as many as kstub --list prints over kernels/), in a file table whose
     * byte column lines up, and the build is quiet (no -Wpsabi note for
     * the CUtensorMap stub). */
    char *listed;
    ck_assert_int_eq(run(&listed, "for f in kernels/*.cu; do %s --list $f 2>/dev/null | "
                         "sed 's|^ks_status \\([a-z0-9_]*\\)(.*|'\"$f\"' \\1|'; done", kstub_bin()), 0);
    int nkernels = 0;
    for (const char *l = listed; *l; l = strchr(l, '\n') + 1) {
        char file[256], name[256], want[600];
        ck_assert_int_eq(sscanf(l, "%255s %255s", file, name), 2);
        snprintf(want, sizeof want, "\n  %s ", file);
        const char *row = o;
        while ((row = strstr(row, want)) != NULL) {
            row += strlen(want);
            row += strspn(row, " ");
            if (strncmp(row, name, strlen(name)) == 0 && row[strlen(name)] == '\n')
                break;
        }
        ck_assert_msg(row != NULL, "make demo does not list %s's kernel %s:\n%s", file, name, o);
        nkernels++;
    }
    free(listed);
    char head[128];
    snprintf(head, sizeof head, "demo: kstub generated stubs for %d kernels from ", nkernels);
    ck_assert_msg(nkernels >= 16 && strstr(o, head), "%s\n%s", head, o);
    long column = -1;
    for (const char *r = o; (r = strstr(r, "\n  build/examples/gen/")) != NULL; r++) {
        const char *e = strchr(r + 1, '\n'), *bytes = strstr(r + 1, " bytes\n");
        ck_assert_msg(bytes && e && bytes < e, "%.*s", (int)(e ? e - r : 80), r);
        ck_assert_msg(column < 0 || bytes - r == column, "make demo's byte column is misaligned:\n%s", o);
        column = bytes - r;
    }
    ck_assert_msg(column > 0, "make demo lists no generated file:\n%s", o);
    ck_assert_msg(!strstr(o, "the ABI for passing parameters"), "make demo's build is not quiet:\n%s", o);
    /* The pkg-config route's program ran from a fresh shell. */
    ck_assert_msg(strstr(o, "$ ./build/pc/first_driver\nfirst_driver: "), "%s", o);
    ck_assert_msg(strstr(o, "$ build/cmake-example/scale_app\nscale_app: ") &&
                  strstr(o, "$ build/meson-example/scale_app\nscale_app: "), "%s", o);
    free(o);
    remove_tmpdir();
}
END_TEST

Suite *cli_build_suite(void)
{
    Suite *s = suite_create("cli-build");
    TCase *tc;
    tc = tcase_create("n");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, n_is_left_out_for_dynamic_shared_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("prelude");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, building_the_prelude_says_so_once_on_a_terminal);
    suite_add_tcase(s, tc);
    tc = tcase_create("ks_check");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ks_check_prints_the_call_and_exits);
    suite_add_tcase(s, tc);
    tc = tcase_create("readme");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, readme_first_project_is_the_tree);
    tcase_add_test(tc, readme_commands_run);
    suite_add_tcase(s, tc);
    tc = tcase_create("make");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, make_q_and_n_after_a_complete_build);
    tcase_add_test(tc, make_kstub_check_builds_nothing_and_keeps_4_and_12);
    tcase_add_test(tc, kstub_check_hint_in_a_kstub_mk_project_is_make);
    suite_add_tcase(s, tc);
    return s;
}
