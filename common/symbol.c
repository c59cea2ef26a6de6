/*
 * symbol.c — matching a kernel's symbol pattern against the device symbols
 * of an image (symbol.h says what the patterns stand for).
 */
#include "symbol.h"

#include <string.h>

#define STATIC_MARK "{static:"
#define ANON_MARK "{anon:"
#define INTERNAL_MARK "{internal:"

int ks__symbol_is_pattern(const char *symbol)
{
    return symbol != NULL && strchr(symbol, '{') != NULL;
}

const char *ks__symbol_plain(const char *pattern)
{
    if (strncmp(pattern, STATIC_MARK, strlen(STATIC_MARK)) != 0)
        return ks__symbol_is_pattern(pattern) ? NULL : pattern;
    const char *rest = strchr(pattern, '}');
    if (rest == NULL || strchr(rest + 1, '{') != NULL)
        return NULL;
    return rest + 1;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A decimal length at *p (advanced past it); -1 if none or absurd. */
static long length_at(const char **p)
{
    long n = 0;
    if (!is_digit(**p) || **p == '0')
        return -1;
    while (is_digit(**p)) {
        n = n * 10 + (**p - '0');
        if (n > 100000)
            return -1;
        (*p)++;
    }
    return n;
}

/*
 * Whether the \p n bytes at \p id are "<lead><hex>_<file>[_<anything>]",
 * \p file being the tag between the pattern's ':' and '}' (\p flen bytes);
 * with \p any_file, any "<digits>_<name>" fills the file's place.
 */
static int part_matches(const char *id, size_t n, const char *lead, const char *file, size_t flen,
                        int any_file)
{
    size_t llen = strlen(lead), i = llen;
    if (n < llen || memcmp(id, lead, llen) != 0)
        return 0;
    size_t hex = i;
    while (i < n && is_hex(id[i]))
        i++;
    if (i == hex || i >= n || id[i] != '_')
        return 0;
    i++;
    if (any_file)
        return i < n && is_digit(id[i]);
    if (n - i < flen || memcmp(id + i, file, flen) != 0)
        return 0;
    i += flen;
    return i == n || id[i] == '_';
}

/* The mark at \p p ("{anon:", ...): its file tag and the pattern after it. */
static const char *mark_at(const char *p, const char *mark, const char **file, size_t *flen)
{
    size_t mlen = strlen(mark);
    if (strncmp(p, mark, mlen) != 0)
        return NULL;
    const char *end = strchr(p + mlen, '}');
    if (end == NULL)
        return NULL;
    *file = p + mlen;
    *flen = (size_t)(end - *file);
    return end + 1;
}

/* A substitution "S_" (0), "S<base 36>_" (1 + the number) at *p: its index,
 * *p advanced past it; -1 (and *p unmoved) if there is none. */
static long substitution_at(const char **p)
{
    const char *q = *p;
    if (*q++ != 'S')
        return -1;
    long n = 0;
    int digits = 0;
    for (; (*q >= '0' && *q <= '9') || (*q >= 'A' && *q <= 'Z'); q++, digits++)
        n = n * 36 + (*q <= '9' ? *q - '0' : *q - 'A' + 10);
    if (*q != '_' || digits > 4)
        return -1;
    *p = q + 1;
    return digits ? n + 1 : 0;
}

/* The pattern's body (after any "{static:…}") against \p name. Past the
 * nth "{internal:…}" (a namespace clang's mangling lacks, and so one more
 * substitution candidate in nvcc's), a back-reference "S<i>_" of the
 * pattern matches nvcc's "S<i>_" to "S<i+n>_". */
static int body_matches(const char *p, const char *name, int any_file)
{
    long internals = 0;
    while (*p) {
        if (internals > 0 && *p == 'S') {
            const char *pp = p, *nn = name;
            long want = substitution_at(&pp), got = substitution_at(&nn);
            if (want >= 0 && got >= want && got <= want + internals) {
                p = pp;
                name = nn;
                continue;
            }
        }
        const char *file;
        size_t flen;
        const char *after = mark_at(p, ANON_MARK, &file, &flen);
        const char *lead = "_GLOBAL__N__";
        if (after == NULL) {
            after = mark_at(p, INTERNAL_MARK, &file, &flen);
            lead = "_INTERNAL_";
        }
        if (after != NULL) {
            long n = length_at(&name);
            if (n < 0 || strnlen(name, (size_t)n) < (size_t)n ||
                !part_matches(name, (size_t)n, lead, file, flen, any_file))
                return 0;
            name += n;
            p = after;
            internals += lead[1] == 'I';
            continue;
        }
        if (*p == '{' || *p != *name)
            return 0;
        p++;
        name++;
    }
    return *name == '\0';
}

int ks__symbol_match(const char *pattern, const char *name, int any_file)
{
    if (pattern == NULL || name == NULL)
        return 0;
    const char *file;
    size_t flen;
    const char *body = mark_at(pattern, STATIC_MARK, &file, &flen);
    if (body == NULL)
        return body_matches(pattern, name, any_file);
    if (body_matches(body, name, any_file))
        return 1;               /* a whole-program image: no prefix */
    /* -rdc: "__nv_static_<n>_" + <n> bytes "_<hash>_<file>_<hash>" + "_" + the symbol */
    static const char prefix[] = "__nv_static_";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *q = name + sizeof prefix - 1;
    long n = length_at(&q);
    if (n < 0 || *q++ != '_' || strnlen(q, (size_t)n) < (size_t)n ||
        !part_matches(q, (size_t)n, "_", file, flen, any_file) || q[n] != '_')
        return 0;
    return body_matches(body, q + n + 1, any_file);
}
