/*
 * check_runtime_load.c — the runtime suite (tests/support/runtime_fixture.h): the module fallback (drivers without cuLibrary*), images read from
 * files, the environment of a set-uid program.
 */
#include "runtime_fixture.h"

/* ---- the module fallback (drivers without cuLibrary*) --------------------------------------- */

START_TEST(module_fallback_launches)
{
    fake.hide("cuLibraryLoadData");
    ks_launch l = ks_launch_1d(2, 64);
    for (int i = 0; i < 5; i++)
        ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 1);
    ck_assert_int_eq(fake.calls("cuModuleGetFunction"), 1);
    ck_assert_int_eq(fake.calls("cuFuncGetParamInfo"), 6);
    ck_assert_int_eq(fake.calls("cuCtxGetCurrent"), 5 + 1);   /* one a launch, one to resolve */
    ck_assert_int_eq(fake.launch_count(), 5);
    ck_assert_str_eq(fake.launch(4)->symbol, "_Z3mixcsidPf");
    ck_assert(ks_image_is_loaded(&mix_image));
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&mix_image, &info), KS_OK);
    ck_assert_int_eq(info.library, 0);
    ck_assert_int_eq(info.kind, KS_IMAGE_PTX);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_int_eq(fake.live_modules(), 0);
    ck_assert(!ks_image_is_loaded(&mix_image));
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 2);
}
END_TEST

START_TEST(loader_env_forces_modules)
{
    setenv("KSTUB_LOADER", "module", 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 1);
}
END_TEST

/* Issue 41 #19: a misspelled KSTUB_LOADER is refused at first use with a
 * status and a message (it was taken silently for the default), its word
 * escaped; "library" names the default, and empty is as unset. */
START_TEST(loader_env_unknown_is_an_error)
{
    setenv("KSTUB_LOADER", "modul\n::error::x", 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("KSTUB_LOADER names an unknown loader 'modul\\n::error::x' "
                          "(known: library, module)");
    ck_assert_status(launch_mix(&l), KS_ERR_INVALID_VALUE);
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

static void launch_with_loader(const char *loader)
{
    setenv("KSTUB_LOADER", loader, 1);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 0);
}

START_TEST(loader_env_library_is_the_default)
{
    launch_with_loader("library");
}
END_TEST

START_TEST(loader_env_empty_is_unset)
{
    launch_with_loader("");
}
END_TEST

static void *launch_in_context(void *arg)
{
    fake.set_context((int)(intptr_t)arg);
    ks_launch l = ks_launch_1d(1, 32);
    return (void *)(uintptr_t)launch_mix(&l);
}

START_TEST(module_one_per_context)
{
    fake.hide("cuLibraryLoadData");
    ks_launch l = ks_launch_1d(1, 32);
    fake.set_context(0);
    ck_assert_status(launch_mix(&l), KS_OK);
    fake.set_context(2);                        /* another device's context */
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    fake.set_context(0);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 2);
    ck_assert_int_eq(fake.calls("cuModuleGetFunction"), 2);
    ck_assert_int_eq(fake.launch(0)->ctx, 0);
    ck_assert_int_eq(fake.launch(1)->ctx, 2);
    ck_assert_int_eq(fake.launch(2)->ctx, 2);
    ck_assert_int_eq(fake.launch(3)->ctx, 0);
    /* Threads in two more contexts at once. */
    pthread_t t[2];
    void *ret;
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, launch_in_context, (void *)(intptr_t)(i + 1)), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    }
    ck_assert_int_eq(fake.live_modules(), 3);  /* contexts 0, 1, 2 (3 was never used) */
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 3);
    /* Each module is unloaded in its own context (the fake refuses any other);
     * the caller's stays current, and is not pushed again for its own module. */
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_int_eq(fake.live_modules(), 0);
    ck_assert_int_eq(fake.calls("cuCtxPushCurrent"), 2);
    ck_assert_int_eq(fake.calls("cuCtxPopCurrent"), 2);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(fake.launch_count() - 1)->ctx, 0);
}
END_TEST

