/*
 * inputs.h — the files one run reads (inputs.c): each is remembered by
 * device and inode, so that no output can replace one (main.c refuses an
 * output that is any of them), and the input's #include lines are looked
 * at before libclang opens them, so that a FIFO or a device among them is
 * refused instead of blocking the parse forever.
 *
 * Who notes what: ks_read_file (util.c) every file kstub reads itself (the
 * .cu, templates, the image, compile_commands.json, options files, the
 * toolkit's cuda.h); ks_deps_hook (depfile.c) every file libclang opened
 * for the translation unit, the precompiled prelude's headers included.
 */
#ifndef KSTUB_INPUTS_H
#define KSTUB_INPUTS_H

#include "options.h"
#include "util.h"

#include <sys/types.h>

/* Remembers that the run read path, the file with device dev and inode ino. */
void ks_inputs_note(const char *path, dev_t dev, ino_t ino);
/* The same, by name: the file path names now (nothing when it is gone). */
void ks_inputs_note_path(const char *path);
/* The name a remembered input with this device and inode was read under,
 * or NULL when the run read no such file. */
const char *ks_inputs_find(dev_t dev, ino_t ino);
/* Forgets every input (the strings handed out by ks_inputs_find with them). */
void ks_inputs_forget(void);

/* Reads opts->input and follows its #include "…" and <…> lines (each line
 * taken as written: inside #if 0 too, macros not expanded) through the
 * includer's directory, opts->includes, CPATH and CPLUS_INCLUDE_PATH, as
 * clang looks them up, into every header found there; the toolkit's and
 * the compiler's own headers are not followed. Refuses, with an error at
 * the #include line, a header that is not a regular file: libclang opens
 * what it includes with a blocking open, so a FIFO would stop the parse
 * until someone writes to it. Returns 0, or -1 after errors. */
int ks_inputs_prescan(const ks_options *opts);

/* Reads a whole regular file as util.h's ks_peek_file does (never
 * blocking; NULL with the reason in ks_file_error()) and remembers it as
 * an input of the run (ks_inputs_note), so that no output may replace it. */
char *ks_read_file(const char *path, size_t *size);

#endif /* KSTUB_INPUTS_H */
