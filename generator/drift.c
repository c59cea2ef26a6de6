/*
 * drift.c — `kstub check` (are the generated files on disk what kstub would
 * write now?) and `kstub diff` (what changed between two manifests, and does
 * it break existing callers?).
 *
 * Both compare two signature models kernel by kernel and report findings
 * the way compilers do (file:line:col: error|warning: …), as JSON, or as
 * GitHub workflow annotations. Their exit status is a bit field, like
 * abidiff's: 1 tool error, 2 usage error, 4 something changed, 8 a change
 * breaks existing callers (always with 4). See docs/build-and-ci.md.
 */
#include "model.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- findings ----------------------------------------------------------------------- */

typedef enum { SEV_NOTE, SEV_WARNING, SEV_ERROR } severity;

static const char *const severity_names[] = {"note", "warning", "error"};

typedef struct finding {
    severity sev;
    const char *kind;        /* stable identifier, e.g. "param_type_changed" */
    char *file;              /* NULL: none */
    unsigned line, col;      /* 0: unknown */
    char *kernel;            /* qualified name, or NULL */
    char *symbol;            /* device symbol, or NULL */
    char *message;
} finding;

typedef struct report {
    finding *v;
    size_t n;
    int breaking, changed;
    size_t cap;              /* allocated findings */
} report;

static void add(report *r, severity sev, const char *kind, const char *file, unsigned line,
                unsigned col, const ks_sig_kern *k, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void add(report *r, severity sev, const char *kind, const char *file, unsigned line,
                unsigned col, const ks_sig_kern *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = ks_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = ks_xrealloc(r->v, r->cap * sizeof *r->v);
    }
    finding *f = &r->v[r->n++];
    f->sev = sev;
    f->kind = kind;
    f->file = file ? ks_xstrdup(file) : NULL;
    f->line = line;
    f->col = col;
    f->kernel = k ? ks_xstrdup(k->name) : NULL;
    f->symbol = k && k->symbol ? ks_xstrdup(k->symbol) : NULL;
    f->message = msg;
    if (sev == SEV_ERROR)
        r->breaking = 1;
    if (sev != SEV_NOTE)
        r->changed = 1;
}

static void report_free(report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].file);
        free(r->v[i].kernel);
        free(r->v[i].symbol);
        free(r->v[i].message);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

int ks_format_parse(const char *s)
{
    if (strcmp(s, "text") == 0)
        return KS_FORMAT_TEXT;
    if (strcmp(s, "json") == 0)
        return KS_FORMAT_JSON;
    if (strcmp(s, "github") == 0)
        return KS_FORMAT_GITHUB;
    return -1;
}

/* Manifest strings (kernel names, paths) come from files anyone can write,
 * and CI logs treat a line that starts with "::" as a workflow command: no
 * control character or newline reaches the output raw. Text shows them as
 * C escapes (\n, \t, \x1b); a backslash stays as it is. */
static void put_control(FILE *out, unsigned char c)
{
    switch (c) {
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default: fprintf(out, "\\x%02x", c); break;
    }
}

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static void text_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (is_control((unsigned char)*s))
            put_control(out, (unsigned char)*s);
        else
            fputc(*s, out);
    }
}

/* GitHub's workflow-command escaping: data escapes %, CR, LF; properties
 * also ':' and ','. Other control characters as in text. */
static void gh_escape(FILE *out, const char *s, int property)
{
    for (; *s; s++) {
        switch (*s) {
        case '%': fputs("%25", out); break;
        case '\r': fputs("%0D", out); break;
        case '\n': fputs("%0A", out); break;
        case ':': fputs(property ? "%3A" : ":", out); break;
        case ',': fputs(property ? "%2C" : ",", out); break;
        default:
            if (is_control((unsigned char)*s))
                put_control(out, (unsigned char)*s);
            else
                fputc(*s, out);
            break;
        }
    }
}

static int exit_status(const report *r)
{
    return r->breaking ? KS_DRIFT_CHANGED | KS_DRIFT_BREAKING
                       : r->changed ? KS_DRIFT_CHANGED : KS_DRIFT_NONE;
}

static const char *result_word(int status)
{
    return status & KS_DRIFT_BREAKING ? "breaking"
           : status & KS_DRIFT_CHANGED ? "compatible" : "none";
}

/* command: "check" or "diff"; summary: the last line of text output;
 * fix: the command that regenerates, or NULL. */
static void print_report(const report *r, ks_format fmt, const char *command,
                         const char *summary, const char *fix, int status)
{
    FILE *out = stdout;
    if (fmt == KS_FORMAT_JSON) {
        json_t *list = json_array();
        for (size_t i = 0; i < r->n; i++) {
            const finding *f = &r->v[i];
            json_t *o = json_object();
            json_object_set_new(o, "severity", json_string(severity_names[f->sev]));
            json_object_set_new(o, "kind", json_string(f->kind));
            json_object_set_new(o, "file", f->file ? json_string(f->file) : json_null());
            json_object_set_new(o, "line", f->line ? json_integer(f->line) : json_null());
            json_object_set_new(o, "kernel", f->kernel ? json_string(f->kernel) : json_null());
            json_object_set_new(o, "symbol", f->symbol ? json_string(f->symbol) : json_null());
            json_object_set_new(o, "message", json_string(f->message));
            json_array_append_new(list, o);
        }
        json_t *root = json_pack("{s:s, s:s, s:i, s:o, s:o}", "command", command,
                                 "result", result_word(status), "exit_status", status,
                                 "findings", list, "fix", fix ? json_string(fix) : json_null());
        json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', out);
        json_decref(root);
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        const finding *f = &r->v[i];
        if (fmt == KS_FORMAT_GITHUB) {
            fprintf(out, "::%s ", f->sev == SEV_NOTE ? "notice" : severity_names[f->sev]);
            if (f->file) {
                fputs("file=", out);
                gh_escape(out, f->file, 1);
                if (f->line)
                    fprintf(out, ",line=%u", f->line);
                if (f->col)
                    fprintf(out, ",col=%u", f->col);
                fputs(",", out);
            }
            fprintf(out, "title=kstub %s::", command);
            gh_escape(out, f->message, 0);
            fputc('\n', out);
        } else {
            if (f->file) {
                text_escape(out, f->file);
                if (f->line)
                    fprintf(out, ":%u", f->line);
                if (f->line && f->col)
                    fprintf(out, ":%u", f->col);
            } else {
                fputs("kstub", out);
            }
            fprintf(out, ": %s: ", severity_names[f->sev]);
            text_escape(out, f->message);
            fputc('\n', out);
        }
    }
    if (fmt == KS_FORMAT_GITHUB) {
        if (fix && status) {
            fputs("::error title=kstub check::to fix, run: ", out);
            gh_escape(out, fix, 0);
            fputc('\n', out);
        }
        return;
    }
    text_escape(out, summary);
    fputc('\n', out);
    if (fix && status) {
        fputs("to fix, run:\n  ", out);
        text_escape(out, fix);
        fputc('\n', out);
    }
}

