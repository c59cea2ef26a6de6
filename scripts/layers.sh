#!/bin/sh
# scripts/layers.sh TREE OBJ... — checks one tree's objects (TREE is
# "generator" or "runtime", each with common/'s objects) against the floors
# and public headers scripts/floors.txt lists (docs/design.md draws them).
# It fails on
#   - a call up: an object takes a symbol that an object of a higher floor
#     defines (read with nm: each arrow is "A needs a symbol B defines");
#   - a circle: objects that call each other, directly or through others
#     (tsort finds the loops), on one floor too;
#   - an include out of bounds: a header of another folder that is private
#     to it (not on its folder's public line), of a higher floor, or of the
#     other tree. What each object read is its depfile's list (the
#     compiler's -MMD, X.d beside X.o), so a header pulled in through
#     another counts too;
#   - an object whose source has no floor in the file.
# Each problem is one line on stderr naming the caller and callee (object
# and symbol, or file:line and header) and both floors. Exits 1 if any;
# 0 when there is none. Its last line is a count in the form
# tests/suite.sh reads. tests/layers-check.sh plants each kind of breach.
set -eu
[ $# -gt 1 ] || { echo "usage: scripts/layers.sh TREE OBJ..." >&2; exit 2; }
floors=$(dirname "$0")/floors.txt
tree=$1
shift
[ -r "$floors" ] || { echo "layers: cannot read $floors" >&2; exit 2; }
grep -q "^$tree[[:space:]]" "$floors" || { echo "layers: no tree '$tree' in $floors" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for o in "$@"; do
    nm --defined-only "$o" | awk -v o="$o" 'NF == 3 && $2 ~ /^[TDBRC]$/ { print $3, o }'
done | sort -u > "$tmp/defs.all"
# The C library's functions the kstub program interposes (front/fileguard.c
# wraps open/openat for libLLVM's opens) are named on floors.txt's
# "interposed" line: a call to one is a call to libc, not an arrow to the
# guard (nor a step in a circle), so their definitions are set aside.
awk '$1 == "interposed" { for (i = 2; i <= NF; i++) print $i }' "$floors" | sort -u > "$tmp/interposed"
awk 'NR == FNR { c[$1] = 1; next } !($1 in c)' "$tmp/interposed" "$tmp/defs.all" > "$tmp/defs"
for o in "$@"; do
    nm -u "$o" | awk -v o="$o" '{ print $NF, o }'
done | sort -u > "$tmp/uses"
# "user symbol provider", one line per symbol an object takes from another.
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $1, $3 }' | sort -u > "$tmp/calls"
# The headers each object read, from its depfile, "dir/../" taken out
# (absolute paths are the system's and libclang's: not ours to place).
: > "$tmp/reads"
for o in "$@"; do
    d=${o%.o}.d
    if [ ! -r "$d" ]; then
        echo "$o -" >> "$tmp/reads"      # no depfile: reported below
        continue
    fi
    tr -s ' \t\\' '\n\n\n' < "$d" | sed -e 's/:$//' -e ':a' -e 's|[^/.][^/]*/\.\./||' -e 'ta' -e 's|^\./||' |
        grep '\.h$' | grep -v '^/' | sort -u |
        awk -v o="$o" '{ print o, $0 }' >> "$tmp/reads"
done
printf '%s\n' "$@" > "$tmp/objs"

# Floors, calls up, includes. Prints each problem (stderr) and, last, the
# counts "ARROWS UP INCLUDES BADINCLUDES NOFLOOR" (stdout).
awk -v tree="$tree" -v floorsf="$floors" -v objsf="$tmp/objs" -v callsf="$tmp/calls" '
function dir(p) { sub(/[^\/]*$/, "", p); return p }
function base(p) { sub(/.*\//, "", p); return p }
function source(o) { sub(/^(.*\/)?obj\//, "", o); sub(/\.o$/, ".c", o); return o }
function floor_of(p) { return (p in member) ? member[p] : ((dir(p) in member) ? member[dir(p)] : 0) }
# The floor of a header: its own, that of its folder, or, in a folder
# whose files have floors of their own (runtime/), the lowest of them.
function header_floor(h) { return floor_of(h) ? floor_of(h) : ((dir(h) in lowest) ? lowest[dir(h)] : 0) }
function clean(p) { while (sub(/[^\/.][^\/]*\/\.\.\//, "", p)) ; return p }
function say(msg) { print "layers: " msg > "/dev/stderr" }
# The line of src that includes h: by its path from the folder of src, or
# by a name that h ends in (found on the include path); 0 when none does
# (h came through another header).
function include_line(src, h,    line, n, name) {
    n = 0
    while ((getline line < src) > 0) {
        n++
        if (line ~ /^[ \t]*#[ \t]*include[ \t]*"/) {
            name = line
            sub(/^[^"]*"/, "", name)
            sub(/".*/, "", name)
            if (clean(dir(src) name) == h || substr(h, length(h) - length(name)) == "/" name) {
                close(src)
                return n
            }
        }
    }
    close(src)
    return 0
}
function where(src, h,    n) {
    n = include_line(src, h)
    return n ? src ":" n ": includes " h : src " reads " h " through another header"
}
FILENAME == floorsf {
    if ($0 ~ /^[ \t]*(#|$)/)
        next
    if ($1 == "interposed") {
        for (i = 2; i <= NF; i++)
            interposed[$i] = 1
        next
    }
    if ($1 == "public") {
        for (i = 3; i <= NF; i++)
            public[$2 $i] = 1
        publist[$2] = (NF > 2) ? "its public headers: " substr($0, index($0, $3)) : "it has no public header"
        next
    }
    if ($1 != tree)
        next
    nfloors++
    name[nfloors] = $2
    for (i = 3; i <= NF; i++) {
        member[$i] = nfloors
        ours[dir($i)] = 1
        if ($i !~ /\/$/)
            lowest[dir($i)] = nfloors
    }
    next
}
FILENAME == objsf {
    src[$1] = source($1)
    fl[$1] = floor_of(src[$1])
    if (!fl[$1]) {
        say($1 " (" src[$1] ") has no floor of the " tree " in " floorsf ": give it the floor of the files it calls")
        nofloor++
    }
    next
}
FILENAME == callsf {
    user = $1; sym = $2; prov = $3
    if (sym in interposed)
        next
    if (!((user, prov) in arrow)) {
        arrow[user, prov] = 1
        arrows++
    }
    if (fl[user] && fl[prov] && fl[prov] < fl[user]) {
        say(user " (floor " name[fl[user]] ") calls " sym ", defined in " prov " (floor " name[fl[prov]] ", above it)")
        up++
    }
    next
}
{   # the reads: "OBJECT HEADER"
    o = $1; h = $2; s = src[o]
    if (h == "-") {
        say("no depfile " substr(o, 1, length(o) - 2) ".d beside " o " (the compiler writes it with -MMD): cannot tell what " s " includes")
        bad++
        next
    }
    if (dir(h) == dir(s))
        next
    includes++
    if (!(dir(h) in ours)) {
        say(where(s, h) ", which is of no floor of the " tree " (" floorsf ")")
        bad++
    } else if (!((dir(h) base(h)) in public)) {
        say(where(s, h) ", private to " dir(h) " (" ((dir(h) in publist) ? publist[dir(h)] : "it has no public header") ")")
        bad++
    } else if (fl[o] && header_floor(h) && header_floor(h) < fl[o]) {
        say(where(s, h) " of floor " name[header_floor(h)] ", above " s "'"'"'s floor " name[fl[o]])
        bad++
    }
}
END { print arrows + 0, up + 0, includes + 0, bad + 0, nofloor + 0 }
' "$floors" "$tmp/objs" "$tmp/calls" "$tmp/reads" > "$tmp/counts"
read -r arrows up includes bad nofloor < "$tmp/counts"

# Circles: each file also paired with itself so that tsort lists it.
{ awk '{ print $1, $3 }' "$tmp/calls" | sort -u; for o in "$@"; do echo "$o $o"; done; } > "$tmp/edges"
circle=0
if ! tsort < "$tmp/edges" > /dev/null 2> "$tmp/loops"; then
    echo "layers: these objects call each other in a circle:" >&2
    grep -v '^tsort: -: input contains a loop:' "$tmp/loops" | sed 's/^tsort: /  /' >&2
    circle=1
fi

failed=0
[ "$up" -eq 0 ] && [ "$nofloor" -eq 0 ] || failed=$((failed + 1))
[ "$circle" -eq 0 ] || failed=$((failed + 1))
[ "$bad" -eq 0 ] || failed=$((failed + 1))
echo "layers: $((3 - failed)) passed, $failed failed ($tree: $# objects, $arrows arrows, $up up, $([ $circle -eq 0 ] && echo no || echo a) circle; $includes includes from other folders, $bad out of bounds)"
[ "$failed" -eq 0 ]
