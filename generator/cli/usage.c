/*
 * usage.c — kstub's help texts: kstub --help (every option of generating,
 * --list and the subcommands' synopses) and kstub check --help, their
 * option lists printed from the one table (optable.c). The cache and diff
 * subcommands print their own (cachecmd.c, drift.c).
 */
#include "cli/usage.h"
#include "cli/optable.h"

#include <stdio.h>

void ks_usage(FILE *f)
{
    fputs("usage: kstub [options] INPUT.cu -o OUTBASE\n"
          "       kstub --list [--all] [--format=F] [options] INPUT.cu\n"
          "       kstub check [options] INPUT.cu -o OUTBASE\n"
          "       kstub diff [--format=F] [--source PATH] OLD.json NEW.json\n"
          "       kstub cache [--stats | --clear | --prune [--max-size SIZE] | --warm ...] [--cache-dir DIR]\n"
          "       kstub trace FILE\n"
          "       kstub version\n"
          "\n"
          "Generates typed C launch stubs for every __global__ kernel in INPUT.cu:\n"
          "OUTBASE.h (declarations) and OUTBASE.c (definitions, linked with libkstub).\n"
          "Output is deterministic and each file is written only when its content changed.\n"
          "\n"
          "options:\n",
          f);
    ks_opt_print(f, KS_SEC_OPTIONS, KS_FOR_GEN | KS_FOR_LIST);
    fputs("\ndepfiles (as gcc):\n", f);
    ks_opt_print(f, KS_SEC_DEPFILES, KS_FOR_GEN);
    fputs("\n"
          "kstub check [options] INPUT.cu -o OUTBASE [--format=F]\n"
          "  Regenerates in memory with the same options and compares with the files on\n"
          "  disk; writes nothing. With --manifest, reports changes kernel by kernel against\n"
          "  the manifest on disk, and prints the command that brings the files up to date;\n"
          "  see kstub check --help.\n",
          f);
    ks_opt_print(f, KS_SEC_CHECK, KS_FOR_CHECK);
    fputs("\n"
          "kstub cache [--stats | --clear | --prune [--max-size SIZE] | --warm ...] [--cache-dir DIR]\n"
          "  Reports the prelude and NVRTC cache, removes least recently used entries\n"
          "  until it is under its cap ($KSTUB_CACHE_SIZE, default 2G; generating keeps\n"
          "  it there too), or everything, or builds a base prelude ahead (--warm OPTIONS);\n"
          "  see kstub cache --help.\n"
          "\n"
          "kstub diff OLD.json NEW.json\n"
          "  Classifies each change between two manifests as breaking (error) or\n"
          "  compatible (warning); see kstub diff --help.\n"
          "\n",
          f);
    ks_opt_print(f, KS_SEC_FORMAT, KS_FOR_LIST | KS_FOR_CHECK);
    fputs("\n"
          "exit status: 0 success / up to date / no change; 1 error; 2 usage error;\n"
          "check and diff: 4 out of date or compatible changes only, 12 breaking changes\n",
          f);
}

void ks_check_usage(FILE *f)
{
    fputs("usage: kstub check [options] INPUT.cu -o OUTBASE\n"
          "\n"
          "Regenerates in memory with the same options as the command that generated the\n"
          "files and compares with the files on disk; writes nothing. With --manifest,\n"
          "reports changes kernel by kernel against the manifest on disk, and prints the\n"
          "command that brings the files up to date.\n"
          "\n"
          "options:\n",
          f);
    ks_opt_print(f, KS_SEC_OPTIONS, KS_FOR_CHECK);
    ks_opt_print(f, KS_SEC_DEPFILES, KS_FOR_CHECK);
    ks_opt_print(f, KS_SEC_CHECK, KS_FOR_CHECK);
    ks_opt_print(f, KS_SEC_FORMAT, KS_FOR_CHECK);
    fputs("\n"
          "exit status: 0 up to date; 1 error; 2 usage error; 4 out of date or compatible\n"
          "changes only; 12 breaking changes\n",
          f);
}
