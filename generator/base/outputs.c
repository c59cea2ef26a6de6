/*
 * outputs.c — the all-or-nothing writer the generator uses for every output
 * file: each written through a temporary file and a rename, only where the
 * content differs, and on any failure none left half-written.
 */
#include "base/outputs.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static mode_t umask_value(void)
{
    mode_t m = umask(0);
    umask(m);
    return m;
}

/* 1 when path holds exactly text. */
static int same_content(const char *path, const char *text)
{
    size_t size;
    char *old = ks_peek_file(path, &size);
    if (!old)
        return 0;
    int same = size == strlen(text) && memcmp(old, text, size) == 0;
    free(old);
    return same;
}

/* A hard link to path under a fresh name beside it, so that a replaced
 * output can be put back; NULL when path does not exist (nothing to keep). */
static char *backup_link(const char *path, int *err)
{
    *err = 0;
    struct stat st;
    if (lstat(path, &st) != 0)
        return NULL;
    for (int attempt = 0; attempt < 100; attempt++) {
        char *bak = ks_xasprintf("%s.bak.XXXXXX", path);
        int fd = mkstemp(bak);   /* reserves a fresh name */
        if (fd < 0) {
            *err = errno;
            free(bak);
            return NULL;
        }
        close(fd);
        unlink(bak);
        if (link(path, bak) == 0)
            return bak;
        int e = errno;
        free(bak);
        if (e != EEXIST) {
            *err = e;
            return NULL;
        }
    }
    *err = EEXIST;
    return NULL;
}

/* The directories to create before path can be written (mkdir -p of its
 * folder), outermost first, pushed onto *dirs; checks that the nearest one
 * that exists is a directory we can write into. Returns 0 or -1 after an
 * error. */
static int missing_dirs(const char *path, char ***dirs, size_t *ndirs)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;   /* the working directory or the root: they exist */
    char *dir = ks_xasprintf("%.*s", (int)(slash - path), path);
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) == 0) {
        free(dir);
        return 0;   /* exists; check_destination looks at it */
    }
    /* Walk down from the top: each prefix that exists must be a directory;
     * from the first missing one on, every prefix is created. */
    size_t first = *ndirs;
    const char *exists = path[0] == '/' ? "/" : ".";
    char *parent = NULL;
    for (char *p = dir + 1; rc == 0; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        if (p[-1] == '/') {   /* "a//b": the same prefix again */
            if (!*p)
                break;
            continue;
        }
        char save = *p;
        *p = '\0';
        if (*ndirs > first || stat(dir, &st) != 0) {
            if (*ndirs == first && errno != ENOENT) {
                ks_error_at(path, 0, 0, "cannot create the directory '%s': %s", dir, strerror(errno));
                rc = -1;
            } else {
                *dirs = ks_xrealloc(*dirs, (*ndirs + 1) * sizeof **dirs);
                (*dirs)[(*ndirs)++] = ks_xstrdup(dir);
            }
        } else if (!S_ISDIR(st.st_mode)) {
            ks_error_at(path, 0, 0, "cannot create a directory below '%s': not a directory", dir);
            rc = -1;
        } else {
            free(parent);
            parent = ks_xstrdup(dir);
        }
        *p = save;
        if (!save)
            break;
    }
    if (rc == 0 && *ndirs > first && access(parent ? parent : exists, W_OK | X_OK) != 0) {
        ks_error_at(path, 0, 0, "cannot create the directory '%s': %s", (*dirs)[first],
                    strerror(errno));
        rc = -1;
    }
    free(parent);
    free(dir);
    return rc;
}

/* Every destination must be replaceable before the first is replaced: a
 * directory in the way, or a folder we cannot write, fails the whole set.
 * A folder still to be created (in_new_dir) was checked by missing_dirs. */
static int check_destination(const char *path, int in_new_dir)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        ks_error_at(path, 0, 0, "cannot write: is a directory");
        return -1;
    }
    /* An output is replaced by rename: a FIFO or a device under its name
     * (-MF /dev/null) would be replaced, not written to. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        ks__file_failed(path, KS__NOT_REGULAR);
        ks_error_at(path, 0, 0, "cannot write: %s; kstub replaces only regular files",
                    ks_file_error());
        return -1;
    }
    if (in_new_dir)
        return 0;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? ks_xasprintf("%.*s", (int)(slash - path + 1), path) : ks_xstrdup(".");
    int rc = 0;
    if (access(dir, W_OK | X_OK) != 0) {
        ks_error_at(path, 0, 0, "cannot write into '%s': %s", dir, strerror(errno));
        rc = -1;
    }
    free(dir);
    return rc;
}

/*
 * Temporaries an earlier run left beside an output (killed between
 * mkstemp and rename): "OUT.tmp.PID.XXXXXX" (this form) or
 * "OUT.tmp.XXXXXX" (kstub before it), for this output's name only. One is
 * removed once it is KS__STALE_TMP_S old (or dated as far ahead: a clock
 * set back) and its writer's pid is no running process here; one without
 * a pid on age alone, since writing an output takes milliseconds. Best
 * effort: nothing is said when one cannot be removed.
 */
#define KS__STALE_TMP_S 600

static int tmp_rest(const char *s, long *pid)
{
    *pid = 0;
    const char *x = s;
    if (*s >= '1' && *s <= '9') {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == '.' && v > 0) {
            *pid = v;
            x = end + 1;
        }
    }
    size_t k = 0;
    for (; x[k]; k++)
        if (!((x[k] >= '0' && x[k] <= '9') || (x[k] >= 'a' && x[k] <= 'z') || (x[k] >= 'A' && x[k] <= 'Z')))
            return 0;
    return k == 6;
}

