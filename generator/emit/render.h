/*
 * render.h — the template engine (render.c): a tree of values, and a
 * renderer for the small mustache subset templates/ uses.
 */
#ifndef KSTUB_RENDER_H
#define KSTUB_RENDER_H

#include "base/util.h"

typedef struct ks_tnode ks_tnode;
typedef struct ks_tval ks_tval;

ks_tnode *ks_tn_new(const ks_tnode *parent);
void ks_tn_set(ks_tnode *n, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ks_tn_take(ks_tnode *n, const char *key, char *owned);
/* A flag: a value that is "yes" or empty, for {{#key}} / {{^key}}. */
void ks_tn_flag(ks_tnode *n, const char *key, int on);
ks_tval *ks_tn_list(ks_tnode *n, const char *key);
ks_tnode *ks_tn_push(ks_tval *list, const ks_tnode *parent);
/* Adds an item owned by another list (the same node may stand many times,
 * as one of an image's 256 byte values); a list holds only such items. */
void ks_tn_push_ref(ks_tval *list, ks_tnode *item);
void ks_tn_free(ks_tnode *n);

/* Renders text (the template file name for messages) with root's values onto
 * out. A {{> file}} partial is read from name's folder, else from partials
 * (the built-in templates' folder; NULL: none). Returns 0, or -1 after
 * printing errors located in the template (or the partial). */
int ks_render(const char *name, const char *text, size_t len, const char *partials,
              const ks_tnode *root, ks_buf *out);

/* Renders driver (a template of kernel's own, "{{#kernels}}{{prototype}}
 * {{/kernels}}") with the named pieces of text (the template file name for
 * messages): how the header spells a thing, reused elsewhere. Returns 0,
 * or -1 after printing errors. */
int ks_render_with(const char *name, const char *text, size_t len, const char *driver,
                   const char *partials, const ks_tnode *root, ks_buf *out);

/* Calls seen(ctx, path) with the path of each partial text includes (and
 * theirs), found as ks_render finds them: the depfile lists them. 0, or -1
 * after printing errors. */
int ks_render_partials(const char *name, const char *text, size_t len, const char *partials,
                       void (*seen)(void *, const char *), void *ctx);

/* The escapes a user-derived string needs in each context of generated C. */
char *ks_escape_comment(const char *s);    /* inside a comment: no comment closer, no newline */
char *ks_escape_string(const char *s);     /* inside a string literal */
char *ks_escape_identifier(const char *s); /* part of an identifier: other characters become '_' */
/* An #include "…" line has no escapes: what s holds that it cannot spell
 * ("a newline", …), or NULL when s can stand there as it is. */
const char *ks_include_unspellable(const char *s);

#endif /* KSTUB_RENDER_H */
