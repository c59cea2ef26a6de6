/*
 * coldstart.c — benchmark question 2: process start to first kernel
 * completed, per image source, against the CUDA floor and nvcc's program.
 *
 * The driver fork/execs each configuration's program N times, the
 * configurations interleaved round by round after one untimed warm-up run of
 * each (which also warms the NVRTC and JIT caches the "warm" rows use and the
 * page cache). Per run it records, all on CLOCK_MONOTONIC:
 *
 *   exec->main   from just before fork to the program's first statement
 *   main->done   the program's own report: main() to first kernel completed
 *   exec->done   from just before fork to first kernel completed
 *   exec->exit   from just before fork to wait4() returning (exit and teardown)
 *   ctx->done    the program's own report: its CUDA context current to first
 *                kernel completed (image load and launch; the programs that
 *                make the context themselves), free of the context's noise
 *   peak RSS     wait4's ru_maxrss
 *
 * and reports medians; the deltas against the CUDA-context-only program and
 * the hand-written driver program are medians of per-round differences.
 *
 *   coldstart -d BINDIR -k KERNEL.cu -w WORKDIR [-n RUNS] [-t SECONDS] [-o OUTDIR]
 *
 * BINDIR holds the cold_* programs and bench_kernels.{cubin,ptx}; KERNEL.cu
 * is the source NVRTC compiles; WORKDIR (empty, owned by the user) receives
 * the caches. With -t, RUNS is lowered (not below 5) when the warm-up says
 * that many rounds would not fit in SECONDS. Writes OUTDIR/coldstart_raw.csv
 * and coldstart_summary.csv.
 */
#include <errno.h>
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Each child is killed if it runs longer than this (alarm survives exec). */
#define CHILD_TIMEOUT_S 120

enum cache_mode {
    PLAIN,        /* shared caches, warm after the warm-up run */
    JIT_OFF,      /* CUDA_CACHE_DISABLE=1: the driver JITs PTX every time */
    NVRTC_COLD    /* a fresh, empty KSTUB_CACHE_DIR every run */
};

typedef struct config {
    const char *id;
    const char *label;
    const char *prog;            /* under BINDIR */
    const char *file;            /* argument: under BINDIR, "@KERNEL" for the .cu, or NULL */
    enum cache_mode cache;
    int expect_cache;            /* cold_kstub's cache= must be this; -1: not checked */
} config;

static const config configs[] = {
    {"process", "process, no CUDA (cold_null)", "cold_null", NULL, PLAIN, -1},
    {"context", "CUDA context only, no kernel (cold_ctx)", "cold_ctx", NULL, PLAIN, -1},
    {"raw_fatbin", "hand-written driver API, embedded fatbin", "cold_raw", NULL, PLAIN, -1},
    {"kstub_fatbin", "kstub, embedded fatbin", "cold_kstub", NULL, PLAIN, 0},
    {"kstub_cubin", "kstub, cubin file", "cold_kstub", "bench_kernels.cubin", PLAIN, 0},
    {"kstub_ptx_jit", "kstub, PTX file, JIT (driver JIT cache off)", "cold_kstub", "bench_kernels.ptx", JIT_OFF, 0},
    {"kstub_ptx_jitcache", "kstub, PTX file, driver JIT cache warm", "cold_kstub", "bench_kernels.ptx", PLAIN, 0},
    {"kstub_nvrtc_cold", "kstub, NVRTC source, cold kstub cache", "cold_kstub", "@KERNEL", NVRTC_COLD, 0},
    {"kstub_nvrtc_warm", "kstub, NVRTC source, warm kstub cache", "cold_kstub", "@KERNEL", PLAIN, 1},
    {"nvcc", "nvcc <<<>>> program (runtime API)", "cold_nvcc", NULL, PLAIN, -1},
};
enum { NCONFIGS = sizeof configs / sizeof configs[0], C_CONTEXT = 1, C_RAW = 2 };

