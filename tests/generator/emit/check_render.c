/*
 * check_render.c — the template engine (generator/emit/render.c) on its own: small
 * templates over small trees of values, each case one feature of the subset
 * templates/ uses (values, filters, sections, inverted sections, comments,
 * named pieces, partials, the layout tags) and each refusal (unknown names, bad
 * nesting, the depth and work bounds), with the error it prints.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit/render.h"

/* The values the cases render: name, a flag on and one off, a list of two
 * params (each with a nested list of one dim), an empty list, and strings
 * that need escapes. */
static ks_tnode *tree(void)
{
    ks_tnode *root = ks_tn_new(NULL);
    ks_tn_set(root, "name", "%s", "vec_add");
    ks_tn_set(root, "nasty", "%s", "a */ \"b\\\nc");
    ks_tn_set(root, "blank", "%s", "");
    ks_tn_set(root, "keyword", "%s", "lambda");
    ks_tn_set(root, "launch_word", "%s", "stream");
    ks_tn_flag(root, "yes", 1);
    ks_tn_flag(root, "no", 0);
    ks_tval *list = ks_tn_list(root, "params");
    for (int i = 0; i < 2; i++) {
        ks_tnode *p = ks_tn_push(list, root);
        ks_tn_set(p, "param", "p%d", i);
        ks_tn_set(p, "type", "%s", i ? "unsigned long" : "int");
        ks_tn_flag(p, "last", i == 1);
        ks_tval *inner = ks_tn_list(p, "dims");
        ks_tn_set(ks_tn_push(inner, p), "dim", "%d", 10 + i);
    }
    ks_tn_list(root, "empty");
    return root;
}

/* The template's path (its folder is where {{> file}} looks first) and the
 * second folder for partials; the partial cases set them. */
static const char *name = "t.in";
static const char *partials = NULL;

/* Renders text over tree(); *out is the output (or NULL after an error),
 * *err what the engine printed on stderr. Returns ks_render's result. */
static int render(const char *text, char **out, char **err)
{
    ks_tnode *root = tree();
    ks_buf b = {0};
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *cap = tmpfile();
    ck_assert_ptr_nonnull(cap);
    dup2(fileno(cap), STDERR_FILENO);
    int rc = ks_render(name, text, strlen(text), partials, root, &b);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    long n = ftell(cap);
    rewind(cap);
    char *e = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    if (n > 0)
        ck_assert_uint_eq(fread(e, 1, (size_t)n, cap), (size_t)n);
    fclose(cap);
    char *o = ks_buf_take(&b);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    ks_tn_free(root);
    return rc;
}

/* text renders without error to want. */
#define RENDERS(text, want)                                                              \
    do {                                                                                 \
        char *o_, *e_;                                                                   \
        ck_assert_msg(render((text), &o_, &e_) == 0, "refused: %s", e_);                 \
        ck_assert_str_eq(o_, (want));                                                    \
        ck_assert_str_eq(e_, "");                                                        \
        free(o_);                                                                        \
        free(e_);                                                                        \
    } while (0)

/* text is refused with an error located in t.in that holds what. */
#define REFUSED(text, what)                                                              \
    do {                                                                                 \
        char *e_;                                                                        \
        ck_assert_int_eq(render((text), NULL, &e_), -1);                                 \
        ck_assert_msg(strstr(e_, "t.in:") != NULL, "error not located: %s", e_);        \
        ck_assert_msg(strstr(e_, (what)) != NULL, "error lacks \"%s\": %s", (what), e_); \
        free(e_);                                                                        \
    } while (0)

/* The column (from 0) where needle starts on its line of s. */
static long column_of(const char *s, const char *needle)
{
    const char *at = strstr(s, needle);
    ck_assert_msg(at != NULL, "\"%s\" not in:\n%s", needle, s);
    const char *line = at;
    while (line > s && line[-1] != '\n')
        line--;
    return at - line;
}

/* ---- values and filters ---------------------------------------------------------- */

START_TEST(value_as_it_is)
{
    RENDERS("a {{name}} b", "a vec_add b");
    RENDERS("{{ name }}", "vec_add");       /* spaces inside the braces */
    RENDERS("no tags at all\n", "no tags at all\n");
}
END_TEST

START_TEST(comment_filter)
{
    char *o;
    ck_assert_int_eq(render("/* {{nasty:comment}} */", &o, NULL), 0);
    /* One comment: no closer inside it, no newline. */
    ck_assert_ptr_eq(strstr(o + 2, "*/"), o + strlen(o) - 2);
    ck_assert_ptr_null(strchr(o, '\n'));
    free(o);
}
END_TEST

