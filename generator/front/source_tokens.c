/*
 * source_tokens.c — clang's tokens of a file as source.c keeps them
 * (ks_rtok), and the explicit instantiations a token list spells
 * ("template [__global__] RET NAME<ARGS>(PARAMS);"), for the written code
 * and for what a macro writes alike.
 */
#include "front/source_int.h"
#include "base/util.h"
#include "front/source.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ------------------------------------------------------------------------------------ */

void ks__tok_push(ks_rtok **a, size_t *n, size_t *cap, ks_rtok t)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *a = ks_xrealloc(*a, *cap * sizeof **a);
    }
    (*a)[(*n)++] = t;
}

int ks__tok_spelled(const ks_rtok *t, const char *word)
{
    size_t n = strlen(word);
    return t->n == n && memcmp(t->s, word, n) == 0;
}

/* The one-character punctuator a token is ('[' for "<:" too), or 0. */
char ks__tok_punct(const ks_rtok *t)
{
    if (t->kind != CXToken_Punctuation)
        return 0;
    if (t->n == 1)
        return t->s[0];
    if (t->n == 2) {
        static const char *const digraphs[] = {"<:[", ":>]", "<%{", "%>}", NULL};
        for (const char *const *d = digraphs; *d; d++)
            if (t->s[0] == (*d)[0] && t->s[1] == (*d)[1])
                return (*d)[2];
    }
    return 0;
}

int ks__tok_is_word(const ks_rtok *t)
{
    return t->kind == CXToken_Identifier || t->kind == CXToken_Keyword;
}

/* Tokens [from, to) as text, one space where white space stood. */
void ks__tokens_put(ks_buf *b, const ks_rtok *t, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (i > from && t[i].space)
            ks_buf_puts(b, " ");
        ks_buf_put(b, t[i].s, t[i].n);
    }
}

char *ks__tokens_text(const ks_rtok *t, size_t from, size_t to)
{
    ks_buf b = {0};
    ks__tokens_put(&b, t, from, to);
    if (!b.data)
        return ks_xstrdup("");
    return ks_buf_take(&b);
}

/* ---- explicit instantiations in a token list ------------------------------------------------ */

/* Index of the token closing the bracket opened at token i ('<' or '('),
 * or end. A ">>" closing two angles closes at once, and so does CUDA's
 * ">>>" (one token in CUDA, the end of a launch) closing three:
 * *half says how many of its '>' belong inside, 1 or 2 (set for '<' only;
 * 0 for a lone '>'). */
size_t ks__tok_matching(const ks_rtok *t, size_t i, size_t end, int *half)
{
    int angle = 0, paren = 0;
    char open = ks__tok_punct(&t[i]);
    *half = 0;
    for (size_t j = i; j < end; j++) {
        char c = ks__tok_punct(&t[j]);
        if (c == '(' || c == '[')
            paren++;
        else if (c == ')' || c == ']')
            paren--;
        else if (c == '<' && paren == 0)
            angle++;
        else if (c == '>' && paren == 0)
            angle--;
        else if (paren == 0 && t[j].kind == CXToken_Punctuation &&
                 (ks__tok_spelled(&t[j], ">>") || ks__tok_spelled(&t[j], ">>>"))) {
            int n = ks__tok_spelled(&t[j], ">>") ? 2 : 3;
            if (open == '<' && angle == n) {
                *half = n - 1;
                return j;
            }
            if (open == '<' && angle < n)
                return end;
            angle -= n;
            continue;
        }
        if ((open == '<' && angle == 0 && paren == 0) || (open == '(' && paren == 0))
            return j;
    }
    return end;
}

/* The return type: tokens [from, to) before the name less the specifiers
 * that are no part of a type, or what follows "->" in [after, end) when it
 * is written "auto NAME<...>(...) -> T"; "void" when nothing is left. */
static char *return_text(const ks_rtok *t, size_t from, size_t to, size_t after, size_t end)
{
    static const char *const specifiers[] = {"__global__", "__host__", "__device__", "__forceinline__",
                                             "__noinline__", "__inline__", "inline", "static",
                                             "extern", "constexpr", NULL};
    ks_buf b = {0};
    for (size_t i = from; i < to; i++) {
        int skip = 0;
        for (const char *const *w = specifiers; *w && !skip; w++)
            skip = ks__tok_spelled(&t[i], *w);
        if (skip)
            continue;
        if (b.len && t[i].space)
            ks_buf_puts(&b, " ");
        ks_buf_put(&b, t[i].s, t[i].n);
    }
    char *ret = b.data ? ks_buf_take(&b) : NULL;
    if (ret && strcmp(ret, "auto") == 0)
        for (size_t i = after; i < end; i++)
            if (t[i].kind == CXToken_Punctuation && ks__tok_spelled(&t[i], "->")) {
                free(ret);
                ret = ks__tokens_text(t, i + 1, end);
                break;
            }
    if (!ret || !*ret) {
        free(ret);
        ret = ks_xstrdup("void");
    }
    return ret;
}

void ks__add_inst(ks_explicit_inst **out, size_t *n, const ks_explicit_inst *in)
{
    if (*n == 0)
        *out = ks_xmalloc(4 * sizeof **out);
    else if (*n >= 4 && (*n & (*n - 1)) == 0)
        *out = ks_xrealloc(*out, *n * 2 * sizeof **out);
    (*out)[(*n)++] = *in;
}

/* Does token i start a declaration: the first, or after ';', '{' or '}'. */
static int at_declaration(const ks_rtok *t, size_t i)
{
    char c = i ? ks__tok_punct(&t[i - 1]) : ';';
    return c == ';' || c == '{' || c == '}';
}

