/*
 * check_runtime_cache_key.c — the runtime suite (tests/support/runtime_fixture.h): the
 * NVRTC cache's key (the #include lines it follows, the forms it cannot and
 * so does not cache) and the real NVRTC compiling and caching (skipped,
 * saying so, without it).
 */
#include "runtime_fixture.h"

/* The key covers the headers the source includes (issue 10 #5). */
static const char inc_src[] =
    "#include \"cfg.h\"\n"
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = SCALE * a * x[i] + y[i];\n}\n";
static ks_image inc_image = KS_IMAGE_INIT("kernels/inc.cu", inc_src, sizeof inc_src, KS_IMAGE_SOURCE);
static ks_kernel inc_saxpy = KS_KERNEL_INIT(&inc_image, "saxpy", "inc_saxpy", 4, saxpy_params, 0);

static ks_status reload(ks_image *img, ks_kernel *k)
{
    ks_status st = ks_image_unload(img);
    return st == KS_OK ? ks_kernel_resolve(k) : st;
}

START_TEST(cache_key_follows_includes)
{
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    char inc[128], opt[160], path[PATH_MAX];
    snprintf(inc, sizeof inc, "%s/inc", tmp_dir);
    ck_assert_int_eq(mkdir(inc, 0700), 0);
    snprintf(path, sizeof path, "%s/cfg.h", inc);
    write_text(path, "#include \"more.h\"\n#define SCALE 2\n");
    snprintf(path, sizeof path, "%s/more.h", inc);
    write_text(path, "#define MORE 1\n");
    snprintf(opt, sizeof opt, "-I%s", inc);
    ck_assert_status(ks_image_set_nvrtc_options(&inc_image, (const char *[]){opt}, 1), KS_OK);
    ck_assert_status(ks_kernel_resolve(&inc_saxpy), KS_OK);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);     /* warm */
    /* The included header changes: SCALE 2 -> 3 is another binary. */
    snprintf(path, sizeof path, "%s/cfg.h", inc);
    write_text(path, "#include \"more.h\"\n#define SCALE 3\n");
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&inc_image, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 0);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 2);
    /* So does a header it includes in turn. */
    snprintf(path, sizeof path, "%s/more.h", inc);
    write_text(path, "#define MORE 2\n");
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 3);
    /* A header appearing earlier in the search order (the other -I first). */
    char inc2[128], opt2[160];
    snprintf(inc2, sizeof inc2, "%s/inc2", tmp_dir);
    ck_assert_int_eq(mkdir(inc2, 0700), 0);
    snprintf(opt2, sizeof opt2, "-I%s", inc2);
    ck_assert_status(ks_image_set_nvrtc_options(&inc_image, (const char *[]){opt2, opt}, 2), KS_OK);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 4);
    snprintf(path, sizeof path, "%s/cfg.h", inc2);
    write_text(path, "#define SCALE 5\n");
    ck_assert_status(reload(&inc_image, &inc_saxpy), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 5);
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 5);
    ck_assert_status(ks_image_unload(&inc_image), KS_OK);
}
END_TEST

/* "#include" in a comment or a string is text, not a directive: such a
 * source is cached (the H200 suite's own kernel file said "no #include" in
 * a comment, and was compiled again on every load). */
START_TEST(cache_include_word_in_comment_still_cached)
{
    static const char src[] = "// compiled at run time: no #include.\n"
                              "const char *s = \"#include <nothing>\";\n"
                              "extern \"C\" __global__ void saxpy() {}\n";
    ks_image img = KS_IMAGE_INIT("kernels/c.cu", src, sizeof src, KS_IMAGE_SOURCE);
    ks_kernel k = KS_KERNEL_INIT(&img, "saxpy", "c", 0, NULL, 0);
    fake.set_params("saxpy", 0, NULL, NULL);
    ck_assert_status(ks_kernel_resolve(&k), KS_OK);
    ck_assert_status(reload(&img, &k), KS_OK);
    ck_assert_int_eq(fnv.calls("nvrtcCompileProgram"), 1);     /* the second load was warm */
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 1);
    ck_assert_status(ks_image_unload(&img), KS_OK);
}
END_TEST

/* Issue 19 #2: every place a directive may start, as NVRTC reads it (each
 * form was checked against libnvrtc 13: it opens cfg.h in all of them). A
 * changed cfg.h must miss the cache in every form, never serve the binary
 * built from the old one. \p hdr is cfg.h's first line (NULL: none), then
 * a header "deep.h" that cfg.h may include. */
