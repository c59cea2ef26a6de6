/*
 * emit.c — fills the template files in templates/ (or the user's -T
 * directory) from the signature model.
 *
 * Templates use a small subset of mustache so they read like the output:
 *   {{name}}            a value
 *   {{#list}}…{{/list}} repeated per item (or shown once if a value is non-empty)
 *   {{^list}}…{{/list}} shown when the list or value is empty
 *   {{! comment }}      dropped
 * A section or comment tag alone on its line takes the whole line with it.
 * An unknown name is an error, so a typo in a user's template is caught.
 */
#include "model.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the value tree ------------------------------------------------------------------------ */

typedef struct tnode tnode;

typedef struct tval {
    char *key;
    char *str;          /* a value, or NULL for a list */
    tnode **items;
    size_t nitems;
} tval;

struct tnode {
    tval *vals;
    size_t nvals;
    const tnode *parent;
};

static tnode *tn_new(const tnode *parent)
{
    tnode *n = ks_xmalloc(sizeof *n);
    n->vals = NULL;
    n->nvals = 0;
    n->parent = parent;
    return n;
}

static tval *tn_add(tnode *n, const char *key)
{
    n->vals = ks_xrealloc(n->vals, (n->nvals + 1) * sizeof *n->vals);
    tval *v = &n->vals[n->nvals++];
    v->key = ks_xstrdup(key);
    v->str = NULL;
    v->items = NULL;
    v->nitems = 0;
    return v;
}