static void remove_stale_tmps(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? ks_xasprintf("%.*s", (int)(slash - path + 1), path) : ks_xstrdup(".");
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    time_t now = time(NULL);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        long pid;
        if (strncmp(e->d_name, base, blen) != 0 || strncmp(e->d_name + blen, ".tmp.", 5) != 0 ||
            !tmp_rest(e->d_name + blen + 5, &pid))
            continue;
        char *full = ks_xasprintf("%s%s%s", dir, slash ? "" : "/", e->d_name);
        struct stat sb;
        long long age = lstat(full, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid()
                            ? (long long)now - (long long)sb.st_mtime : 0;
        int alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
        if ((age >= KS__STALE_TMP_S || -age >= KS__STALE_TMP_S) && !alive)
            unlink(full);
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
}

int ks_write_outputs(const ks_output *outs, size_t n)
{
    char **tmps = ks_xmalloc((n + 1) * sizeof *tmps);
    char **baks = ks_xmalloc((n + 1) * sizeof *baks);
    char **dirs = NULL;      /* to create, outermost first (mkdir -p) */
    size_t ndirs = 0, made = 0;
    size_t i, done = 0;
    int rc = 0;
    for (i = 0; i < n; i++)
        tmps[i] = baks[i] = NULL;

    for (i = 0; i < n; i++) {
        size_t before = ndirs;
        if (missing_dirs(outs[i].path, &dirs, &ndirs) != 0)
            rc = -1;
        else if (!same_content(outs[i].path, outs[i].text) &&
                 check_destination(outs[i].path, ndirs > before) != 0)
            rc = -1;
    }
    /* Missing folders are made only once every output is known to be
     * writable, and removed again below if the set fails after all. */
    for (i = 0; i < ndirs && rc == 0; i++) {
        if (mkdir(dirs[i], 0777) == 0) {
            char *t = dirs[made];   /* keep the ones made first, in order */
            dirs[made++] = dirs[i];
            dirs[i] = t;
        } else if (errno != EEXIST) {   /* EEXIST: a duplicate of one made already */
            ks_error_at(dirs[i], 0, 0, "cannot create the directory: %s", strerror(errno));
            rc = -1;
        }
    }

    /* Stage every changed file first, so a failure leaves the old outputs. */
    for (i = 0; i < n && rc == 0; i++) {
        if (same_content(outs[i].path, outs[i].text))
            continue;
        remove_stale_tmps(outs[i].path);
        tmps[i] = ks_xasprintf("%s.tmp.%ld.XXXXXX", outs[i].path, (long)getpid());
        int fd = mkstemp(tmps[i]);
        if (fd < 0) {
            ks_error_at(outs[i].path, 0, 0, "cannot create a temporary file: %s", strerror(errno));
            free(tmps[i]);
            tmps[i] = NULL;
            rc = -1;
            break;
        }
        size_t len = strlen(outs[i].text);
        FILE *f = fdopen(fd, "wb");
        int ok = f && fwrite(outs[i].text, 1, len, f) == len;
        ok = (f && fclose(f) == 0) && ok;
        /* mkstemp makes 0600; outputs are ordinary files. */
        ok = ok && chmod(tmps[i], (mode_t)0666 & ~umask_value()) == 0;
        if (!ok) {
            ks_error_at(outs[i].path, 0, 0, "cannot write: %s", strerror(errno));
            rc = -1;
        }
    }
    /* Keep each old file under a backup link until every rename succeeded,
     * so that a late failure can put the earlier ones back. */
    for (i = 0; i < n && rc == 0; i++) {
        int err;
        if (tmps[i] && !(baks[i] = backup_link(outs[i].path, &err)) && err) {
            ks_error_at(outs[i].path, 0, 0, "cannot keep a backup: %s", strerror(err));
            rc = -1;
        }
    }
    for (done = 0; done < n && rc == 0; done++) {
        if (tmps[done] && rename(tmps[done], outs[done].path) != 0) {
            ks_error_at(outs[done].path, 0, 0, "cannot rename into place: %s", strerror(errno));
            rc = -1;
            break;
        }
    }
    if (rc != 0) {
        /* Put back what was replaced: the old file, or no file. */
        for (i = 0; i < done && i < n; i++) {
            if (!tmps[i])
                continue;
            if (baks[i] ? rename(baks[i], outs[i].path) != 0 : unlink(outs[i].path) != 0)
                ks_error_at(outs[i].path, 0, 0, "cannot restore the previous version: %s%s%s",
                            strerror(errno), baks[i] ? "; it is kept as " : "",
                            baks[i] ? baks[i] : "");
            /* restored (the link is gone) or kept for the user: not removed */
            free(baks[i]);
            baks[i] = NULL;
            free(tmps[i]);
            tmps[i] = NULL;   /* renamed: nothing left to remove */
        }
    }
    for (i = 0; i < n; i++) {
        if (baks[i])
            unlink(baks[i]);
        if (tmps[i] && rc != 0)
            unlink(tmps[i]);
        free(tmps[i]);
        free(baks[i]);
    }
    free(tmps);
    free(baks);
    /* A failed set leaves no folder it created (innermost first). */
    for (i = made; rc != 0 && i > 0; i--)
        rmdir(dirs[i - 1]);
    for (i = 0; i < ndirs; i++)
        free(dirs[i]);
    free(dirs);
    return rc;
}