START_TEST(library_many_contexts)
{
    pthread_t t[3];
    void *ret;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, launch_in_context, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_int_eq((int)(uintptr_t)ret, KS_OK);
    }
    /* One context-independent load serves every context. */
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 1);
    ck_assert_int_eq(fake.launch_count(), 3);
}
END_TEST

START_TEST(module_no_current_context)
{
    fake.hide("cuLibraryLoadData");
    fake.no_current_context();
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 1);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 1);
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

START_TEST(module_abi_check)
{
    fake.hide("cuLibraryLoadData");
    size_t sizes[] = {1, 2, 4, 4, 8};
    fake.set_params(mix.symbol, 5, mix_off, sizes);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_ERR_ABI_MISMATCH);
    ck_assert_message_has("parameter 3");
    ck_assert_int_eq(fake.launch_count(), 0);
    fake.hide("cuFuncGetParamInfo");           /* hidden only for later look-ups: already resolved */
}
END_TEST

START_TEST(module_jit_log)
{
    fake.hide("cuLibraryLoadData");
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_launch(&bad, &l, NULL), KS_ERR_LOAD);
    ck_assert_str_eq(ks_last_error()->call, "cuModuleLoadDataEx");
    ck_assert_ptr_nonnull(ks_last_error()->log);
    ck_assert_ptr_nonnull(strstr(ks_last_error()->log, "Unknown symbol 'BAD'"));
    ck_assert_message_has("CUDA_ERROR_INVALID_PTX");
    ck_assert_int_eq(fake.live_modules(), 0);
}
END_TEST

START_TEST(module_calls_fail_in_turn)
{
    fake.hide("cuLibraryLoadData");
    static const struct { const char *entry; int nth; ks_status want; } cases[] = {
        {"cuModuleLoadDataEx", 1, KS_ERR_LOAD},
        {"cuModuleGetFunction", 1, KS_ERR_DRIVER},
        {"cuFuncGetParamInfo", 3, KS_ERR_DRIVER},
        {"cuCtxGetCurrent", 1, KS_ERR_NO_CONTEXT},
        {"cuLaunchKernel", 1, KS_ERR_LAUNCH},
    };
    ks_launch l = ks_launch_1d(1, 32);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_status(ks_image_unload(&mix_image), KS_OK);
        ck_assert_int_eq(fake.live_modules(), 0);
        fake.inject(cases[i].entry, CUDA_ERROR_UNKNOWN, cases[i].nth);
        ck_assert_status(launch_mix(&l), cases[i].want);
        ck_assert_message_has(cases[i].entry);
        ck_assert_int_le(fake.live_modules(), 1);   /* kept for unload, never lost */
        ck_assert_status(launch_mix(&l), KS_OK);
    }
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_int_eq(fake.live_modules(), 0);
    ck_assert_int_eq(fake.launch_count(), 5);
}
END_TEST


/* ---- images from files ---------------------------------------------------------------------- */

static const unsigned char elf_bytes[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 'c', 'u', 'b', 'i', 'n', 0, 0, 0};
static const unsigned char fatbin_bytes[16] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 'f', 'a', 't', 0, 0, 0, 0, 0};

START_TEST(file_from_image_path)
{
    char dir[128], path[PATH_MAX + 32], env[2 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s/images", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/disk.cubin", dir);
    write_file(path, elf_bytes, sizeof elf_bytes);
    snprintf(path, sizeof path, "%s/disk.ptx", dir);
    write_file(path, ".version 8.0\n", 13);
    snprintf(env, sizeof env, "/nonexistent::%s", dir);
    setenv("KSTUB_IMAGE_PATH", env, 1);
    ck_assert_status(launch_disk(), KS_OK);
    /* The cubin wins over the PTX; the bytes are the file's. */
    const unsigned char *copy;
    size_t n;
    fake.last_image(&copy, &n);
    ck_assert_mem_eq(copy, elf_bytes, 8);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&disk_image, &info), KS_OK);
    snprintf(path, sizeof path, "%s/disk.cubin", dir);
    ck_assert_str_eq(info.path, path);
    ck_assert_int_eq(info.kind, KS_IMAGE_CUBIN);
    ck_assert_int_eq(info.origin, KS_IMAGE_CUBIN);
    /* A fatbin beside it is preferred after a reload. */
    snprintf(path, sizeof path, "%s/disk.fatbin", dir);
    write_file(path, fatbin_bytes, sizeof fatbin_bytes);
    ck_assert_status(ks_image_unload(&disk_image), KS_OK);
    ck_assert_status(launch_disk(), KS_OK);
    fake.last_image(&copy, &n);
    ck_assert_mem_eq(copy, fatbin_bytes, 8);
    ck_assert_int_eq(fake.launch_count(), 2);
}
END_TEST

