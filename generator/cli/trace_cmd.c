/*
 * trace_cmd.c — `kstub trace FILE`: a trace file that libkstub's trace
 * check wrote (common/tracefmt.h) printed as JSON lines on stdout, one per
 * record in file order, a torn record as {"torn":true,…}
 * (docs/runtime.md). The rendering is common/trace_render.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "safefile.h"
#include "tracefmt.h"

static void trace_usage(FILE *f)
{
    fputs("usage: kstub trace FILE\n"
          "\n"
          "Prints the records of a trace file that libkstub wrote (KSTUB_CHECK=trace)\n"
          "as JSON lines, one per launch or device-variable access, in file order; a\n"
          "record its process did not finish is a line {\"torn\":true,...}.\n"
          "\n"
          "exit status: 0 printed; 1 the file cannot be read or is no trace; 2 usage error\n",
          f);
}

int ks_trace_main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        trace_usage(stdout);
        return 0;
    }
    if (argc != 2 || (argv[1][0] == '-' && argv[1][1])) {
        trace_usage(stderr);
        return 2;
    }
    int fd = ks__open_regular(AT_FDCWD, argv[1], 0, NULL);
    if (fd < 0) {
        fprintf(stderr, "kstub trace: error: %s: %s\n", argv[1],
                fd == KS__NOT_REGULAR ? "not a regular file" : strerror(errno));
        return 1;
    }
    char why[256];
    ks__trace_counts n;
    int rc = ks__trace_render(fd, stdout, &n, why, sizeof why);
    close(fd);
    if (rc != 0) {
        fprintf(stderr, "kstub trace: error: %s: %s\n", argv[1], why);
        return 1;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "kstub trace: error: standard output: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