static void hidden_include_misses(const char *what, const char *src, size_t srclen, const char *hdr,
                                  size_t hdrlen, int angled_cwd)
{
    char inc[128], opt[160], path[PATH_MAX], sub[64];
    static int n;
    int me = n++;
    snprintf(sub, sizeof sub, "hid%d", me);
    snprintf(inc, sizeof inc, "%s/%s", tmp_dir, sub);
    ck_assert_int_eq(mkdir(inc, 0700), 0);
    snprintf(opt, sizeof opt, "-I%s", inc);
    snprintf(path, sizeof path, "%s/cfg.h", inc);
    const char *changed = "deep.h";
    if (hdr != NULL) {
        write_file(path, hdr, hdrlen);           /* cfg.h hides "deep.h" */
        snprintf(path, sizeof path, "%s/deep.h", inc);
    } else {
        changed = "cfg.h";
    }
    write_text(path, "#define SCALE 2\n");
    if (angled_cwd) {                            /* ./cfg.h, which <cfg.h> does not read */
        ck_assert_int_eq(chdir(tmp_dir), 0);
        write_text("cfg.h", "#define SCALE 7\n");
    }
    /* Static: an image's state lives as long as the image (as a generated one does). */
    static ks_image imgs[32];
    ck_assert_int_lt(me, 32);
    imgs[me] = (ks_image)KS_IMAGE_INIT("kernels/h.cu", src, srclen, KS_IMAGE_SOURCE);
    ks_image *img = &imgs[me];
    ks_kernel k = KS_KERNEL_INIT(img, "saxpy", "h", 0, NULL, 0);
    fake.set_params("saxpy", 0, NULL, NULL);
    fnv.reset();
    ck_assert_status(ks_image_set_nvrtc_options(img, (const char *[]){opt}, 1), KS_OK);
    ck_assert_status(ks_kernel_resolve(&k), KS_OK);
    ck_assert_status(reload(img, &k), KS_OK);
    ck_assert_msg(fnv.calls("nvrtcCompileProgram") == 1, "%s: not cached at all", what);
    write_text(path, "#define SCALE 3\n");
    ck_assert_status(reload(img, &k), KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(img, &info), KS_OK);
    ck_assert_msg(info.from_cache == 0 && fnv.calls("nvrtcCompileProgram") == 2,
                  "%s: the binary built before %s changed came from the cache", what, changed);
    ck_assert_status(ks_image_unload(img), KS_OK);
}

#define KERNEL_TEXT "\nextern \"C\" __global__ void saxpy() {}\n"
/* Each form opens cfg.h in libnvrtc (real_nvrtc_reads_hidden_headers). */
static const struct { const char *what, *src; } hidden_forms[] = {
    {"comment before #", "/* c */ #include \"cfg.h\"" KERNEL_TEXT},
    {"form feed before #", "\f#include \"cfg.h\"" KERNEL_TEXT},
    {"vertical tab before #", "\v#include \"cfg.h\"" KERNEL_TEXT},
    {"splice after #", "#\\\ninclude \"cfg.h\"" KERNEL_TEXT},
    {"splice inside include", "#inc\\\nlude \"cfg.h\"" KERNEL_TEXT},
    {"CRLF splice inside include", "#inc\\\r\nlude \"cfg.h\"" KERNEL_TEXT},
    {"space after #", "# include \"cfg.h\"" KERNEL_TEXT},
    {"digraph", "%: include \"cfg.h\"" KERNEL_TEXT},
    {"comment spanning lines", "int x; /* a\n b */ #include \"cfg.h\"" KERNEL_TEXT},
    {"comment spanning lines at the start", "/* a\n b */ #include \"cfg.h\"" KERNEL_TEXT},
    {"digit separator then a comment", "int y = 1'000; /* x\n*/ #include \"cfg.h\"" KERNEL_TEXT},
    {"\"/*\" in a string", "const char *s = \"/*\";\n#include \"cfg.h\"" KERNEL_TEXT},
    {"backslash and space: no splice", "// x \\ \n#include \"cfg.h\"" KERNEL_TEXT},
    {"carriage return after #", "#\rinclude \"cfg.h\"" KERNEL_TEXT},
    {"form feed after include", "#include\f\"cfg.h\"" KERNEL_TEXT},
    {"CRLF lines", "int z;\r\n#include \"cfg.h\"\r\n" KERNEL_TEXT},
};