static void tn_set(tnode *n, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void tn_set(tnode *n, const char *key, const char *fmt, ...)
{
    tval *v = tn_add(n, key);
    va_list ap;
    va_start(ap, fmt);
    v->str = ks_xvasprintf(fmt, ap);
    va_end(ap);
}

static void tn_take(tnode *n, const char *key, char *owned)
{
    tn_add(n, key)->str = owned;
}

static tval *tn_list(tnode *n, const char *key)
{
    return tn_add(n, key);
}

static tnode *tn_push(tval *list, const tnode *parent)
{
    list->items = ks_xrealloc(list->items, (list->nitems + 1) * sizeof *list->items);
    return list->items[list->nitems++] = tn_new(parent);
}

static void tn_free(tnode *n)
{
    for (size_t i = 0; i < n->nvals; i++) {
        tval *v = &n->vals[i];
        for (size_t j = 0; j < v->nitems; j++)
            tn_free(v->items[j]);
        free(v->items);
        free(v->str);
        free(v->key);
    }
    free(n->vals);
    free(n);
}

static const tval *tn_find(const tnode *n, const char *key, size_t keylen)
{
    for (; n; n = n->parent)
        for (size_t i = 0; i < n->nvals; i++)
            if (strlen(n->vals[i].key) == keylen && memcmp(n->vals[i].key, key, keylen) == 0)
                return &n->vals[i];
    return NULL;
}

/* ---- the renderer ---------------------------------------------------------------------------- */

typedef struct tpl {
    const char *name;   /* template file, for messages */
    const char *text;
    int errors;
} tpl;

typedef struct tag {
    size_t start, end;            /* "{{" .. past "}}" */
    size_t outer_start, outer_end;/* with the whole line when standalone */
    char sigil;                   /* '#', '^', '/', '!' or 0 */
    const char *key;
    size_t keylen;
} tag;

static unsigned line_of(const tpl *t, size_t pos)
{
    unsigned line = 1;
    for (size_t i = 0; i < pos; i++)
        line += t->text[i] == '\n';
    return line;
}

static unsigned col_of(const tpl *t, size_t pos)
{
    unsigned col = 1;
    while (pos > 0 && t->text[pos - 1] != '\n') {
        pos--;
        col++;
    }
    return col;
}

/* Finds the next tag at or after pos (before end); 0 if none. */
static int next_tag(tpl *t, size_t pos, size_t end, tag *g)
{
    const char *s = t->text;
    const char *open = NULL;
    for (size_t i = pos; i + 1 < end; i++)
        if (s[i] == '{' && s[i + 1] == '{') {
            open = s + i;
            break;
        }
    if (!open)
        return 0;
    const char *close = strstr(open + 2, "}}");
    if (!close || (size_t)(close - s) + 2 > end) {
        ks_error_at(t->name, line_of(t, (size_t)(open - s)), 0, "unterminated '{{'");
        t->errors++;
        return 0;
    }
    g->start = (size_t)(open - s);
    g->end = (size_t)(close - s) + 2;
    const char *k = open + 2;
    g->sigil = (*k == '#' || *k == '^' || *k == '/' || *k == '!') ? *k++ : 0;
    while (k < close && isspace((unsigned char)*k))
        k++;
    const char *ke = close;
    while (ke > k && isspace((unsigned char)ke[-1]))
        ke--;
    g->key = k;
    g->keylen = (size_t)(ke - k);

    g->outer_start = g->start;
    g->outer_end = g->end;
    if (g->sigil) {
        size_t ls = g->start;
        while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t'))
            ls--;
        size_t le = g->end;
        while (le < end && (s[le] == ' ' || s[le] == '\t'))
            le++;
        if ((ls == 0 || s[ls - 1] == '\n') && (le == end || s[le] == '\n')) {
            g->outer_start = ls;
            g->outer_end = le < end ? le + 1 : le;
        }
    }
    return 1;
}

static void render(tpl *t, size_t pos, size_t end, const tnode *ctx, ks_buf *out);

/* Finds the {{/key}} that closes the section opened by g. */
static int find_close(tpl *t, const tag *g, size_t end, tag *close)
{
    int depth = 1;
    size_t pos = g->outer_end;
    tag x;
    while (next_tag(t, pos, end, &x)) {
        if (x.keylen == g->keylen && memcmp(x.key, g->key, g->keylen) == 0) {
            if (x.sigil == '#' || x.sigil == '^')
                depth++;
            else if (x.sigil == '/' && --depth == 0) {
                *close = x;
                return 1;
            }
        }
        pos = x.end;
    }
    ks_error_at(t->name, line_of(t, g->start), col_of(t, g->start), "section '%.*s' is never closed",
                (int)g->keylen, g->key);
    t->errors++;
    return 0;
}

static void render(tpl *t, size_t pos, size_t end, const tnode *ctx, ks_buf *out)
{
    tag g;
    while (t->errors == 0 && next_tag(t, pos, end, &g)) {
        ks_buf_put(out, t->text + pos, g.outer_start - pos);
        pos = g.outer_end;
        if (g.sigil == '!')
            continue;
        if (g.sigil == '/') {
            ks_error_at(t->name, line_of(t, g.start), col_of(t, g.start), "'{{/%.*s}}' closes no section",
                        (int)g.keylen, g.key);
            t->errors++;
            return;
        }
        const tval *v = tn_find(ctx, g.key, g.keylen);
        if (!v) {
            ks_error_at(t->name, line_of(t, g.start), col_of(t, g.start), "unknown name '%.*s'", (int)g.keylen,
                        g.key);
            t->errors++;
            return;
        }
        if (!g.sigil) {
            if (!v->str) {
                ks_error_at(t->name, line_of(t, g.start), col_of(t, g.start),
                            "'%.*s' is a list; use it as a section", (int)g.keylen, g.key);
                t->errors++;
                return;
            }
            ks_buf_puts(out, v->str);
            continue;
        }
        tag close;
        if (!find_close(t, &g, end, &close))
            return;
        int empty = v->str ? v->str[0] == '\0' : v->nitems == 0;
        if (g.sigil == '^') {
            if (empty)
                render(t, g.outer_end, close.outer_start, ctx, out);
        } else if (v->str) {
            if (!empty)
                render(t, g.outer_end, close.outer_start, ctx, out);
        } else {
            for (size_t i = 0; i < v->nitems; i++)
                render(t, g.outer_end, close.outer_start, v->items[i], out);
        }
        pos = close.outer_end;
    }
    if (t->errors == 0)
        ks_buf_put(out, t->text + pos, end - pos);
}

/* ---- building the values from the model -------------------------------------------------- */

/* "const float *restrict" -> "const float *KS_RESTRICT", for C and C++ alike. */
static char *portable_c_type(const char *c_type)
{
    ks_buf b = {0};
    const char *p = c_type, *r;
    while ((r = strstr(p, "restrict")) != NULL) {
        ks_buf_put(&b, p, (size_t)(r - p));
        ks_buf_puts(&b, "KS_RESTRICT");
        p = r + 8;
    }
    ks_buf_puts(&b, p);
    return ks_buf_take(&b);
}

/* Splits "const float **" into "const float" and 2 trailing stars. */
static size_t split_stars(const char *type, size_t *base_len)
{
    size_t n = strlen(type), stars = 0;
    while (n && (type[n - 1] == '*' || type[n - 1] == ' ')) {
        stars += type[n - 1] == '*';
        n--;
    }
    if (!stars)
        n = strlen(type);
    *base_len = n;
    return stars;
}

/* Column where the name starts: base type, a space, then any stars. */
static size_t decl_width(const char *type)
{
    size_t base;
    size_t stars = split_stars(type, &base);
    return base + 1 + stars;
}

/* "float        a", "const float *x": names in one column, stars on the name. */
static char *aligned_decl(const char *type, const char *name, size_t column)
{
    size_t base;
    size_t stars = split_stars(type, &base);
    return ks_xasprintf("%.*s%*s%.*s%s", (int)base, type, (int)(column - base - stars), "",
                        (int)stars, "****************", name);
}

/* For strict mode: the _Generic test of an argument against c_type, which
 * accepts the type itself and, for a pointer to const, the same pointer
 * without that const. Top-level restrict means nothing to a caller. */
static void strict_values(tnode *pn, const char *c_type)
{
    ks_buf t = {0};
    const char *p = c_type;
    const char *r = strstr(p, "restrict");
    if (r) {
        ks_buf_put(&t, p, (size_t)(r - p));
        while (t.len && t.data[t.len - 1] == ' ')
            t.data[--t.len] = '\0';
        ks_buf_puts(&t, r + 8);
    } else {
        ks_buf_puts(&t, p);
    }
    char *exact = ks_buf_take(&t);
    size_t n = strlen(exact);
    int ptr = n && exact[n - 1] == '*';
    if (ptr && strncmp(exact, "const ", 6) == 0 && strchr(exact, '*') == exact + n - 1)
        tn_set(pn, "strict_test", "_Generic((%s), %s: 1, %s: 1, default: 0)",
               tn_find(pn, "name", 4)->str, exact, exact + 6);
    else
        tn_set(pn, "strict_test", "_Generic((%s), %s: 1, default: 0)", tn_find(pn, "name", 4)->str,
               exact);
    tn_set(pn, "strict_want", "%s", exact);
    free(exact);
}

static char *upper_identifier(const char *s)
{
    char *r = ks_xstrdup(s);
    for (char *p = r; *p; p++)
        *p = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    return r;
}

static char *identifier_stem(const char *path)
{
    char *stem = ks_xstrdup(ks_basename(path));
    char *dot = strchr(stem, '.');
    if (dot)
        *dot = '\0';
    for (char *p = stem; *p; p++)
        if (!isalnum((unsigned char)*p))
            *p = '_';
    if (isdigit((unsigned char)stem[0])) {
        char *r = ks_xasprintf("k_%s", stem);
        free(stem);
        return r;
    }
    return stem;
}

static char *options_text(const ks_options *o)
{
    ks_buf b = {0};
    ks_buf_printf(&b, "-std=%s --arch %s", o->std, o->arch);
    for (size_t i = 0; i < o->ndefines; i++)
        ks_buf_printf(&b, " %s", o->defines[i]);
    if (o->embed)
        ks_buf_printf(&b, " --embed %s", ks_basename(o->embed));
    if (o->embed_source)
        ks_buf_puts(&b, " --embed-source");
    return ks_buf_take(&b);
}

static char *hex_bytes(const ks_image_blob *img)
{
    ks_buf b = {0};
    static const char hex[] = "0123456789abcdef";
    char line[16 * 6 + 8];
    for (size_t i = 0; i < img->size; i += 16) {
        char *p = line;
        *p++ = ' ';
        *p++ = ' ';
        *p++ = ' ';
        *p++ = ' ';
        for (size_t j = i; j < img->size && j < i + 16; j++) {
            *p++ = '0';
            *p++ = 'x';
            *p++ = hex[img->data[j] >> 4];
            *p++ = hex[img->data[j] & 15];
            *p++ = ',';
        }
        *p++ = '\n';
        ks_buf_put(&b, line, (size_t)(p - line));
    }
    if (b.len)
        b.data[--b.len] = '\0';  /* the template ends the last line */
    return ks_buf_take(&b);
}

static tnode *build_values(const ks_options *o, const ks_model *m, const ks_image_blob *img)
{
    tnode *root = tn_new(NULL);
    char *stem = identifier_stem(o->input);
    char *header = ks_xasprintf("%s.h", ks_basename(o->outbase));
    char *guard = upper_identifier(header);

    tn_set(root, "source", "%s", ks_basename(o->input));
    tn_set(root, "header", "%s", header);
    tn_set(root, "guard", "KSTUB_%s", guard);
    tn_set(root, "prefix", "%s", stem);
    tn_take(root, "options", options_text(o));
    tn_set(root, "vector_types", "%s", m->needs_vector_types ? "yes" : "");

    tn_set(root, "cuda_h", "%s", m->needs_cuda_h ? "yes" : "");
    tval *ctypes = tn_list(root, "types");
    for (size_t i = 0; i < m->ntypes; i++) {
        tnode *tn = tn_push(ctypes, root);
        tn_set(tn, "c_name", "%s", m->types[i].c_name);
        tn_set(tn, "definition", "%s", m->types[i].text);
    }
    tval *fwds = tn_list(root, "forward_decls");
    for (size_t i = 0; i < m->nfwds; i++)
        tn_set(tn_push(fwds, root), "name", "%s", m->fwds[i].c_name);

    tval *kernels = tn_list(root, "kernels");
    for (size_t i = 0; i < m->nkernels; i++) {
        const ks_kern *k = &m->kernels[i];
        tnode *kn = tn_push(kernels, root);
        tn_set(kn, "name", "%s", k->name);
        tn_set(kn, "c_name", "%s", k->c_name);
        tn_set(kn, "symbol", "%s", k->symbol);
        tn_set(kn, "line", "%u", k->line);
        tn_set(kn, "signature", "%s", k->signature);
        tn_set(kn, "nparams", "%zu", k->nparams);
        tn_set(kn, "has_params", "%s", k->nparams ? "yes" : "");
        tn_set(kn, "max_threads", "%ld", k->max_threads > 0 ? k->max_threads : 0);
        if (k->max_threads > 0 && k->min_blocks > 0)
            tn_set(kn, "launch_bounds", "__launch_bounds__(%ld, %ld)", k->max_threads,
                   k->min_blocks);
        else if (k->max_threads > 0)
            tn_set(kn, "launch_bounds", "__launch_bounds__(%ld)", k->max_threads);
        else
            tn_set(kn, "launch_bounds", "%s", "");

        /* The launch parameter is "launch" unless the kernel uses that name. */
        const char *launch = "launch";
        for (size_t j = 0; j < k->nparams; j++)
            if (strcmp(k->params[j].name, "launch") == 0)
                launch = "ks_launch_";
        char **types = ks_xmalloc((k->nparams + 1) * sizeof *types);
        size_t column = decl_width("ks_launch");
        for (size_t j = 0; j < k->nparams; j++) {
            types[j] = portable_c_type(k->params[j].c_type);
            if (decl_width(types[j]) > column)
                column = decl_width(types[j]);
        }
        tn_take(kn, "launch_decl", aligned_decl("ks_launch", launch, column));
        tn_set(kn, "launch", "%s", launch);
        tn_set(kn, "indent", "%*s", (int)(strlen("ks_status ") + strlen(k->c_name) + 1), "");
        /* The occupancy-sized entry point <c_name>_n(n_items, stream, ...). */
        const char *items = "n_items", *stream = "stream";
        for (size_t j = 0; j < k->nparams; j++) {
            if (strcmp(k->params[j].name, items) == 0)
                items = "ks_n_items_";
            if (strcmp(k->params[j].name, stream) == 0)
                stream = "ks_stream_";
        }
        tn_set(kn, "n_items", "%s", items);
        tn_set(kn, "stream", "%s", stream);
        tn_take(kn, "n_items_decl", aligned_decl("size_t", items, column));
        tn_take(kn, "stream_decl", aligned_decl("ks_stream", stream, column));
        tn_set(kn, "indent_n", "%*s", (int)(strlen("ks_status ") + strlen(k->c_name) + 3), "");
        tval *params = tn_list(kn, "params");
        for (size_t j = 0; j < k->nparams; j++) {
            const ks_param *p = &k->params[j];
            tnode *pn = tn_push(params, kn);
            tn_set(pn, "name", "%s", p->name);
            tn_set(pn, "type", "%s", p->type);
            tn_set(pn, "c_type", "%s", types[j]);
            tn_take(pn, "decl", aligned_decl(types[j], p->name, column));
            tn_set(pn, "size", "%ld", p->size);
            tn_set(pn, "align", "%ld", p->align);
            tn_set(pn, "offset", "%ld", p->offset);
            tn_set(pn, "index", "%zu", j);
            strict_values(pn, p->c_type);
            free(types[j]);
        }
        free(types);
    }

    tval *image = tn_list(root, "image");
    if (img) {
        tnode *in = tn_push(image, root);
        tn_set(in, "kind", "%s", img->kind);
        tn_set(in, "name", "%s", img->name);
        tn_set(in, "size", "%zu", img->size);
        tn_take(in, "bytes", hex_bytes(img));
    }
    free(stem);
    free(header);
    free(guard);
    return root;
}

char *ks_emit(const ks_options *o, const ks_model *m, const ks_image_blob *img,
              const char *template_name)
{
    char *path = ks_xasprintf("%s/%s", o->template_dir, template_name);
    char *text = ks_read_file(path, NULL);
    if (!text) {
        ks_error_at(path, 0, 0, "cannot read template: %s", strerror(errno));
        free(path);
        return NULL;
    }
    tnode *root = build_values(o, m, img);
    tpl t = {path, text, 0};
    ks_buf out = {0};
    render(&t, 0, strlen(text), root, &out);
    tn_free(root);
    free(text);
    free(path);
    if (t.errors) {
        free(out.data);
        return NULL;
    }
    return ks_buf_take(&out);
}

/* ---- embedded images ------------------------------------------------------------------------ */

int ks_image_read(const char *path, ks_image_blob *blob)
{
    size_t size;
    char *data = ks_read_file(path, &size);
    if (!data) {
        ks_error_at(path, 0, 0, "cannot read the image to embed: %s", strerror(errno));
        return -1;
    }
    const unsigned char *u = (const unsigned char *)data;
    blob->name = ks_basename(path);
    blob->data = (unsigned char *)data;
    blob->size = size;
    if (size >= 4 && u[0] == 0x50 && u[1] == 0xed && u[2] == 0x55 && u[3] == 0xba) {
        blob->kind = "FATBIN";
    } else if (size >= 4 && memcmp(data, "\177ELF", 4) == 0) {
        blob->kind = "CUBIN";
    } else if (size > 0 && memchr(data, '\0', size) == NULL &&
               (strstr(data, ".version") || strstr(data, ".target")) && strstr(data, ".entry")) {
        blob->kind = "PTX";
        blob->size = size + 1;  /* the driver reads PTX up to its NUL */
    } else {
        ks_error_at(path, 0, 0, "not a kernel image: expected a fatbin, an ELF cubin or PTX "
                    "text from nvcc (-fatbin, -cubin or -ptx)");
        free(data);
        return -1;
    }
    return 0;
}

int ks_source_read(const char *path, ks_image_blob *blob)
{
    size_t size;
    char *data = ks_read_file(path, &size);
    if (!data) {
        ks_error_at(path, 0, 0, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (memchr(data, '\0', size)) {
        ks_error_at(path, 0, 0, "contains a NUL byte; it cannot be embedded as source text");
        free(data);
        return -1;
    }
    blob->name = ks_basename(path);
    blob->data = (unsigned char *)data;
    blob->size = size + 1;  /* NVRTC reads the source up to its NUL */
    blob->kind = "SOURCE";
    return 0;
}
