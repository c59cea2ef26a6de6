/*
 * cache_cmd.h — the `kstub cache` subcommand (cache_cmd.c).
 */
#ifndef KSTUB_CACHE_CMD_H
#define KSTUB_CACHE_CMD_H

/* `kstub cache [--stats|--prune|--clear] ...`; argv[0] is "cache". */
int ks_cache_main(int argc, char **argv);

#endif /* KSTUB_CACHE_CMD_H */
