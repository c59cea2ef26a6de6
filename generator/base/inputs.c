/*
 * inputs.c — the files one run reads: remembered by device and inode as
 * they are read (so main.c can refuse an output that would replace any of
 * them, whatever name either goes by), and the include pre-scan that finds
 * a FIFO or a device among the input's headers before libclang's blocking
 * open would wait on it forever.
 */
#include "inputs.h"

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

void ks_inputs_forget(void)
{
    for (size_t i = 0; i < ninputs; i++)
        free(inputs[i].path);
    free(inputs);
    inputs = NULL;
    ninputs = 0;
}

/* ---- the include pre-scan ------------------------------------------------------------------- */

/* Enough for any project; a tree larger than this is not followed further
 * (libclang still parses it; only the FIFO check stops there). */
#define KS_PRESCAN_MAX_FILES 4096

typedef struct scan_file {
    char *path;
    dev_t dev;
    ino_t ino;
} scan_file;

typedef struct prescan {
    const char **dirs;         /* the search path for <...>, after the includer's own for "..." */
    unsigned char *toolkit;    /* per dir: inside the CUDA toolkit (looked up, not followed) */
    size_t ndirs;
    char *cuda_real;           /* the toolkit's real path, or NULL */
    char **owned;              /* the CPATH pieces */
    size_t nowned;
    scan_file *files;          /* every file reached, scanned in order */
    size_t nfiles;
    int errors;
} prescan;

/* Whether dir is the toolkit's or below it: its headers are the toolkit's
 * own (a -I or -isystem of CUDA's include folder is common in compile
 * commands), so the scan does not read through them. */
static int in_toolkit(const prescan *p, const char *dir)
{
    if (!p->cuda_real)
        return 0;
    char *real = realpath(dir, NULL);
    size_t n = strlen(p->cuda_real);
    int in = real && strncmp(real, p->cuda_real, n) == 0 && (real[n] == '/' || real[n] == '\0');
    free(real);
    return in;
}

static void add_dir(prescan *p, const char *dir, int own)
{
    p->dirs = ks_xrealloc(p->dirs, (p->ndirs + 1) * sizeof *p->dirs);
    p->toolkit = ks_xrealloc(p->toolkit, p->ndirs + 1);
    p->toolkit[p->ndirs] = (unsigned char)in_toolkit(p, dir);
    p->dirs[p->ndirs++] = dir;
    if (own) {
        p->owned = ks_xrealloc(p->owned, (p->nowned + 1) * sizeof *p->owned);
        p->owned[p->nowned++] = (char *)dir;
    }
}

/* CPATH and CPLUS_INCLUDE_PATH, as clang reads them: ':'-separated, an
 * empty piece the working directory. */
static void add_env_dirs(prescan *p, const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return;
    for (;;) {
        size_t n = strcspn(v, ":");
        add_dir(p, n ? ks_xasprintf("%.*s", (int)n, v) : ks_xstrdup("."), 1);
        if (!v[n])
            break;
        v += n + 1;
    }
}

