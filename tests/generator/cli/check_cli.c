/*
 * check_cli.c — the kstub command line's edges (issue 14): --list (text and
 * json, parse only, nothing written), what -o names (x.h, x.c, a folder
 * refused), missing output folders created for -o, --manifest and -MF and
 * none left behind by a failed run, --embed of an nvcc image that lacks one
 * of the input's kernels refused with the kernel named, or one of its
 * device variables (or sizes it otherwise) with the variable named and why,
 * make -q and make -n
 * with kstub.mk after a complete build, <kernel>_n left out for kernels that
 * use dynamic shared memory, and the README's shell commands (Quick start,
 * Your first project) and its copy of kstub --help.
 *
 *   KSTUB=build/bin/kstub NVCC=nvcc KSTUB_LIBDIR=build/lib KSTUB_BUILD=build build/tests/check_cli
 *
 * Run from the repository root (make check-cli does).
 */
#include "testutil.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
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

static const char *nvcc_bin(void)
{
    return getenv("NVCC") ? getenv("NVCC") : "/usr/local/cuda/bin/nvcc";
}

static const char *cuda_path(void)
{
    return getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
}

static char tmpdir[PATH_MAX];
static char cwd[PATH_MAX];

static void make_tmpdir(void)
{
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/kstub-cli-XXXXXX", t);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
}

static void remove_tmpdir(void)
{
    char *out;
    run(&out, "rm -rf '%s'", tmpdir);
    free(out);
}

/* Two kernels, one C++ (mangled) and one extern "C", with a restrict
 * pointer and an unsigned: their stubs' prototypes are known exactly,
 * spelled as the header declares them (KS_RESTRICT, not restrict: issue 20). */
static const char two_cu[] =
    "__global__ void fill(int *p, int v, unsigned n) { unsigned i = threadIdx.x; if (i < n) p[i] = v; }\n"
    "extern \"C\" __global__ void scale(const float *__restrict__ x, float *y, float s)\n"
    "{ y[threadIdx.x] = s * x[threadIdx.x]; }\n";
/* The first of them alone: an image of it lacks 'scale'. */
static const char one_cu[] =
    "__global__ void fill(int *p, int v, unsigned n) { unsigned i = threadIdx.x; if (i < n) p[i] = v; }\n";

static const char *const two_protos[] = {
    "ks_status fill(ks_launch launch, int *p, int v, unsigned int n)",
    "ks_status scale(ks_launch launch, const float *KS_RESTRICT x, float *y, float s)",
};

