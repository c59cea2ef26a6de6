/*
 * checks_word.c — the one word of run-time check switches (KS_CHECK_* bits,
 * or KS__CHECK_BAD_ENV). check.c alone writes it (ks_checks_set, KSTUB_CHECK);
 * launch.c, global.c, pointers.c and trace.c read it with one relaxed load.
 * It lives on the ground floor so that its readers depend on no check code.
 */
#include "internal.h"

unsigned ks__checks;