START_TEST(file_not_found_lists_paths)
{
    setenv("KSTUB_IMAGE_PATH", "/nonexistent/a:/nonexistent/b", 1);
    ck_assert_status(launch_disk(), KS_ERR_INVALID_IMAGE);
    ck_assert_message_has("kernels/disk.cu");
    ck_assert_message_has("/nonexistent/a/disk.fatbin");
    ck_assert_message_has("/nonexistent/b/disk.ptx");
    ck_assert_message_has("KSTUB_IMAGE_PATH");
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
}
END_TEST

START_TEST(file_beside_the_executable)
{
    char exe[PATH_MAX], path[PATH_MAX + 32];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(len, 0);
    exe[len] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(path, sizeof path, "%s/disk.ptx", exe);
    static const char ptx[] = ".version 8.0\n.target sm_90\n";
    write_file(path, ptx, sizeof ptx - 1);
    ks_status st = launch_disk();
    unlink(path);
    ck_assert_status(st, KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&disk_image, &info), KS_OK);
    ck_assert_int_eq(info.kind, KS_IMAGE_PTX);
    const unsigned char *copy;
    size_t n;
    fake.last_image(&copy, &n);
    ck_assert_uint_eq(n, sizeof ptx);                 /* NUL-terminated for the driver */
    ck_assert_str_eq((const char *)copy, ptx);
}
END_TEST

START_TEST(file_set_explicitly)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/other.cubin", tmp_dir);
    write_file(path, elf_bytes, sizeof elf_bytes);
    /* An embedded image can be replaced by a file, and go back. */
    ck_assert_status(ks_image_set_file(&mix_image, path), KS_OK);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    const unsigned char *copy;
    ck_assert_ptr_ne(fake.last_image(&copy, NULL), mix_ptx);
    ck_assert_mem_eq(copy, elf_bytes, 8);
    ck_assert_status(ks_image_set_file(&mix_image, NULL), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);          /* still loaded from the file */
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_status(ks_image_unload(&mix_image), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_ptr_eq(fake.last_image(NULL, NULL), mix_ptx);
    /* A bare name is searched for. */
    setenv("KSTUB_IMAGE_PATH", tmp_dir, 1);
    ck_assert_status(ks_image_set_file(&disk_image, "other.cubin"), KS_OK);
    ck_assert_status(launch_disk(), KS_OK);
    ks_image_info info;
    ck_assert_status(ks_image_info_get(&disk_image, &info), KS_OK);
    ck_assert_str_eq(info.path, path);
    /* Missing and unreadable files. */
    ck_assert_status(ks_image_unload(&disk_image), KS_OK);
    ck_assert_status(ks_image_set_file(&disk_image, "/nonexistent/x.cubin"), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has("/nonexistent/x.cubin");
    ck_assert_message_has("No such file");
    ck_assert_status(ks_image_set_file(&disk_image, tmp_dir), KS_OK);   /* a directory */
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_status(ks_image_set_file(&disk_image, "nothere.cubin"), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has("was not found");
    ck_assert_status(ks_image_set_file(&disk_image, ""), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_image_set_file(NULL, "x"), KS_ERR_INVALID_VALUE);
    snprintf(path, sizeof path, "%s/binary.ptx", tmp_dir);
    write_file(path, "ab\0cd", 5);
    ck_assert_status(ks_image_set_file(&disk_image, path), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_INVALID_IMAGE);
    ck_assert_int_eq(fake.live_libraries(), 1);    /* mix_image's; none of disk_image's failures */
}
END_TEST

static void *race_disk(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start_line);
    return (void *)(uintptr_t)launch_disk();
}


/* A FIFO where an image file should be must not block the load (issue 10 #7). */
START_TEST(file_fifo_is_refused)
{
    alarm(20);                          /* before the fix this hung for ever */
    char dir[128], path[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/images", tmp_dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/disk.fatbin", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    setenv("KSTUB_IMAGE_PATH", dir, 1);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has(path);
    ck_assert_message_has("not a regular file");
    ck_assert_status(ks_image_set_file(&disk_image, path), KS_OK);
    ck_assert_status(launch_disk(), KS_ERR_IO);
    ck_assert_message_has("not a regular file");
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    alarm(0);
}
END_TEST

START_TEST(file_threads_race)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/disk.fatbin", tmp_dir);
    write_file(path, fatbin_bytes, sizeof fatbin_bytes);
    setenv("KSTUB_IMAGE_PATH", tmp_dir, 1);
    fake.delay("cuLibraryLoadData", 50000);
    race_32(race_disk);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 1);
    ck_assert_int_eq(fake.launch_count(), RACERS);
}
END_TEST

