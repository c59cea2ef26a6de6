/*
 * util.h — the generator's ground floor (util.c): growable buffers,
 * allocation that cannot fail, whole-file reads that never block, the
 * diagnostic sink, paths (the all-or-nothing output writer: outputs.h).
 * Depends on nothing else of the generator.
 */
#ifndef KSTUB_UTIL_H
#define KSTUB_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct ks_buf {
    char *data;
    size_t len, cap;
} ks_buf;

void ks_buf_put(ks_buf *b, const char *s, size_t n);
void ks_buf_puts(ks_buf *b, const char *s);
void ks_buf_printf(ks_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *ks_buf_take(ks_buf *b);     /* NUL-terminated; b is left empty */

void *ks_xmalloc(size_t n);
void *ks_xrealloc(void *p, size_t n);
char *ks_xstrdup(const char *s);

/* FNV-1a over \p n bytes: the generator's in-memory hash tables (files by
 * identity, symbols, macro names). Not a digest: keys on disk use SHA-256. */
size_t ks_hash_bytes(const void *p, size_t n);
char *ks_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ks_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* common/safefile.h's open: a regular file only, never blocking; the fd,
 * -1 (errno set) or KS__NOT_REGULAR. */
#include "safefile.h"

/* Reads a whole regular file, never blocking (a FIFO, a device or a
 * directory is refused without waiting for a writer); returns malloc'd
 * bytes (NUL-terminated), or NULL with the reason in ks_file_error().
 * This only looks (an output already on disk, a header the include pre-scan
 * follows); ks_read_file (inputs.h) reads an input of the run and remembers
 * it, so that no output may replace it. */
char *ks_peek_file(const char *path, size_t *size);
/* ks_peek_file that also gives the file's device and inode (either may be NULL). */
char *ks_peek_file_id(const char *path, size_t *size, dev_t *dev, ino_t *ino);
/* Why the last ks_read_file or ks_peek_file returned NULL: strerror's text,
 * or "not a regular file (a FIFO)" and the like. */
const char *ks_file_error(void);
/* Sets what ks_file_error says for path after err (an errno, or
 * KS__NOT_REGULAR): util.c's reads and outputs.c's writer. */
void ks__file_failed(const char *path, int err);

/* The diagnostic sink: every error printed through it (or counted with
 * ks_count_error when printed otherwise, as libclang's) is counted. */
int ks_error_count(void);
/* Prints one diagnostic line (no newline in it) on stderr: every line the
 * sink and libclang's diagnostics print goes through here. While
 * ks_diag_capture(1), each is also kept; ks_diag_captured returns them
 * (malloc'd, "" when none) and forgets them. */
void ks_diag_line(const char *line);
void ks_diag_capture(int on);
char *ks_diag_captured(void);
int ks_warning_count(void);
void ks_count_error(void);
/* s with each control character (newline, tab, escape...) written as a C
 * escape (\n, \t, \x1b), so that a file name cannot start a line of its
 * own in a log or a CI annotation; malloc'd. */
char *ks_escape_controls(const char *s);
/* Prints "file:line:col: error: ..." (line 0 means no location); control
 * characters in the file name and the message are escaped (ks_escape_controls). */
void ks_error_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ks_note_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ks_warning_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ks_verror_at(const char *file, unsigned line, unsigned col, const char *severity,
                  const char *fmt, va_list ap);

/* Every error, kept as well as printed, for --format=json/github (the
 * drift report lists them): ks_verror_at's, and libclang's, which the
 * front end passes to ks_error_keep. In the order they came; message raw. */
typedef struct ks_kept_error {
    char *file;                /* NULL: none */
    unsigned line, col;        /* 0: none */
    char *message;
} ks_kept_error;
void ks_error_keep(const char *file, unsigned line, unsigned col, const char *message);
const ks_kept_error *ks_errors_kept(size_t *n);

/* basename without directories; points into s. */
const char *ks_basename(const char *s);
/* The components of path made absolute against the working directory, "."
 * and ".." taken lexically (no file need exist); returns the count, *parts
 * malloc'd (free with ks_path_parts_free). */
size_t ks_path_parts(const char *path, char ***parts);
void ks_path_parts_free(char **parts, size_t n);

#endif /* KSTUB_UTIL_H */