typedef struct run {
    double exec_main, main_done, exec_done, exec_exit;  /* ms */
    double main_init, ctx_done;  /* ms; < 0: the program does not report it */
    long maxrss_kb;
    int cache;                   /* cold_kstub's cache= field, -1 when absent */
} run;

static const char *bindir, *kernel_src, *workdir;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Run one configuration once. Returns 0 and fills *out, 1 when the program
 * says it skipped (no driver), -1 on failure (message printed). */
static int run_once(const config *c, run *out, char *skip, size_t skiplen)
{
    char prog[4096], file[4096], cold_dir[4096] = "", jit_dir[4096], nvrtc_dir[4096];
    snprintf(prog, sizeof prog, "%s/%s", bindir, c->prog);
    if (c->file && strcmp(c->file, "@KERNEL") == 0)
        snprintf(file, sizeof file, "%s", kernel_src);
    else if (c->file)
        snprintf(file, sizeof file, "%s/%s", bindir, c->file);
    snprintf(jit_dir, sizeof jit_dir, "%s/jit-cache", workdir);
    snprintf(nvrtc_dir, sizeof nvrtc_dir, "%s/kstub-cache", workdir);
    if (c->cache == NVRTC_COLD) {
        snprintf(cold_dir, sizeof cold_dir, "%s/kstub-cold-XXXXXX", workdir);
        if (mkdtemp(cold_dir) == NULL) {
            perror("coldstart: mkdtemp");
            return -1;
        }
    }
    int fd[2];
    if (pipe(fd) != 0) {
        perror("coldstart: pipe");
        return -1;
    }
    fflush(stdout);
    uint64_t t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("coldstart: fork");
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDOUT_FILENO);
        close(fd[1]);
        setenv("CUDA_CACHE_PATH", jit_dir, 1);
        if (c->cache == JIT_OFF)
            setenv("CUDA_CACHE_DISABLE", "1", 1);
        else
            unsetenv("CUDA_CACHE_DISABLE");
        setenv("KSTUB_CACHE_DIR", c->cache == NVRTC_COLD ? cold_dir : nvrtc_dir, 1);
        unsetenv("KSTUB_CACHE");
        alarm(CHILD_TIMEOUT_S);
        char *argv[3] = {prog, c->file ? file : NULL, NULL};
        execv(prog, argv);
        fprintf(stderr, "coldstart: exec %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    int status = 0;
    struct rusage ru;
    pid_t w;
    while ((w = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR) {
    }
    uint64_t t_exit = now_ns();
    char buf[1024];
    ssize_t len = 0, got;
    while (len < (ssize_t)sizeof buf - 1 && (got = read(fd[0], buf + len, sizeof buf - 1 - (size_t)len)) > 0)
        len += got;
    buf[len > 0 ? len : 0] = '\0';
    close(fd[0]);
    if (cold_dir[0])
        rm_tree(cold_dir);
    if (w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "coldstart: %s %s failed (%s %d); it printed: %s\n", c->prog,
                c->file ? file : "", WIFSIGNALED(status) ? "signal" : "exit status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), buf);
        return -1;
    }
    if (strncmp(buf, "skip=", 5) == 0) {
        snprintf(skip, skiplen, "%.400s", buf + 5);
        skip[strcspn(skip, "\n")] = '\0';
        return 1;
    }
    unsigned long long t_main = 0, t_done = 0, t_init = 0, t_ctx = 0;
    const char *p;
    if ((p = strstr(buf, "main=")) == NULL || sscanf(p, "main=%llu", &t_main) != 1 ||
        (p = strstr(buf, "done=")) == NULL || sscanf(p, "done=%llu", &t_done) != 1) {
        fprintf(stderr, "coldstart: %s printed no timings: %s\n", c->prog, buf);
        return -1;
    }
    out->main_init = -1.0;
    if ((p = strstr(buf, "init=")) != NULL && sscanf(p, "init=%llu", &t_init) == 1)
        out->main_init = (double)(t_init - t_main) / 1e6;
    out->ctx_done = -1.0;
    if ((p = strstr(buf, "ctx=")) != NULL && sscanf(p, "ctx=%llu", &t_ctx) == 1)
        out->ctx_done = (double)(t_done - t_ctx) / 1e6;
    out->cache = -1;
    if ((p = strstr(buf, "cache=")) != NULL)
        sscanf(p, "cache=%d", &out->cache);
    out->exec_main = ((double)t_main - (double)t0) / 1e6;
    out->main_done = (double)(t_done - t_main) / 1e6;
    out->exec_done = ((double)t_done - (double)t0) / 1e6;
    out->exec_exit = (double)(t_exit - t0) / 1e6;
    out->maxrss_kb = ru.ru_maxrss;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    int i = (int)pos;
    return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[i];
}

/* The q-quantile of one field (or of a per-round difference) over the runs. */
static double field_q(const run *runs, const run *ref, int n, size_t off, double q)
{
    double v[1024];
    if (n > 1024)
        n = 1024;
    for (int i = 0; i < n; i++) {
        double x;
        memcpy(&x, (const char *)&runs[i] + off, sizeof x);
        if (ref) {
            double y;
            memcpy(&y, (const char *)&ref[i] + off, sizeof y);
            x -= y;
        }
        v[i] = x;
    }
    return quantile(v, n, q);
}

int main(int argc, char **argv)
{
    int nruns = 20;
    double budget_s = 0.0;
    const char *outdir = ".";
    int opt;
    while ((opt = getopt(argc, argv, "d:k:w:n:t:o:")) != -1) {
        switch (opt) {
        case 'd': bindir = optarg; break;
        case 'k': kernel_src = optarg; break;
        case 'w': workdir = optarg; break;
        case 'n': nruns = atoi(optarg); break;
        case 't': budget_s = atof(optarg); break;
        case 'o': outdir = optarg; break;
        default: goto usage;
        }
    }
    if (!bindir || !kernel_src || !workdir || nruns < 1 || nruns > 1024) {
    usage:
        fprintf(stderr, "usage: %s -d BINDIR -k KERNEL.cu -w WORKDIR [-n RUNS (1-1024)] [-t SECONDS] [-o OUTDIR]\n",
                argv[0]);
        return 2;
    }

    static run runs[NCONFIGS][1024];
    char skip[512] = "";
    double round_ms = 0.0;
    /* Warm-up, and the check that there is a driver at all. */
    for (int c = 0; c < NCONFIGS; c++) {
        run r;
        int st = run_once(&configs[c], &r, skip, sizeof skip);
        if (st == 1 && c == 0) {
            fprintf(stderr, "coldstart: cold_null cannot skip\n");
            return 1;
        }
        if (st == 1) {
            printf("coldstart: %s: %s; skipped\n", configs[c].prog, skip);
            return 0;
        }
        if (st < 0)
            return 1;
        printf("coldstart: warm-up %-20s %8.2f ms exec->exit\n", configs[c].id, r.exec_exit);
        fflush(stdout);
        round_ms += r.exec_exit;
    }
    /* The warm-up round includes the cold caches, so it over-estimates a round. */
    if (budget_s > 0.0 && round_ms > 0.0) {
        int fit = (int)(budget_s * 1000.0 / round_ms);
        if (fit < nruns) {
            nruns = fit < 5 ? 5 : fit;
            printf("coldstart: a round takes about %.0f ms; %d rounds fit in %.0f s\n", round_ms,
                   nruns, budget_s);
        }
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/coldstart_raw.csv", outdir);
    FILE *raw = fopen(path, "w");
    if (raw == NULL) {
        perror(path);
        return 1;
    }
    fprintf(raw, "config,run,exec_to_main_ms,main_to_init_ms,main_to_done_ms,exec_to_done_ms,"
                 "exec_to_exit_ms,ctx_to_done_ms,maxrss_kb,cache\n");
    int wrong_cache[NCONFIGS] = {0};
    for (int i = 0; i < nruns; i++) {
        for (int c = 0; c < NCONFIGS; c++) {
            run *r = &runs[c][i];
            if (run_once(&configs[c], r, skip, sizeof skip) != 0)
                return 1;
            if (configs[c].expect_cache >= 0 && r->cache != configs[c].expect_cache)
                wrong_cache[c]++;
            fprintf(raw, "%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%ld,%d\n", configs[c].id, i,
                    r->exec_main, r->main_init, r->main_done, r->exec_done, r->exec_exit,
                    r->ctx_done, r->maxrss_kb, r->cache);
        }
        printf("coldstart: round %d of %d\n", i + 1, nruns);
        fflush(stdout);
    }
    fclose(raw);

    snprintf(path, sizeof path, "%s/coldstart_summary.csv", outdir);
    FILE *sum = fopen(path, "w");
    if (sum == NULL) {
        perror(path);
        return 1;
    }
    fprintf(sum, "config,label,runs,exec_to_main_ms,main_to_init_ms,main_to_done_ms,exec_to_done_ms,"
                 "exec_to_done_p10_ms,exec_to_done_p90_ms,exec_to_exit_ms,delta_vs_context_ms,"
                 "delta_vs_raw_ms,ctx_to_done_ms,ctx_to_done_p10_ms,ctx_to_done_p90_ms,"
                 "ctx_delta_vs_context_ms,ctx_delta_vs_raw_ms,maxrss_mb,cache_check\n");
    printf("\n%-46s %9s %9s %9s %9s %9s %9s %9s\n", "configuration (medians, ms)", "exec>main",
           "main>done", "exec>done", "exec>exit", "-context", "-raw", "ctx>done");
    for (int c = 0; c < NCONFIGS; c++) {
        const run *rs = runs[c];
        double em = field_q(rs, NULL, nruns, offsetof(run, exec_main), 0.5);
        double mi = field_q(rs, NULL, nruns, offsetof(run, main_init), 0.5);
        double md = field_q(rs, NULL, nruns, offsetof(run, main_done), 0.5);
        double ed = field_q(rs, NULL, nruns, offsetof(run, exec_done), 0.5);
        double e10 = field_q(rs, NULL, nruns, offsetof(run, exec_done), 0.1);
        double e90 = field_q(rs, NULL, nruns, offsetof(run, exec_done), 0.9);
        double ee = field_q(rs, NULL, nruns, offsetof(run, exec_exit), 0.5);
        double dc = field_q(rs, runs[C_CONTEXT], nruns, offsetof(run, exec_done), 0.5);
        double dr = field_q(rs, runs[C_RAW], nruns, offsetof(run, exec_done), 0.5);
        double cd = field_q(rs, NULL, nruns, offsetof(run, ctx_done), 0.5);
        double c10 = field_q(rs, NULL, nruns, offsetof(run, ctx_done), 0.1);
        double c90 = field_q(rs, NULL, nruns, offsetof(run, ctx_done), 0.9);
        double cdc = field_q(rs, runs[C_CONTEXT], nruns, offsetof(run, ctx_done), 0.5);
        double cdr = field_q(rs, runs[C_RAW], nruns, offsetof(run, ctx_done), 0.5);
        if (cd < 0.0)  /* not reported by this program: no in-process numbers */
            cd = c10 = c90 = cdc = cdr = -1.0;
        double rss[1024];
        for (int i = 0; i < nruns; i++)
            rss[i] = (double)rs[i].maxrss_kb / 1024.0;
        double mb = quantile(rss, nruns, 0.5);
        const char *check = configs[c].expect_cache < 0 ? "n/a" : wrong_cache[c] ? "WRONG" : "ok";
        if (wrong_cache[c])
            fprintf(stderr, "coldstart: %s: %d runs reported cache != %d\n", configs[c].id,
                    wrong_cache[c], configs[c].expect_cache);
        printf("%-46s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.3f\n", configs[c].label, em, md, ed, ee,
               dc, dr, cd);
        fprintf(sum, "%s,\"%s\",%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
                     "%.3f,%.1f,%s\n",
                configs[c].id, configs[c].label, nruns, em, mi, md, ed, e10, e90, ee, dc, dr, cd, c10,
                c90, cdc, cdr, mb, check);
    }
    fclose(sum);
    return 0;
}