START_TEST(module_threads_race)
{
    fake.hide("cuLibraryLoadData");
    fake.delay("cuModuleLoadDataEx", 50000);
    race_32(race);
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 1);
    ck_assert_int_eq(fake.calls("cuModuleGetFunction"), 1);
    ck_assert_int_eq(fake.launch_count(), RACERS);
}
END_TEST


/* ---- the environment of a set-uid program (issue 10 #10) --------------------------------------- */

/* Run as a set-uid copy of this program (see below): with AT_SECURE set,
 * KSTUB_LIBCUDA must be ignored, so the fake driver must not get loaded.
 * 0: ignored; 1: it was used; 77: the kernel did not mark the process secure. */
int secure_env_probe(void)
{
    if (getauxval(AT_SECURE) == 0)
        return 77;
    void *fn;
    ks_driver_proc("cuInit", &fn);      /* fails without a real driver: what matters is which was tried */
    return dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD) != NULL;
}

START_TEST(setuid_ignores_the_environment)
{
    if (geteuid() != 0) {
        fprintf(stderr, "note: not root; the set-uid environment test is skipped\n");
        return;
    }
    char probe[PATH_MAX];
    snprintf(probe, sizeof probe, "%s/probe", tmp_dir);
    int in = open("/proc/self/exe", O_RDONLY), out = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0700);
    ck_assert(in >= 0 && out >= 0);
    static char buf[1 << 16];
    for (ssize_t n; (n = read(in, buf, sizeof buf)) > 0;)
        ck_assert_int_eq(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
    ck_assert_int_eq(chmod(probe, 04755), 0);
    ck_assert_int_eq(chmod(tmp_dir, 0755), 0);
    ck_assert_str_eq(getenv("KSTUB_LIBCUDA"), FAKE_CUDA_PATH);
    pid_t pid = fork();
    if (pid == 0) {
        /* An ordinary user starts the set-uid-root program: euid 0, ruid 65534. */
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(90);
        execl(probe, probe, "--secure-env-probe", (char *)NULL);
        _exit(91);
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st), "the probe died (status 0x%x)", st);
    if (WEXITSTATUS(st) == 77) {
        fprintf(stderr, "note: the set-uid probe did not run with AT_SECURE (nosuid mount?); test skipped\n");
        return;
    }
    ck_assert_msg(WEXITSTATUS(st) == 0, "a set-uid program loaded the driver KSTUB_LIBCUDA named (probe exit %d)",
                  WEXITSTATUS(st));
}
END_TEST

/* ---- internal linkage: symbols with a per-compilation part (common/symbol.h) ---------------- */

