#!/usr/bin/env bash
# check-man3.sh — the library's man pages (man/man3/) against the library:
# every function libkstub.so exports (nm -D), every inline function and
# every public macro of include/kstub/kstub.h has a page, NAME.3, either a page of
# its own or a one-line ".so man3/PAGE.3" to its family's page, whose NAME
# section lists it. Each page has NAME, SYNOPSIS, DESCRIPTION, RETURN VALUE
# and EXAMPLE, names each of its names in its SYNOPSIS, and formats without
# warnings (groff -ww, and man --warnings where man is installed). Last it
# proves itself: with one page taken away it fails, naming the symbol.
#
# Run from the repository root by `make check-install`, with LIB set to the
# built libkstub.so.
set -u
LIB=${LIB:-build/lib/libkstub.so}
HDR=${HDR:-include/kstub/kstub.h}
DIR=${MAN3:-man/man3}
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "  FAIL  $*"; }

# The public names: exported functions, the header's inline functions, and
# its macros but the include guard and the KS__ ones (the library's own).
public_names() {
    { nm -D --defined-only "$LIB" | awk '$2 == "T" { print $3 }'
      sed -nE 's/^static inline [^(]*[ *](ks_[a-z0-9_]+)\(.*/\1/p' "$HDR"
      sed -nE 's/^#define ([A-Z][A-Z0-9_]*).*/\1/p' "$HDR" | grep -v -e '^KSTUB_H$' -e '^KS__'
    } | sort -u
}

# The names a page's NAME section lists (before the \-).
page_names() {
    sed -n '/^\.SH NAME/,/\\-/p' "$1" | sed -e '1d' -e 's/\\-.*//' | tr ', ' '\n\n' | grep -v '^$'
}

# missing_pages DIR: each public name without DIR/NAME.3, one a line.
missing_pages() {
    local n
    for n in $(public_names); do [ -e "$1/$n.3" ] || echo "$n"; done
}

names=$(public_names)
[ "$(wc -w <<<"$names")" -gt 40 ] || { echo "check-man3: found only $(wc -w <<<"$names") public names in $LIB and $HDR"; exit 1; }
for n in $(missing_pages "$DIR"); do bad "$n is public (libkstub.so or kstub.h) but has no page $DIR/$n.3"; done
[ -z "$(missing_pages "$DIR")" ] && ok

pages=0
for f in "$DIR"/*.3; do
    name=$(basename "$f" .3)
    if grep -q '^\.so ' "$f"; then
        # A link: one line, to a page here whose NAME lists this name.
        target=$(sed -n 's|^\.so man3/||p' "$f")
        if [ "$(wc -l <"$f")" -eq 1 ] && [ -f "$DIR/$target" ] && ! grep -q '^\.so ' "$DIR/$target" &&
           page_names "$DIR/$target" | grep -qx "$name"; then ok; else
            bad "$f: not one '.so man3/PAGE.3' line to a page whose NAME lists $name"; fi
        continue
    fi
    pages=$((pages + 1))
    page_names "$f" | grep -qx "$name" && ok || bad "$f: its NAME section does not list $name"
    for sec in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" EXAMPLE; do
        if grep -qx "\.SH \"*$sec\"*" "$f"; then ok; else bad "$f: section $sec is missing"; fi
    done
    synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$f" | sed -e 's/\\f[BIRP]//g' -e 's/"//g')
    for n in $(page_names "$f"); do
        grep -qE "(^|[^A-Za-z0-9_])$n([^A-Za-z0-9_]|$)" <<<"$synopsis" && ok || bad "$f: SYNOPSIS does not show $n"
        grep -qx "$n" <<<"$names" && ok || bad "$f: $n is in NAME but neither exported nor in kstub.h"
    done
    w=$(LC_ALL=C groff -man -ww -z "$f" 2>&1)
    [ -z "$w" ] && ok || bad "groff: $w"
    if command -v man >/dev/null; then
        w=$(cd "$DIR/.." && LC_ALL=C MANWIDTH=80 man --warnings -l "man3/$name.3" 2>&1 >/dev/null)
        [ -z "$w" ] && ok || bad "man --warnings: $w"
    fi
done

# ks_status_name(3) lists every status of KS_STATUS_MAP.
for st in $(sed -nE 's/^ *XX\(([A-Z_]+),.*/\1/p' "$HDR"); do
    grep -q "KS_$st\b" "$DIR/ks_status_name.3" && ok || bad "ks_status_name.3 does not list KS_$st"
done

# The check itself: a copy without one page (ks_graph_launch's link) must
# come out missing exactly that name.
tmp=$(mktemp -d) && cp -r "$DIR/." "$tmp/" && rm "$tmp/ks_graph_launch.3"
if [ "$(missing_pages "$tmp")" = ks_graph_launch ]; then ok; else
    bad "with ks_graph_launch.3 removed, the check reported '$(missing_pages "$tmp")'"; fi
rm -rf "$tmp"

echo "check-man3: $pass passed, $fail failed ($(wc -w <<<"$names") public names, $pages pages)"
[ "$fail" -eq 0 ]