/* ---- reading a manifest: the JSON ------------------------------------------------------------ */

/* Manifests are read by a small JSON reader of drift's own. jansson built a
 * hash table per object and a string per key, most of a second per file for
 * a manifest of 100,000 kernels; this one checks the text against RFC 8259
 * (UTF-8 included, as jansson does) and lays every value out in one array,
 * in document order, each node followed by its children. Strings are
 * decoded in place in the text, which the caller owns. Fields are looked up
 * as in jansson's objects: by key, the last of duplicate keys winning. */

typedef enum { J_NULL, J_FALSE, J_TRUE, J_INT, J_REAL, J_STRING, J_ARRAY, J_OBJECT } jtype;

typedef struct jnode {
    uint32_t span;           /* nodes in this subtree, itself included */
    uint32_t count;          /* array: elements; object: key/value pairs */
    union {
        long long i;         /* J_INT */
        const char *s;       /* J_STRING and keys: decoded, NUL-terminated */
    } v;
    unsigned char type;      /* jtype */
} jnode;

typedef struct jparser {
    char *p, *end;           /* cursor; end of the text */
    const char *line_start;  /* for the column of an error */
    unsigned line;
    int depth;
    jnode *nodes;
    size_t n, cap;
    const char *err;         /* first error, and where */
    unsigned err_line, err_col;
} jparser;

/* Nesting deeper than this is refused (the reader recurses once a level). */
#define JSON_MAX_DEPTH 512

static int jfail(jparser *P, const char *at, const char *msg)
{
    if (!P->err) {
        P->err = msg;
        P->err_line = P->line;
        P->err_col = (unsigned)(at - P->line_start) + 1;
    }
    return -1;
}