/* Device symbols as nvcc 13.0 wrote them for st.cu, a.cu and b.cu (whole-program and -rdc). */
#define ST_STATIC "_Z8k_staticPfi"
#define ST_STATIC_RDC "__nv_static_26__1bb079f7_5_st_cu_4766a884__Z8k_staticPfi"
#define ST_ANON "_ZN37_GLOBAL__N__1bb079f7_5_st_cu_4766a8846k_anonEPf"
#define ST_ANON_OTHER_HASH "_ZN37_GLOBAL__N__a7ac0bb9_5_st_cu_05a7b7696k_anonEPf"
#define ST_ANON_RDC "__nv_static_26__1bb079f7_5_st_cu_4766a884__ZN37_GLOBAL__N__1bb079f7_5_st_cu_4766a8846k_anonEPf"
#define A_K_RDC "__nv_static_23__96e315c3_4_a_cu__Z1hPf__Z1kPf"
#define B_K_RDC "__nv_static_25__60cdc8fa_4_b_cu_4766a884__Z1kPf"

static const ks_param_desc one_ptr[] = {{0, 8, 8, KS_PARAM_POINTER, "p", "float *", 4, 4, NULL, 0, NULL}};
static const size_t one_off[] = {0}, one_size[] = {8};
static ks_kernel k_static = KS_KERNEL_INIT(&mix_image, "{static:5_st_cu}" ST_STATIC, "k_static", 1, one_ptr, 0);
static ks_kernel k_anon = KS_KERNEL_INIT(&mix_image, "{static:5_st_cu}_ZN{anon:5_st_cu}6k_anonEPf",
                                         "(anonymous namespace)::k_anon", 1, one_ptr, 0);
static ks_kernel a_k = KS_KERNEL_INIT(&mix_image, "{static:4_a_cu}_Z1kPf", "k", 1, one_ptr, 0);
static ks_kernel b_k = KS_KERNEL_INIT(&mix_image, "{static:4_b_cu}_Z1kPf", "k", 1, one_ptr, 0);

static void image_has(const char *symbol)
{
    fake.set_params(symbol, 1, one_off, one_size);
}

/* Launch \p k; on success, the symbol the driver launched must be \p want. */
static ks_status launch_one(ks_kernel *k, const char *want)
{
    float *p = (float *)(uintptr_t)0x7f0012345678;
    void *args[1] = {&p};
    ks_launch l = ks_launch_1d(1, 32);
    int before = fake.launch_count();
    ks_status st = ks_kernel_launch(k, &l, args);
    if (st == KS_OK) {
        ck_assert_int_eq(fake.launch_count(), before + 1);
        ck_assert_str_eq(fake.launch(before)->symbol, want);
    }
    return st;
}

