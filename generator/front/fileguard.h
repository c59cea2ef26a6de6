/*
 * fileguard.h — the one place every file the kstub program reads is opened
 * (fileguard.c): libclang has no file-system callback, so the program's own
 * open, open64, openat and openat64 stand in front of the C library's, and
 * once installed refuse to open for reading anything that is not a regular
 * file or a directory (a FIFO would block the parse forever, /dev/zero
 * would feed it without end), whatever spelling reached it: an #include
 * computed by a macro, %:include, a spliced directive, __has_include,
 * #pragma GCC dependency, #embed.
 */
#ifndef KSTUB_FILEGUARD_H
#define KSTUB_FILEGUARD_H

#include <stddef.h>

/* Turns the guard on for the rest of the process (main.c, first thing). */
void ks_fileguard_install(void);

/* What one pass over the diagnostics said last (ks_fileguard_explain). */
typedef struct ks_fileguard_said {
    char *place;                 /* "file:line:col" */
    const void *refusal;
} ks_fileguard_said;

/* A diagnostic of libclang's (escaped, "file:line:col: error: …") that
 * speaks of a file the guard refused ("cannot open file 'X': …", "'X'
 * file not found") is said again as "'X' is a FIFO; kstub reads only
 * regular files" in *msg (freed and replaced). Returns 1 when rewritten,
 * -1 when it says again what the diagnostic before it in the same pass
 * said (same place, same file: print it not, count it still), 0
 * otherwise. said starts zeroed; ks_fileguard_said_free ends the pass. */
int ks_fileguard_explain(char **msg, ks_fileguard_said *said);
void ks_fileguard_said_free(ks_fileguard_said *said);

/* ---- copies of a file read before (fileguard_copies.c) ---- */

struct stat;

/* fd, just opened for reading as path (relative to dirfd), with the fstat
 * st: returned as it is, or closed and replaced by a descriptor of a file
 * read before (reopen opens it by its name) that has st's size and
 * modification second and the same bytes (holding "once"): the copy is
 * then remembered. */
int ks__fileguard_copy_of(int fd, const char *path, int dirfd, const struct stat *st,
                          int (*reopen)(const char *path, void *data), void *data);

/* A parse starts (kstub's own, of the input or a prelude): the files read
 * before are none but known (the headers of the prelude it loads, which
 * libclang reads from the PCH). Returns the parse before, for
 * ks_fileguard_parse_resume once a parse in between (a prelude's build)
 * is over. */
unsigned ks_fileguard_parse_begin(char *const *known, size_t nknown);
void ks_fileguard_parse_resume(unsigned parse);

/* How many copies the current parse took for a file read before. */
size_t ks_fileguard_ncopies(void);

/* Calls fn with the name of each copy the current parse took. */
void ks_fileguard_each_copy(void (*fn)(const char *path, void *data), void *data);

/* ---- what a parse asked the file system (fileguard_seen.c) ---- */

/* The kinds of answer, weakest first. */
#define KS_SEEN_ABSENT 0         /* not there (ENOENT, ENOTDIR): must stay so */
#define KS_SEEN_FOUND 1          /* stat or access found it */
#define KS_SEEN_LISTED 2         /* a directory opened (listed); mtime its own then */
#define KS_SEEN_READ 3           /* a file opened for reading */

/* Keeps (1) or stops keeping (0) every name opened for reading, stat'ed or
 * access'ed, with its answer; off until asked. */
void ks_fileguard_record(int on);
struct timespec;
/* Calls fn for each name kept, with its strongest answer. */
void ks_fileguard_each_seen(void (*fn)(const char *path, int kind, const struct timespec *mtime, void *data),
                            void *data);
/* Whether names are being kept now. */
int ks_fileguard_recording(void);
/* A new mark: the names asked from now on (again or first) are the
 * mark's, for ks_fileguard_each_seen_since (the host trials' cache). */
unsigned long ks_fileguard_mark(void);
void ks_fileguard_each_seen_since(unsigned long mark,
                                  void (*fn)(const char *path, int kind, const struct timespec *mtime, void *data),
                                  void *data);
/* Whether something could not be kept (out of memory) or a name was both
 * missing and found: then the record is no basis for a result. */
int ks_fileguard_seen_incomplete(void);
/* fileguard.c's open tells it each outcome (fd, or -1 and err). */
void ks__fileguard_saw_open(int dirfd, const char *path, int flags, int fd, int err);

#endif /* KSTUB_FILEGUARD_H */
