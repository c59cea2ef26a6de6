/*
 * inputs.c — the files one run reads: remembered by device and inode as
 * they are read (so main.c can refuse an output that would replace any of
 * them, whatever name either goes by), and the input itself read as every
 * input is before libclang opens it (a FIFO or a device among its headers
 * is refused where libclang opens it: generator/front/fileguard.c).
 */
#include "base/inputs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- what the run read ---------------------------------------------------------------------- */

typedef struct input_file {
    dev_t dev;
    ino_t ino;
    char *path;                /* the name it was first read under */
} input_file;

static input_file *inputs;
static size_t ninputs;

void ks_inputs_note(const char *path, dev_t dev, ino_t ino)
{
    if (ks_inputs_find(dev, ino))
        return;
    inputs = ks_xrealloc(inputs, (ninputs + 1) * sizeof *inputs);
    inputs[ninputs].dev = dev;
    inputs[ninputs].ino = ino;
    inputs[ninputs].path = ks_xstrdup(path);
    ninputs++;
}

void ks_inputs_note_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        ks_inputs_note(path, st.st_dev, st.st_ino);
}

const char *ks_inputs_find(dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < ninputs; i++)
        if (inputs[i].dev == dev && inputs[i].ino == ino)
            return inputs[i].path;
    return NULL;
}

void ks_inputs_each(void (*fn)(const char *path, void *data), void *data)
{
    for (size_t i = 0; i < ninputs; i++)
        fn(inputs[i].path, data);
}

void ks_inputs_forget(void)
{
    for (size_t i = 0; i < ninputs; i++)
        free(inputs[i].path);
    free(inputs);
    inputs = NULL;
    ninputs = 0;
}

/* ---- the input itself ------------------------------------------------------------------------ */

int ks_input_readable(const ks_options *opts)
{
    size_t len;
    char *text = ks_peek_file(opts->input, &len);
    if (!text) {
        ks_error_at(opts->input, 0, 0, "cannot open: %s", ks_file_error());
        return -1;
    }
    free(text);
    return 0;
}

char *ks_read_file(const char *path, size_t *size)
{
    dev_t dev;
    ino_t ino;
    char *text = ks_peek_file_id(path, size, &dev, &ino);
    if (text)
        ks_inputs_note(path, dev, ino);
    return text;
}
