/*
 * fuzz_gen_compdb.c — libFuzzer target for the compile_commands reader
 * (generator/compdb.c): the input is written as compile_commands.json into a
 * private temporary directory beside an empty k.cu, and ks_compdb_load reads
 * it for that file, so the JSON walk, the shell splitting of "command", the
 * options files and the nvcc option translation all see fuzzed text.
 * Seeds name the file as "k.cu" with "directory": "." (relative to the
 * database) so entries match.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/compdb.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char *db_path, *input_path;

static void setup(void)
{
    strcpy(dir, "/tmp/ks-fuzz-compdb-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    db_path = ks_xasprintf("%s/compile_commands.json", dir);
    input_path = ks_xasprintf("%s/k.cu", dir);
    FILE *f = fopen(input_path, "w");
    if (!f)
        abort();
    fclose(f);
    /* An options file the seeds may name: "@opts.rsp" / "-optf opts.rsp". */
    char *rsp = ks_xasprintf("%s/opts.rsp", dir);
    f = fopen(rsp, "w");
    if (!f)
        abort();
    fputs("-I inc \"-DA=a b\" -isystem 'sys dir' -std=c++17\n", f);
    fclose(f);
    free(rsp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db_path)
        setup();
    FILE *f = fopen(db_path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    ks_compdb db;
    memset(&db, 0, sizeof db);
    (void)ks_compdb_load(dir, input_path, &db);
    ks_compdb_free(&db);
    return 0;
}
