/*
 * report.c — the findings of kstub check and kstub diff, and the three
 * formats they are printed in (report.h): text as compilers write it, one
 * JSON document, GitHub workflow annotations. Every string a manifest
 * brought is escaped for the format it goes to.
 */
#include "drift/report.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* ---- findings ----------------------------------------------------------------------- */

static const char *const severity_names[] = {"note", "warning", "error"};

void ks_report_add(ks_report *r, ks_severity sev, const char *kind, const char *file,
                   unsigned line, unsigned col, const ks_sig_kern *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = ks_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = ks_xrealloc(r->v, r->cap * sizeof *r->v);
    }
    ks_finding *f = &r->v[r->n++];
    f->sev = sev;
    f->kind = kind;
    f->file = file ? ks_xstrdup(file) : NULL;
    f->line = line;
    f->col = col;
    f->kernel = k ? ks_xstrdup(k->name) : NULL;
    f->symbol = k && k->symbol ? ks_xstrdup(k->symbol) : NULL;
    f->message = msg;
    if (sev == KS_SEV_ERROR)
        r->breaking = 1;
    if (sev != KS_SEV_NOTE)
        r->changed = 1;
}

void ks_report_free(ks_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].file);
        free(r->v[i].kernel);
        free(r->v[i].symbol);
        free(r->v[i].message);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

int ks_format_parse(const char *s)
{
    if (strcmp(s, "text") == 0)
        return KS_FORMAT_TEXT;
    if (strcmp(s, "json") == 0)
        return KS_FORMAT_JSON;
    if (strcmp(s, "github") == 0)
        return KS_FORMAT_GITHUB;
    return -1;
}

/* Manifest strings (kernel names, paths) come from files anyone can write,
 * and CI logs treat a line that starts with "::" as a workflow command: no
 * control character or newline reaches the output raw. Text shows them as
 * C escapes (\n, \t, \x1b); a backslash stays as it is. */
static void put_control(FILE *out, unsigned char c)
{
    switch (c) {
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default: fprintf(out, "\\x%02x", c); break;
    }
}

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static void text_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (is_control((unsigned char)*s))
            put_control(out, (unsigned char)*s);
        else
            fputc(*s, out);
    }
}

/* GitHub's workflow-command escaping: data escapes %, CR, LF; properties
 * also ':' and ','. Other control characters as in text. */
static void gh_escape(FILE *out, const char *s, int property)
{
    for (; *s; s++) {
        switch (*s) {
        case '%': fputs("%25", out); break;
        case '\r': fputs("%0D", out); break;
        case '\n': fputs("%0A", out); break;
        case ':': fputs(property ? "%3A" : ":", out); break;
        case ',': fputs(property ? "%2C" : ",", out); break;
        default:
            if (is_control((unsigned char)*s))
                put_control(out, (unsigned char)*s);
            else
                fputc(*s, out);
            break;
        }
    }
}

int ks_report_status(const ks_report *r)
{
    return r->breaking ? KS_DRIFT_CHANGED | KS_DRIFT_BREAKING
                       : r->changed ? KS_DRIFT_CHANGED : KS_DRIFT_NONE;
}

static const char *result_word(int status)
{
    return status & KS_DRIFT_BREAKING ? "breaking"
           : status & KS_DRIFT_CHANGED ? "compatible" : "none";
}

void ks_report_print(const ks_report *r, ks_format fmt, const char *command, const char *summary,
                     const char *fix, int status)
{
    FILE *out = stdout;
    if (fmt == KS_FORMAT_JSON) {
        json_t *list = json_array();
        for (size_t i = 0; i < r->n; i++) {
            const ks_finding *f = &r->v[i];
            json_t *o = json_object();
            json_object_set_new(o, "severity", json_string(severity_names[f->sev]));
            json_object_set_new(o, "kind", json_string(f->kind));
            json_object_set_new(o, "file", f->file ? json_string(f->file) : json_null());
            json_object_set_new(o, "line", f->line ? json_integer(f->line) : json_null());
            json_object_set_new(o, "kernel", f->kernel ? json_string(f->kernel) : json_null());
            json_object_set_new(o, "symbol", f->symbol ? json_string(f->symbol) : json_null());
            json_object_set_new(o, "message", json_string(f->message));
            json_array_append_new(list, o);
        }
        json_t *root = json_pack("{s:s, s:s, s:i, s:o, s:o}", "command", command,
                                 "result", result_word(status), "exit_status", status,
                                 "findings", list, "fix", fix ? json_string(fix) : json_null());
        json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', out);
        json_decref(root);
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        const ks_finding *f = &r->v[i];
        if (fmt == KS_FORMAT_GITHUB) {
            fprintf(out, "::%s ", f->sev == KS_SEV_NOTE ? "notice" : severity_names[f->sev]);
            if (f->file) {
                fputs("file=", out);
                gh_escape(out, f->file, 1);
                if (f->line)
                    fprintf(out, ",line=%u", f->line);
                if (f->col)
                    fprintf(out, ",col=%u", f->col);
                fputs(",", out);
            }
            fprintf(out, "title=kstub %s::", command);
            gh_escape(out, f->message, 0);
            fputc('\n', out);
        } else {
            if (f->file) {
                text_escape(out, f->file);
                if (f->line)
                    fprintf(out, ":%u", f->line);
                if (f->line && f->col)
                    fprintf(out, ":%u", f->col);
            } else {
                fputs("kstub", out);
            }
            fprintf(out, ": %s: ", severity_names[f->sev]);
            text_escape(out, f->message);
            fputc('\n', out);
        }
    }
    if (fmt == KS_FORMAT_GITHUB) {
        if (fix && status) {
            fputs("::error title=kstub check::to fix, run: ", out);
            gh_escape(out, fix, 0);
            fputc('\n', out);
        }
        return;
    }
    text_escape(out, summary);
    fputc('\n', out);
    if (fix && status) {
        fputs("to fix, run:\n  ", out);
        text_escape(out, fix);
        fputc('\n', out);
    }
}

void ks_report_count(const ks_report *r, ks_buf *b)
{
    size_t errors = 0, warnings = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].sev == KS_SEV_ERROR)
            errors++;
        else if (r->v[i].sev == KS_SEV_WARNING)
            warnings++;
    }
    ks_buf_printf(b, "%zu breaking change%s, %zu compatible change%s", errors,
                  errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
}