START_TEST(internal_static_by_name)
{
    image_has(ST_ANON);
    image_has(ST_STATIC);
    ck_assert_status(launch_one(&k_static, ST_STATIC), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernelCount"), 0);   /* whole-program: by name */
    ck_assert_status(launch_one(&k_static, ST_STATIC), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 1);        /* resolved once */
}
END_TEST

START_TEST(internal_static_rdc_from_the_list)
{
    image_has(ST_ANON_RDC);
    image_has(ST_STATIC_RDC);
    ck_assert_status(launch_one(&k_static, ST_STATIC_RDC), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernelCount"), 1);
    ck_assert_int_eq(fake.calls("cuLibraryEnumerateKernels"), 1);
    ck_assert_int_eq(fake.calls("cuKernelGetName"), 5);   /* the fixture's three and these two */
    ck_assert_status(launch_one(&k_static, ST_STATIC_RDC), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryEnumerateKernels"), 1);
}
END_TEST

START_TEST(internal_anonymous_namespace)
{
    image_has(ST_STATIC);
    image_has("_ZN37_GLOBAL__N__1bb079f7_5_st_cu_4766a8846k_anonEPi");  /* another overload */
    image_has(ST_ANON);
    ck_assert_status(launch_one(&k_anon, ST_ANON), KS_OK);
    ck_assert_int_eq(fake.calls("cuLibraryGetKernel"), 0);
}
END_TEST

START_TEST(internal_anonymous_namespace_rdc)
{
    image_has(ST_STATIC_RDC);
    image_has(ST_ANON_RDC);
    ck_assert_status(launch_one(&k_anon, ST_ANON_RDC), KS_OK);
}
END_TEST

/* One -rdc image of a.cu and b.cu, each with its own static k(float *). */
START_TEST(internal_two_files_each_their_own)
{
    image_has(A_K_RDC);
    image_has(B_K_RDC);
    ck_assert_status(launch_one(&b_k, B_K_RDC), KS_OK);
    ck_assert_status(launch_one(&a_k, A_K_RDC), KS_OK);
}
END_TEST

START_TEST(internal_ambiguous_is_refused)
{
    image_has(ST_ANON);
    image_has(ST_ANON_OTHER_HASH);      /* two files called st.cu in one image */
    ck_assert_status(launch_one(&k_anon, NULL), KS_ERR_SYMBOL_AMBIGUOUS);
    ck_assert_message_has(ST_ANON);
    ck_assert_message_has(ST_ANON_OTHER_HASH);
    ck_assert_message_has("kernel '(anonymous namespace)::k_anon'");
    ck_assert_ptr_null(ks_last_error()->call);
    ck_assert_int_eq(fake.launch_count(), 0);
}
END_TEST

START_TEST(internal_not_found)
{
    image_has(ST_STATIC);
    ck_assert_status(launch_one(&k_anon, NULL), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_message_has("no kernel in the image of 'mix.cu' matches '{static:5_st_cu}_ZN{anon:5_st_cu}6k_anonEPf'");
    /* The same kernel from a file of another name: said so. */
    image_has("_ZN38_GLOBAL__N__1bb079f7_6_st2_cu_4766a8846k_anonEPf");
    ck_assert_status(launch_one(&k_anon, NULL), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_message_has("'_ZN38_GLOBAL__N__1bb079f7_6_st2_cu_4766a8846k_anonEPf' would but names another file");
}
END_TEST

START_TEST(internal_module_loader)
{
    fake.hide("cuLibraryLoadData");
    image_has(ST_ANON_RDC);
    image_has(ST_STATIC);
    ck_assert_status(launch_one(&k_anon, ST_ANON_RDC), KS_OK);
    ck_assert_int_eq(fake.calls("cuModuleGetFunctionCount"), 1);
    ck_assert_int_eq(fake.calls("cuModuleEnumerateFunctions"), 1);
    ck_assert_int_eq(fake.calls("cuFuncGetName"), 5);
    ck_assert_status(launch_one(&k_static, ST_STATIC), KS_OK);
    ck_assert_int_eq(fake.calls("cuModuleGetFunction"), 1);
    fake.set_context(2);                /* another context: listed again there */
    ck_assert_status(launch_one(&k_anon, ST_ANON_RDC), KS_OK);
    ck_assert_int_eq(fake.calls("cuModuleEnumerateFunctions"), 2);
    ck_assert_int_eq(fake.launch(2)->ctx, 2);
}
END_TEST

/* A static device function as a template argument: nvcc's per-compilation
 * namespace is one more substitution candidate, so its later back-references
 * count one more than clang's (S2_ for S1_ ...). */
START_TEST(internal_function_argument)
{
    static ks_kernel tri = KS_KERNEL_INIT(&mix_image, "{static:5_t4_cu}_Z13trimul_globalIXadL_ZN{internal:5_t4_cu}"
                                          "12matmul_tri_sEPfiPKfiS2_iiifEEEvS0_S2_iii", "trimul_global<matmul_tri_s>",
                                          1, one_ptr, 0);
    static const char nvcc[] = "_Z13trimul_globalIXadL_ZN35_INTERNAL_3284fdda_5_t4_cu_edd23f7e12matmul_tri_sEPfiPKfi"
                               "S3_iiifEEEvS1_S3_iii";
    image_has("_Z13trimul_globalIXadL_Z16matmul_tri_naivePfiPKfiS2_iiifEEEvS0_S2_iii");
    image_has(nvcc);
    ck_assert_status(launch_one(&tri, nvcc), KS_OK);
}
END_TEST

START_TEST(internal_driver_without_the_list)
{
    fake.hide("cuLibraryEnumerateKernels");
    image_has(ST_ANON);
    image_has(ST_STATIC);
    ck_assert_status(launch_one(&k_static, ST_STATIC), KS_OK);   /* by name: no list needed */
    ck_assert_status(launch_one(&k_anon, NULL), KS_ERR_UNSUPPORTED);
    ck_assert_message_has("lacks cuLibraryEnumerateKernels");
}
END_TEST

START_TEST(internal_list_calls_fail_in_turn)
{
    static const char *const calls[] = {"cuLibraryGetKernelCount", "cuLibraryEnumerateKernels",
                                        "cuKernelGetName"};
    image_has(ST_ANON);
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        fake.inject(calls[i], CUDA_ERROR_UNKNOWN, 1);
        ck_assert_status(launch_one(&k_anon, NULL), KS_ERR_DRIVER);
        ck_assert_str_eq(ks_last_error()->call, calls[i]);
        ck_assert_int_eq(ks_last_error()->cu_result, CUDA_ERROR_UNKNOWN);
    }
    ck_assert_status(launch_one(&k_anon, ST_ANON), KS_OK);
}
END_TEST

/* Both loaders list an image's kernels through one helper (image.c's
 * ks__image_list): a driver without either call refuses an internal kernel
 * naming the call; each call failing in turn is reported by name. The
 * module loader is taken by hiding cuLibraryLoadData. */
static void refused_without(int modules, const char *entry)
{
    if (modules)
        fake.hide("cuLibraryLoadData");
    fake.hide(entry);
    image_has(ST_ANON);
    image_has(ST_STATIC);
    ck_assert_status(launch_one(&k_static, ST_STATIC), KS_OK);   /* by name: no list needed */
    ck_assert_status(launch_one(&k_anon, NULL), KS_ERR_UNSUPPORTED);
    ck_assert_message_has(entry);
}

START_TEST(internal_driver_without_the_count)
{
    refused_without(0, "cuLibraryGetKernelCount");
}
END_TEST

START_TEST(internal_module_without_the_count)
{
    refused_without(1, "cuModuleGetFunctionCount");
}
END_TEST

START_TEST(internal_module_without_the_list)
{
    refused_without(1, "cuModuleEnumerateFunctions");
}
END_TEST

START_TEST(internal_module_list_calls_fail_in_turn)
{
    static const char *const calls[] = {"cuModuleGetFunctionCount", "cuModuleEnumerateFunctions",
                                        "cuFuncGetName"};
    fake.hide("cuLibraryLoadData");
    image_has(ST_ANON);
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        fake.inject(calls[i], CUDA_ERROR_UNKNOWN, 1);
        ck_assert_status(launch_one(&k_anon, NULL), KS_ERR_DRIVER);
        ck_assert_str_eq(ks_last_error()->call, calls[i]);
        ck_assert_int_eq(ks_last_error()->cu_result, CUDA_ERROR_UNKNOWN);
    }
    ck_assert_status(launch_one(&k_anon, ST_ANON), KS_OK);
}
END_TEST

/* ---- a stream's context (issue 45: contexts the program made, green contexts) -------------- */

/* The thread's current context, as the driver says. */
static CUcontext current_context(void)
{
    void *fn = NULL;
    CUresult (*get)(CUcontext *);
    ck_assert_status(ks_driver_proc("cuCtxGetCurrent", &fn), KS_OK);
    memcpy(&get, &fn, sizeof fn);
    CUcontext ctx = (CUcontext)(uintptr_t)1;
    ck_assert_int_eq(get(&ctx), CUDA_SUCCESS);
    return ctx;
}

#define STREAM_OF(ctx) ((CUstream)(uintptr_t)(0x5000 + 0x10 * (ctx)))

/* A CUkernel runs in its stream's context: the library loader asks nothing more of it. */
START_TEST(library_stream_of_another_context)
{
    fake.stream_context(STREAM_OF(2), 2);
    ks_launch l = ks_launch_1d(1, 32);
    ck_assert_status(launch_mix(&l), KS_OK);
    l.stream = STREAM_OF(2);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(0)->ctx, 0);
    ck_assert_int_eq(fake.launch(1)->ctx, 2);
    ck_assert_int_eq(fake.calls("cuStreamGetCtx"), 0);
}
END_TEST

/* With no context current, a launch on a stream runs there; none is made current. */
START_TEST(library_stream_without_current_context)
{
    fake.no_current_context();
    fake.stream_context(STREAM_OF(1), 1);
    ks_launch l = ks_launch_on(ks_launch_1d(1, 32), STREAM_OF(1));
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 2);
    ck_assert_int_eq(fake.launch(1)->ctx, 1);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 0);
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 0);
    ck_assert_ptr_null(current_context());
}
END_TEST