START_TEST(string_filter)
{
    char *o;
    ck_assert_int_eq(render("\"{{nasty:string}}\"", &o, NULL), 0);
    ck_assert_str_eq(o, "\"a */ \\\"b\\\\\\012c\"");   /* control characters in octal */
    free(o);
}
END_TEST

START_TEST(include_filter)
{
    RENDERS("#include \"{{name:include}}.h\"", "#include \"vec_add.h\"");
    REFUSED("#include \"{{nasty:include}}\"", "cannot");
}
END_TEST

/* A type's spelling as part of a C name (the struct a wrong pointer
 * argument is reported against under clang, header.h.in). */
START_TEST(ident_filter)
{
    RENDERS("{{#params}}x_{{type:ident}}_y {{/params}}", "x_int_y x_unsigned_long_y ");
    RENDERS("{{nasty:ident}}", "a_b_c");
    RENDERS("{{name:ident}}", "vec_add");
}
END_TEST

/* A name as Python spells it (templates/python/): a Python keyword gets a trailing '_'. */
START_TEST(py_filter)
{
    RENDERS("{{keyword:py}}", "lambda_");
    RENDERS("{{name:py}}", "vec_add");
    RENDERS("{{#params}}{{param:py}} {{/params}}", "p0 p1 ");
    RENDERS("{{keyword:py_param}} {{launch_word:py_param}} {{launch_word:py}}", "lambda_ stream_ stream");
}
END_TEST

START_TEST(unknown_filter)
{
    REFUSED("{{name:shout}}", "unknown filter ':shout' (comment, string, include, ident, py, py_param)");
}
END_TEST

START_TEST(unknown_name)
{
    REFUSED("x {{nmae}} y", "unknown name 'nmae'");
    REFUSED("{{params}}", "'params' is a list");
}
END_TEST

START_TEST(comment_tag_dropped)
{
    RENDERS("a{{! a comment }}b", "ab");
    RENDERS("a\n{{! alone on its line }}\nb\n", "a\nb\n");
}
END_TEST

/* ---- sections ---------------------------------------------------------------- */

START_TEST(section_repeats_per_item)
{
    RENDERS("{{#params}}{{param}};{{/params}}", "p0;p1;");
    /* Names of the enclosing scopes stay visible inside an item. */
    RENDERS("{{#params}}{{name}}.{{param}} {{/params}}", "vec_add.p0 vec_add.p1 ");
    /* A nested list. */
    RENDERS("{{#params}}{{param}}[{{#dims}}{{dim}}{{/dims}}]{{/params}}", "p0[10]p1[11]");
    RENDERS("{{#empty}}never{{/empty}}", "");
}
END_TEST

START_TEST(section_on_a_value)
{
    RENDERS("{{#yes}}shown{{/yes}}", "shown");
    RENDERS("{{#no}}hidden{{/no}}", "");
    RENDERS("{{#blank}}hidden{{/blank}}", "");
    RENDERS("{{#params}}{{param}}{{^last}}, {{/last}}{{/params}}", "p0, p1");
}
END_TEST

START_TEST(inverted_section)
{
    RENDERS("{{^empty}}none{{/empty}}", "none");
    RENDERS("{{^params}}none{{/params}}", "");
    RENDERS("{{^no}}off{{/no}}{{^yes}}on{{/yes}}", "off");
}
END_TEST

START_TEST(standalone_section_lines)
{
    /* A section tag alone on its line takes the line with it. */
    RENDERS("begin\n{{#yes}}\ninside\n{{/yes}}\nend\n", "begin\ninside\nend\n");
    RENDERS("begin\n{{#params}}\n  {{param}}\n{{/params}}\nend\n", "begin\n  p0\n  p1\nend\n");
}
END_TEST

START_TEST(bad_nesting)
{
    REFUSED("{{#params}}x", "section 'params' is never closed");
    REFUSED("x{{/params}}", "closes no section");
    REFUSED("{{#params}}{{#yes}}{{/params}}{{/yes}}", "");
    REFUSED("a {{name", "unterminated '{{'");
}
END_TEST

START_TEST(depth_bound)
{
    /* 65 nested sections: one past the bound. */
    char text[65 * 20 + 1] = "";
    for (int i = 0; i < 65; i++)
        strcat(text, "{{#yes}}");
    for (int i = 0; i < 65; i++)
        strcat(text, "{{/yes}}");
    REFUSED(text, "sections nest deeper than 64");
}
END_TEST