static void jskip_space(jparser *P)
{
    while (P->p < P->end) {
        char c = *P->p;
        if (c == '\n') {
            P->line++;
            P->line_start = P->p + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        P->p++;
    }
}

/* A fresh node's index (indices, not pointers: the array moves). */
static size_t jnew(jparser *P, jtype type)
{
    if (P->n == P->cap) {
        P->cap = P->cap ? 2 * P->cap : 64;
        P->nodes = ks_xrealloc(P->nodes, P->cap * sizeof *P->nodes);
    }
    jnode *j = &P->nodes[P->n];
    memset(j, 0, sizeof *j);
    j->type = (unsigned char)type;
    j->span = 1;
    return P->n++;
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d == 16)
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

/* Bytes of the well-formed UTF-8 sequence at s (no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0. */
static int utf8_length(const unsigned char *s, const unsigned char *end)
{
    unsigned char c = s[0];
    int len;
    unsigned char lo = 0x80, hi = 0xBF;   /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (end - s < len || s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* The string at P->p (its opening quote), decoded in place. */
static int jstring(jparser *P)
{
    char *start = P->p++;
    char *w = P->p;
    size_t node = jnew(P, J_STRING);
    P->nodes[node].v.s = w;
    for (;;) {
        if (P->p == P->end)
            return jfail(P, start, "string not terminated");
        unsigned char c = (unsigned char)*P->p;
        if (c == '"') {
            *w = '\0';          /* w <= P->p: only bytes already read are overwritten */
            P->p++;
            return 0;
        }
        if (c < 0x20)
            return jfail(P, P->p, "control character in a string");
        if (c < 0x80) {
            if (c != '\\') {
                *w++ = *P->p++;
                continue;
            }
            if (P->end - P->p < 2)
                return jfail(P, start, "string not terminated");
            char e = P->p[1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                *w++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
                P->p += 2;
                continue;
            }
            unsigned cp, lo;
            if (e != 'u')
                return jfail(P, P->p, "invalid escape in a string");
            if (P->end - P->p < 6 || hex4(P->p + 2, &cp) != 0)
                return jfail(P, P->p, "invalid \\u escape in a string");
            P->p += 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return jfail(P, P->p - 6, "lone low surrogate in a \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (P->end - P->p < 6 || P->p[0] != '\\' || P->p[1] != 'u' ||
                    hex4(P->p + 2, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
                    return jfail(P, P->p - 6, "high surrogate without its low half in a \\u "
                                              "escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                P->p += 6;
            }
            if (cp == 0)
                return jfail(P, P->p - 6, "\\u0000 is not allowed in a string");
            /* UTF-8 is never longer than the escape it came from */
            if (cp < 0x80) {
                *w++ = (char)cp;
            } else if (cp < 0x800) {
                *w++ = (char)(0xC0 | cp >> 6);
                *w++ = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *w++ = (char)(0xE0 | cp >> 12);
                *w++ = (char)(0x80 | (cp >> 6 & 0x3F));
                *w++ = (char)(0x80 | (cp & 0x3F));
            } else {
                *w++ = (char)(0xF0 | cp >> 18);
                *w++ = (char)(0x80 | (cp >> 12 & 0x3F));
                *w++ = (char)(0x80 | (cp >> 6 & 0x3F));
                *w++ = (char)(0x80 | (cp & 0x3F));
            }
            continue;
        }
        int len = utf8_length((const unsigned char *)P->p, (const unsigned char *)P->end);
        if (len == 0)
            return jfail(P, P->p, "invalid UTF-8 in a string");
        memmove(w, P->p, (size_t)len);
        w += len;
        P->p += len;
    }
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int jnumber(jparser *P)
{
    const char *start = P->p;
    int neg = *P->p == '-';
    if (neg)
        P->p++;
    unsigned long long u = 0;
    unsigned long long limit = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
    int overflow = 0;
    if (P->p < P->end && *P->p == '0') {
        P->p++;
    } else if (P->p < P->end && is_digit(*P->p)) {
        for (; P->p < P->end && is_digit(*P->p); P->p++) {
            unsigned d = (unsigned)(*P->p - '0');
            if (u > (limit - d) / 10)
                overflow = 1;
            else
                u = u * 10 + d;
        }
    } else {
        return jfail(P, start, "invalid number");
    }
    int real = 0;
    if (P->p < P->end && *P->p == '.') {
        real = 1;
        P->p++;
        if (P->p == P->end || !is_digit(*P->p))
            return jfail(P, start, "invalid number");
        while (P->p < P->end && is_digit(*P->p))
            P->p++;
    }
    if (P->p < P->end && (*P->p == 'e' || *P->p == 'E')) {
        real = 1;
        P->p++;
        if (P->p < P->end && (*P->p == '+' || *P->p == '-'))
            P->p++;
        if (P->p == P->end || !is_digit(*P->p))
            return jfail(P, start, "invalid number");
        while (P->p < P->end && is_digit(*P->p))
            P->p++;
    }
    if (!real && overflow)
        return jfail(P, start, "integer too large");
    size_t node = jnew(P, real ? J_REAL : J_INT);
    if (!real)
        P->nodes[node].v.i = !neg ? (long long)u
                             : u == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN
                                                                     : -(long long)u;
    return 0;
}

static int jvalue(jparser *P);

/* An array or an object (P->p at its bracket). */
static int jcontainer(jparser *P)
{
    const char *start = P->p;
    int object = *P->p == '{';
    char close = object ? '}' : ']';
    if (++P->depth > JSON_MAX_DEPTH)
        return jfail(P, start, "nested too deeply");
    size_t node = jnew(P, object ? J_OBJECT : J_ARRAY);
    P->p++;
    jskip_space(P);
    uint32_t count = 0;
    if (P->p < P->end && *P->p == close) {
        P->p++;
    } else {
        for (;;) {
            if (object) {
                jskip_space(P);
                if (P->p == P->end || *P->p != '"')
                    return jfail(P, P->p, "a string (an object's key) expected");
                if (jstring(P) != 0)
                    return -1;
                jskip_space(P);
                if (P->p == P->end || *P->p != ':')
                    return jfail(P, P->p, "':' expected");
                P->p++;
            }
            if (jvalue(P) != 0)
                return -1;
            count++;
            jskip_space(P);
            if (P->p < P->end && *P->p == ',') {
                P->p++;
                continue;
            }
            if (P->p < P->end && *P->p == close) {
                P->p++;
                break;
            }
            return jfail(P, P->p, object ? "',' or '}' expected" : "',' or ']' expected");
        }
    }
    P->depth--;
    if (P->n - node > UINT32_MAX)
        return jfail(P, start, "too many values");
    P->nodes[node].span = (uint32_t)(P->n - node);
    P->nodes[node].count = count;
    return 0;
}

static int jvalue(jparser *P)
{
    jskip_space(P);
    if (P->p == P->end)
        return jfail(P, P->p, "unexpected end of input");
    static const struct { const char *word; jtype type; } literals[] = {
        {"true", J_TRUE}, {"false", J_FALSE}, {"null", J_NULL}};
    switch (*P->p) {
    case '{':
    case '[':
        return jcontainer(P);
    case '"':
        return jstring(P);
    case 't':
    case 'f':
    case 'n':
        for (size_t i = 0; i < sizeof literals / sizeof literals[0]; i++) {
            size_t len = strlen(literals[i].word);
            if ((size_t)(P->end - P->p) >= len && memcmp(P->p, literals[i].word, len) == 0) {
                jnew(P, literals[i].type);
                P->p += len;
                return 0;
            }
        }
        return jfail(P, P->p, "invalid literal");
    default:
        if (*P->p == '-' || is_digit(*P->p))
            return jnumber(P);
        return jfail(P, P->p, "unexpected character");
    }
}

/* Parses text[0..size) (modified: strings are decoded in place). Returns
 * the nodes (the root first), or NULL after an error naming name. */
static jnode *json_parse(char *text, size_t size, const char *name)
{
    jparser P = {0};
    P.p = text;
    P.end = text + size;
    P.line_start = text;
    P.line = 1;
    P.cap = size / 8 + 64;    /* a manifest has about one node per 8 to 16 bytes */
    P.nodes = ks_xmalloc(P.cap * sizeof *P.nodes);
    if (jvalue(&P) == 0) {
        jskip_space(&P);
        if (P.p != P.end)
            jfail(&P, P.p, "end of input expected after the value");
    }
    if (P.err) {
        ks_error_at(name, P.err_line, P.err_col, "%s", P.err);
        free(P.nodes);
        return NULL;
    }
    return P.nodes;
}

/* The value of key in object o (the last one of that key), or NULL. */
static const jnode *jfield(const jnode *o, const char *key)
{
    if (!o || o->type != J_OBJECT)
        return NULL;
    const jnode *found = NULL, *k = o + 1;
    for (uint32_t i = 0; i < o->count; i++) {
        const jnode *v = k + 1;
        if (strcmp(k->v.s, key) == 0)
            found = v;
        k = v + v->span;
    }
    return found;
}

/* The values of several keys of object o at once, in one pass over its
 * pairs (a kernel's seven fields would take 49 string compares one by one):
 * out[i] is keys[i]'s value (the last one of that key), or NULL. */
static void jfields(const jnode *o, const char *const *keys, size_t n, const jnode **out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    if (!o || o->type != J_OBJECT)
        return;
    const jnode *k = o + 1;
    for (uint32_t p = 0; p < o->count; p++) {
        const jnode *v = k + 1;
        for (size_t i = 0; i < n; i++)
            if (k->v.s[0] == keys[i][0] && strcmp(k->v.s, keys[i]) == 0) {
                out[i] = v;
                break;
            }
        k = v + v->span;
    }
}

/* The first element of array a, or NULL; jnext gives the next one. */
static const jnode *jfirst(const jnode *a)
{
    return a && a->type == J_ARRAY && a->count > 0 ? a + 1 : NULL;
}

static const jnode *jnext(const jnode *e)
{
    return e + e->span;
}

static size_t jsize(const jnode *a)
{
    return a && a->type == J_ARRAY ? a->count : 0;
}

/* ---- reading a manifest: the fields ------------------------------------------------------------ */

static char *str_value(const jnode *j)
{
    return j && j->type == J_STRING ? ks_xstrdup(j->v.s) : NULL;
}

static const char *json_type_name(const jnode *j)
{
    switch ((jtype)j->type) {
    case J_OBJECT: return "an object";
    case J_ARRAY: return "an array";
    case J_STRING: return "a string";
    case J_INT: return "a negative integer";
    case J_REAL: return "a fraction";
    case J_TRUE:
    case J_FALSE: return "a boolean";
    case J_NULL: return "null";
    }
    return "something else";
}

/* Where a field is, for messages: "kernel #3" or "kernel #3, parameter 2"
 * (param 0: the kernel's own field). Built only when a message needs it. */
typedef struct where {
    size_t kernel, param;
} where;

static const char *where_text(where w, char *buf, size_t size)
{
    if (w.param)
        snprintf(buf, size, "kernel #%zu, parameter %zu", w.kernel, w.param);
    else
        snprintf(buf, size, "kernel #%zu", w.kernel);
    return buf;
}

/* A number field as a non-negative integer. A wrong type is an error
 * naming the field (read as 0 it would report a bogus "size changed to 0");
 * a missing field is one too unless optional (0 then: unknown). */
static int int_value(const jnode *j, const char *key, int optional, long *v, const char *path,
                     where w)
{
    char buf[64];
    *v = 0;
    if (!j && optional)
        return 0;
    if (!j) {
        ks_error_at(path, 0, 0, "%s: \"%s\" is missing", where_text(w, buf, sizeof buf), key);
        return -1;
    }
    if (j->type != J_INT || j->v.i < 0 || j->v.i > INT_MAX) {
        ks_error_at(path, 0, 0, "%s: \"%s\" must be a non-negative integer, not %s",
                    where_text(w, buf, sizeof buf), key,
                    j->type == J_INT && j->v.i > 0 ? "one this large" : json_type_name(j));
        return -1;
    }
    *v = (long)j->v.i;
    return 0;
}

static const char *const kernel_keys[] = {"name", "c_name", "symbol", "line", "col",
                                           "launch_bounds", "params"};
enum { K_NAME, K_C_NAME, K_SYMBOL, K_LINE, K_COL, K_BOUNDS, K_PARAMS, K_KEYS };
static const char *const param_keys[] = {"name", "type", "c_type", "size", "align", "offset"};
enum { P_NAME, P_TYPE, P_C_TYPE, P_SIZE, P_ALIGN, P_OFFSET, P_KEYS };

static int find_duplicate_kernels(const ks_sigs *m, const char *path);

/* Reads manifest text (modified in place) named path in messages into *m. */
static int manifest_from_text(char *text, size_t size, const char *path, ks_sigs *m)
{
    jnode *nodes = json_parse(text, size, path);
    if (!nodes)
        return -1;
    const jnode *root = nodes;
    const jnode *format = jfield(root, "format");
    const jnode *kernels = jfield(root, "kernels");
    if (!format || format->type != J_INT || format->v.i != KSTUB_MANIFEST_FORMAT) {
        ks_error_at(path, 0, 0, "not a kstub manifest of format %d (\"format\" is %s)",
                    KSTUB_MANIFEST_FORMAT, format ? "different" : "missing");
        free(nodes);
        return -1;
    }
    if (!kernels || kernels->type != J_ARRAY) {
        ks_error_at(path, 0, 0, "\"kernels\" is missing or not an array");
        free(nodes);
        return -1;
    }
    m->source = str_value(jfield(root, "source"));
    if (!m->source)
        m->source = ks_xstrdup(ks_basename(path));
    size_t nk = jsize(kernels);
    m->kernels = ks_xmalloc((nk ? nk : 1) * sizeof *m->kernels);
    int bad = 0;
    const jnode *jk = jfirst(kernels);
    for (size_t i = 0; i < nk && !bad; i++, jk = jnext(jk)) {
        ks_sig_kern *k = &m->kernels[m->nkernels];
        where w = {i + 1, 0};
        const jnode *f[K_KEYS];
        jfields(jk, kernel_keys, K_KEYS, f);
        memset(k, 0, sizeof *k);
        k->name = str_value(f[K_NAME]);
        k->c_name = str_value(f[K_C_NAME]);
        k->symbol = str_value(f[K_SYMBOL]);
        long line = 0, col = 0;
        if (int_value(f[K_LINE], "line", 1, &line, path, w) != 0 ||
            int_value(f[K_COL], "col", 1, &col, path, w) != 0)   /* col: 0 in older manifests */
            bad = 2;
        k->line = (unsigned)line;
        k->col = (unsigned)col;
        k->max_threads = k->min_blocks = -1;
        const jnode *lb = f[K_BOUNDS];
        if (jsize(lb) >= 1 && jsize(lb) <= 2) {
            long max = 0, mb = 0;
            const jnode *first = jfirst(lb);
            if (int_value(first, "launch_bounds[0]", 0, &max, path, w) ||
                int_value(jsize(lb) == 2 ? jnext(first) : NULL, "launch_bounds[1]", 1, &mb,
                          path, w))
                bad = 2;
            k->max_threads = max;
            k->min_blocks = mb > 0 ? mb : -1;
        } else if (lb && lb->type != J_NULL) {
            char buf[64];
            ks_error_at(path, 0, 0, "%s: \"launch_bounds\" must be null or [max threads, min "
                        "blocks], not %s", where_text(w, buf, sizeof buf), json_type_name(lb));
            bad = 2;
        }
        const jnode *params = f[K_PARAMS];
        size_t np = jsize(params);
        k->params = ks_xmalloc((np ? np : 1) * sizeof *k->params);
        const jnode *jp = jfirst(params);
        for (size_t j = 0; j < np; j++, jp = jnext(jp)) {
            ks_sig_param *p = &k->params[k->nparams++];
            where pw = {i + 1, j + 1};
            const jnode *g[P_KEYS];
            jfields(jp, param_keys, P_KEYS, g);
            memset(p, 0, sizeof *p);
            p->name = str_value(g[P_NAME]);
            p->type = str_value(g[P_TYPE]);
            p->c_type = str_value(g[P_C_TYPE]);
            if (int_value(g[P_SIZE], "size", 0, &p->size, path, pw) != 0 ||
                int_value(g[P_ALIGN], "align", 0, &p->align, path, pw) != 0 ||
                int_value(g[P_OFFSET], "offset", 0, &p->offset, path, pw) != 0)
                bad = 2;
            if (!p->name || !p->c_type)
                bad = bad ? bad : 1;
        }
        m->nkernels++;
        if (!k->name || !k->c_name || !k->symbol || !params || params->type != J_ARRAY)
            bad = bad ? bad : 1;
        if (bad == 1)
            ks_error_at(path, 0, 0, "kernel #%zu: a name, c_name, symbol or parameter field "
                        "is missing", i + 1);
    }
    free(nodes);
    if (bad || find_duplicate_kernels(m, path)) {
        ks_sigs_free(m);
        return -1;
    }
    return 0;
}

int ks_manifest_read(const char *path, ks_sigs *m)
{
    memset(m, 0, sizeof *m);
    size_t size;
    char *text = ks_read_file(path, &size);
    if (!text) {
        ks_error_at(path, 0, 0, "cannot read: %s", ks_file_error());
        return -1;
    }
    int rc = manifest_from_text(text, size, path, m);
    free(text);
    return rc;
}

int ks_manifest_parse(const char *text, const char *name, ks_sigs *m)
{
    memset(m, 0, sizeof *m);
    size_t size = strlen(text);
    char *copy = ks_xmalloc(size + 1);
    memcpy(copy, text, size + 1);
    int rc = manifest_from_text(copy, size, name, m);
    free(copy);
    return rc;
}

/* ---- pairing kernels: hash tables ------------------------------------------------------------- */

/* An open-addressing table keyed by a kernel's name, or by its name and
 * symbol: a slot points at the kernel that first gave the key (nothing is
 * copied) and holds the few counters the pairing needs. */
typedef struct kslot {
    const ks_sig_kern *k;    /* the key's kernel; NULL: empty */
    uint32_t hash;           /* of the key, compared before the strings */
    int32_t shared;          /* name table: kernels of the name have different symbols */
    int32_t n_old, n_new;    /* name table: unmatched kernels of the name on each side */
    long idx;                /* pair table: the first unpaired new kernel of the pair;
                              * name table: the last unmatched new kernel of the name */
} kslot;

typedef struct ktable {
    kslot *v;
    size_t mask;             /* slots - 1 (a power of two minus one) */
    int by_pair;             /* the key includes the symbol */
} ktable;

static void ktable_init(ktable *t, size_t entries, int by_pair)
{
    size_t n = 16;
    while (n < 2 * entries)
        n *= 2;
    t->v = ks_xmalloc(n * sizeof *t->v);
    memset(t->v, 0, n * sizeof *t->v);
    t->mask = n - 1;
    t->by_pair = by_pair;
}

/* FNV-1a over the name, then (pair tables) a 0xff byte, which UTF-8 never
 * holds, and the symbol. */
static uint32_t kstring_hash(const char *name, const char *symbol)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *s = (const unsigned char *)name; *s; s++)
        h = (h ^ *s) * 0x100000001b3u;
    if (symbol) {
        h = (h ^ 0xff) * 0x100000001b3u;
        for (const unsigned char *s = (const unsigned char *)symbol; *s; s++)
            h = (h ^ *s) * 0x100000001b3u;
    }
    return (uint32_t)(h ^ h >> 32);
}

/* The slot of k's key: the existing one, a fresh one (insert), or NULL. */
static kslot *ktable_slot(const ktable *t, const ks_sig_kern *k, int insert)
{
    const char *symbol = t->by_pair ? k->symbol : NULL;
    uint32_t h = kstring_hash(k->name, symbol);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        kslot *s = &t->v[i];
        if (!s->k) {
            if (!insert)
                return NULL;
            s->k = k;
            s->hash = h;
            s->idx = -1;
            return s;
        }
        if (s->hash == h && strcmp(s->k->name, k->name) == 0 &&
            (!symbol || strcmp(s->k->symbol, symbol) == 0))
            return s;
    }
}

/* A kernel is its name and device symbol (what diff pairs on): a manifest
 * that lists one twice is malformed, not a kernel added. Reports each
 * repeat with the entry it repeats; returns their count. */
static int find_duplicate_kernels(const ks_sigs *m, const char *path)
{
    ktable t;
    ktable_init(&t, m->nkernels, 1);
    int dups = 0;
    for (size_t i = 0; i < m->nkernels; i++) {
        kslot *s = ktable_slot(&t, &m->kernels[i], 1);
        if (s->k == &m->kernels[i]) {
            s->idx = (long)i;
            continue;
        }
        ks_error_at(path, 0, 0, "kernel #%zu repeats kernel #%ld ('%s', symbol '%s'): a "
                    "manifest lists each kernel once", i + 1, s->idx + 1, m->kernels[i].name,
                    m->kernels[i].symbol);
        dups++;
    }
    free(t.v);
    return dups;
}

/* ---- comparing two models -------------------------------------------------------------------- */

typedef struct diff_ctx {
    report *r;
    const char *old_file, *new_file;  /* what diagnostics name */
    const ks_sigs *old, *new;
    ktable names;      /* every kernel name: its symbols, counts (diff_models's) */
} diff_ctx;

/* "scale" or, when two kernels share the name (overloads), "scale [c_name]". */
static char *display_name(const diff_ctx *d, const ks_sig_kern *k)
{
    const kslot *s = ktable_slot(&d->names, k, 0);
    int shared = s && s->shared;
    return shared ? ks_xasprintf("%s [%s]", k->name, k->c_name) : ks_xstrdup(k->name);
}

static int names_are_permutation(const ks_sig_kern *a, const ks_sig_kern *b)
{
    if (a->nparams != b->nparams)
        return 0;
    int same_order = 1;
    for (size_t i = 0; i < a->nparams; i++) {
        int found = 0;
        for (size_t j = 0; j < b->nparams; j++)
            if (strcmp(a->params[i].name, b->params[j].name) == 0)
                found++;
        for (size_t j = 0; j < a->nparams; j++)
            if (j != i && strcmp(a->params[i].name, a->params[j].name) == 0)
                return 0;   /* duplicate names: cannot tell */
        if (found != 1)
            return 0;
        if (strcmp(a->params[i].name, b->params[i].name) != 0)
            same_order = 0;
    }
    return !same_order;
}

static char *param_list(const ks_sig_kern *k)
{
    ks_buf b = {0};
    ks_buf_puts(&b, "(");
    for (size_t i = 0; i < k->nparams; i++)
        ks_buf_printf(&b, "%s%s", i ? ", " : "", k->params[i].name);
    ks_buf_puts(&b, ")");
    return ks_buf_take(&b);
}

/* Same parameter (by position or by name) in both versions. */
static void diff_param(diff_ctx *d, const ks_sig_kern *kn, const char *kname, size_t io,
                       const ks_sig_param *po, size_t in, const ks_sig_param *pn)
{
    const char *f = d->new_file;
    unsigned line = kn->line, col = kn->col;
    (void)io;
    if (strcmp(po->name, pn->name) != 0)
        add(d->r, SEV_WARNING, "param_renamed", f, line, col, kn,
            "kernel %s, parameter %zu: renamed from '%s' to '%s'", kname, in + 1, po->name,
            pn->name);
    if (strcmp(po->c_type, pn->c_type) != 0) {
        add(d->r, SEV_ERROR, "param_type_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': type changed from '%s' to '%s'", kname, in + 1,
            pn->name, po->c_type, pn->c_type);
    } else if (po->size != pn->size) {
        add(d->r, SEV_ERROR, "param_size_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': size changed from %ld to %ld bytes", kname, in + 1,
            pn->name, po->size, pn->size);
    } else if (po->align != pn->align) {
        add(d->r, SEV_ERROR, "param_align_changed", f, line, col, kn,
            "kernel %s, parameter %zu '%s': alignment changed from %ld to %ld bytes", kname,
            in + 1, pn->name, po->align, pn->align);
    }
}

static void diff_params(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn, const char *kname)
{
    const char *f = d->new_file;
    if (names_are_permutation(ko, kn)) {
        char *a = param_list(ko), *b = param_list(kn);
        add(d->r, SEV_ERROR, "params_reordered", f, kn->line, kn->col, kn,
            "kernel %s: parameters reordered from %s to %s", kname, a, b);
        free(a);
        free(b);
        return;
    }
    if (ko->nparams == kn->nparams) {
        for (size_t i = 0; i < kn->nparams; i++)
            diff_param(d, kn, kname, i, &ko->params[i], i, &kn->params[i]);
        return;
    }
    /* Count changed: match by name; what is left was added or removed. */
    for (size_t i = 0; i < ko->nparams; i++) {
        size_t j;
        for (j = 0; j < kn->nparams; j++)
            if (strcmp(ko->params[i].name, kn->params[j].name) == 0)
                break;
        if (j == kn->nparams)
            add(d->r, SEV_ERROR, "param_removed", f, kn->line, kn->col, kn,
                "kernel %s, parameter %zu '%s' (%s): removed", kname, i + 1,
                ko->params[i].name, ko->params[i].c_type);
        else
            diff_param(d, kn, kname, i, &ko->params[i], j, &kn->params[j]);
    }
    for (size_t j = 0; j < kn->nparams; j++) {
        size_t i;
        for (i = 0; i < ko->nparams; i++)
            if (strcmp(ko->params[i].name, kn->params[j].name) == 0)
                break;
        if (i == ko->nparams)
            add(d->r, SEV_ERROR, "param_added", f, kn->line, kn->col, kn,
                "kernel %s, parameter %zu '%s' (%s): added", kname, j + 1, kn->params[j].name,
                kn->params[j].c_type);
    }
}

static void diff_bounds(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn, const char *kname)
{
    const char *f = d->new_file;
    long o = ko->max_threads > 0 ? ko->max_threads : -1;
    long n = kn->max_threads > 0 ? kn->max_threads : -1;
    /* A lower maximum rejects block sizes callers use today; a higher one
     * (or none) accepts everything that worked. Minimum blocks per SM only
     * guides register allocation. */
    if (o != n) {
        int tighter = n > 0 && (o < 0 || n < o);
        char ob[32], nb[32];
        snprintf(ob, sizeof ob, o > 0 ? "%ld threads" : "none", o);
        snprintf(nb, sizeof nb, n > 0 ? "%ld threads" : "none", n);
        add(d->r, tighter ? SEV_ERROR : SEV_WARNING,
            tighter ? "launch_bounds_tightened" : "launch_bounds_relaxed", f, kn->line, kn->col,
            kn, "kernel %s: __launch_bounds__ maximum block size %s from %s to %s", kname,
            tighter ? "tightened" : "relaxed", ob, nb);
    } else if (ko->min_blocks != kn->min_blocks && n > 0) {
        add(d->r, SEV_WARNING, "launch_bounds_min_blocks_changed", f, kn->line, kn->col, kn,
            "kernel %s: __launch_bounds__ minimum blocks per multiprocessor changed from %ld "
            "to %ld", kname, ko->min_blocks > 0 ? ko->min_blocks : 0,
            kn->min_blocks > 0 ? kn->min_blocks : 0);
    }
}

/* Nothing the comparisons below look at differs (most pairs, most of the
 * time): no finding, and no display name to build. */
static int same_signature(const ks_sig_kern *ko, const ks_sig_kern *kn)
{
    if (ko->nparams != kn->nparams || ko->max_threads != kn->max_threads ||
        ko->min_blocks != kn->min_blocks || strcmp(ko->symbol, kn->symbol) != 0 ||
        strcmp(ko->c_name, kn->c_name) != 0)
        return 0;
    for (size_t i = 0; i < ko->nparams; i++) {
        const ks_sig_param *po = &ko->params[i], *pn = &kn->params[i];
        if (po->size != pn->size || po->align != pn->align || strcmp(po->name, pn->name) != 0 ||
            strcmp(po->c_type, pn->c_type) != 0)
            return 0;
    }
    return 1;
}

static void diff_kernel(diff_ctx *d, const ks_sig_kern *ko, const ks_sig_kern *kn)
{
    if (same_signature(ko, kn))
        return;
    char *kname = display_name(d, kn);
    const char *f = d->new_file;
    if (strcmp(ko->symbol, kn->symbol) != 0)
        add(d->r, SEV_ERROR, "symbol_changed", f, kn->line, kn->col, kn,
            "kernel %s: device symbol changed from '%s' to '%s'", kname, ko->symbol, kn->symbol);
    if (strcmp(ko->c_name, kn->c_name) != 0)
        add(d->r, SEV_ERROR, "c_name_changed", f, kn->line, kn->col, kn,
            "kernel %s: C function renamed from '%s' to '%s'", kname, ko->c_name, kn->c_name);
    diff_params(d, ko, kn, kname);
    diff_bounds(d, ko, kn, kname);
    free(kname);
}

/* Kernels pair up by qualified name and symbol (overloads share a name).
 * A kernel whose symbol changed (a C++ kernel's parameter type is part of
 * its mangled name) still pairs by name when exactly one kernel of that
 * name is left on each side, so the report says what changed inside it.
 * Lookups go through hash tables, so a diff takes time linear in the
 * kernels. */
static void diff_models(diff_ctx *d)
{
    const ks_sigs *o = d->old, *n = d->new;
    long *match = ks_xmalloc((o->nkernels + 1) * sizeof *match);  /* old -> new */
    long *owner = ks_xmalloc((n->nkernels + 1) * sizeof *owner);  /* new -> old */
    long *next = ks_xmalloc((n->nkernels + 1) * sizeof *next);    /* new -> the next new of its pair */
    unsigned char *taken = ks_xmalloc(n->nkernels + 1);
    memset(taken, 0, n->nkernels + 1);

    /* Every name with its symbol, and whether two differ (display_name). */
    ktable_init(&d->names, o->nkernels + n->nkernels, 0);
    const ks_sigs *ms[2] = {o, n};
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < ms[m]->nkernels; i++) {
            const ks_sig_kern *k = &ms[m]->kernels[i];
            kslot *s = ktable_slot(&d->names, k, 1);
            if (strcmp(s->k->symbol, k->symbol) != 0)
                s->shared = 1;
        }

    /* First, same name and symbol: the new kernels of each pair, in order. */
    ktable pairs;
    ktable_init(&pairs, n->nkernels, 1);
    for (size_t j = n->nkernels; j-- > 0;) {
        kslot *s = ktable_slot(&pairs, &n->kernels[j], 1);
        next[j] = s->idx;
        s->idx = (long)j;
    }
    for (size_t i = 0; i < o->nkernels; i++) {
        kslot *s = ktable_slot(&pairs, &o->kernels[i], 0);
        match[i] = -1;
        if (s && s->idx >= 0) {
            match[i] = s->idx;
            taken[match[i]] = 1;
            s->idx = next[s->idx];
        }
    }
    free(pairs.v);

    /* Then, by name alone where one kernel of the name is left on each side. */
    for (size_t j = 0; j < n->nkernels; j++)
        if (!taken[j]) {
            kslot *s = ktable_slot(&d->names, &n->kernels[j], 0);
            s->n_new++;
            s->idx = (long)j;
        }
    for (size_t i = 0; i < o->nkernels; i++)
        if (match[i] < 0)
            ktable_slot(&d->names, &o->kernels[i], 0)->n_old++;
    for (size_t i = 0; i < o->nkernels; i++) {
        if (match[i] >= 0)
            continue;
        kslot *s = ktable_slot(&d->names, &o->kernels[i], 0);
        if (s->n_old == 1 && s->n_new == 1) {
            match[i] = s->idx;
            taken[match[i]] = 1;
        }
    }
    for (size_t j = 0; j < n->nkernels; j++)
        owner[j] = -1;
    for (size_t i = 0; i < o->nkernels; i++)
        if (match[i] >= 0)
            owner[match[i]] = (long)i;
    /* Report in the new file's order, removed kernels first. */
    for (size_t i = 0; i < o->nkernels; i++) {
        if (match[i] >= 0)
            continue;
        const ks_sig_kern *k = &o->kernels[i];
        char *kname = display_name(d, k);
        add(d->r, SEV_ERROR, "kernel_removed", d->new_file, 0, 0, k,
            "kernel %s removed (it was at %s:%u)", kname, d->old_file, k->line);
        free(kname);
    }
    for (size_t j = 0; j < n->nkernels; j++) {
        const ks_sig_kern *kn = &n->kernels[j];
        if (owner[j] >= 0) {
            diff_kernel(d, &o->kernels[owner[j]], kn);
        } else {
            char *kname = display_name(d, kn);
            add(d->r, SEV_WARNING, "kernel_added", d->new_file, kn->line, kn->col, kn,
                "kernel %s added", kname);
            free(kname);
        }
    }
    free(match);
    free(owner);
    free(next);
    free(taken);
    free(d->names.v);
    d->names.v = NULL;
}

static void count_summary(const report *r, ks_buf *b)
{
    size_t errors = 0, warnings = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].sev == SEV_ERROR)
            errors++;
        else if (r->v[i].sev == SEV_WARNING)
            warnings++;
    }
    ks_buf_printf(b, "%zu breaking change%s, %zu compatible change%s", errors,
                  errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
}