START_TEST(cache_hidden_includes_miss_on_change)
{
    for (size_t i = 0; i < sizeof hidden_forms / sizeof hidden_forms[0]; i++)
        hidden_include_misses(hidden_forms[i].what, hidden_forms[i].src, strlen(hidden_forms[i].src) + 1, NULL, 0,
                              0);
    /* In a header: after a NUL byte (NVRTC reads on), and after a comment. */
    static const char plain[] = "#include \"cfg.h\"" KERNEL_TEXT;
    static const char nul_hdr[] = "#define A 1\n\0\n#include \"deep.h\"\n";
    hidden_include_misses("header: after a NUL byte", plain, sizeof plain, nul_hdr, sizeof nul_hdr - 1, 0);
    static const char bom_hdr[] = "\xef\xbb\xbf#include \"deep.h\"\n";
    hidden_include_misses("header: after a byte order mark", plain, sizeof plain, bom_hdr, sizeof bom_hdr - 1, 0);
    static const char cmt_hdr[] = "/* c */ #include \"deep.h\"\n";
    hidden_include_misses("header: comment before #", plain, sizeof plain, cmt_hdr, sizeof cmt_hdr - 1, 0);
    /* <cfg.h> is the -I one even with a cfg.h in the working directory. */
    static const char angled[] = "#include <cfg.h>" KERNEL_TEXT;
    hidden_include_misses("angled name, cfg.h in the working directory", angled, sizeof angled, NULL, 0, 1);
}
END_TEST

/* Directive names that read files but are not modelled are never cached. */
START_TEST(cache_other_file_directives_not_cached)
{
    static const char *const srcs[] = {
        "/* c */ #include_next <x.h>" KERNEL_TEXT,
        "#__include_macros \"cfg.h\"" KERNEL_TEXT,
        "\f#import \"cfg.h\"" KERNEL_TEXT,
        "#if __has_embed(\"cfg.h\")\n#endif" KERNEL_TEXT,
        "#inc?" "?/\nlude \"cfg.h\"" KERNEL_TEXT,
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        ks_image img = KS_IMAGE_INIT("kernels/u.cu", srcs[i], strlen(srcs[i]) + 1, KS_IMAGE_SOURCE);
        ks_kernel k = KS_KERNEL_INIT(&img, "saxpy", "u", 0, NULL, 0);
        fake.set_params("saxpy", 0, NULL, NULL);
        ck_assert_status(ks_kernel_resolve(&k), KS_OK);
        ck_assert_status(reload(&img, &k), KS_OK);
        ck_assert_msg(fnv.calls("nvrtcCompileProgram") == (int)(2 * i + 2), "source %zu was cached", i);
        ck_assert_status(ks_image_unload(&img), KS_OK);
    }
    ck_assert_int_le(count_files(cache_dir, ".nvrtc"), 0);
}
END_TEST

/* Includes that cannot be followed are never cached. */
START_TEST(cache_unfollowable_includes_not_cached)
{
    static const char *const srcs[] = {
        "#define H \"cfg.h\"\n#include H\nextern \"C\" __global__ void saxpy() {}\n",
        "#if __has_include(\"cfg.h\")\n#endif\nextern \"C\" __global__ void saxpy() {}\n",
        "#/* split\n */ include \"cfg.h\"\nextern \"C\" __global__ void saxpy() {}\n",
        "%:include_next <x.h>\nextern \"C\" __global__ void saxpy() {}\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        ks_image img = KS_IMAGE_INIT("kernels/u.cu", srcs[i], strlen(srcs[i]) + 1, KS_IMAGE_SOURCE);
        ks_kernel k = KS_KERNEL_INIT(&img, "saxpy", "u", 0, NULL, 0);
        fake.set_params("saxpy", 0, NULL, NULL);
        ck_assert_status(ks_kernel_resolve(&k), KS_OK);
        ck_assert_status(reload(&img, &k), KS_OK);
        ck_assert_msg(fnv.calls("nvrtcCompileProgram") == (int)(2 * i + 2), "source %zu was cached", i);
        ck_assert_status(ks_image_unload(&img), KS_OK);
    }
    ck_assert_int_le(count_files(cache_dir, ".nvrtc"), 0);
    /* And options that name headers or places the text does not. */
    static const char *const opts[][2] = {{"-include", "cfg.h"}, {"-isystem", "/tmp"}, {"-imacros", "m.h"}};
    fake.set_params("saxpy", 4, saxpy_off, saxpy_size);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_status(ks_image_set_nvrtc_options(&src_image, opts[i], 2), KS_OK);
        ck_assert_status(launch_saxpy(), KS_OK);
        ck_assert_status(ks_image_unload(&src_image), KS_OK);
        ck_assert_int_le(count_files(cache_dir, ".nvrtc"), 0);
    }
}
END_TEST


