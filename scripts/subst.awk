# subst.awk — fills the @NAME@ slots of an .in file (kstub.pc.in,
# cmake/*.cmake.in) for `make install`. Each value comes from the
# environment variable KS_SUBST_NAME and is taken literally (no sed
# replacement syntax: '&', '|' and '\' are characters like any other), then
# escaped for the syntax of the file it lands in:
#
#   awk -v syntax=pc    pkg-config: every character but letters, digits and
#                       / . _ - + , : = @ % ^ ~ takes a '\', so that what
#                       pkg-config prints (--cflags, --libs and --variable
#                       alike) is read back by a shell, or a make recipe, as
#                       the path itself
#   awk -v syntax=cmake inside a "..." argument: '\', '"' and '$' take a '\'
#
# What pkg-config cannot carry at all ('$', '(', ')' and a newline: pkgconf
# prints them unescaped in --cflags/--libs, where the shell then reads them)
# the Makefile refuses before install writes anything. An @NAME@ with no
# KS_SUBST_NAME is left as it is.
function esc(v,    out, c, i) {
    out = ""
    for (i = 1; i <= length(v); i++) {
        c = substr(v, i, 1)
        if (syntax == "pc" && c !~ /[A-Za-z0-9\/._+,:=@%^~-]/) out = out "\\"
        else if (syntax == "cmake" && index("\\\"$", c)) out = out "\\"
        out = out c
    }
    return out
}
BEGIN {
    if (syntax != "pc" && syntax != "cmake") {
        print "subst.awk: syntax must be pc or cmake" > "/dev/stderr"
        exit 2
    }
}
{
    line = $0
    out = ""
    while (match(line, /@[A-Z_]+@/)) {
        name = substr(line, RSTART + 1, RLENGTH - 2)
        out = out substr(line, 1, RSTART - 1)
        if (("KS_SUBST_" name) in ENVIRON) out = out esc(ENVIRON["KS_SUBST_" name])
        else out = out substr(line, RSTART, RLENGTH)
        line = substr(line, RSTART + RLENGTH)
    }
    print out line
}
