/*
 * instscan.c — whether a file's text may hold an explicit instantiation,
 * read from the bytes alone, before the header's tokens are asked of
 * libclang (ks_source_load reads them through the whole unit: a few
 * milliseconds a header, seconds for a code base's hundreds).
 *
 * What may: the word "template" as code (not in a comment, a string or a
 * character literal) followed by anything but '<', unless it is a
 * disambiguator ("::template", ".template", "->template") or follows
 * "extern" — exactly the "template"s the token scan of
 * ks_source_instantiations follows (source_tokens.c), whose tokens have
 * no comments between them either. Line splices are removed first, as
 * translation phase 2 does, so a spliced word is read whole; a digit
 * separator opens no character literal (a pp-number is read whole); a
 * string or character literal ends at its line's end at the latest.
 * Anything the scan cannot read for sure (a raw string without its end)
 * says "may". What lies in #if 0 is read as code: a "may" costs a read.
 */
#include "base/instscan.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static int word_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '$' || ch >= 0x80;
}

static int space_char(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* A backslash, blanks, then a newline: where, or 0. */
static size_t splice_len(const char *t, size_t i, size_t n)
{
    if (t[i] != '\\')
        return 0;
    size_t k = i + 1;
    while (k < n && (t[k] == ' ' || t[k] == '\t'))
        k++;
    if (k < n && t[k] == '\r')
        k++;
    return k < n && t[k] == '\n' ? k + 1 - i : 0;
}

/* Whether the text has a line splice. */
static int has_splice(const char *t, size_t n)
{
    const char *b = memchr(t, '\\', n);
    while (b && !splice_len(t, (size_t)(b - t), n))
        b = memchr(b + 1, '\\', n - (size_t)(b + 1 - t));
    return b != NULL;
}

char *ks_unspliced(const char *t, size_t n, size_t *out_n)
{
    if (!has_splice(t, n))
        return NULL;
    char *s = ks_xmalloc(n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t sl = splice_len(t, i, n);
        if (sl)
            i += sl;
        else
            s[m++] = t[i++];
    }
    s[m] = '\0';
    *out_n = m;
    return s;
}

/* Past blanks and comments from i. */
static size_t skip_blank(const char *t, size_t i, size_t n)
{
    for (;;) {
        while (i < n && space_char((unsigned char)t[i]))
            i++;
        if (i + 1 < n && t[i] == '/' && t[i + 1] == '/') {
            while (i < n && t[i] != '\n')
                i++;
        } else if (i + 1 < n && t[i] == '/' && t[i + 1] == '*') {
            const char *e = i + 2 < n ? memmem(t + i + 2, n - i - 2, "*/", 2) : NULL;
            i = e ? (size_t)(e - t) + 2 : n;
        } else {
            return i;
        }
    }
}

/* Past a quoted literal opened at i (its quote q), to the closing quote or
 * the line's end (a literal cannot span lines). */
static size_t skip_quoted(const char *t, size_t i, size_t n, char q)
{
    for (i++; i < n && t[i] != q && t[i] != '\n'; i++)
        if (t[i] == '\\' && i + 1 < n)
            i++;
    return i < n ? i + 1 : n;
}

/* A raw string R"d(...)d" whose '"' is at i: past its end, or n + 1 when
 * it has none (the caller then says "may"). */
static size_t skip_raw(const char *t, size_t i, size_t n)
{
    size_t d = i + 1;
    while (d < n && d - i - 1 <= 16 && t[d] != '(' && !space_char((unsigned char)t[d]) && t[d] != '\\' &&
           t[d] != ')')
        d++;
    if (d >= n || t[d] != '(')
        return n + 1;
    size_t dl = d - i - 1;
    for (size_t k = d + 1; k + dl + 1 < n; k++)
        if (t[k] == ')' && memcmp(t + k + 1, t + i + 1, dl) == 0 && t[k + dl + 1] == '"')
            return k + dl + 2;
    return n + 1;
}

static int raw_prefix(const char *w, size_t len)
{
    static const char *const p[] = {"R", "u8R", "uR", "UR", "LR"};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        if (strlen(p[i]) == len && memcmp(w, p[i], len) == 0)
            return 1;
    return 0;
}

static int scan(const char *t, size_t n)
{
    char pk = 0, pk2 = 0;                 /* the last two characters of code */
    size_t pw = 0, pwl = 0;               /* the last word, when the last code was one */
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)t[i];
        if (space_char(c) || (c == '/' && i + 1 < n && (t[i + 1] == '/' || t[i + 1] == '*'))) {
            i = skip_blank(t, i, n);
            continue;
        }
        if (c == '"' || c == '\'') {
            int raw = c == '"' && pwl && pw + pwl == i && raw_prefix(t + pw, pwl);
            i = raw ? skip_raw(t, i, n) : skip_quoted(t, i, n, (char)c);
            if (i > n)
                return 1;
            pk2 = pk, pk = (char)c, pwl = 0;
            continue;
        }
        if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < n && t[i + 1] >= '0' && t[i + 1] <= '9')) {
            /* a pp-number: its ' are digit separators, not literals */
            for (i++; i < n; i++) {
                unsigned char d = (unsigned char)t[i];
                if ((d == '+' || d == '-') && t[i - 1] && strchr("eEpP", t[i - 1]))
                    continue;
                if (d == '\'' && i + 1 < n && word_char((unsigned char)t[i + 1]))
                    continue;
                if (!word_char(d) && d != '.')
                    break;
            }
            pk2 = pk, pk = '0', pwl = 0;
            continue;
        }
        if (word_char(c)) {
            size_t s = i;
            while (i < n && word_char((unsigned char)t[i]))
                i++;
            if (i - s == 8 && memcmp(t + s, "template", 8) == 0) {
                size_t next = skip_blank(t, i, n);
                int disamb = pk == '.' || (pk == '>' && pk2 == '-') || (pk == ':' && pk2 == ':');
                int ext = pwl == 6 && memcmp(t + pw, "extern", 6) == 0;
                if (!(next < n && t[next] == '<') && !disamb && !ext)
                    return 1;
            }
            pw = s, pwl = i - s;
            pk2 = pk, pk = 'a';
            continue;
        }
        pk2 = pk, pk = (char)c, pwl = 0;
        i++;
    }
    return 0;
}

int ks_text_may_instantiate(const char *text, size_t n)
{
    size_t m;
    char *s = ks_unspliced(text, n, &m);
    if (!s)
        return scan(text, n);
    int may = scan(s, m);
    free(s);
    return may;
}