static void write_file(const char *name, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The names in tmpdir, sorted, one a line (find's view of the tree). */
static char *tree(void)
{
    char *out;
    int rc = run(&out, "cd '%s' && find . -mindepth 1 | LC_ALL=C sort", tmpdir);
    ck_assert_int_eq(rc, 0);
    return out;
}

/* ---- --list ------------------------------------------------------------------------------------ */

START_TEST(list_text_prints_prototypes_and_writes_nothing)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *before = tree(), *out;
    int rc = run(&out, "cd '%s' && %s --list two.cu 2>/dev/null", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "kstub --list failed (%d):\n%s", rc, out);
    char want[512];
    snprintf(want, sizeof want, "%s;\n%s;\n", two_protos[0], two_protos[1]);
    ck_assert_str_eq(out, want);
    char *after = tree();
    ck_assert_str_eq(after, before);
    free(out);
    /* -o and --manifest change nothing: --list still writes no file. */
    rc = run(&out, "cd '%s' && %s --list two.cu -o x --manifest m.json -MD", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(after);
    after = tree();
    ck_assert_str_eq(after, before);
    free(out);
    free(after);
    free(before);
    remove_tmpdir();
}
END_TEST

/* The prototype --list prints and the manifest's c_type are the header
 * template's pieces ({{*prototype}}, {{*manifest_c_type}}): a -T copy of the
 * templates that restyles them restyles both (they were built in C). */
START_TEST(list_and_c_type_follow_the_templates)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *out, tdir[PATH_MAX];
    ck_assert_ptr_nonnull(realpath("templates", tdir));
    int rc = run(&out, "cd '%s' && mkdir tpl && cp '%s'/*.in tpl/ && "
                 "sed -i 's/{{\\*prototype}}ks_status /{{*prototype}}KS_API ks_status /; "
                 "s/{{#restrict}}restrict{{\\/restrict}}/{{#restrict}}__restrict{{\\/restrict}}/' "
                 "tpl/header.h.in && %s --list -T tpl two.cu && %s -T tpl two.cu -o x --manifest x.json "
                 "&& grep -c '\"c_type\": \"const float \\*__restrict\"' x.json",
                 tmpdir, tdir, kstub_bin(), kstub_bin());
    ck_assert_msg(rc == 0, "kstub -T failed (%d):\n%s", rc, out);
    char want[512];
    snprintf(want, sizeof want, "KS_API %s;\nKS_API %s;\n1\n", two_protos[0], two_protos[1]);
    ck_assert_str_eq(out, want);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(list_json_carries_prototypes)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *before = tree(), *out;
    int rc = run(&out, "cd '%s' && %s --list --format=json two.cu 2>/dev/null", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "kstub --list --format=json failed (%d):\n%s", rc, out);
    json_error_t err;
    json_t *doc = json_loads(out, 0, &err);
    ck_assert_msg(doc != NULL, "not JSON (%s):\n%s", err.text, out);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "source")), "two.cu");
    json_t *ks = json_object_get(doc, "kernels");
    ck_assert_uint_eq(json_array_size(ks), 2);
    const char *symbols[] = {"_Z4fillPiij", "scale"};
    for (size_t i = 0; i < 2; i++) {
        json_t *k = json_array_get(ks, i);
        ck_assert_str_eq(json_string_value(json_object_get(k, "prototype")), two_protos[i]);
        ck_assert_str_eq(json_string_value(json_object_get(k, "symbol")), symbols[i]);
        ck_assert_uint_eq(json_array_size(json_object_get(k, "params")), 3);
    }
    json_decref(doc);
    char *after = tree();
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 30 #16: --list --all also prints each stub's other entry points
 * (_n when the kernel has one, _node, _node_set, _nodes_set) and the one
 * C name over a template's instances. Each printed prototype redeclares
 * the header's declaration exactly (a C11 compile of the header and the
 * lines together), every public declaration of the header is printed, and
 * each one name is a macro the header defines. JSON carries the same. */
