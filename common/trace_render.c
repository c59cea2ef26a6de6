/*
 * trace_render.c — a trace file (tracefmt.h) read back as JSON lines: one
 * line per record, in file order, in the form the trace has always had
 * (docs/runtime.md); a torn record (its writer died between reserving and
 * finishing it, or is still writing) is a line of its own,
 * {"torn":true,"offset":…,"bytes":…}. Used by `kstub trace FILE` and the
 * tests; maps the file read-only, so a trace still being written can be
 * rendered (its unfinished records torn).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracefmt.h"

/* A cursor over one record's bytes; every read is bounds-checked. */
typedef struct cursor {
    const unsigned char *p, *end;
    int bad;
} cursor;

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static const unsigned char *take(cursor *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return NULL;
    }
    const unsigned char *q = c->p;
    c->p += n;
    return q;
}

/* A string of the record: its bytes and length; NULL for null (or bad). */
typedef struct str {
    const char *s;
    uint32_t n;
} str;

static str take_str(cursor *c)
{
    str r = {NULL, 0};
    const unsigned char *len = take(c, 4);
    if (len == NULL || get32(len) == KS_TRACE_NULL)
        return r;
    r.n = get32(len);
    r.s = (const char *)take(c, r.n);
    return r;
}

/* The length of the UTF-8 sequence at s (n bytes left), 0 when it is none. */
static unsigned utf8_len(const unsigned char *s, uint32_t n)
{
    unsigned len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (len == 0 || len > n)
        return 0;
    for (unsigned i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    unsigned cp = len == 2 ? 0 : len == 3 ? (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6
                                          : (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12;
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

/* The characters of a JSON string: quotes, backslashes and control
 * characters escaped; a byte that is not part of valid UTF-8 (a path in
 * another encoding, a damaged record) as the code point of that value, so
 * every line is JSON. */
static void put_chars(FILE *out, const char *text, uint32_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        unsigned len;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\u%04x", ch);
        else if (ch < 0x80)
            putc(ch, out);
        else if ((len = utf8_len(s + i, n - i)) != 0)
            fwrite(s + i, 1, len, out), i += len - 1;
        else
            fprintf(out, "\\u%04x", ch);
    }
}

/* A JSON string (quotes included); null for NULL. */
static void put_string(FILE *out, str s)
{
    if (s.s == NULL) {
        fputs("null", out);
        return;
    }
    putc('"', out);
    put_chars(out, s.s, s.n);
    putc('"', out);
}

/* "file:line", or null. */
static void put_site(FILE *out, str file, int32_t line)
{
    if (file.s == NULL) {
        fputs("null", out);
        return;
    }
    putc('"', out);
    put_chars(out, file.s, file.n);
    fprintf(out, ":%" PRId32 "\"", line);
}

static void put_value(FILE *out, unsigned kind, const unsigned char *p, uint32_t size)
{
    if (kind == KS_TRACE_POINTER && size == 8) {
        fprintf(out, ",\"pointer\":\"0x%" PRIx64 "\"", get64(p));
    } else if ((kind == KS_TRACE_SIGNED || kind == KS_TRACE_UNSIGNED) && size <= 8 && size && (size & (size - 1)) == 0) {
        unsigned long long u = 0;
        memcpy(&u, p, size);
        if (kind == KS_TRACE_SIGNED) {
            unsigned shift = 64 - 8 * size;
            long long s = shift ? (long long)(u << shift) >> shift : (long long)u;
            fprintf(out, ",\"value\":%lld", s);
        } else {
            fprintf(out, ",\"value\":%llu", u);
        }
    } else if (kind == KS_TRACE_FLOAT && (size == 4 || size == 8)) {
        double v;
        if (size == 4) {
            float f;
            memcpy(&f, p, 4);
            v = f;
        } else {
            memcpy(&v, p, 8);
        }
        if (isfinite(v))
            fprintf(out, size == 4 ? ",\"value\":%.9g" : ",\"value\":%.17g", v);
        else
            fprintf(out, ",\"value\":\"%s\"", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    }
}

/* A launch's argument, as its record describes it. */
typedef struct arg {
    unsigned kind;
    uint32_t offset, size;
    str name, type;
    const unsigned char *bytes;
} arg;

/* One whole record as a line; 0, or -1 (nothing written) when its contents
 * do not parse, which makes it torn. The line is built in memory first. */
static int render_record(const unsigned char *r, uint32_t size, FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m == NULL)
        return -1;
    cursor c = {r + KS_TRACE_FIXED, r + size, 0};
    unsigned type = r[8] | (unsigned)r[9] << 8;
    unsigned nargs = r[10] | (unsigned)r[11] << 8;
    int32_t line = (int32_t)get32(r + 12);
    fprintf(m, "{\"seq\":%" PRIu64 ",\"pid\":%" PRIu32 ",\"time_ns\":%" PRId64, get64(r + 24), get32(r + 16),
            (int64_t)get64(r + 32));
    if (type == KS_TRACE_LAUNCH) {
        str kernel = take_str(&c), symbol = take_str(&c);
        arg *args = calloc(nargs ? nargs : 1, sizeof *args);
        if (args == NULL)
            c.bad = 1;
        for (unsigned i = 0; i < nargs && !c.bad; i++) {
            const unsigned char *h = take(&c, 12);
            args[i].name = take_str(&c);
            args[i].type = take_str(&c);
            if (h != NULL)
                args[i].kind = h[0], args[i].offset = get32(h + 4), args[i].size = get32(h + 8);
        }
        str file = take_str(&c), status = take_str(&c), error = take_str(&c);
        for (unsigned i = 0; i < nargs && !c.bad; i++)
            args[i].bytes = take(&c, args[i].size);
        fputs(",\"kernel\":", m);
        put_string(m, kernel);
        fputs(",\"symbol\":", m);
        put_string(m, symbol);
        fprintf(m, ",\"grid\":[%" PRIu32 ",%" PRIu32 ",%" PRIu32 "],\"block\":[%" PRIu32 ",%" PRIu32 ",%" PRIu32
                "],\"shared\":%" PRIu32 ",\"stream\":\"0x%" PRIx64 "\",\"site\":",
                get32(r + 48), get32(r + 52), get32(r + 56), get32(r + 60), get32(r + 64), get32(r + 68),
                get32(r + 72), get64(r + 40));
        put_site(m, file, line);
        fputs(",\"status\":", m);
        put_string(m, status);
        if (error.s != NULL) {
            fputs(",\"error\":", m);
            put_string(m, error);
        }
        fputs(",\"args\":[", m);
        for (unsigned i = 0; i < nargs && !c.bad; i++) {
            const arg *a = &args[i];
            fprintf(m, "%s{\"name\":", i ? "," : "");
            put_string(m, a->name);
            fputs(",\"type\":", m);
            put_string(m, a->type);
            fprintf(m, ",\"offset\":%" PRIu32 ",\"size\":%" PRIu32 ",\"bytes\":\"", a->offset, a->size);
            for (uint32_t b = 0; b < a->size; b++)
                fprintf(m, "%02x", a->bytes[b]);
            putc('"', m);
            put_value(m, a->kind, a->bytes, a->size);
            putc('}', m);
        }
        fputs("]}\n", m);
        free(args);
    } else if (type == KS_TRACE_VARIABLE) {
        str name = take_str(&c), symbol = take_str(&c), op = take_str(&c), file = take_str(&c);
        fputs(",\"variable\":", m);
        put_string(m, name);
        fputs(",\"symbol\":", m);
        put_string(m, symbol);
        fputs(",\"op\":", m);
        put_string(m, op);
        fprintf(m, ",\"first\":%" PRIu64 ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"stream\":\"0x%" PRIx64
                "\",\"site\":", get64(r + 48), get64(r + 56), get64(r + 64), get64(r + 40));
        put_site(m, file, line);
        fputs("}\n", m);
    } else {
        c.bad = 1;
    }
    fclose(m);
    if (!c.bad && len > 0)
        fwrite(text, 1, len, out);
    free(text);
    return c.bad ? -1 : 0;
}

/* Is there a whole record at r (end: the first byte not to read)? */
static int whole(const unsigned char *r, const unsigned char *end)
{
    if ((size_t)(end - r) < KS_TRACE_FIXED)
        return 0;
    uint32_t size = get32(r + 4);
    return get32(r) == KS_TRACE_MARK && size >= KS_TRACE_FIXED && size % 8 == 0 && size <= (size_t)(end - r);
}

static void torn(FILE *out, ks__trace_counts *n, uint64_t off, uint64_t bytes)
{
    fprintf(out, "{\"torn\":true,\"offset\":%" PRIu64 ",\"bytes\":%" PRIu64 "}\n", off, bytes);
    n->torn++;
}

static int fail(char *why, size_t cap, const char *what, unsigned char *buf)
{
    snprintf(why, cap, "%s", what);
    free(buf);
    return -1;
}

int ks__trace_render(int fd, FILE *out, ks__trace_counts *counts, char *why, size_t cap)
{
    ks__trace_counts n = {0, 0};
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(why, cap, strerror(errno), NULL);
    unsigned char head[KS_TRACE_HEADER];
    if (st.st_size < (off_t)KS_TRACE_HEADER || pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
        memcmp(head, KS_TRACE_MAGIC, 8) != 0)
        return fail(why, cap, "not a kstub trace file (no KSTRACE header)", NULL);
    if (get32(head + 8) != KS_TRACE_VERSION || get32(head + 12) != KS_TRACE_HEADER) {
        snprintf(why, cap, "a kstub trace of format version %" PRIu32 ", which this kstub (version %u) does not read",
                 get32(head + 8), KS_TRACE_VERSION);
        return -1;
    }
    uint64_t end = get64(head + 16);
    if (end > (uint64_t)st.st_size)
        end = (uint64_t)st.st_size;    /* a reservation its writer could not grow the file for */
    if (end < KS_TRACE_HEADER)
        end = KS_TRACE_HEADER;
    size_t len = (size_t)(end - KS_TRACE_HEADER);
    /* Mapped, not read: a trace may be larger than memory. */
    unsigned char *map = mmap(NULL, (size_t)end, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return fail(why, cap, strerror(errno), NULL);
    const unsigned char *buf = map + KS_TRACE_HEADER;
    const unsigned char *p = buf, *stop = buf + len;
    while (p + 8 <= stop) {
        uint64_t off = KS_TRACE_HEADER + (uint64_t)(p - buf);
        if (whole(p, stop)) {
            uint32_t size = get32(p + 4);
            if (render_record(p, size, out) == 0)
                n.records++;
            else
                torn(out, &n, off, size);
            p += size;
            continue;
        }
        uint32_t size = (size_t)(stop - p) >= 8 ? get32(p + 4) : 0;
        if (get32(p) == 0 && size >= KS_TRACE_FIXED && size % 8 == 0 && size <= (size_t)(stop - p)) {
            torn(out, &n, off, size);  /* reserved and sized, never finished */
            p += size;
            continue;
        }
        const unsigned char *q = p + 8;  /* not even sized: on to the next whole record */
        while (q + 8 <= stop && !whole(q, stop))
            q += 8;
        if (q + 8 > stop)
            q = stop;
        torn(out, &n, off, (uint64_t)(q - p));
        p = q;
    }
    munmap(map, (size_t)end);
    if (counts)
        *counts = n;
    return 0;
}