/* ---- real NVRTC: compile and cache, and a real compile error ------------------------------------ */

static int use_real_nvrtc(void)
{
    if (access(REAL_NVRTC_PATH, R_OK) != 0) {
        fprintf(stderr, "note: %s not found; real-NVRTC test skipped\n", REAL_NVRTC_PATH);
        return 0;
    }
    setenv("KSTUB_LIBNVRTC", REAL_NVRTC_PATH, 1);
    return 1;
}

static const char scale_src[] =
    "namespace ns {\n"
    "template <typename T> __global__ void scale(T *x, T a, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= a;\n}\n"
    "template __global__ void scale<float>(float *, float, int);\n"
    "}\n"
    "extern \"C\" __global__ void fill(float *x, float v, int n)\n"
    "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] = v;\n}\n";

START_TEST(real_nvrtc_compile_and_cache)
{
    if (!use_real_nvrtc())
        return;
    static ks_image img = KS_IMAGE_INIT("scale.cu", scale_src, sizeof scale_src, KS_IMAGE_SOURCE);
    static const ks_param_desc p[] = {{0, 8}, {8, 4}, {12, 4}};
    static ks_kernel scale = KS_KERNEL_INIT(&img, "_ZN2ns5scaleIfEEvPT_S1_i", "ns::scale<float>", 3, p, 0);
    static const size_t off[] = {0, 8, 12}, size[] = {8, 4, 4};
    fake.set_params(scale.symbol, 3, off, size);
    ck_assert_status(ks_kernel_resolve(&scale), KS_OK);
    const unsigned char *copy;
    fake.last_image(&copy, NULL);
    ck_assert_mem_eq(copy, "\x7f" "ELF", 4);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.arch, 90);
    ck_assert_int_eq(info.from_cache, 0);

    /* The entry holds a real sm_90 cubin with the mangled and the C names in it. */
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    static unsigned char buf[1 << 16];
    size_t n = read_file(entry, buf, sizeof buf);
    ck_assert_uint_gt(n, 80);
    ck_assert_mem_eq(buf, "KSTUBNV1", 8);
    ck_assert_mem_eq(buf + 80, "\x7f" "ELF", 4);
    ck_assert_ptr_nonnull(memmem(buf, n, "_ZN2ns5scaleIfEEvPT_S1_i", 24));
    ck_assert_ptr_nonnull(memmem(buf, n, "fill", 4));
    unsigned char digest[32];
    ks__sha256(buf + 80, n - 80, digest);
    ck_assert_mem_eq(buf + 48, digest, 32);

    /* Warm. */
    ck_assert_status(ks_image_unload(&img), KS_OK);
    ck_assert_status(ks_kernel_resolve(&scale), KS_OK);
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 1);
}
END_TEST

/* Real NVRTC finds the header through -I, as the cache key assumes: a changed
 * header is a new entry holding a different cubin. */