/* The module fallback launches the function of the stream's context, loading the
 * image there (with that context pushed), not the current context's. */
START_TEST(module_function_of_the_stream_context)
{
    fake.hide("cuLibraryLoadData");
    fake.stream_context(STREAM_OF(2), 2);
    ks_launch l = ks_launch_on(ks_launch_1d(1, 32), STREAM_OF(2));
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(0)->ctx, 2);
    ck_assert_int_eq(fake.live_modules(), 1);           /* in context 2 only */
    ck_assert_status(launch_mix(&l), KS_OK);            /* found again: no second load */
    ck_assert_int_eq(fake.calls("cuModuleLoadDataEx"), 1);
    l.stream = NULL;                                    /* the current context's: its own module */
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch(2)->ctx, 0);
    ck_assert_int_eq(fake.live_modules(), 2);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 0);
    ck_assert_int_eq(fake.calls("cuCtxPushCurrent"), fake.calls("cuCtxPopCurrent"));
}
END_TEST

/* The module fallback with no context current: the stream's context is pushed to
 * load and to launch, and popped; nothing is made current. */
START_TEST(module_stream_without_current_context)
{
    fake.hide("cuLibraryLoadData");
    fake.no_current_context();
    fake.stream_context(STREAM_OF(1), 1);
    ks_launch l = ks_launch_on(ks_launch_1d(1, 32), STREAM_OF(1));
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_status(launch_mix(&l), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 2);
    ck_assert_int_eq(fake.launch(1)->ctx, 1);
    ck_assert_int_eq(fake.calls("cuDevicePrimaryCtxRetain"), 0);
    ck_assert_int_eq(fake.calls("cuCtxSetCurrent"), 0);
    ck_assert_int_eq(fake.calls("cuCtxPushCurrent"), fake.calls("cuCtxPopCurrent"));
    ck_assert_ptr_null(current_context());
}
END_TEST

