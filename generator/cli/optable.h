/*
 * optable.h — kstub's options as one table (optable.c), as lemon's
 * options[]: parse_args (main.c) matches the command line against it, and
 * kstub --help and kstub check --help print it. The bash completion and the
 * man page are checked against those help texts (tests/install/
 * check-completion.sh, check-man.sh), so an option added here and not there
 * fails make check-install.
 */
#ifndef KSTUB_OPTABLE_H
#define KSTUB_OPTABLE_H

#include <stdio.h>

typedef enum ks_opt_id {
    KS_OPT_HELP, KS_OPT_VERSION, KS_OPT_O, KS_OPT_LIST, KS_OPT_ALL, KS_OPT_MANIFEST,
    KS_OPT_EMBED, KS_OPT_EMBED_SOURCE, KS_OPT_SKIP_BODIES, KS_OPT_BODY_ERRORS, KS_OPT_CACHE_DIR,
    KS_OPT_NO_CACHE, KS_OPT_KERNELS_IN, KS_OPT_RDC, KS_OPT_I, KS_OPT_D, KS_OPT_U, KS_OPT_STD,
    KS_OPT_CUDA_PATH, KS_OPT_ARCH, KS_OPT_P, KS_OPT_T, KS_OPT_TARGET, KS_OPT_MD, KS_OPT_MMD, KS_OPT_MF,
    KS_OPT_MT, KS_OPT_MQ, KS_OPT_MP, KS_OPT_FIX_COMMAND, KS_OPT_FORMAT
} ks_opt_id;

/* How an option takes its value. */
typedef enum ks_opt_kind {
    KS_OPT_FLAG,    /* none: the spelling exactly */
    KS_OPT_VALUE,   /* "--opt V", "--opt=V"; "-X V", "-XV" */
    KS_OPT_PREFIX   /* the value joined after the spelling: -std=c++17 */
} ks_opt_kind;

/* Which commands take it (bits). */
enum { KS_FOR_GEN = 1, KS_FOR_LIST = 2, KS_FOR_CHECK = 4, KS_FOR_ALL = 7 };

/* Where --help shows it. */
typedef enum ks_opt_section { KS_SEC_OPTIONS, KS_SEC_DEPFILES, KS_SEC_CHECK, KS_SEC_FORMAT } ks_opt_section;

typedef struct ks_optdef {
    ks_opt_id id;
    const char *names;     /* its spellings, '|' between them; the first is the one shown */
    ks_opt_kind kind;
    const char *shown;     /* as --help shows it, e.g. "-o OUTBASE" */
    unsigned for_;         /* KS_FOR_* */
    ks_opt_section section;
    const char *help;      /* --help's text, lines of at most 56 columns, '\n' between */
} ks_optdef;

extern const ks_optdef ks_optdefs[];
extern const unsigned ks_noptdefs;

/* argv[*i] as an option of the table: NULL when it is none; else its entry,
 * with *value its value (NULL for a flag) and *spelled the spelling used,
 * *i past the value. A value missing at the end of the line is reported
 * (ks_error_at) and *value is NULL with *missing set. */
const ks_optdef *ks_opt_match(int argc, char **argv, int *i, const char **value,
                              const char **spelled, int *missing);

/* Prints the options of section taken by any command of for_ (KS_FOR_*),
 * as --help lays them out: the shown form, then the help in a column. */
void ks_opt_print(FILE *f, ks_opt_section section, unsigned for_);

#endif /* KSTUB_OPTABLE_H */
