/*
 * check_cli_embed.c — check-cli's --embed cases: an nvcc image (PTX, cubin,
 * fatbin) that lacks one of the input's kernels refused with the kernel
 * named, a corrupt one refused, kstub check reporting drift before a stale
 * image, and the image's device variables checked (sizes, an rdc image's
 * internal ones, one only declared), each refusal naming the variable and
 * why. Part of check-cli (check_cli.c).
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

Suite *cli_embed_suite(void)
{
    Suite *s = suite_create("cli-embed");
    TCase *tc;
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
    return s;
}
