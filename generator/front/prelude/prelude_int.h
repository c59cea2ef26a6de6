/*
 * prelude_int.h — what the prelude cache's files share, private to
 * front/prelude/: its key (prelude_key.c), its layers (prelude_layer.c),
 * the files it was built from (prelude_files.c), the leading includes it
 * may hold (leading.c), pch.c's checksum and debug line.
 */
#ifndef KSTUB_PRELUDE_INT_H
#define KSTUB_PRELUDE_INT_H

#include "front/prelude/prelude.h"
#include "base/util.h"

#include <clang-c/Index.h>

/* p->key from everything that shapes the prelude built with args (the
 * parse's less the input's own -I/-D/-U) and the prelude text. */
void ks__prelude_key(ks_prelude *p, const char *const *args, size_t nargs, const char *text);
/* p->key of the prelude built with those of the input's own arguments that
 * can change it (rel), from the base prelude's key in p->key. */
void ks__prelude_variant_key(ks_prelude *p, const char *const *rel, size_t nrel);
/* p->key of the layer of p's leading includes on the base prelude, from
 * the whole prelude's key in p->key (the base found at descriptor fd). */
void ks__prelude_layer_key(ks_prelude *p, int fd);
/* The names p's files (and the compat header) could hold and the headers
 * their __has_include queries ask for, as the KEY.names text; -1 when a file
 * cannot be read. */
int ks__prelude_names(const ks_prelude *p, ks_buf *out);
/* The same, from prior (the names text of the files before p->files[from]
 * and the compat header: a layer's base's) and the files from there on;
 * prior NULL: every file. */
int ks__prelude_names_after(const ks_prelude *p, size_t from, const char *prior, ks_buf *out);
/* The input's own arguments (user: "-I" DIR pairs, -D, -U) that can change
 * the prelude p, given its names text (NULL: unknown, so all of them), in
 * their order, into out (room for nuser). Returns how many. */
size_t ks__prelude_relevant_args(const ks_prelude *p, const char *names, const char *const *user, size_t nuser,
                                const char **out);


/* The descriptor a layer finds its base's directory at: "/proc/self/fd/1000/NAME". */
#define KS__PRELUDE_BASE_DIR_FD 1000
/* The cache directory dirfd at KS__PRELUDE_BASE_DIR_FD: 0, or -1 when that
 * descriptor is another file's or cannot be had. */
int ks__prelude_pin_dir(int dirfd);
/* The line a layer's entry names its base by ("base NAME SIZE MTIME"),
 * from p->base's open PCH; NULL when p has no base. */
char *ks__prelude_base_line(const ks_prelude *p);
/* The entry payload's base, if any, is p's base as it is now: 0, or -1
 * with *why. */
int ks__prelude_check_base(const ks_prelude *p, const char *payload, const char **why);
/* The entry of p->key, verified and open in p->fd: looked up, or built
 * with args (pch.c). 0, or -1. */
int ks__prelude_acquire(ks_prelude *p, const char *const *args, size_t nargs, const char *text);
/* The names of p's entry (malloc'd), or NULL with *why. */
char *ks__prelude_read_names(const ks_prelude *p, const char **why);
void ks__prelude_free_files(ks_prelude *p);
/* The prelude's main file: an #include line per leading include (pch.c). */
char *ks__prelude_text(char **leading, size_t n);
/* A layer's base let go of (its directory is the layer's). */
void ks__prelude_drop_base(ks_prelude *p);


/* Adds the files tu includes (clang_getInclusions: not inside a PCH it
 * loaded) to p's, each with whether it is a system header: 0, or -1 when
 * a path holds a newline (a depfile cannot hold it). */
int ks__prelude_collect_files(ks_prelude *p, CXTranslationUnit tu);
/* Appends path to p's files. */
void ks__prelude_add_file(ks_prelude *p, const char *path, int sys);


/* The 64-bit checksum of a PCH file's bytes kept in its cache entry. */
unsigned long long ks__prelude_checksum(const void *data, size_t n);



/* prelude_key.c: the hex SHA-256 of what every search directory of args
 * (-I, -isystem, -iquote, -idirafter; the include path variables) holds of
 * the paths p's files and the "h" lines of names could be found by; an
 * entry records it and a hit compares it (a header that appears in such a
 * directory after the build makes the entry stale). */
void ks__prelude_search_sig(const ks_prelude *p, const char *names, const char *const *args, size_t nargs,
                           char hex[65]);


/* leading.c (pch.c must know the prelude before the parse): read from
 * clang's raw tokens of the start of text; tests/fuzz/fuzz_gen_source.c
 * holds it to the preprocessing record. The leading "#include <name>" lines
 * of text (only blank lines and comments before and between them, each
 * alone on its line; anything unsure ends the list), as long as allowed()
 * accepts each name; stops at the first other line. Returns how many;
 * *names malloc'd (each and the array). blanked, when not NULL, is a copy
 * of the len bytes of text: each of those directives, '#' to '>', becomes
 * blanks there (line breaks, comments and every offset stay). */
size_t ks__leading_includes(const char *text, size_t len,
                                  int (*allowed)(const char *name, size_t n), char ***names, char *blanked);

#endif /* KSTUB_PRELUDE_INT_H */