/* Whether NAME at k is followed by "<ARGS>(PARAMS)" closing before the
 * ';' at end (a trailing return type may follow). */
static int written_args(const ks_rtok *t, size_t k, size_t end)
{
    int half, phalf;
    size_t close = ks__tok_matching(t, k + 1, end, &half);
    if (close >= end || close + 1 >= end || ks__tok_punct(&t[close + 1]) != '(')
        return 0;
    return ks__tok_matching(t, close + 1, end, &phalf) < end;
}

/* "template [specifiers] RET NAME(PARAMS);", the template's arguments
 * deduced from PARAMS, as C++ allows ([temp.explicit]: "template void
 * f(int *);"), between "template" at i and ';' at end: found with ARGS ""
 * (the reference is then "&NAME<>", which deduces them the same way). */
static void deduced(const ks_rtok *t, size_t i, size_t end, ks_explicit_inst **out, size_t *count)
{
    static const char *const not_names[] = {"__launch_bounds__", "__attribute__", "decltype", "alignas",
                                            "__declspec", "noexcept", "operator", "throw", NULL};
    if (end < i + 5 || ks__tok_punct(&t[end - 1]) != ')')
        return;
    size_t p = end - 1;
    for (int depth = 0; p > i; p--) {
        char c = ks__tok_punct(&t[p]);
        depth += c == ')' || c == ']';
        depth -= c == '(' || c == '[';
        if (depth == 0)
            break;
    }
    if (p <= i + 2 || ks__tok_punct(&t[p]) != '(' || !ks__tok_is_word(&t[p - 1]))
        return;
    for (const char *const *w = not_names; *w; w++)
        if (ks__tok_spelled(&t[p - 1], *w))
            return;
    size_t name_start = p - 1;
    while (name_start >= i + 3 && ks__tok_spelled(&t[name_start - 1], "::") &&
               t[name_start - 2].kind == CXToken_Identifier)
        name_start -= 2;
    if (name_start >= i + 2 && ks__tok_spelled(&t[name_start - 1], "::"))
        name_start--;
    if (name_start <= i + 1)
        return;                                 /* no return type: not a function's */
    ks_explicit_inst in;
    in.qname = ks__tokens_text(t, name_start, p);
    in.args = ks_xstrdup("");
    in.params = ks__tokens_text(t, p + 1, end - 1);
    in.ret = return_text(t, i + 1, name_start, end, end);
    in.start = t[i].start;
    in.end = t[end].end;
    ks__add_inst(out, count, &in);
}

/* "template [specifiers] RET NAME<ARGS>(PARAMS);" in t[0, n); skip[i] set
 * for tokens inside a macro's invocation (a "template" there is the
 * expansion's to find). Each found gets
 * start and end from its first and last token; with decl_only, only those
 * that begin a declaration. */
void ks__find_instantiations(const ks_rtok *t, size_t n, const unsigned char *skip, int decl_only,
                             ks_explicit_inst **out, size_t *count)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if ((skip && skip[i]) || !ks__tok_spelled(&t[i], "template") || ks__tok_punct(&t[i + 1]) == '<' ||
            (i > 0 && ks__tok_spelled(&t[i - 1], "extern")) || (decl_only && !at_declaration(t, i)))
            continue;
        /* "x.template f<T>(a);", "p->template", "T::template": the
         * disambiguator of a dependent name, never an instantiation */
        if (i > 0 && (ks__tok_spelled(&t[i - 1], ".") || ks__tok_spelled(&t[i - 1], "->") ||
                      ks__tok_spelled(&t[i - 1], "::")))
            continue;
        /* its other tokens may be macro invocations clang expands in the
         * reference too (__global__, an attribute macro); not its ';' */
        size_t end = i + 1;
        while (end < n && ks__tok_punct(&t[end]) != ';' && ks__tok_punct(&t[end]) != '{')
            end++;
        if (end >= n || ks__tok_punct(&t[end]) != ';' || (skip && skip[end]))
            continue;
        size_t k;
        for (k = i + 1; k + 1 < end; k++)
            if (ks__tok_is_word(&t[k]) && ks__tok_punct(&t[k + 1]) == '<')
                break;
        if (k + 1 >= end || !written_args(t, k, end)) {
            deduced(t, i, end, out, count);
            continue;
        }
        size_t name_start = k;
        while (name_start >= i + 3 && ks__tok_spelled(&t[name_start - 1], "::") &&
               t[name_start - 2].kind == CXToken_Identifier)
            name_start -= 2;
        if (name_start >= i + 2 && ks__tok_spelled(&t[name_start - 1], "::"))
            name_start--;
        int half, phalf;
        size_t close = ks__tok_matching(t, k + 1, end, &half);
        if (close >= end || close + 1 >= end || ks__tok_punct(&t[close + 1]) != '(')
            continue;
        size_t pclose = ks__tok_matching(t, close + 1, end, &phalf);
        if (pclose >= end)
            continue;
        ks_explicit_inst in;
        ks_buf a = {0};
        ks__tokens_put(&a, t, k + 2, close);
        ks_buf_puts(&a, half == 2 ? ">>" : half ? ">" : "");
        in.qname = ks__tokens_text(t, name_start, k + 1);
        in.args = a.data ? ks_buf_take(&a) : ks_xstrdup("");
        in.params = ks__tokens_text(t, close + 2, pclose);
        in.ret = return_text(t, i + 1, name_start, pclose + 1, end);
        in.start = t[i].start;
        in.end = t[end].end;
        ks__add_inst(out, count, &in);
    }
}

unsigned ks__file_offset(CXSourceLocation loc, CXFile *file)
{
    unsigned off = 0;
    clang_getSpellingLocation(loc, file, NULL, NULL, &off);
    return off;
}