static const char *file_kind(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Queues path for scanning unless it was reached before. */
static void add_file(prescan *p, const char *path, const struct stat *st)
{
    for (size_t i = 0; i < p->nfiles; i++)
        if (p->files[i].dev == st->st_dev && p->files[i].ino == st->st_ino)
            return;
    if (p->nfiles >= KS_PRESCAN_MAX_FILES)
        return;
    p->files = ks_xrealloc(p->files, (p->nfiles + 1) * sizeof *p->files);
    p->files[p->nfiles].path = ks_xstrdup(path);
    p->files[p->nfiles].dev = st->st_dev;
    p->files[p->nfiles].ino = st->st_ino;
    p->nfiles++;
}

/* Looks one #include up as clang does: "name" in the includer's directory
 * first, then each search directory; the first entry that exists and is
 * not a directory is the one clang opens. */
static void resolve(prescan *p, const char *includer, unsigned line, unsigned col, const char *name,
                    size_t len, int quoted)
{
    char *want = ks_xasprintf("%.*s", (int)len, name);
    size_t ncand = p->ndirs + 1;
    for (size_t i = 0; i < ncand; i++) {
        char *cand;
        if (want[0] == '/') {
            if (i > 0)
                break;
            cand = ks_xstrdup(want);
        } else if (i == 0) {
            if (!quoted)
                continue;
            const char *slash = strrchr(includer, '/');
            cand = slash ? ks_xasprintf("%.*s/%s", (int)(slash - includer), includer, want)
                         : ks_xstrdup(want);
        } else {
            cand = ks_xasprintf("%s/%s", p->dirs[i - 1], want);
        }
        struct stat st;
        int found = stat(cand, &st) == 0 && !S_ISDIR(st.st_mode);
        if (found && S_ISREG(st.st_mode)) {
            if (i == 0 || !p->toolkit[i - 1])
                add_file(p, cand, &st);
        } else if (found) {
            ks_error_at(includer, line, col, "#include %c%s%c is '%s', %s: refusing to parse "
                        "(reading it would wait for a writer, or never end)", quoted ? '"' : '<',
                        want, quoted ? '"' : '>', cand, file_kind(st.st_mode));
            p->errors++;
        }
        free(cand);
        if (found)
            break;
    }
    free(want);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r';
}

/* Past blanks and block comments on this line (a comment is a space to
 * the preprocessor: "/ * c * / #include" is a directive). */
static const char *skip_space(const char *s, const char *end)
{
    for (;;) {
        while (s < end && is_blank(*s))
            s++;
        if (s + 1 < end && s[0] == '\\' && s[1] == '\n') {
            s += 2;
            continue;
        }
        if (s + 1 < end && s[0] == '/' && s[1] == '*') {
            const char *close = s + 2;
            while (close + 1 < end && !(close[0] == '*' && close[1] == '/'))
                close++;
            if (close + 1 >= end)
                return end;
            s = close + 2;
            continue;
        }
        return s;
    }
}

/* Every "#include", "#include_next" and "#import" line of one file. */
static void scan_text(prescan *p, const char *path, const char *text, size_t len)
{
    const char *end = text + len;
    unsigned line = 1;
    for (const char *s = text; s < end; line++) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        const char *stop = eol ? eol : end;
        const char *q = skip_space(s, stop);
        if (q < stop && *q == '#') {
            q = skip_space(q + 1, stop);
            size_t n = 0;
            while (q + n < stop && ((q[n] >= 'a' && q[n] <= 'z') || q[n] == '_'))
                n++;
            if ((n == 7 && memcmp(q, "include", 7) == 0) ||
                (n == 12 && memcmp(q, "include_next", 12) == 0) ||
                (n == 6 && memcmp(q, "import", 6) == 0)) {
                q = skip_space(q + n, stop);
                char close = q < stop && *q == '"' ? '"' : q < stop && *q == '<' ? '>' : 0;
                const char *name = q + 1;
                const char *last = close ? memchr(name, close, (size_t)(stop - name)) : NULL;
                if (last && last > name)
                    resolve(p, path, line, (unsigned)(q - s) + 1, name, (size_t)(last - name),
                            close == '"');
            }
        }
        s = eol ? eol + 1 : end;
    }
}

int ks_inputs_prescan(const ks_options *opts)
{
    prescan p;
    memset(&p, 0, sizeof p);
    size_t len;
    char *text = ks_peek_file(opts->input, &len);
    if (!text) {
        ks_error_at(opts->input, 0, 0, "cannot open: %s", ks_file_error());
        return -1;
    }
    p.cuda_real = opts->cuda_path ? realpath(opts->cuda_path, NULL) : NULL;
    for (size_t i = 0; i < opts->nincludes; i++)
        add_dir(&p, opts->includes[i], 0);
    add_env_dirs(&p, "CPATH");
    add_env_dirs(&p, "CPLUS_INCLUDE_PATH");
    scan_text(&p, opts->input, text, len);
    free(text);
    for (size_t i = 0; i < p.nfiles; i++) {
        text = ks_peek_file(p.files[i].path, &len);
        if (text)
            scan_text(&p, p.files[i].path, text, len);
        free(text);
    }
    for (size_t i = 0; i < p.nfiles; i++)
        free(p.files[i].path);
    for (size_t i = 0; i < p.nowned; i++)
        free(p.owned[i]);
    free(p.files);
    free(p.owned);
    free(p.dirs);
    free(p.toolkit);
    free(p.cuda_real);
    return p.errors ? -1 : 0;
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
