/*
 * check_gen_output.c — the generator's output stage: golden output, unchanged
 * outputs left alone, user and hostile templates, embedded images (their kinds,
 * internal kernels, the device variables their PTX declares).
 *
 * Part of check-gen (tests/generator/gen.mk; check_gen.c runs every part,
 * CK_RUN_SUITE=gen-output this one). Run from the repository root.
 * To re-bless the golden files after an intended change: make bless
 */
#include "model/model.h"
#include "base/inputs.h"
#include "base/util.h"
#include "cli/cli.h"
#include "emit/emit.h"
#include "image/image.h"
#include "model/naming.h"
#include "front/walk.h"

#include "check_gen.h"
#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A template directory can restyle the mirrors: here a comment per field. */
START_TEST(templates_restyle_mirrors)
{
    make_tmpdir();
    char *out;
    int rc = run(&out, "mkdir -p %s/t && cp templates/source.c.in %s/t/ && sed "
                 "'s|^    {{decl}};{{comment_pad}}/\\* offset {{offset}} \\*/$|    /* field {{field_name}} */ {{decl}};|' "
                 "templates/header.h.in > %s/t/header.h.in && %s tests/corpus/abi_records.cu -T %s/t -o %s/r",
                 tmpdir, tmpdir, tmpdir, kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char p[128];
    snprintf(p, sizeof p, "%s/r.h", tmpdir);
    char *h = ks_read_file(p, NULL);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(strstr(h, "    /* field d */ double d;") != NULL, "%s", h);
    ck_assert_msg(strstr(h, "/* offset") == NULL, "%s", h);
    free(h);
    rc = compile(&out, 0, p, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* ---- golden output ---------------------------------------------------------------------------- */

static void compare_golden(const char *generated, const char *golden)
{
    char *g = ks_read_file(golden, NULL);
    char *o = ks_read_file(generated, NULL);
    ck_assert_msg(g != NULL, "missing golden file %s; run: make bless", golden);
    ck_assert_msg(o != NULL, "kstub did not write %s", generated);
    if (strcmp(g, o) != 0) {
        char *diff;
        run(&diff, "diff -u %s %s | head -40", golden, generated);
        ck_abort_msg("%s and the generated output differ! If the change is intended, run: "
                     "make bless\n%s", golden, diff);
    }
    free(g);
    free(o);
}

START_TEST(golden_output)
{
    make_tmpdir();
    const char *g = goldens[_i].name;
    char *out, embed[128] = "";
    if (goldens[_i].embed)
        snprintf(embed, sizeof embed, "--embed %s", goldens[_i].embed);
    char kstub[PATH_MAX];
    if (!realpath(kstub_bin(), kstub))
        snprintf(kstub, sizeof kstub, "%s", kstub_bin());
    int rc = goldens[_i].in_dir
                 ? run(&out, "cp tests/golden/%s.cu tests/golden/%s.hpp %s && cd %s && %s %s.cu -o %s.kstub "
                       "--manifest %s.kstub.json", g, g, tmpdir, tmpdir, kstub, g, g, g)
                 : run(&out, "%s tests/golden/%s.cu %s -o %s/%s.kstub --manifest %s/%s.kstub.json", kstub_bin(), g,
                       embed, tmpdir, g, tmpdir, g);
    ck_assert_msg(rc == 0, "kstub failed on tests/golden/%s.cu:\n%s", g, out);
    free(out);
    const char *ext[] = {".h", ".c", ".json"};
    for (int i = 0; i < 3; i++) {
        char gen[128], gold[128];
        snprintf(gen, sizeof gen, "%s/%s.kstub%s", tmpdir, g, ext[i]);
        snprintf(gold, sizeof gold, "tests/golden/%s.kstub%s", g, ext[i]);
        compare_golden(gen, gold);
    }
    remove_tmpdir();
}
END_TEST

START_TEST(unchanged_output_keeps_mtime)
{
    make_tmpdir();
    char *out;
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu -o %s/x --manifest %s/x.json",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    char h[128];
    snprintf(h, sizeof h, "%s/x.h", tmpdir);
    struct stat before, after;
    ck_assert_int_eq(stat(h, &before), 0);
    /* Back-date it, so a rewrite would show. */
    ck_assert_int_eq(run(&out, "touch -d '2001-01-01' %s/x.h %s/x.c %s/x.json", tmpdir, tmpdir,
                         tmpdir), 0);
    free(out);
    ck_assert_int_eq(stat(h, &before), 0);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu -o %s/x --manifest %s/x.json",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(stat(h, &after), 0);
    ck_assert_int_eq(before.st_mtime, after.st_mtime);
    remove_tmpdir();
}
END_TEST

/* A kernel moved down one line (a blank line inserted before the first
 * __global__ of each golden input, which moves it and all below it) changes
 * what a caller compiles against not at all: the header stays byte-identical
 * and is not rewritten (its mtime kept), only the .c (its comments) and the
 * manifest (its lines) change, and kstub check names only those two, saying
 * why (issue 38). */
START_TEST(moved_kernel_keeps_header)
{
    make_tmpdir();
    const char *g = goldens[_i].name;
    char *out, embed[PATH_MAX + 16] = "", kstub[PATH_MAX], ptx[PATH_MAX];
    if (goldens[_i].embed && realpath(goldens[_i].embed, ptx))
        snprintf(embed, sizeof embed, "--embed %s", ptx);
    if (!realpath(kstub_bin(), kstub))
        snprintf(kstub, sizeof kstub, "%s", kstub_bin());
    int rc = run(&out, "cp tests/golden/%s.cu %s && { cp tests/golden/%s.hpp %s 2>/dev/null || :; } && "
                 "cd %s && %s %s.cu %s -o %s.kstub --manifest %s.kstub.json && "
                 "for e in h c json; do cp %s.kstub.$e was.$e; done && "
                 "touch -d '2001-01-01' %s.kstub.h %s.kstub.c %s.kstub.json && "
                 "awk '!m && /__global__/ { print \"\"; m = 1 } { print }' %s.cu > moved && mv moved %s.cu",
                 g, tmpdir, g, tmpdir, tmpdir, kstub, g, embed, g, g, g, g, g, g, g, g);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    rc = run(&out, "cd %s && %s check %s.cu %s -o %s.kstub --manifest %s.kstub.json", tmpdir, kstub,
             g, embed, g, g);
    ck_assert_msg(rc == 4, "kstub check after a line move: %d\n%s", rc, out);
    expect_has(out, "only source lines moved");
    expect_has(out, ".kstub.c: error: out of date");
    expect_lacks(out, ".kstub.h:");
    free(out);
    rc = run(&out, "cd %s && %s %s.cu %s -o %s.kstub --manifest %s.kstub.json", tmpdir, kstub, g,
             embed, g, g);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    char path[256];
    snprintf(path, sizeof path, "%s/%s.kstub.h", tmpdir, g);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg(st.st_mtime < 1000000000 + 100000000, "%s was rewritten", path);
    rc = run(&out, "cd %s && cmp was.h %s.kstub.h && ! cmp -s was.c %s.kstub.c && "
             "! cmp -s was.json %s.kstub.json", tmpdir, g, g, g);
    ck_assert_msg(rc == 0, "after a line move: the header must be the same, the .c and manifest "
                  "not:\n%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST


/* A template instance's generated name can run to thousands of characters
 * (CUTLASS's Kernel<Gemm<...>>): its parameter lists are not hung under
 * the '(' then, but indented by 8, where a CUTLASS unit test's header was
 * a quarter blanks. A short name's list still hangs under its '('. The
 * header compiles in every language. */
START_TEST(long_names_do_not_hang_parameter_lists)
{
    make_tmpdir();
    char *out, path[PATH_MAX];
    snprintf(path, sizeof path, "%s/long.cu", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    /* The instance's name, k_Pair_of_two_types_with_a_long_name_..., runs to
     * about 300 characters. */
    static const char *const pair = "Pair_of_two_types_with_a_long_name";
    char type[512];
    snprintf(type, sizeof type, "%s<%s<%s<int, float>, %s<double, char>>, %s<%s<short, long>, %s<unsigned, bool>>>",
             pair, pair, pair, pair, pair, pair, pair);
    fprintf(f,
            "template <typename A, typename B> struct %s {};\n"
            "template <typename T> __global__ void k(T tag, float *x, const float *y, int n, double s)\n"
            "{ (void)tag; if (threadIdx.x < n) x[threadIdx.x] = y[threadIdx.x] * (float)s; }\n"
            "__global__ void short_one(float *x, const float *y, int n, double s) {}\n"
            "template __global__ void k<%s>(%s, float *, const float *, int, double);\n",
            pair, type, type);
    fclose(f);
    char kstub[PATH_MAX];
    if (!realpath(kstub_bin(), kstub))
        snprintf(kstub, sizeof kstub, "%s", kstub_bin());
    int rc = run(&out, "cd %s && %s long.cu -o long", tmpdir, kstub);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    for (int e = 0; e < 2; e++) {
        snprintf(path, sizeof path, "%s/long.%s", tmpdir, e ? "c" : "h");
        char *text = ks_read_file(path, NULL);
        ck_assert_ptr_nonnull(text);
        size_t longest = 0, lines = 0;
        for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
            size_t blanks = strspn(l, " ");
            if (blanks > longest)
                longest = blanks;
            lines += blanks == 8 && strncmp(l + 8, "const float *y,", 15) == 0;
        }
        ck_assert_msg(longest <= 96, "%s: a line starts with %zu blanks", path, longest);
        ck_assert_msg(lines > 0, "%s: no parameter list indented by 8", path);
        if (e == 0)
            ck_assert_msg(strstr(text, "ks_status short_one(ks_launch    launch,\n"
                                       "                    float       *x,\n") != NULL,
                          "a short name's list does not hang under its '(':\n%.3000s", text);
        free(text);
    }
    snprintf(path, sizeof path, "%s/use.c", tmpdir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#include \"long.h\"\n", f);
    fclose(f);
    for (size_t c = 0; c < NCOMPILERS; c++) {
        rc = compile(&out, (int)c, path, tmpdir);
        ck_assert_msg(rc == 0, "%s %s:\n%s", compilers[c].compiler, compilers[c].lang, out);
        free(out);
    }
    remove_tmpdir();
}
END_TEST

/* Kernels with internal linkage are found in an embedded image by their
 * symbol patterns: whole-program and -rdc, PTX and cubin; an image of a file
 * of another name is refused, as any image that lacks a kernel. */
START_TEST(embed_accepts_internal_kernels)
{
    make_tmpdir();
    char *out;
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    ck_assert_msg(run(&out, "cp tests/golden/internal.cu %s && cd %s && cp internal.cu other.cu && "
                      "%s/bin/nvcc -ptx -arch=sm_90 internal.cu -o wp.ptx && "
                      "%s/bin/nvcc -ptx -arch=sm_90 -rdc=true internal.cu -o rdc.ptx && "
                      "%s/bin/nvcc -cubin -arch=sm_90 -rdc=true internal.cu -o rdc.cubin",
                      tmpdir, tmpdir, cuda, cuda, cuda) == 0, "nvcc: %s", out);
    free(out);
    static const char *const images[] = {"wp.ptx", "rdc.ptx", "rdc.cubin"};
    for (size_t i = 0; i < sizeof images / sizeof *images; i++) {
        int rc = run(&out, "%s %s/internal.cu --embed %s/%s -o %s/a", kstub_bin(), tmpdir, tmpdir,
                     images[i], tmpdir);
        ck_assert_msg(rc == 0, "%s: %s", images[i], out);
        free(out);
    }
    ck_assert_int_ne(run(&out, "%s %s/other.cu --embed %s/wp.ptx -o %s/b", kstub_bin(), tmpdir, tmpdir,
                         tmpdir), 0);
    ck_assert_msg(strstr(out, "kernel 'hidden' (symbol '{static:8_other_cu}_Z6hiddenPf') is not in the "
                         "image") == NULL, "%s", out);   /* whole-program: found by its plain name */
    ck_assert_msg(strstr(out, "kernel '(anonymous)::anon' (symbol '{static:8_other_cu}_ZN{anon:8_other_cu}"
                         "4anonEPf') is not in the image"), "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* The variables an image's PTX declares (issue 29): module-scope .global and
 * .const only (not an instruction's suffix, a parameter's state space or a
 * declaration inside a function), each with its size: a vector type's
 * width times its lanes, each extent multiplied in, unknown ("[]", an
 * opaque type) as -1; one after .extern is declared, not defined; comments
 * and strings are not read. */
START_TEST(image_ptx_variables_are_read)
{
    static const char ptx[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        "// .global .u32 in_comment;\n"
        "/* .const .b8 in_block[4]; */\n"
        ".global .align 4 .u32 k = 3;\n"
        ".visible .const .align 4 .b8 c_w[64];\n"
        ".global .attribute(.managed) .align 8 .f64 m_x;\n"
        ".global .align 16 .v4 .f32 g_v;\n"
        ".global .align 4 .u32 g_grid[4][3];\n"
        ".global .align 1 .b8 g_open[] = {1, 2, 3};\n"
        ".global .texref t_ref;\n"
        ".global .align 8 .u64 g_ptrs[2] = {generic(k), 0};\n"
        ".extern .global .align 4 .u32 g_other;\n"
        ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
        ".visible .entry _Z1kPf(\n\t.param .u64 .ptr .global .align 4 _Z1kPf_param_0\n)\n"
        "{\n\t.global .u32 inner;\n\tld.global.u32 %r1, [k];\n\tld.const.f32 %f1, [c_w+4];\n}\n";
    ks_image_entries e;
    ks_image_entries_read((const unsigned char *)ptx, sizeof ptx - 1, &e);
    ck_assert_uint_eq(e.nmembers, 1);
    const ks_image_member *m = &e.members[0];
    static const struct {
        const char *name;
        long long size;
        int defined;
    } want[] = {
        {"k", 4, 1}, {"c_w", 64, 1}, {"m_x", 8, 1}, {"g_v", 16, 1}, {"g_grid", 48, 1},
        {"g_open", -1, 1}, {"t_ref", -1, 1}, {"g_ptrs", 16, 1}, {"g_other", 4, 0},
    };
    ck_assert_uint_eq(m->nentries, 1);
    ck_assert_str_eq(m->entries[0], "_Z1kPf");
    ck_assert_uint_eq(m->nvars, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < m->nvars; i++) {
        ck_assert_str_eq(m->vars[i].name, want[i].name);
        ck_assert_msg(m->vars[i].size == want[i].size, "%s: %lld", want[i].name, m->vars[i].size);
        ck_assert_int_eq(m->vars[i].defined, want[i].defined);
    }
    ks_image_entries_free(&e);
}
END_TEST

/* Issue 29: what kstub cannot give accessors gets a note saying why, and
 * each note's way out, applied, gets them, nvcc's whole-program image
 * holding every symbol kstub then expects (--embed checks it): an extern
 * declaration (of unknown bound too; a definition of unknown bound cannot
 * be written, its initializer gives the bound) is typed in the file that
 * defines it; internal linkage in a namespace (static, const) is not, and
 * with external linkage it is; an unnamed struct type, once named, is. */
START_TEST(untyped_variables_say_why_and_the_way_out_works)
{
    make_tmpdir();
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    char *out;
    write_text_in(tmpdir, "use.cu",
          "extern __device__ int g_elsewhere;\n"
          "extern __device__ float g_open[];\n"
          "__device__ struct { int a; } g_anon;\n"
          "namespace n { static __device__ int s_in_ns; const __device__ int k_in_ns = 2; }\n"
          "__global__ void k(float *o) { o[0] = g_elsewhere + g_open[0] + g_anon.a + n::s_in_ns + n::k_in_ns; }\n");
    int rc = run(&out, "%s %s/use.cu -o %s/use", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    static const char *const notes[] = {
        "use.cu:1:23: note: variable 'g_elsewhere' is declared extern and not defined in this file: its "
        "definition (-rdc) may be in another image, where kstub cannot prove its type; give it accessors "
        "in the file that defines it",
        "use.cu:2:25: note: variable 'g_open' is declared extern and not defined in this file",
        "use.cu:3:30: note: variable 'g_anon': 'g_anon' has an unnamed struct or union type, which C cannot "
        "name; give the type a name; no accessors",
        "use.cu:4:37: note: variable 'n::s_in_ns' has internal linkage in a namespace (static, const, or an "
        "anonymous namespace): nvcc names it per compilation (_ZN<n>_INTERNAL_<hash>...), so no symbol can "
        "be known before the image is built; no accessors (give it external linkage to have them)",
        "use.cu:4:67: note: variable 'n::k_in_ns' has internal linkage in a namespace",
    };
    for (size_t i = 0; i < sizeof notes / sizeof *notes; i++)
        ck_assert_msg(strstr(out, notes[i]) != NULL, "wanted \"%s\" in:\n%s", notes[i], out);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c '_get(' %s/use.h", tmpdir), 1);   /* none: grep finds no line */
    free(out);
    /* The ways out: the file that defines the extern ones, external linkage, a named type. */
    write_text_in(tmpdir, "def.cu",
          "__device__ int g_elsewhere;\n"
          "__device__ float g_open[] = {1, 2, 3};\n"
          "struct A { int a; };\n"
          "__device__ A g_anon;\n"
          "namespace n { __device__ int s_in_ns; extern const __device__ int k_in_ns = 2; }\n"
          "__global__ void k(float *o) { o[0] = g_elsewhere + g_open[0] + g_anon.a + n::s_in_ns + n::k_in_ns; }\n");
    rc = run(&out, "%s/bin/nvcc -ptx -arch=sm_90 %s/def.cu -o %s/def.ptx && %s %s/def.cu --embed %s/def.ptx "
             "-o %s/def", cuda, tmpdir, tmpdir, kstub_bin(), tmpdir, tmpdir, tmpdir);
    ck_assert_msg(rc == 0 && !strstr(out, "note:") && !strstr(out, "error"), "%s", out);
    free(out);
    rc = run(&out, "grep -c 'ks_status \\(g_elsewhere\\|g_open\\|g_anon\\|n_s_in_ns\\|n_k_in_ns\\)_get(' %s/def.h",
             tmpdir);
    ck_assert_msg(rc == 0 && atoi(out) == 5, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

START_TEST(embed_tells_image_kinds_apart)
{
    make_tmpdir();
    char *out;
    char path[128];
    FILE *f;
    /* A cubin is an ELF file; a fatbin starts with its magic number: nvcc's
     * own, embedded as what they are. */
    const char *cuda = getenv("CUDA_PATH") ? getenv("CUDA_PATH") : "/usr/local/cuda";
    ck_assert_msg(run(&out, "%s/bin/nvcc -cubin -arch=sm_90 tests/golden/basic.cu -o %s/real.cubin "
                      "&& %s/bin/nvcc -fatbin -arch=sm_90 tests/golden/basic.cu -o %s/real.fatbin",
                      cuda, tmpdir, cuda, tmpdir) == 0, "nvcc: %s", out);
    free(out);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s/real.cubin -o %s/a",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c 'KS_IMAGE_CUBIN' %s/a.c", tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s/real.fatbin -o %s/b",
                         kstub_bin(), tmpdir, tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c 'KS_IMAGE_FATBIN' %s/b.c", tmpdir), 0);
    free(out);
    /* Their first bytes alone are told apart too, and refused as cut short
     * (issue 19 #11: they were embedded). */
    snprintf(path, sizeof path, "%s/fake.cubin", tmpdir);
    f = fopen(path, "wb");
    fwrite("\177ELF\2\1\1", 1, 7, f);
    fclose(f);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s -o %s/fa", kstub_bin(), path,
                         tmpdir), 1);
    ck_assert_msg(strstr(out, "fake.cubin: error: corrupt image: cubin:") != NULL, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/fake.fatbin", tmpdir);
    f = fopen(path, "wb");
    fwrite("\x50\xed\x55\xba\1\0\x10\0", 1, 8, f);
    fclose(f);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s -o %s/fb", kstub_bin(), path,
                         tmpdir), 1);
    ck_assert_msg(strstr(out, "fake.fatbin: error: corrupt image: the fatbin: it has 8 bytes") != NULL,
                  "%s", out);
    free(out);
    /* The source itself, for NVRTC at run time. */
    ck_assert_int_eq(run(&out, "%s kernels/vector_ops.cu --embed-source -o %s/s", kstub_bin(),
                         tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "grep -c 'KS_IMAGE_SOURCE' %s/s.c", tmpdir), 0);
    free(out);
    ck_assert_int_eq(run(&out, "%s kernels/vector_ops.cu --embed-source --embed %s -o %s/s2",
                         kstub_bin(), path, tmpdir), 2);
    ck_assert_ptr_nonnull(strstr(out, "choose one"));
    free(out);
    /* Anything else is refused, and nothing is written. */
    snprintf(path, sizeof path, "%s/junk.bin", tmpdir);
    f = fopen(path, "wb");
    fputs("hello", f);
    fclose(f);
    ck_assert_int_eq(run(&out, "%s tests/golden/basic.cu --embed %s -o %s/c", kstub_bin(), path,
                         tmpdir), 1);
    ck_assert_ptr_nonnull(strstr(out, "not a kernel image"));
    free(out);
    snprintf(path, sizeof path, "%s/c.h", tmpdir);
    ck_assert(!exists(path));
    remove_tmpdir();
}
END_TEST

START_TEST(user_templates)
{
    make_tmpdir();
    char *out;
    char path[128];
    snprintf(path, sizeof path, "%s/tpl", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/tpl/header.h.in", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("{{#kernels}}\n{{c_name}}:{{#params}} {{name}}@{{offset}}{{/params}}\n{{/kernels}}\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/tpl/source.c.in", tmpdir);
    f = fopen(path, "w");
    fputs("{{^kernels}}none{{/kernels}}{{! a comment }}\n", f);
    fclose(f);
    int rc = run(&out, "%s kernels/vector_ops.cu -T %s/tpl -o %s/v", kstub_bin(), tmpdir, tmpdir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/v.h", tmpdir);
    char *h = ks_read_file(path, NULL);
    ck_assert_ptr_nonnull(strstr(h, "saxpy: a@0 x@8 y@16 n@24\n"));
    free(h);
    /* A typo in a template is an error with the template's line. */
    snprintf(path, sizeof path, "%s/tpl/source.c.in", tmpdir);
    f = fopen(path, "w");
    fputs("line one\n{{#kernels}}{{c_nmae}}{{/kernels}}\n", f);
    fclose(f);
    rc = run(&out, "%s kernels/vector_ops.cu -T %s/tpl -o %s/w", kstub_bin(), tmpdir, tmpdir);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strstr(out, "source.c.in:2:13: error: unknown name 'c_nmae'") != NULL, "%s", out);
    free(out);
    remove_tmpdir();
}
END_TEST

/* Issue 10 #17: a template that would break the engine is refused with its
 * real line and column and nothing is written: a NUL byte (once truncated
 * the output), an unterminated '{{' (once reported at column 0), and 30,000
 * nested sections (once a stack overflow). Issue 19 #7: 40 nested
 * {{#kernels}} (2^40 renders and more: it ran for ever) stop once the work
 * passes its bound, at the innermost section, naming the outer one. */
START_TEST(hostile_templates_are_refused_at_their_position)
{
    static const struct {
        const char *head;   /* the header template's text before the hostile part */
        const char *says;
    } cases[] = {
        {"line one\nab", "header.h.in:2:3: error: a NUL byte in a template"},
        {"line one\n  xx {{ prefix\n", "header.h.in:2:6: error: unterminated '{{'"},
        {"line one\n", "header.h.in:2:705: error: sections nest deeper than 64"},
        {"line one\n", "header.h.in:"},   /* the line where the budget ran out: see below */
    };
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/tpl", tmpdir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/tpl/source.c.in", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("{{prefix}}\n", f);
    fclose(f);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/tpl/header.h.in", tmpdir);
        f = fopen(path, "w");
        fputs(cases[i].head, f);
        if (i == 0)
            fwrite("\0cd {{prefix}}\n", 1, 15, f);
        if (i == 2) {
            for (int d = 0; d < 30000; d++)
                fputs("{{#prefix}}", f);
            for (int d = 0; d < 30000; d++)
                fputs("{{/prefix}}", f);
            fputs("\n", f);
        }
        if (i == 3) {
            for (int d = 0; d < 40; d++)
                fputs("{{#kernels}}\n", f);
            fputs("{{c_name}}\n", f);
            for (int d = 0; d < 40; d++)
                fputs("{{/kernels}}\n", f);
        }
        fclose(f);
        char *out;
        int rc = run(&out, "%s kernels/vector_ops.cu -T %s/tpl -o %s/t%zu", kstub_bin(), tmpdir, tmpdir, i);
        ck_assert_msg(rc == 1, "case %zu: exit %d:\n%s", i, rc, out);
        ck_assert_msg(strstr(out, cases[i].says) != NULL, "no '%s' in:\n%s", cases[i].says, out);
        ck_assert_msg(strstr(out, "nothing written") != NULL, "%s", out);
        ck_assert_msg(i != 3 || (strstr(out, ":1: error: rendering stopped after") &&
                                 strstr(out, "section 'kernels' repeats inside itself (opened at "
                                             "line 2)")), "%s", out);
        free(out);
        snprintf(path, sizeof path, "%s/t%zu.h", tmpdir, i);
        ck_assert_msg(access(path, F_OK) != 0, "%s written", path);
    }
    remove_tmpdir();
}
END_TEST

Suite *gen_output_suite(void)
{
    Suite *s = suite_create("gen-output");
    TCase *tc;
    tc = tcase_create("output");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, golden_output, 0, (int)gen_ngoldens);
    tcase_add_test(tc, unchanged_output_keeps_mtime);
    tcase_add_loop_test(tc, moved_kernel_keeps_header, 0, (int)gen_ngoldens);
    tcase_add_test(tc, long_names_do_not_hang_parameter_lists);
    tcase_add_test(tc, user_templates);
    tcase_add_test(tc, hostile_templates_are_refused_at_their_position);
    tcase_add_test(tc, templates_restyle_mirrors);
    tcase_add_test(tc, embed_tells_image_kinds_apart);
    tcase_add_test(tc, embed_accepts_internal_kernels);
    tcase_add_test(tc, image_ptx_variables_are_read);
    tcase_add_test(tc, untyped_variables_say_why_and_the_way_out_works);
    suite_add_tcase(s, tc);
    return s;
}
