/*
 * inputs.h — the files one run reads (inputs.c): each is remembered by
 * device and inode, so that no output can replace one (main.c refuses an
 * output that is any of them), and the input is read once before libclang
 * parses it, so that a FIFO or a device given as the input is refused
 * instead of blocking the parse forever.
 *
 * Who notes what: ks_read_file (util.c) every file kstub reads itself (the
 * .cu, templates, the image, compile_commands.json, options files, the
 * toolkit's cuda.h); ks_deps_hook (depfile.c) every file libclang opened
 * for the translation unit, the precompiled prelude's headers included.
 */
#ifndef KSTUB_INPUTS_H
#define KSTUB_INPUTS_H

#include "base/options.h"
#include "base/util.h"

#include <sys/types.h>

/* Remembers that the run read path, the file with device dev and inode ino. */
void ks_inputs_note(const char *path, dev_t dev, ino_t ino);
/* The same, by name: the file path names now (nothing when it is gone). */
void ks_inputs_note_path(const char *path);
/* The name a remembered input with this device and inode was read under,
 * or NULL when the run read no such file. */
const char *ks_inputs_find(dev_t dev, ino_t ino);
/* Calls fn with the name of each remembered input, in the order noted. */
void ks_inputs_each(void (*fn)(const char *path, void *data), void *data);
/* Forgets every input (the strings handed out by ks_inputs_find with them). */
void ks_inputs_forget(void);

/* Reads opts->input as every input is (a FIFO or a device refused, never
 * waited on), before libclang parses it: an error naming it and -1 when it
 * cannot be read, else 0. What it includes, in any spelling, is guarded
 * where libclang opens it (generator/front/fileguard.c). */
int ks_input_readable(const ks_options *opts);

/* Reads a whole regular file as util.h's ks_peek_file does (never
 * blocking; NULL with the reason in ks_file_error()) and remembers it as
 * an input of the run (ks_inputs_note), so that no output may replace it. */
char *ks_read_file(const char *path, size_t *size);

#endif /* KSTUB_INPUTS_H */