/* ---- kstub diff ------------------------------------------------------------------------------- */

static void diff_usage(FILE *f)
{
    fputs("usage: kstub diff [--format=text|json|github] [--source PATH] OLD.json NEW.json\n"
          "\n"
          "Compares two kstub manifests and classifies every change: breaking for\n"
          "existing callers (error) or compatible (warning).\n"
          "\n"
          "  --format=F       text (file:line:col: error: ..., the default), json, or github\n"
          "                   (workflow annotations)\n"
          "  --source PATH    the .cu path to name in diagnostics (default: the manifest's\n"
          "                   \"source\", a file name without directories)\n"
          "\n"
          "exit status: 0 no change, 4 compatible changes only, 12 breaking changes,\n"
          "             1 error (unreadable or invalid manifest), 2 usage error\n",
          f);
}

int ks_diff_main(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    const char *source = NULL, *v = NULL;
    int nfiles = 0, fmt = KS_FORMAT_TEXT, m;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            diff_usage(stdout);
            return 0;
        } else if ((m = ks_option(argc, argv, &i, "--format", &v)) != 0) {
            if (m < 0)
                return KS_DRIFT_USAGE;
            if ((fmt = ks_format_parse(v)) < 0) {
                ks_error_at(NULL, 0, 0, "--format takes text, json or github, not '%s'", v);
                return KS_DRIFT_USAGE;
            }
        } else if ((m = ks_option(argc, argv, &i, "--source", &v)) != 0) {
            if (m < 0)
                return KS_DRIFT_USAGE;      /* "--source" without a value */
            source = v;
        } else if (a[0] == '-' && a[1]) {
            ks_error_at(NULL, 0, 0, "kstub diff: unknown option '%s'", a);
            diff_usage(stderr);
            return KS_DRIFT_USAGE;
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            ks_error_at(NULL, 0, 0, "kstub diff takes two manifests, not more");
            return KS_DRIFT_USAGE;
        }
    }
    if (nfiles != 2) {
        diff_usage(stderr);
        return KS_DRIFT_USAGE;
    }
    ks_sigs old, new;
    if (ks_manifest_read(files[0], &old) != 0)
        return KS_DRIFT_ERROR;
    if (ks_manifest_read(files[1], &new) != 0) {
        ks_sigs_free(&old);
        return KS_DRIFT_ERROR;
    }
    report r = {0};
    const char *new_file = source ? source : new.source;
    const char *old_file = source ? source : old.source;
    diff_ctx d = {&r, old_file, new_file, &old, &new, {0}};
    diff_models(&d);
    ks_buf sum = {0};
    ks_buf_printf(&sum, "kstub diff: ");
    if (r.changed)
        count_summary(&r, &sum);
    else
        ks_buf_puts(&sum, "no change");
    int rc = exit_status(&r);
    print_report(&r, (ks_format)fmt, "diff", sum.data, NULL, rc);
    free(sum.data);
    report_free(&r);
    ks_sigs_free(&old);
    ks_sigs_free(&new);
    return rc;
}