START_TEST(list_all_shows_every_entry_point)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "cp kernels/templates.cu '%s/t.cu' && printf '%%s\\n' "
                 "'__global__ void dyn(float *y) { extern __shared__ float s[]; s[0] = 1; y[0] = s[0]; }' "
                 ">> '%s/t.cu'", tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --list --all t.cu 2>/dev/null > all.txt && %s t.cu -o t 2>/dev/null && "
             "{ echo '#include \"t.h\"'; grep '^ *ks_status' all.txt; } > redecl.c && "
             "{ echo '#include \"t.h\"'; grep '^/\\* [a-z_]*(' all.txt | "
             "sed 's|^/\\* \\([a-z_]*\\)(.*|#ifndef \\1\\n#error \\1\\n#endif|'; } > generic.c && "
             "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -DKSTUB_PLAIN_CALLS -I%s/include/kstub -fsyntax-only redecl.c && "
             "gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -I%s/include/kstub -fsyntax-only generic.c && "
             "grep -o '^ks_status [a-z][a-z0-9_]*(' t.h | grep -v ' ks__' | sort > declared && "
             "grep -o '^ *ks_status [a-z][a-z0-9_]*(' all.txt | sed 's/^ *//' | sort > listed && "
             "diff declared listed && wc -l < listed && grep -c '^/\\* ' all.txt && "
             "grep -c '_n(' all.txt && grep -c '^ks_status dyn_n(' t.h",
             tmpdir, kstub_bin(), kstub_bin(), cwd, cwd);
    /* templates.cu: 4 kernels, dyn without _n; fill and tmpl_axpy */
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, out);
    ck_assert_msg(strcmp(out, "24\n2\n4\n0\n") == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && grep -c 'fill(launch, out, value, n): one name over fill_int, fill_u16' all.txt && "
             "%s --list --all --format=json t.cu 2>/dev/null | grep -c '\"entry_points\"\\|\"generics\"' && "
             "%s --list --format=json t.cu 2>/dev/null | grep -c '\"entry_points\"\\|\"generics\"'",
             tmpdir, kstub_bin(), kstub_bin());
    ck_assert_msg(strcmp(out, "1\n6\n0\n") == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --all t.cu -o t", tmpdir, kstub_bin());
    ck_assert_msg(rc == 2 && strstr(out, "--all is for --list"), "exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* A file that does not parse: file:line:col errors, exit 1, nothing on stdout. */
START_TEST(list_errors_as_usual)
{
    make_tmpdir();
    write_file("bad.cu", "__global__ void k(int *p) { *p = 0; }\nint broken(;\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s --list bad.cu 2>&1 >stdout.txt; cat stdout.txt | wc -c", tmpdir,
                 kstub_bin());
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "bad.cu:2:") && strstr(out, ": error: "), "%s", out);
    ck_assert_msg(strstr(out, "nothing listed") && strstr(out, "\n0\n"), "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s --list bad.cu", tmpdir, kstub_bin());
    ck_assert_int_eq(rc, 1);
    free(out);
    rc = run(&out, "cd '%s' && %s --list --format=github bad.cu", tmpdir, kstub_bin());
    ck_assert_int_eq(rc, 2);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- -o and the output folders ------------------------------------------------------------------ */

START_TEST(o_with_an_extension_names_the_stem)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s two.cu -o x.h && %s two.cu -o y.c && ls", tmpdir, kstub_bin(),
                 kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_str_eq(out, "two.cu\nx.c\nx.h\ny.c\ny.h\n");
    free(out);
    rc = run(&out, "cd '%s' && grep -c 'ks_status fill(' x.h y.h && grep -l '#include \"x.h\"' x.c",
             tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(o_naming_a_folder_is_refused)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *before = tree();
    const char *const bad[] = {"out/", "sub/.", "..", "."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *out;
        int rc = run(&out, "cd '%s' && %s two.cu -o '%s'", tmpdir, kstub_bin(), bad[i]);
        ck_assert_msg(rc == 2, "-o %s: exit %d\n%s", bad[i], rc, out);
        ck_assert_msg(strstr(out, "not a directory") != NULL, "-o %s:\n%s", bad[i], out);
        free(out);
        char *after = tree();
        ck_assert_str_eq(after, before);
        free(after);
    }
    free(before);
    remove_tmpdir();
}
END_TEST

START_TEST(missing_output_folders_are_created)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s two.cu -o gen/a/x --manifest meta/b/x.json -MF deps/c/x.d && "
                 "find gen meta deps -type f | LC_ALL=C sort", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_str_eq(out, "deps/c/x.d\ngen/a/x.c\ngen/a/x.h\nmeta/b/x.json\n");
    free(out);
    rc = run(&out, "cd '%s' && head -1 deps/c/x.d", tmpdir);
    ck_assert_msg(strstr(out, "gen/a/x.h gen/a/x.c meta/b/x.json:") == out, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* A run that fails creates no folder and leaves no file, whatever failed:
 * the parse, or the --embed check after it. */
START_TEST(failed_runs_create_nothing)
{
    make_tmpdir();
    write_file("bad.cu", "__global__ void k(int *p) { *p = 0; }\nint broken(;\n");
    write_file("two.cu", two_cu);
    write_file("other.ptx", "not an image\n");
    char *before = tree(), *out;
    int rc = run(&out, "cd '%s' && %s bad.cu -o gen/a/x --manifest meta/b/x.json -MF deps/c/x.d",
                 tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, out);
    ck_assert_msg(strstr(out, "nothing written"), "%s", out);
    free(out);
    char *after = tree();
    ck_assert_str_eq(after, before);
    free(after);
    rc = run(&out, "cd '%s' && %s two.cu --embed other.ptx -o gen/a/x --manifest meta/b/x.json -MD",
             tmpdir, kstub_bin());
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, out);
    free(out);
    after = tree();
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    remove_tmpdir();
}
END_TEST

/* ---- --embed checks the image's kernels ------------------------------------------------------ */

static const char *const image_kinds[] = {"-ptx", "-cubin", "-fatbin"};

/* nvcc KIND (-ptx, -cubin, -fatbin) of a.cu into a.img and b.cu into b.img, in tmpdir. */
static void nvcc_images(const char *kind, const char *a, const char *b)
{
    char *out;
    int rc = run(&out, "cd '%s' && %s %s -arch=sm_90 %s.cu -o %s.img && %s %s -arch=sm_90 %s.cu -o %s.img",
                 tmpdir, nvcc_bin(), kind, a, a, nvcc_bin(), kind, b, b);
    ck_assert_msg(rc == 0, "nvcc %s failed:\n%s", kind, out);
    free(out);
}

/* kstub ARGS in tmpdir, which must fail (exit 1) and write nothing; its output. */
static char *kstub_refuses(const char *what, const char *args)
{
    char *before = tree(), *out;
    int rc = run(&out, "cd '%s' && %s %s", tmpdir, kstub_bin(), args);
    ck_assert_msg(rc == 1, "%s: exit %d\n%s", what, rc, out);
    char *after = tree();
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    return out;
}

START_TEST(embed_of_an_image_lacking_a_kernel_is_refused)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    write_file("one.cu", one_cu);
    const char *kind = image_kinds[_i];
    nvcc_images(kind, "one", "two");
    char *out = kstub_refuses(kind, "two.cu --embed one.img -o stubs");
    ck_assert_msg(strstr(out, "two.cu:2:") && strstr(out, "error: kernel 'scale'") &&
                  strstr(out, "not in the image 'one.img'"), "%s:\n%s", kind, out);
    free(out);
    /* The image of the input itself is accepted and embedded. */
    int rc = run(&out, "cd '%s' && %s two.cu --embed two.img -o stubs && ls stubs.c stubs.h", tmpdir,
             kstub_bin());
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", kind, rc, out);
    ck_assert_msg(strstr(out, "error") == NULL && strstr(out, "warning") == NULL, "%s", out);
    free(out);
    /* So is an image with more kernels than the input has. */
    rc = run(&out, "cd '%s' && %s one.cu --embed two.img -o more", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", kind, rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 19 #11: an image whose bytes contradict themselves is refused (exit
 * 1, the image named with what is wrong, nothing written); it was embedded
 * with a warning, to fail at the first launch. Each case is nvcc's own
 * image, cut or overwritten. */
static unsigned char *slurp(const char *name, size_t *size)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    static unsigned char buf[1 << 20];
    *size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void spill(const char *name, const unsigned char *bytes, size_t size)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

START_TEST(embed_of_a_corrupt_image_is_refused)
{
    make_tmpdir();
    write_file("two.cu", two_cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s -fatbin -arch=sm_90 two.cu -o two.fatbin && "
                 "%s -cubin -arch=sm_90 two.cu -o two.cubin", tmpdir, nvcc_bin(), nvcc_bin());
    ck_assert_msg(rc == 0, "nvcc failed:\n%s", out);
    free(out);
    size_t n;
    unsigned char *b = slurp("two.fatbin", &n);
    ck_assert_uint_gt(n, 64);
    spill("cut16.fatbin", b, 16);                       /* the header alone */
    memset(b + 4, 0xab, n - 4);                         /* garbage after the magic */
    spill("garbage.fatbin", b, n);
    b = slurp("two.fatbin", &n);
    memset(b + 16, 0xab, n - 16);                       /* garbage after the header */
    spill("members.fatbin", b, n);
    b = slurp("two.cubin", &n);
    ck_assert_uint_gt(n, 0x40);
    uint64_t past = (uint64_t)n + 4096;                 /* e_shoff past the end */
    for (int i = 0; i < 8; i++)
        b[0x28 + i] = (unsigned char)(past >> (8 * i));
    spill("shoff.cubin", b, n);
    static const char *const cases[][2] = {
        {"cut16.fatbin", "cut16.fatbin: error: corrupt image: the fatbin at byte 0: its header "
                         "gives"},
        {"garbage.fatbin", "garbage.fatbin: error: corrupt image: the fatbin at byte 0"},
        {"members.fatbin", "members.fatbin: error: corrupt image: member 1: its header gives a "
                           "size beyond the end of the fatbin"},
        {"shoff.cubin", "shoff.cubin: error: corrupt image: cubin: its section headers lie "
                        "beyond its end"},
    };
    char *before = tree();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rc = run(&out, "cd '%s' && %s two.cu --embed %s -o stubs", tmpdir, kstub_bin(),
                 cases[i][0]);
        ck_assert_msg(rc == 1, "%s: exit %d\n%s", cases[i][0], rc, out);
        ck_assert_msg(strstr(out, cases[i][1]) != NULL, "%s: wanted \"%s\" in:\n%s", cases[i][0],
                      cases[i][1], out);
        ck_assert_msg(strstr(out, "warning") == NULL, "%s", out);
        free(out);
        char *after = tree();
        ck_assert_str_eq(after, before);
        free(after);
    }
    free(before);
    remove_tmpdir();
}
END_TEST

