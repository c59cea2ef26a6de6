/*
 * testutil.c — shell commands, files and expectations on output for the
 * generator-side Check suites.
 */
#include "testutil.h"
#include "model.h"
#include "util.h"

#include <check.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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
