/*
 * testutil.h — what the Check suites share: running a suite (run_suite, here
 * in the header, so the runtime-side suites use it without linking
 * testutil.c) and, for the generator-side suites (tests/support/testutil.c, which
 * uses the generator's buffers), running a shell command and collecting its
 * output, writing a file and looking for text in an output, and a scratch
 * folder for a case that runs kstub in one.
 */
#ifndef KSTUB_TESTUTIL_H
#define KSTUB_TESTUTIL_H

#include <check.h>
#include <stdlib.h>

/* Runs every case of s (fork_mode: CK_FORK, or CK_FORK_GETENV for Check's
 * default), frees it, and returns EXIT_SUCCESS when no case failed,
 * EXIT_FAILURE otherwise: main's status. */
static inline int run_suite(Suite *s, enum fork_status fork_mode)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, fork_mode);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Runs a shell command (stderr joined to stdout); returns its exit status
 * (128 if it did not exit) and, when out is not NULL, its output, malloc'd.
 * Fails the current Check test if the command cannot be started. */
int run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes text to the file dir/name (its folder must exist); fails the current
 * test ("cannot write PATH") if it cannot be opened. */
void write_text_in(const char *dir, const char *name, const char *text);

/* Fail the current test unless text (an output) is there and holds needle
 * ("expected \"NEEDLE\" in: TEXT"), or is there and lacks it ("did not
 * expect ..."). */
void expect_has(const char *text, const char *needle);
void expect_lacks(const char *text, const char *needle);

/* The whole text of a file (malloc'd); fails the current test ("PATH: run
 * from the repository root") if it cannot be opened. */
char *read_text(const char *path);

/* The value of the environment variable name, or fallback when it is unset
 * or empty; env_path: the same as an absolute path (written into buf, of
 * PATH_MAX bytes), or as it is when realpath cannot resolve it. */
const char *env_or(const char *name, const char *fallback);
const char *env_path(const char *name, const char *fallback, char *buf);

/* A scratch folder for one case: scratch_make creates /tmp/kstub-TAG-XXXXXX
 * (its real path: the fault library compares it with /proc/self/fd links)
 * into scratch_dir, scratch_remove removes it with all it holds. The other
 * functions take a name relative to it: scratch_write writes a file (its
 * folder made first), scratch_read returns its text (malloc'd) or NULL,
 * scratch_exists says whether the name is there (a link counts),
 * scratch_fifo makes a FIFO there. */
extern char scratch_dir[128];
void scratch_make(const char *tag);
void scratch_remove(void);
void scratch_write(const char *name, const char *text);
char *scratch_read(const char *name);
int scratch_exists(const char *name);
void scratch_fifo(const char *name);

#endif
