/*
 * testutil.c — shell commands, files and expectations on output for the
 * generator-side Check suites, and their scratch folders.
 */
#include "testutil.h"
#include "model/model.h"
#include "base/util.h"

#include <check.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int run(char **out, const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run: %s", cmd);
    ks_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        ks_buf_put(&b, chunk, n);
    int st = pclose(p);
    char *text = ks_buf_take(&b);
    if (out)
        *out = text;
    else
        free(text);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

void write_text_in(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

void expect_has(const char *text, const char *needle)
{
    ck_assert_msg(text && strstr(text, needle), "expected \"%s\" in:\n%s", needle,
                  text ? text : "(null)");
}

void expect_lacks(const char *text, const char *needle)
{
    ck_assert_msg(text && !strstr(text, needle), "did not expect \"%s\" in:\n%s", needle,
                  text ? text : "(null)");
}

char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: run from the repository root", path);
    char *text = NULL;
    size_t cap = 0, len = 0, n;
    char chunk[8192];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            text = realloc(text, cap);
            ck_assert_ptr_nonnull(text);
        }
        memcpy(text + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!text)
        text = calloc(1, 1);
    ck_assert_ptr_nonnull(text);
    text[len] = '\0';
    return text;
}

const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

const char *env_path(const char *name, const char *fallback, char *buf)
{
    const char *p = env_or(name, fallback);
    return realpath(p, buf) ? buf : p;
}

char scratch_dir[128];

void scratch_make(const char *tag)
{
    char t[PATH_MAX], real[PATH_MAX];
    snprintf(t, sizeof t, "/tmp/kstub-%s-XXXXXX", tag);
    ck_assert_ptr_nonnull(mkdtemp(t));
    ck_assert_ptr_nonnull(realpath(t, real));
    ck_assert_uint_lt(strlen(real), sizeof scratch_dir);
    strcpy(scratch_dir, real);
}

void scratch_remove(void)
{
    run(NULL, "rm -rf '%s'", scratch_dir);
}

void scratch_write(const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    run(NULL, "mkdir -p '%s'", path);
    write_text_in(scratch_dir, name, text);
}

char *scratch_read(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    return ks_peek_file(path, NULL);
}

int scratch_exists(const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    return lstat(path, &st) == 0;
}

void scratch_fifo(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    ck_assert_msg(mkfifo(path, 0600) == 0, "mkfifo %s", path);
}
