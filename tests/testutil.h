/*
 * testutil.h — what the generator-side Check suites share: running a shell
 * command and collecting its output.
 */
#ifndef KSTUB_TESTUTIL_H
#define KSTUB_TESTUTIL_H

/* Runs a shell command (stderr joined to stdout); returns its exit status
 * (128 if it did not exit) and, when out is not NULL, its output, malloc'd.
 * Fails the current Check test if the command cannot be started. */
int run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