/* Issue 30 #2: kstub check --embed, as the build passes it, after a
 * kernel's signature changed: the image built before the change lacks the
 * new symbol. check reports the drift (exit 12, as without --embed), then
 * a note naming the stale image; rebuilding the image and running the
 * printed fix brings everything up to date. */
START_TEST(check_embed_reports_drift_before_a_stale_image)
{
    make_tmpdir();
    write_file("k.cu", "#include <stddef.h>\n"
                       "__global__ void saxpy(float a, const float *x, float *y, size_t n)\n"
                       "{ size_t i = threadIdx.x; if (i < n) y[i] += a * x[i]; }\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s -fatbin -arch=sm_90 k.cu -o k.fatbin && "
                 "%s k.cu --embed k.fatbin -o gen/k.kstub --manifest gen/k.kstub.json && "
                 "cp k.fatbin old.fatbin && sed -i 's/size_t n/int n/' k.cu", tmpdir, nvcc_bin(),
                 kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    const char *args = "k.cu --embed k.fatbin -o gen/k.kstub --manifest gen/k.kstub.json";
    rc = run(&out, "cd '%s' && %s check %s 2>&1", tmpdir, kstub_bin(), args);
    ck_assert_msg(rc == 12, "exit %d\n%s", rc, out);
    const char *drift = strstr(out, "parameter 4 'n': type changed from 'size_t' to 'int'");
    const char *note = strstr(out, "k.fatbin: note: the image does not define kernel 'saxpy' "
                                   "(symbol '_Z5saxpyfPKfPfi')");
    ck_assert_msg(drift && note && drift < note, "%s", out);
    ck_assert_msg(!strstr(out, "nothing checked"), "%s", out);
    free(out);
    /* Both formats that CI reads carry the note. */
    rc = run(&out, "cd '%s' && %s check --format=json %s", tmpdir, kstub_bin(), args);
    ck_assert_msg(rc == 12 && strstr(out, "\"kind\": \"image_stale\""), "exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && %s check --format=github %s", tmpdir, kstub_bin(), args);
    ck_assert_msg(rc == 12 && strstr(out, "::notice file=k.fatbin,title=kstub check::the image"),
                  "exit %d\n%s", rc, out);
    free(out);
    /* The fix: rebuild the image, then the printed command. */
    rc = run(&out, "cd '%s' && %s -fatbin -arch=sm_90 k.cu -o k.fatbin && %s %s && %s check %s",
             tmpdir, nvcc_bin(), kstub_bin(), args, kstub_bin(), args);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    free(out);
    /* The old image put back: the .c embeds other bytes (4, no kernel
     * changed), and the note says why. */
    rc = run(&out, "cd '%s' && cp old.fatbin k.fatbin && %s check %s 2>&1", tmpdir, kstub_bin(), args);
    ck_assert_msg(rc == 4 && strstr(out, "k.fatbin: note: the image does not define kernel 'saxpy'"),
                  "exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- --embed checks the image's device variables (issue 29) ------------------------------------ */

/* A const scalar, a __constant__ table and struct, a static counter, a
 * __device__ one: what kstub gives accessors. old.cu is the same file
 * before k_scale was added and while c_w had 8 elements; mid.cu lacks
 * k_scale only. */
static const char vars_cu[] =
    "struct P { float gain; int taps; double bias; };\n"
    "const __device__ int k_scale = 3;\n"
    "__constant__ float c_w[16];\n"
    "__constant__ P c_p;\n"
    "static __device__ int s_hits;\n"
    "__device__ unsigned g_count;\n"
    "__global__ void apply(float *o) { o[0] = c_w[1] * k_scale + c_p.gain + s_hits; atomicAdd(&g_count, 1u); }\n";
static const char vars_old_cu[] =
    "struct P { float gain; int taps; double bias; };\n"
    "__constant__ float c_w[8];\n"
    "__constant__ P c_p;\n"
    "static __device__ int s_hits;\n"
    "__device__ unsigned g_count;\n"
    "__global__ void apply(float *o) { o[0] = c_w[1] + c_p.gain + s_hits; atomicAdd(&g_count, 1u); }\n";

/* Each variable kstub types is looked up in the embedded image (PTX
 * .global/.const declarations, the cubins' object symbols) and its size
 * compared: the image of the file itself is accepted, a static and a const
 * variable found by their plain names (a whole-program image); an image
 * built before k_scale was added and c_w grew is refused, each named, and
 * nothing is written. The hints, applied: rebuilding the image (the first
 * case) and '// kstub:skip k_scale' against an image that lacks it. */
START_TEST(embed_checks_device_variables)
{
    make_tmpdir();
    write_file("vars.cu", vars_cu);
    write_file("old.cu", vars_old_cu);
    const char *kind = image_kinds[_i];
    char *out;
    nvcc_images(kind, "vars", "old");
    int rc = run(&out, "cd '%s' && %s vars.cu --embed vars.img -o stubs", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", kind, rc, out);
    ck_assert_msg(strstr(out, "error") == NULL && strstr(out, "warning") == NULL, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && grep -c 'ks_status \\(k_scale\\|s_hits\\|c_w\\|c_p\\|g_count\\)_get(' stubs.h",
             tmpdir);
    ck_assert_msg(rc == 0 && atoi(out) == 5, "%s", out);
    free(out);
    out = kstub_refuses(kind, "vars.cu --embed old.img -o stubs2");
    ck_assert_msg(strstr(out, "vars.cu:2:22: error: variable 'k_scale' (symbol 'k_scale') is not in the "
                              "image 'old.img', which defines ") &&
                  strstr(out, "it is const, and a compiler may fold a const variable into its uses and "
                              "leave no symbol; or the image was built from another file, or before the "
                              "variable was added; rebuild the image from this file, or leave the "
                              "variable out with '// kstub:skip k_scale'"), "%s:\n%s", kind, out);
    ck_assert_msg(strstr(out, "vars.cu:3:20: error: variable 'c_w' (symbol 'c_w') has 32 bytes in ") &&
                  strstr(out, "of the image 'old.img', but its type float[16] has 64"), "%s:\n%s", kind, out);
    ck_assert_msg(strstr(out, "error: variable 's_hits'") == NULL &&
                  strstr(out, "error: variable 'c_p'") == NULL, "%s:\n%s", kind, out);
    free(out);
    if (_i != 2) {
        remove_tmpdir();
        return;
    }
    /* The skip hint, against an image that lacks k_scale only. */
    rc = run(&out, "cd '%s' && sed '2d; s/ \\* k_scale//' vars.cu > mid.cu && "
             "%s %s -arch=sm_90 mid.cu -o mid.img && %s vars.cu --embed mid.img -o stubs3",
             tmpdir, nvcc_bin(), kind, kstub_bin());
    ck_assert_msg(rc == 1 && strstr(out, "'// kstub:skip k_scale'"), "exit %d\n%s", rc, out);
    free(out);
    rc = run(&out, "cd '%s' && sed -i '2i // kstub:skip k_scale' vars.cu && "
             "%s vars.cu --embed mid.img -o stubs3 && ! grep k_scale stubs3.h && grep -c c_w_get stubs3.h",
             tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* kstub check --embed with an image older than the variables: the files
 * are out of date (the .c embeds other bytes) and a note names the
 * variables the image lacks or sizes otherwise. */
START_TEST(check_embed_names_a_stale_image_s_variables)
{
    make_tmpdir();
    write_file("vars.cu", vars_cu);
    write_file("old.cu", vars_old_cu);
    char *out;
    int rc = run(&out, "cd '%s' && %s -fatbin -arch=sm_90 vars.cu -o vars.fatbin && "
                 "%s -fatbin -arch=sm_90 old.cu -o old.fatbin && %s vars.cu --embed vars.fatbin -o gen/v",
                 tmpdir, nvcc_bin(), nvcc_bin(), kstub_bin());
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "cd '%s' && %s check vars.cu --embed old.fatbin -o gen/v 2>&1", tmpdir, kstub_bin());
    ck_assert_msg(rc == 4, "exit %d\n%s", rc, out);
    ck_assert_msg(strstr(out, "old.fatbin: note: the image does not define, as the source does, variable "
                              "'k_scale' (symbol 'k_scale'), variable 'c_w' (32 bytes in the image, 64 in "
                              "the source): it was built before the source changed"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* With -rdc=true nvcc prefixes a variable of internal linkage (static, or
 * const and not extern) per compilation: the image has k_scale and s_hits
 * only as __nv_static_..._k_scale, which no accessor can name. The error
 * says so at each; every hint it gives works: an image built without
 * -rdc=true, the variables given external linkage (rebuilt with -rdc), or
 * left out, by --rdc (a note at each saying why) or by kstub:skip. */
START_TEST(embed_of_an_rdc_image_explains_internal_variables)
{
    make_tmpdir();
    write_file("vars.cu", vars_cu);
    const char *kind = image_kinds[_i];
    char *out;
    int rc = run(&out, "cd '%s' && %s %s -rdc=true -arch=sm_90 vars.cu -o rdc.img", tmpdir, nvcc_bin(), kind);
    ck_assert_msg(rc == 0, "nvcc %s failed:\n%s", kind, out);
    free(out);
    out = kstub_refuses(kind, "vars.cu --embed rdc.img -o stubs");
    ck_assert_msg(strstr(out, "vars.cu:2:22: error: variable 'k_scale' is in the image 'rdc.img' only as "
                              "'__nv_static_") &&
                  strstr(out, "the image was built with -rdc=true, which gives a variable of internal "
                              "linkage (static, or const and not extern) a prefix that differs per "
                              "compilation, so no accessor can know its symbol; build the image without "
                              "-rdc=true, give the variable external linkage (declare it 'extern const'), "
                              "or leave it out: pass --rdc as the image was built, or write "
                              "'// kstub:skip k_scale'"), "%s:\n%s", kind, out);
    ck_assert_msg(strstr(out, "vars.cu:5:23: error: variable 's_hits' is in the image 'rdc.img' only as "
                              "'__nv_static_") &&
                  strstr(out, "(drop 'static'), or leave it out: pass --rdc as the image was built, "
                              "or write '// kstub:skip s_hits'"),
                  "%s:\n%s", kind, out);
    ck_assert_msg(strstr(out, "error: variable 'c_w'") == NULL &&
                  strstr(out, "error: variable 'g_count'") == NULL, "%s:\n%s", kind, out);
    free(out);
    /* Without -rdc=true. */
    rc = run(&out, "cd '%s' && %s %s -arch=sm_90 vars.cu -o wp.img && %s vars.cu --embed wp.img -o a",
             tmpdir, nvcc_bin(), kind, kstub_bin());
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", kind, rc, out);
    free(out);
    /* External linkage, -rdc=true again. */
    rc = run(&out, "cd '%s' && sed 's/^const __device__/extern const __device__/; s/^static __device__/__device__/' "
             "vars.cu > ext.cu && %s %s -rdc=true -arch=sm_90 ext.cu -o ext.img && "
             "%s ext.cu --embed ext.img -o b", tmpdir, nvcc_bin(), kind, kstub_bin());
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", kind, rc, out);
    free(out);
    rc = run(&out, "cd '%s' && grep -c 'ks_status \\(k_scale\\|s_hits\\)_get(' b.h", tmpdir);
    ck_assert_msg(rc == 0 && atoi(out) == 2, "%s", out);
    free(out);
    /* Left out with --rdc, as the image was built: a note each, no accessors. */
    rc = run(&out, "cd '%s' && %s vars.cu --rdc --embed rdc.img -o d 2>&1 && ! grep -q 'k_scale_get\\|s_hits_get' d.h "
             "&& grep -c c_w_get d.h", tmpdir, kstub_bin());
    ck_assert_msg(rc == 0 && strstr(out, "vars.cu:2:22: note: variable 'k_scale' has internal linkage (static, "
                                         "or const and not extern): with --rdc (nvcc -rdc=true) nvcc prefixes "
                                         "its symbol per compilation") &&
                  strstr(out, "vars.cu:5:23: note: variable 's_hits' has internal linkage"),
                  "%s: exit %d\n%s", kind, rc, out);
    free(out);
    /* Left out by name, the -rdc image as it was. */
    rc = run(&out, "cd '%s' && printf '// kstub:skip k_scale\\n// kstub:skip s_hits\\n' | cat - vars.cu > skip.cu && "
             "%s skip.cu --embed rdc.img -o c && ! grep -q 'k_scale_get\\|s_hits_get' c.h && grep -c c_w_get c.h",
             tmpdir, kstub_bin());
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", kind, rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* An image built (-rdc) from a file that only declares the variable
 * (extern) defines it nowhere: refused, with the two ways out, both applied. */
START_TEST(embed_of_an_image_that_only_declares_a_variable)
{
    make_tmpdir();
    write_file("def.cu", "__device__ int g_hits;\n__global__ void bump() { atomicAdd(&g_hits, 1); }\n");
    write_file("use.cu", "extern __device__ int g_hits;\n__global__ void bump() { atomicAdd(&g_hits, 1); }\n");
    char *out;
    int rc = run(&out, "cd '%s' && %s -ptx -rdc=true -arch=sm_90 use.cu -o use.ptx && "
                 "%s -cubin -rdc=true -arch=sm_90 use.cu -o use.cubin", tmpdir, nvcc_bin(), nvcc_bin());
    ck_assert_msg(rc == 0, "nvcc failed:\n%s", out);
    free(out);
    static const char *const images[] = {"use.ptx", "use.cubin"};
    for (size_t i = 0; i < 2; i++) {
        rc = run(&out, "cd '%s' && %s def.cu --embed %s -o stubs", tmpdir, kstub_bin(), images[i]);
        ck_assert_msg(rc == 1, "%s: exit %d\n%s", images[i], rc, out);
        char want[512];
        snprintf(want, sizeof want, "def.cu:1:16: error: variable 'g_hits' (symbol 'g_hits') is only "
                 "declared (extern) in the image '%s', not defined: the image was built from a file "
                 "that uses the variable (-rdc), not from this one, which defines it; embed an image "
                 "built from this file, or leave the variable out with '// kstub:skip g_hits'", images[i]);
        ck_assert_msg(strstr(out, want) != NULL, "wanted %s in:\n%s", want, out);
        free(out);
    }
    rc = run(&out, "cd '%s' && %s -cubin -rdc=true -arch=sm_90 def.cu -o def.cubin && "
             "%s def.cu --embed def.cubin -o a && sed -i '1i // kstub:skip g_hits' def.cu && "
             "%s def.cu --embed use.cubin -o b && ! grep -q g_hits_get b.h", tmpdir, nvcc_bin(),
             kstub_bin(), kstub_bin());
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    free(out);
    remove_tmpdir();
}
END_TEST

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
        rc = run(&out, "cd '%s' && grep -c '^ks_status %s(' shared.kstub.h shared.kstub.c", tmpdir,
                 without[i]);
        ck_assert_msg(strcmp(out, "shared.kstub.h:1\nshared.kstub.c:1\n") == 0, "%s: %s", without[i], out);
        free(out);
    }
    for (size_t i = 0; i < 2; i++) {
        rc = run(&out, "cd '%s' && grep -c '^ks_status %s_n(' shared.kstub.h shared.kstub.c", tmpdir,
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

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("list");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, list_text_prints_prototypes_and_writes_nothing);
    tcase_add_test(tc, list_json_carries_prototypes);
    tcase_add_test(tc, list_and_c_type_follow_the_templates);
    tcase_add_test(tc, list_errors_as_usual);
    tcase_add_test(tc, list_all_shows_every_entry_point);
    suite_add_tcase(s, tc);
    tc = tcase_create("outputs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, o_with_an_extension_names_the_stem);
    tcase_add_test(tc, o_naming_a_folder_is_refused);
    tcase_add_test(tc, missing_output_folders_are_created);
    tcase_add_test(tc, failed_runs_create_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("embed");
    tcase_set_timeout(tc, 180);
    tcase_add_loop_test(tc, embed_of_an_image_lacking_a_kernel_is_refused, 0,
                        (int)(sizeof image_kinds / sizeof *image_kinds));
    tcase_add_test(tc, embed_of_a_corrupt_image_is_refused);
    tcase_add_test(tc, check_embed_reports_drift_before_a_stale_image);
    tcase_add_loop_test(tc, embed_checks_device_variables, 0,
                        (int)(sizeof image_kinds / sizeof *image_kinds));
    tcase_add_test(tc, check_embed_names_a_stale_image_s_variables);
    tcase_add_loop_test(tc, embed_of_an_rdc_image_explains_internal_variables, 0, 2);
    tcase_add_test(tc, embed_of_an_image_that_only_declares_a_variable);
    suite_add_tcase(s, tc);
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

int main(void)
{
    return run_suite(cli_suite(), CK_FORK_GETENV);
}
