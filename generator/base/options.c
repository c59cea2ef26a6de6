/*
 * options.c — the one reader of command-line options, for kstub and its
 * check and diff subcommands alike: "-X VALUE", "-XVALUE", "--opt VALUE",
 * "--opt=VALUE". A missing value is reported here and is a usage error for
 * the caller to return; nothing exits.
 */
#include "base/options.h"
#include "base/util.h"

#include <string.h>

int ks_option(int argc, char **argv, int *i, const char *opt, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(opt);
    *value = NULL;
    if (strncmp(a, opt, n) != 0)
        return 0;
    if (a[n] == '\0') {
        if (*i + 1 >= argc) {
            ks_error_at(NULL, 0, 0, "option '%s' needs a value", opt);
            *value = "";
            return -1;
        }
        *value = argv[++*i];
        return 0;
    }
    int long_opt = opt[0] == '-' && opt[1] == '-';
    if (long_opt && a[n] == '=') {
        *value = a + n + 1;
        return 0;
    }
    /* Single-dash options take their value joined: -Ipath, -MFfile. */
    if (!long_opt)
        *value = a + n;
    return 0;
}
