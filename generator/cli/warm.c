/*
 * warm.c — `kstub cache --warm [generate options]`: builds the base prelude
 * (the CUDA headers precompiled for a toolkit and options) before any file
 * needs it, so that a CI job's first file does not pay for it; with the
 * cache directory itself kept between jobs, keyed on the toolkit version
 * (docs/ci.md), not even the first job does.
 *
 * It generates nothing: kstub runs itself (/proc/self/exe, so the same
 * binary and libclang) as `kstub --list OPTIONS DIR/warm.cu` on an empty
 * input in a fresh private directory, which opens the base prelude exactly
 * as a file with no leading includes does (built, or found), and lists
 * nothing. Its messages are shown only when it fails. Whether the prelude
 * was built or found is read from the cache's counters around the run.
 */
#include "cli/warm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "front/prelude/cachecmd.h"
#include "base/util.h"

/* The --cache-dir among the options (the generator's own spelling), or NULL. */
static const char *cache_dir_of(int argc, char **argv)
{
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strncmp(argv[i], "--cache-dir=", 12) == 0)
            dir = argv[i] + 12;
    }
    return dir;
}

static void copy_out(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char b[4096];
    size_t n;
    while ((n = fread(b, 1, sizeof b, f)) > 0)
        fwrite(b, 1, n, stderr);
    fclose(f);
}

int ks_cache_warm(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--stats") == 0 || strcmp(a, "--prune") == 0 || strcmp(a, "--clear") == 0 ||
            strcmp(a, "-o") == 0 || strcmp(a, "--list") == 0) {
            char *e = ks_escape_controls(a);
            fprintf(stderr, "kstub cache: --warm takes the options a generate run is given (-I, -D, -std, --arch, "
                            "--cuda-path, --cache-dir, ...), not '%s'\n", e);
            free(e);
            return 2;
        }
    }
    char why[2 * PATH_MAX + 512];
    int dirfd = ks_cache_dir_open(cache_dir_of(argc, argv), 0, why, sizeof why);
    if (dirfd < 0) {
        char *e = ks_escape_controls(why);
        fprintf(stderr, "kstub cache: %s\n", e);
        free(e);
        return 1;
    }
    unsigned long long before[6], after[6];
    ks_cache_kind_counts(dirfd, before);

    const char *tdir = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/kstub-warm-XXXXXX", tdir && tdir[0] == '/' ? tdir : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "kstub cache: --warm: no temporary directory: %s\n", strerror(errno));
        close(dirfd);
        return 1;
    }
    char input[PATH_MAX + 16], log[PATH_MAX + 16];
    snprintf(input, sizeof input, "%s/warm.cu", dir);
    snprintf(log, sizeof log, "%s/warm.log", dir);
    int in = open(input, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int lg = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = 1;
    if (in >= 0 && lg >= 0) {
        /* kstub --list OPTIONS... warm.cu */
        char **av = ks_xmalloc((size_t)(argc + 3) * sizeof *av);
        int n = 0;
        av[n++] = "kstub";
        av[n++] = "--list";
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "--warm") != 0)
                av[n++] = argv[i];
        av[n++] = input;
        av[n] = NULL;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, STDOUT_FILENO);
            dup2(lg, STDERR_FILENO);
            execv("/proc/self/exe", av);
            _exit(127);
        }
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            rc = 0;
        else if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2)
            rc = 2;
        free(av);
    }
    if (in >= 0)
        close(in);
    if (lg >= 0)
        close(lg);
    ks_cache_kind_counts(dirfd, after);
    close(dirfd);
    if (rc != 0)
        copy_out(log);
    unlink(input);
    unlink(log);
    rmdir(dir);
    if (rc != 0) {
        fprintf(stderr, "kstub cache: --warm: the base prelude for these options was not built\n");
        return rc;
    }
    if (after[1] > before[1])
        printf("kstub cache: built the base prelude for these options\n");
    else if (after[0] > before[0])
        printf("kstub cache: the base prelude for these options is already in the cache\n");
    else
        printf("kstub cache: the base prelude for these options is ready\n");
    return 0;
}
