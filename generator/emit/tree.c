/*
 * tree.c — the tree of values a template is filled from (ks_tn_*), and the
 * escapes a user-derived string needs in each context of generated C.
 */
#include "emit/tree.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

ks_tnode *ks_tn_new(const ks_tnode *parent)
{
    ks_tnode *n = ks_xmalloc(sizeof *n);
    n->vals = NULL;
    n->nvals = 0;
    n->parent = parent;
    return n;
}

static ks_tval *tn_add(ks_tnode *n, const char *key)
{
    n->vals = ks_xrealloc(n->vals, (n->nvals + 1) * sizeof *n->vals);
    ks_tval *v = n->vals[n->nvals++] = ks_xmalloc(sizeof *v);
    v->key = ks_xstrdup(key);
    v->keylen = strlen(key);
    v->str = NULL;
    v->items = NULL;
    v->nitems = 0;
    v->borrowed = 0;
    return v;
}

void ks_tn_set(ks_tnode *n, const char *key, const char *fmt, ...)
{
    ks_tval *v = tn_add(n, key);
    va_list ap;
    va_start(ap, fmt);
    v->str = ks_xvasprintf(fmt, ap);
    va_end(ap);
}

void ks_tn_take(ks_tnode *n, const char *key, char *owned)
{
    tn_add(n, key)->str = owned;
}

void ks_tn_flag(ks_tnode *n, const char *key, int on)
{
    tn_add(n, key)->str = ks_xstrdup(on ? "yes" : "");
}

ks_tval *ks_tn_list(ks_tnode *n, const char *key)
{
    return tn_add(n, key);
}

ks_tnode *ks_tn_push(ks_tval *list, const ks_tnode *parent)
{
    list->items = ks_xrealloc(list->items, (list->nitems + 1) * sizeof *list->items);
    return list->items[list->nitems++] = ks_tn_new(parent);
}

void ks_tn_push_ref(ks_tval *list, ks_tnode *item)
{
    list->items = ks_xrealloc(list->items, (list->nitems + 1) * sizeof *list->items);
    list->items[list->nitems++] = item;
    list->borrowed = 1;
}

void ks_tn_free(ks_tnode *n)
{
    for (size_t i = 0; i < n->nvals; i++) {
        ks_tval *v = n->vals[i];
        for (size_t j = 0; j < v->nitems && !v->borrowed; j++)
            ks_tn_free(v->items[j]);
        free(v->items);
        free(v->str);
        free(v->key);
        free(v);
    }
    free(n->vals);
    free(n);
}

const ks_tval *ks__tn_find(const ks_tnode *n, const char *key, size_t keylen)
{
    for (; n; n = n->parent)
        for (size_t i = 0; i < n->nvals; i++)
            if (n->vals[i]->keylen == keylen && memcmp(n->vals[i]->key, key, keylen) == 0)
                return n->vals[i];
    return NULL;
}

/* ---- escapes ---------------------------------------------------------------------------------- */

char *ks_escape_comment(const char *s)
{
    ks_buf b = {0};
    for (const char *p = s; *p; p++) {
        if (p[0] == '*' && p[1] == '/')
            ks_buf_puts(&b, "* ");           /* never closes the comment */
        else if (p[0] == '/' && p[1] == '*')
            ks_buf_puts(&b, "/ ");
        else if ((unsigned char)*p < 0x20 || *p == 0x7f)
            ks_buf_puts(&b, " ");            /* a newline would end a // comment */
        else
            ks_buf_put(&b, p, 1);
    }
    return ks_buf_take(&b);
}

/* A C type's spelling as part of an identifier ("unsigned int" ->
 * "unsigned_int"): each run of what is not a letter, digit or '_' between
 * two words becomes one '_'. */
char *ks_escape_identifier(const char *s)
{
    ks_buf b = {0};
    int apart = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') {
            if (apart && b.len > 0)
                ks_buf_puts(&b, "_");
            ks_buf_put(&b, (const char *)p, 1);
            apart = 0;
        } else {
            apart = 1;
        }
    }
    return ks_buf_take(&b);
}

char *ks_escape_string(const char *s)
{
    ks_buf b = {0};
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            ks_buf_printf(&b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f || (*p == '?' && p[1] == '?'))   /* no trigraphs */
            ks_buf_printf(&b, "\\%03o", *p);
        else
            ks_buf_put(&b, (const char *)p, 1);
    }
    return ks_buf_take(&b);
}

/* What a value holds that #include "…" cannot spell, or NULL. A q-char
 * sequence has no escapes: a '"' or a newline ends it, and C11 6.4.7 leaves
 * a backslash, two slashes and a slash-star undefined there (gcc reads a
 * backslash as itself, MSVC as a folder separator). A ' is undefined there
 * too, but gcc, clang and MSVC all read it as itself, so it is let through. */
const char *ks_include_unspellable(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"')
            return "a '\"'";
        if (*p == '\\')
            return "a backslash";
        if (*p == '\n')
            return "a newline";
        if (*p < 0x20 || *p == 0x7f)
            return "a control character";
        if (*p == '/' && (p[1] == '/' || p[1] == '*'))
            return p[1] == '/' ? "'//'" : "'/*'";
    }
    return NULL;
}