START_TEST(work_bound)
{
    /* 40 nested iterations of two items: 2^40 renders, stopped at the budget. */
    char text[40 * 24 + 1] = "";
    for (int i = 0; i < 40; i++)
        strcat(text, "{{#params}}");
    strcat(text, "x");
    for (int i = 0; i < 40; i++)
        strcat(text, "{{/params}}");
    REFUSED(text, "rendering stopped after");
}
END_TEST

/* ---- named pieces ------------------------------------------------------------- */

START_TEST(piece_defined_and_used)
{
    /* The definition writes nothing (its line goes with it); each use is
     * filled from the values in scope where it stands. */
    RENDERS("{{*decl}}{{type}} {{param}}{{/decl}}\n{{#params}}{{decl}};{{/params}}",
            "int p0;unsigned long p1;");
    RENDERS("{{*hello}}hi {{name}}{{/hello}}[{{hello}}]", "[hi vec_add]");
}
END_TEST

START_TEST(piece_takes_no_filter)
{
    REFUSED("{{*hello}}hi{{/hello}}{{hello:string}}", "is a piece of template: no filter");
}
END_TEST

START_TEST(value_wins_over_piece)
{
    /* A value of the same name is the value: pieces fill only where no value has the name. */
    RENDERS("{{*name}}piece{{/name}}{{name}}", "vec_add");
}
END_TEST

/* ---- layout tags ---------------------------------------------------------------- */

START_TEST(pad_to_column)
{
    char *o;
    ck_assert_int_eq(render("int{{|12}}x;\nunsigned long long{{|12}}y;\n", &o, NULL), 0);
    ck_assert_int_eq(column_of(o, "x;"), 12);
    /* Past the column: one space at least. */
    ck_assert_ptr_nonnull(strstr(o, "unsigned long long y;"));
    free(o);
    REFUSED("a{{|x}}b", "'{{|N}}' takes a column number");
}
END_TEST

START_TEST(hang_column)
{
    char *o;
    ck_assert_int_eq(render("void f({{=}}int a,\n{{+}}int b);\n", &o, NULL), 0);
    ck_assert_str_eq(o, "void f(int a,\n       int b);\n");
    free(o);
}
END_TEST

START_TEST(aligned_group)
{
    char *o;
    ck_assert_int_eq(render("{{[}}\n{{#params}}\n{{type}}{{>}}{{<}}{{param}};\n{{/params}}\n{{]}}\n", &o, NULL), 0);
    /* The names fall in one column, one space after the widest type. */
    ck_assert_int_eq(column_of(o, "p0;"), column_of(o, "p1;"));
    ck_assert_int_eq(column_of(o, "p1;"), (long)strlen("unsigned long") + 1);
    free(o);
    REFUSED("{{[}}\n{{[}}\n{{]}}\n{{]}}\n", "inside a group");
    REFUSED("{{]}}\n", "closes no group");
    REFUSED("{{[}}\nx\n", "is never closed");
    REFUSED("a{{>}}b\n", "needs a '{{<}}' after it");
}
END_TEST

START_TEST(escapes_for_c)
{
    char *s = ks_escape_string("a\"b\\c\nd");
    ck_assert_str_eq(s, "a\\\"b\\\\c\\012d");
    free(s);
    char *c = ks_escape_comment("x */ y\nz");
    ck_assert_ptr_null(strstr(c, "*/"));
    ck_assert_ptr_null(strchr(c, '\n'));
    free(c);
    ck_assert_ptr_null(ks_include_unspellable("dir/name.h"));
    ck_assert_ptr_nonnull(ks_include_unspellable("a\nb"));
    ck_assert_ptr_nonnull(ks_include_unspellable("a\"b"));
}
END_TEST

/* ---- partials: {{> file}} ---- */

static char dirs[2][64];
static char paths[2][160];