/* ---- kstub check ------------------------------------------------------------------------------ */

int ks_check_run(const ks_check_input *in)
{
    report r = {0};
    int stale = 0;
    size_t *state = ks_xmalloc((in->noutputs + 1) * sizeof *state);
    enum { UP_TO_DATE, MISSING, DIFFERS };
    for (size_t i = 0; i < in->noutputs; i++) {
        size_t size;
        char *disk = ks_peek_file(in->outputs[i].path, &size);
        if (!disk)
            state[i] = MISSING;
        else if (size != strlen(in->outputs[i].text) || memcmp(disk, in->outputs[i].text, size))
            state[i] = DIFFERS;
        else
            state[i] = UP_TO_DATE;
        if (state[i] != UP_TO_DATE)
            stale = 1;
        free(disk);
    }

    /* The per-kernel report needs the old signatures: the on-disk
     * manifest. Without one, the report names files only. */
    int have_old = 0;
    ks_sigs old;
    if (stale && in->manifest) {
        /* access, not open: a FIFO there must not stop the check (the
         * read below refuses it without waiting). */
        if (access(in->manifest, F_OK) == 0) {
            /* A manifest that cannot be read is a tool error (1), not a
             * change (4): the comparison cannot be made. */
            if (ks_manifest_read(in->manifest, &old) != 0) {
                free(state);
                return KS_DRIFT_ERROR;
            }
            have_old = 1;
        }
    }
    size_t before = r.n;
    if (have_old) {
        ks_sigs fresh;
        if (ks_manifest_parse(in->fresh_manifest, in->source, &fresh) == 0) {
            diff_ctx d = {&r, in->source, in->source, &old, &fresh, {0}};
            diff_models(&d);
            ks_sigs_free(&fresh);
        }
        ks_sigs_free(&old);
    }
    int kernels_changed = r.n > before, kernels_breaking = r.breaking;
    for (size_t i = 0; i < in->noutputs; i++) {
        if (state[i] == MISSING)
            add(&r, SEV_ERROR, "file_missing", in->outputs[i].path, 0, 0, NULL,
                "missing; kstub has not generated it");
        else if (state[i] == DIFFERS)
            add(&r, SEV_ERROR, "file_out_of_date", in->outputs[i].path, 0, 0, NULL,
                "out of date: differs from what kstub generates from %s%s", in->source,
                kernels_changed ? ""
                : have_old ? " (no kernel signature changed: options, templates or "
                             "the kstub version differ)"
                           : "");
    }
    ks_buf sum = {0};
    if (stale)
        ks_buf_printf(&sum, "kstub check: generated files for %s are out of date", in->source);
    else
        ks_buf_printf(&sum, "kstub check: generated files for %s are up to date", in->source);
    /* A stale file is a change even when every kernel kept its signature. */
    int rc = stale ? KS_DRIFT_CHANGED | (kernels_breaking ? KS_DRIFT_BREAKING : 0)
                   : KS_DRIFT_NONE;
    print_report(&r, in->format, "check", sum.data, in->fix_command, rc);
    free(sum.data);
    free(state);
    report_free(&r);
    return rc;
}

void ks_sigs_free(ks_sigs *m)
{
    for (size_t i = 0; i < m->nkernels; i++) {
        ks_sig_kern *k = &m->kernels[i];
        for (size_t j = 0; j < k->nparams; j++) {
            free(k->params[j].name);
            free(k->params[j].type);
            free(k->params[j].c_type);
        }
        free(k->params);
        free(k->name);
        free(k->c_name);
        free(k->symbol);
    }
    free(m->kernels);
    free(m->source);
    memset(m, 0, sizeof *m);
}