START_TEST(real_nvrtc_header_change)
{
    if (!use_real_nvrtc())
        return;
    static const char src[] = "#include \"rcfg.h\"\n"
                              "extern \"C\" __global__ void put(float *y) { y[threadIdx.x] = SCALE; }\n";
    static ks_image img = KS_IMAGE_INIT("put.cu", src, sizeof src, KS_IMAGE_SOURCE);
    static const ks_param_desc p[] = {{0, 8}};
    static ks_kernel k = KS_KERNEL_INIT(&img, "put", "put", 1, p, 0);
    static const size_t off[] = {0}, size[] = {8};
    fake.set_params("put", 1, off, size);
    char dir[128], opt[160], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/rinc", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/rcfg.h", dir);
    snprintf(opt, sizeof opt, "-I%s", dir);
    ck_assert_status(ks_image_set_nvrtc_options(&img, (const char *[]){opt}, 1), KS_OK);
    write_text(path, "#define SCALE 2.0f\n");
    ck_assert_status(ks_kernel_resolve(&k), KS_OK);
    char entry[PATH_MAX + 300];
    the_entry(entry, sizeof entry);
    static unsigned char first[1 << 16], second[1 << 16];
    size_t n1 = read_file(entry, first, sizeof first), n2 = 0;
    write_text(path, "#define SCALE 3.0f\n");
    ck_assert_status(reload(&img, &k), KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 0);
    DIR *d = opendir(cache_dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        char other[PATH_MAX + 300];
        snprintf(other, sizeof other, "%s/%s", cache_dir, e->d_name);
        if (e->d_name[0] != '.' && strcmp(other, entry) != 0)
            n2 = read_file(other, second, sizeof second);
    }
    if (d != NULL)
        closedir(d);
    ck_assert_uint_gt(n1, 80);
    ck_assert_uint_gt(n2, 80);
    ck_assert_msg(n1 != n2 || memcmp(first + 80, second + 80, n1 - 80) != 0, "the same cubin for SCALE 2 and 3");
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 2);
    ck_assert_status(reload(&img, &k), KS_OK);
    ck_assert_status(ks_image_info_get(&img, &info), KS_OK);
    ck_assert_int_eq(info.from_cache, 1);
}
END_TEST

START_TEST(real_nvrtc_compile_error)
{
    if (!use_real_nvrtc())
        return;
    static const char src[] = "__global__ void k(float *x) { x[0] = undefined_thing; }\n";
    static ks_image img = KS_IMAGE_INIT("typo.cu", src, sizeof src, KS_IMAGE_SOURCE);
    static ks_kernel k = KS_KERNEL_INIT(&img, "_Z1kPf", "k", 0, NULL, 0);
    ck_assert_status(ks_kernel_resolve(&k), KS_ERR_COMPILE);
    ck_assert_ptr_nonnull(ks_last_error()->log);
    ck_assert_ptr_nonnull(strstr(ks_last_error()->log, "undefined_thing"));
    ck_assert_message_has("typo.cu");
    ck_assert_int_eq(count_files(cache_dir, ".nvrtc"), 0);
}
END_TEST

/* The oracle of cache_hidden_includes_miss_on_change: the real NVRTC opens
 * cfg.h in every one of those forms (its #error is in the log). */
START_TEST(real_nvrtc_reads_hidden_headers)
{
    if (!use_real_nvrtc())
        return;
    char dir[128], opt[160], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/hinc", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/cfg.h", dir);
    write_text(path, "#error KSTUB_HIDDEN_HEADER_READ\n");
    snprintf(opt, sizeof opt, "-I%s", dir);
    static ks_image imgs[sizeof hidden_forms / sizeof hidden_forms[0]];   /* static: see hidden_include_misses */
    for (size_t i = 0; i < sizeof hidden_forms / sizeof hidden_forms[0]; i++) {
        imgs[i] = (ks_image)KS_IMAGE_INIT("h.cu", hidden_forms[i].src, strlen(hidden_forms[i].src) + 1,
                                          KS_IMAGE_SOURCE);
        ks_kernel k = KS_KERNEL_INIT(&imgs[i], "saxpy", "h", 0, NULL, 0);
        ck_assert_status(ks_image_set_nvrtc_options(&imgs[i], (const char *[]){opt}, 1), KS_OK);
        ck_assert_status(ks_kernel_resolve(&k), KS_ERR_COMPILE);
        const char *log = ks_last_error()->log;
        ck_assert_msg(log && strstr(log, "KSTUB_HIDDEN_HEADER_READ"), "%s: NVRTC did not read cfg.h:\n%s",
                      hidden_forms[i].what, log ? log : "(no log)");
        ks_image_unload(&imgs[i]);
    }
}
END_TEST

void runtime_cases_cache_key(Suite *s)
{
    runtime_add_case(s, "cache_key", TESTS(cache_key_follows_includes, cache_unfollowable_includes_not_cached,
                                           cache_include_word_in_comment_still_cached,
                                           cache_hidden_includes_miss_on_change,
                                           cache_other_file_directives_not_cached, real_nvrtc_compile_and_cache,
                                           real_nvrtc_header_change, real_nvrtc_compile_error,
                                           real_nvrtc_reads_hidden_headers));
}