static void put_file(const char *dir, const char *file, const char *text)
{
    char p[160];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void partial_dirs(void)
{
    for (int i = 0; i < 2; i++) {
        snprintf(dirs[i], sizeof dirs[i], "/tmp/check-render-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dirs[i]));
        snprintf(paths[i], sizeof paths[i], "%s/t.in", dirs[i]);
    }
    name = paths[0];
    partials = dirs[1];
    put_file(dirs[0], "pieces.in", "{{! how a name is spelled }}\n{{*sp}}[{{name}}]{{/sp}}\n");
    put_file(dirs[0], "word.in", "Z");
    put_file(dirs[0], "self.in", "{{> self.in}}");
    put_file(dirs[0], "bad.in", "ok\n{{bogus}}\n");
    put_file(dirs[0], "nested.in", "{{> pieces.in}}");
    put_file(dirs[1], "word.in", "W");
    put_file(dirs[1], "far.in", "F");
}

static void partial_dirs_gone(void)
{
    const char *files[] = {"pieces.in", "word.in", "self.in", "bad.in", "nested.in", "far.in"};
    for (int i = 0; i < 2; i++) {
        for (size_t j = 0; j < sizeof files / sizeof *files; j++) {
            char p[160];
            snprintf(p, sizeof p, "%s/%s", dirs[i], files[j]);
            unlink(p);
        }
        rmdir(dirs[i]);
    }
    name = "t.in";
    partials = NULL;
}

START_TEST(partial_spliced_in)
{
    /* alone on its line, the tag takes the line; the partial's pieces are the template's */
    RENDERS("{{> pieces.in}}\nx{{sp}}\n", "x[vec_add]\n");
    RENDERS("a{{>word.in}}b\n", "aZb\n");
    RENDERS("{{> nested.in}}\n{{#params}}{{sp}}{{/params}}\n", "[vec_add][vec_add]\n");
    /* the template's own folder first, then the second folder */
    RENDERS("{{> word.in}}{{> far.in}}\n", "ZF\n");
    /* {{>}} with no name is still the pad */
    RENDERS("{{[}}\na{{>}}{{<}}b\n{{]}}\n", "a b\n");
}
END_TEST

START_TEST(partial_refused)
{
    REFUSED("x\n{{> nope.in}}\n", "t.in:2:1: error: cannot read partial 'nope.in'");
    REFUSED("{{> ../t.in}}\n", "a partial is a file name in the template's folder");
    char *e;
    ck_assert_int_eq(render("{{> self.in}}\n", NULL, &e), -1);
    ck_assert_msg(strstr(e, "/self.in:1:1: error: partials nest deeper than 8") != NULL, "%s", e);
    free(e);
    /* an error inside a partial is located there; after one, in the template */
    ck_assert_int_eq(render("{{> bad.in}}\n", NULL, &e), -1);
    ck_assert_msg(strstr(e, "/bad.in:2:1: error: unknown name 'bogus'") != NULL, "%s", e);
    free(e);
    REFUSED("{{> word.in}}\n\n{{oops}}\n", "t.in:3:1: error: unknown name 'oops'");
}
END_TEST

static Suite *render_suite(void)
{
    Suite *s = suite_create("render");
    TCase *v = tcase_create("values");
    tcase_add_test(v, value_as_it_is);
    tcase_add_test(v, comment_filter);
    tcase_add_test(v, string_filter);
    tcase_add_test(v, include_filter);
    tcase_add_test(v, ident_filter);
    tcase_add_test(v, py_filter);
    tcase_add_test(v, unknown_filter);
    tcase_add_test(v, unknown_name);
    tcase_add_test(v, comment_tag_dropped);
    tcase_add_test(v, escapes_for_c);
    suite_add_tcase(s, v);
    TCase *sec = tcase_create("sections");
    tcase_add_test(sec, section_repeats_per_item);
    tcase_add_test(sec, section_on_a_value);
    tcase_add_test(sec, inverted_section);
    tcase_add_test(sec, standalone_section_lines);
    tcase_add_test(sec, bad_nesting);
    tcase_add_test(sec, depth_bound);
    tcase_add_test(sec, work_bound);
    tcase_set_timeout(sec, 60);
    suite_add_tcase(s, sec);
    TCase *p = tcase_create("pieces");
    tcase_add_test(p, piece_defined_and_used);
    tcase_add_test(p, piece_takes_no_filter);
    tcase_add_test(p, value_wins_over_piece);
    suite_add_tcase(s, p);
    TCase *inc = tcase_create("partials");
    tcase_add_checked_fixture(inc, partial_dirs, partial_dirs_gone);
    tcase_add_test(inc, partial_spliced_in);
    tcase_add_test(inc, partial_refused);
    suite_add_tcase(s, inc);
    TCase *l = tcase_create("layout");
    tcase_add_test(l, pad_to_column);
    tcase_add_test(l, hang_column);
    tcase_add_test(l, aligned_group);
    suite_add_tcase(s, l);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(render_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
