/*
 * includes.c — the part of the NVRTC cache key that comes from files: what
 * a source's #include lines can reach.
 *
 * NVRTC does not say which headers it opened (no API reports them), so
 * this follows the #include lines itself, over-approximating: when in
 * doubt it keys more, or gives up, never less. For each header name, every
 * place a compiler could look for it (the including file's directory, the
 * working directory, each -I / --include-path directory) goes into the key,
 * with what is there: the content of every regular file found (whose own
 * #includes are followed in turn), not just the first, since NVRTC's order
 * is not the scan's (an angled name skips the working directory), or that
 * nothing was there. A name found nowhere is one of NVRTC's built-in
 * headers (keyed with NVRTC itself) or an error (never cached). So any
 * change to a file the compile could have read, or a header appearing where
 * none was, changes the key.
 *
 * Where a directive may start follows the preprocessor, widened to what any
 * compiler accepts: after line splices, with comments as white space (one
 * spanning lines too), form feed, vertical tab, carriage return, NUL bytes
 * and a byte order mark as blanks; see directive_start().
 *
 * What cannot be followed makes the source uncacheable (-1): a header name
 * made by a macro, __has_include/__has_embed, #include_next/#import/#embed
 * (any directive name holding "include", "import" or "embed"), an option
 * such as -include, -isystem or -imacros, a "??=" or "??/" trigraph, a
 * directive split by a multi-line comment, or more files, depth or bytes
 * than the limits below. Text that merely looks like a directive (in a
 * string or a comment) may be followed too: harmless.
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
    int found = 0;
    for (unsigned i = 0; i < nwhere; i++) {
        int m = where[i][0] ? snprintf(path, sizeof path, "%s/%s", where[i], hname)
                            : snprintf(path, sizeof path, "%s", hname);
        if (m < 0 || (size_t)m >= sizeof path)
            return -1;
        put(w, "at", path);
        int seen = 0;
        for (unsigned j = 0; j < w->nseen && !seen; j++)
            seen = strcmp(w->seen[j], path) == 0;
        if (seen) {
            put(w, "seen", path);
            continue;
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
        if (r != 0)
            return r;
        found = 1;
    }
    if (!found)
        put(w, "built in or missing", "");
    return 0;
}

/* Blanks inside a directive line: what any of the compilers (NVRTC's EDG,
 * clang, gcc) may take for white space there. Bytes past ASCII count, as
 * clang reads Unicode spaces as white space: more directives, never fewer. */
static int blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c >= 0x80;
}

/* Skip blanks and single-line comments from \p p; NULL if a comment runs past the line. */
static const char *skip_blanks(const char *p)
{
    for (;;) {
        while (blank((unsigned char)*p))
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

/* Does the \p n bytes at \p p hold \p word? */
static int contains(const char *p, size_t n, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, word, k) == 0)
            return 1;
    return 0;
}

/* May the '#' (or "%:") at \p p start a directive? A directive's '#' is the
 * first token of its line, comments being white space. Rather than lex
 * strings and comments (raw strings, digit separators and "/ *" in a
 * string all differ between compilers), this answers yes whenever some
 * compiler could: only blanks between the '#' and the start of the text, a
 * newline (one inside a comment too: NVRTC takes "x; / * \n * / #include" for
 * a directive), a carriage return, or the end of a comment ("* /"), which
 * also catches "/ * c * / #include" and a comment spanning lines. A '#' in
 * a string after a comment is followed too: harmless, it keys more. */
static int directive_start(const char *t, const char *p)
{
    while (p > t && blank((unsigned char)p[-1]) && p[-1] != '\r')
        p--;
    return p == t || p[-1] == '\n' || p[-1] == '\r' || (p - t >= 2 && p[-2] == '*' && p[-1] == '/');
}

static int scan(walk *w, const char *text, size_t n, const char *dir, int depth)
{
    if (depth > KS__MAX_INCLUDE_DEPTH)
        return -1;
    /* Splice backslash-newlines first, as translation phase 2 does. A
     * backslash, blanks and a newline is no splice to NVRTC ("\" followed by
     * white space is not a line splice"), so it is not one here either: the
     * line after "// x \ " is still scanned. */
    char *t = malloc(n + 1);
    if (t == NULL)
        return -1;
    size_t m = 0;
    const char *bom = "\xef\xbb\xbf";
    size_t i = n >= 3 && memcmp(text, bom, 3) == 0 ? 3 : 0;   /* a byte order mark is no token */
    for (; i < n; i++) {
        if (text[i] == '\\' && i + 1 < n && text[i + 1] == '\n') {
            i++;
            continue;
        }
        if (text[i] == '\\' && i + 2 < n && text[i + 1] == '\r' && text[i + 2] == '\n') {
            i += 2;
            continue;
        }
        /* NVRTC reads a header past a NUL byte (clang takes it for white
         * space): so does the scan. The source itself ends at its NUL. */
        t[m++] = text[i] == '\0' ? ' ' : text[i];
    }
    t[m] = '\0';
    int r = 0;
    if (strstr(t, "__has_include") != NULL || strstr(t, "__has_embed") != NULL || strstr(t, "?" "?=") != NULL ||
        strstr(t, "?" "?/") != NULL)
        r = -1;                  /* a file test, or trigraphs (a '#' or a splice) where a compiler enables them */
    for (const char *p = t; r == 0 && *p != '\0'; p++) {
        const char *after;
        if (*p == '#')
            after = p + 1;
        else if (p[0] == '%' && p[1] == ':')
            after = p + 2;
        else
            continue;
        if (!directive_start(t, p))
            continue;
        const char *q = skip_blanks(after);
        if (q == NULL) {
            r = -1;
            break;
        }
        size_t id = 0;
        while ((q[id] >= 'a' && q[id] <= 'z') || (q[id] >= 'A' && q[id] <= 'Z') || (q[id] >= '0' && q[id] <= '9') ||
               q[id] == '_' || q[id] == '$')
            id++;
        if (!(id == 7 && strncmp(q, "include", 7) == 0)) {
            /* #include_next, #import, #embed, clang's #__include_macros, and
             * whatever else reads a file: not modelled. */
            if (contains(q, id, "include") || contains(q, id, "import") || contains(q, id, "embed"))
                r = -1;
            continue;
        }
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
