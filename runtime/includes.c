/*
 * includes.c — the part of the NVRTC cache key that comes from files: what
 * a source's #include lines can reach.
 *
 * NVRTC does not say which headers it opened, so this follows the #include
 * lines itself, over-approximating: for each header name, every place a
 * compiler could look for it (the including file's directory, the working
 * directory, each -I / --include-path directory, in that order) goes into
 * the key, with what is there: the content of the first regular file found
 * (whose own #includes are followed in turn), or that nothing was there. A
 * name found nowhere is one of NVRTC's built-in headers (keyed with NVRTC
 * itself) or an error (never cached). So any change to a file the compile
 * could have read, or a header appearing where none was, changes the key.
 *
 * What cannot be followed makes the source uncacheable (-1): a header name
 * made by a macro, __has_include, #include_next/#import/#embed, an option
 * such as -include, -isystem or -imacros, a "??=" trigraph, a directive split by a multi-line comment, or
 * more files, depth or bytes than the limits below. Text that merely looks
 * like a directive (in a string or a comment) is followed too: harmless.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sha256.h"

#define KS__MAX_INCLUDE_FILES 256
#define KS__MAX_INCLUDE_DEPTH 32
#define KS__MAX_HEADER_BYTES ((size_t)16 << 20)

typedef struct walk {
    ks__sha256_ctx *s;
    const char *dirs[64];        /* -I directories, in order */
    unsigned ndirs;
    char *seen[KS__MAX_INCLUDE_FILES]; /* files already hashed (their paths) */
    unsigned nseen;
} walk;

static void put(walk *w, const char *tag, const char *text)
{
    ks__sha256_update(w->s, tag, strlen(tag) + 1);
    ks__sha256_update(w->s, text, strlen(text) + 1);
}

static int scan(walk *w, const char *text, size_t n, const char *dir, int depth);

/* Read a regular file whole (NUL-terminated); NULL with *kind = KS__NOT_REGULAR, or -1 (errno). */
static char *slurp(const char *path, size_t *n, int *kind)
{
    struct stat sb;
    int fd = ks__open_regular(AT_FDCWD, path, 0, &sb);
    *kind = fd;
    if (fd < 0)
        return NULL;
    char *buf = NULL;
    if ((size_t)sb.st_size <= KS__MAX_HEADER_BYTES && (buf = malloc((size_t)sb.st_size + 1)) != NULL) {
        size_t got = 0;
        while (got < (size_t)sb.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        buf[got] = '\0';
        *n = got;
        if (got != (size_t)sb.st_size) {
            free(buf);
            buf = NULL;
        }
    }
    close(fd);
    *kind = buf ? 0 : -3;        /* -3: too big or unreadable: the caller gives up */
    return buf;
}

/* Key one #include of \p name (angled or quoted) from a file in \p dir. 0, or -1: give up. */
static int follow(walk *w, const char *name, size_t len, const char *dir, int depth)
{
    char hname[PATH_MAX], path[PATH_MAX];
    if (len == 0 || len >= sizeof hname)
        return -1;
    memcpy(hname, name, len);
    hname[len] = '\0';
    put(w, "include", hname);
    const char *where[2 + 64];
    unsigned nwhere = 0;
    if (hname[0] == '/') {
        where[nwhere++] = "";
    } else {
        where[nwhere++] = dir;
        if (strcmp(dir, ".") != 0)
            where[nwhere++] = ".";
        for (unsigned i = 0; i < w->ndirs; i++)
            where[nwhere++] = w->dirs[i];
    }
    for (unsigned i = 0; i < nwhere; i++) {
        int m = where[i][0] ? snprintf(path, sizeof path, "%s/%s", where[i], hname)
                            : snprintf(path, sizeof path, "%s", hname);
        if (m < 0 || (size_t)m >= sizeof path)
            return -1;
        put(w, "at", path);
        for (unsigned j = 0; j < w->nseen; j++) {
            if (strcmp(w->seen[j], path) == 0) {
                put(w, "seen", path);
                return 0;
            }
        }
        size_t n = 0;
        int kind;
        char *text = slurp(path, &n, &kind);
        if (kind == -1) {
            put(w, "absent", "");
            continue;
        }
        if (kind == KS__NOT_REGULAR) {
            put(w, "not a file", "");
            continue;
        }
        if (text == NULL || w->nseen == KS__MAX_INCLUDE_FILES || (w->seen[w->nseen] = strdup(path)) == NULL) {
            free(text);
            return -1;
        }
        w->nseen++;
        ks__sha256_update(w->s, "file", 5);
        ks__sha256_update(w->s, text, n + 1);
        char *slash = strrchr(path, '/');
        if (slash != NULL)
            *slash = '\0';
        int r = scan(w, text, n, slash ? (path[0] ? path : "/") : ".", depth + 1);
        free(text);
        return r;
    }
    put(w, "built in or missing", "");
    return 0;
}

/* Skip blanks and single-line comments from \p p; NULL if a comment runs past the line. */
static const char *skip_blanks(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\v' || *p == '\f')
            p++;
        if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            const char *nl = strchr(p + 2, '\n');
            if (end == NULL || (nl != NULL && nl < end))
                return NULL;
            p = end + 2;
            continue;
        }
        return p;
    }
}

