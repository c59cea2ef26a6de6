/*
 * diff_cmd.c — `kstub diff [--format=F] [--source PATH] OLD.json NEW.json`:
 * its command line and usage, over drift/'s ks_diff_run (drift.c), which
 * compares the two manifests and prints the report.
 */
#include "cli/diff_cmd.h"
#include "drift/drift.h"
#include "base/options.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

static void diff_usage(FILE *f)
{
    fputs("usage: kstub diff [--format=text|json|github] [--source PATH] OLD.json NEW.json\n"
          "\n"
          "Compares two kstub manifests and classifies every change: breaking for\n"
          "existing callers (error) or compatible (warning).\n"
          "\n"
          "  --format=F       text (file:line:col: error: ..., the default), json, or github\n"
          "                   (workflow annotations)\n"
          "  --source PATH    the .cu path to name in diagnostics (default: the manifest's\n"
          "                   \"source\", a file name without directories)\n"
          "\n"
          "exit status: 0 no change, 4 compatible changes only, 12 breaking changes,\n"
          "             1 error (unreadable or invalid manifest), 2 usage error\n",
          f);
}

int ks_diff_main(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    const char *source = NULL, *v = NULL;
    int nfiles = 0, fmt = KS_FORMAT_TEXT, m;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            diff_usage(stdout);
            return 0;
        } else if ((m = ks_option(argc, argv, &i, "--format", &v)) != 0 || v) {
            if (m < 0)
                return KS_DRIFT_USAGE;
            if ((fmt = ks_format_parse(v)) < 0) {
                ks_error_at(NULL, 0, 0, "--format takes text, json or github, not '%s'", v);
                return KS_DRIFT_USAGE;
            }
        } else if ((m = ks_option(argc, argv, &i, "--source", &v)) != 0 || v) {
            if (m < 0)
                return KS_DRIFT_USAGE;      /* "--source" without a value */
            source = v;
        } else if (a[0] == '-' && a[1]) {
            ks_error_at(NULL, 0, 0, "kstub diff: unknown option '%s'", a);
            diff_usage(stderr);
            return KS_DRIFT_USAGE;
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            ks_error_at(NULL, 0, 0, "kstub diff takes two manifests, not more");
            return KS_DRIFT_USAGE;
        }
    }
    if (nfiles != 2) {
        diff_usage(stderr);
        return KS_DRIFT_USAGE;
    }
    return ks_diff_run(files[0], files[1], source, (ks_format)fmt);
}
