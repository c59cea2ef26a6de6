/*
 * diff_cmd.h — the `kstub diff` subcommand (diff_cmd.c).
 */
#ifndef KSTUB_DIFF_CMD_H
#define KSTUB_DIFF_CMD_H

/* kstub diff [--format=F] [--source PATH] OLD.json NEW.json: the diff
 * subcommand's main(), so it returns diff's exit status (a KS_DRIFT_* set). */
int ks_diff_main(int argc, char **argv);

#endif /* KSTUB_DIFF_CMD_H */