static int scan(walk *w, const char *text, size_t n, const char *dir, int depth)
{
    if (depth > KS__MAX_INCLUDE_DEPTH)
        return -1;
    /* Splice backslash-newlines first, as translation phase 2 does. */
    char *t = malloc(n + 1);
    if (t == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\\' && i + 1 < n && text[i + 1] == '\n') {
            i++;
            continue;
        }
        if (text[i] == '\\' && i + 2 < n && text[i + 1] == '\r' && text[i + 2] == '\n') {
            i += 2;
            continue;
        }
        if (text[i] == '\0')    /* NVRTC stops at the NUL: so does the scan */
            break;
        t[m++] = text[i];
    }
    t[m] = '\0';
    int r = 0;
    if (strstr(t, "__has_include") != NULL || strstr(t, "?" "?=") != NULL)
        r = -1;
    int line_start = 1;           /* only blanks since the last newline */
    for (const char *p = t; r == 0 && *p != '\0'; p++) {
        const char *after;
        int at_start = line_start;
        if (*p == '\n')
            line_start = 1;
        else if (*p != ' ' && *p != '\t')
            line_start = 0;
        /* A directive starts its line: "#include" in a comment or a string
         * is text, not a directive (it made every such source uncacheable). */
        if (!at_start)
            continue;
        if (*p == '#')
            after = p + 1;
        else if (p[0] == '%' && p[1] == ':')
            after = p + 2;
        else
            continue;
        const char *q = skip_blanks(after);
        if (q == NULL) {
            r = -1;
            break;
        }
        size_t id = 0;
        while ((q[id] >= 'a' && q[id] <= 'z') || q[id] == '_')
            id++;
        if ((id == 12 && strncmp(q, "include_next", 12) == 0) || (id == 6 && strncmp(q, "import", 6) == 0) ||
            (id == 5 && strncmp(q, "embed", 5) == 0)) {
            r = -1;
            break;
        }
        if (id != 7 || strncmp(q, "include", 7) != 0)
            continue;
        q = skip_blanks(q + 7);
        if (q == NULL || (*q != '"' && *q != '<')) {
            r = -1;              /* a macro names the header, or something stranger */
            break;
        }
        const char *end = strchr(q + 1, *q == '"' ? '"' : '>');
        const char *nl = strchr(q + 1, '\n');
        if (end == NULL || (nl != NULL && nl < end)) {
            r = -1;
            break;
        }
        r = follow(w, q + 1, (size_t)(end - q - 1), dir, depth);
        p = end;
    }
    free(t);
    return r;
}

int ks__includes_hash(ks__sha256_ctx *s, const char *src, char *const *opts, unsigned nopts)
{
    walk w;
    memset(&w, 0, sizeof w);
    w.s = s;
    int r = 0;
    for (unsigned i = 0; r == 0 && i < nopts; i++) {
        const char *o = opts[i], *d = NULL;
        if (strcmp(o, "-I") == 0 || strcmp(o, "--include-path") == 0)
            d = i + 1 < nopts ? opts[++i] : NULL;
        else if (strncmp(o, "-I", 2) == 0)
            d = o + 2;
        else if (strncmp(o, "--include-path=", 15) == 0)
            d = o + 15;
        else if ((o[0] == '-' && o[1] == 'i') || strncmp(o, "--pre-include", 13) == 0 ||
                 strncmp(o, "--include", 9) == 0)
            r = -1;              /* -include, -isystem, -imacros...: headers or places not modelled here */
        while (d != NULL && (*d == ' ' || *d == '\t' || *d == '='))
            d++;                 /* "-I dir" in one option */
        if (d != NULL && d[0] != '\0') {
            if (w.ndirs == sizeof w.dirs / sizeof w.dirs[0])
                r = -1;
            else
                w.dirs[w.ndirs++] = d;
        }
    }
    if (r == 0)
        r = scan(&w, src, strlen(src), ".", 0);
    for (unsigned i = 0; i < w.nseen; i++)
        free(w.seen[i]);
    return r;
}