void runtime_cases_load(Suite *s)
{
    runtime_add_case(s, "modules", TESTS(module_fallback_launches, loader_env_forces_modules,
                                         module_one_per_context, library_many_contexts,
                                         module_no_current_context, module_abi_check, module_jit_log,
                                         module_calls_fail_in_turn, module_threads_race));
    runtime_add_case(s, "stream contexts", TESTS(library_stream_of_another_context,
                                                 library_stream_without_current_context,
                                                 module_function_of_the_stream_context,
                                                 module_stream_without_current_context));
    runtime_add_case(s, "files", TESTS(file_from_image_path, file_not_found_lists_paths,
                                       file_beside_the_executable, file_set_explicitly, file_threads_race,
                                       file_fifo_is_refused));
    runtime_add_case(s, "environment", TESTS(setuid_ignores_the_environment,
                                             loader_env_unknown_is_an_error,
                                             loader_env_library_is_the_default,
                                             loader_env_empty_is_unset));
    runtime_add_case(s, "internal", TESTS(internal_static_by_name, internal_static_rdc_from_the_list,
                                          internal_anonymous_namespace, internal_anonymous_namespace_rdc,
                                          internal_two_files_each_their_own, internal_ambiguous_is_refused,
                                          internal_not_found, internal_module_loader,
                                          internal_driver_without_the_list, internal_function_argument,
                                          internal_list_calls_fail_in_turn, internal_driver_without_the_count,
                                          internal_module_without_the_count, internal_module_without_the_list,
                                          internal_module_list_calls_fail_in_turn));
}
