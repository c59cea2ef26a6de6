/*
 * symbol.h — device symbols with a per-compilation part (internal linkage).
 *
 * nvcc gives a kernel with internal linkage a name that differs from one
 * compilation to the next: an anonymous namespace becomes
 * "<n>_GLOBAL__N__<hash>_<file>_<hash>", a static device function named in a
 * template argument "<n>_INTERNAL_<hash>_<file>_<hash>", and with -rdc=true
 * every internal name is prefixed "__nv_static_<n>__<hash>_<file>_<hash>__".
 * The generator writes such a kernel's symbol as a pattern that says where
 * those parts go and which file they name, the file as nvcc spells it
 * ("<length>_<name, each byte not a letter or digit as '_'>", "5_st_cu"):
 *
 *   {static:5_st_cu}_Z8k_staticPfi          a static kernel: its plain name in
 *                                           a whole-program image, or -rdc's prefix
 *   {static:5_st_cu}_ZN{anon:5_st_cu}6k_anonEPf   in an anonymous namespace
 *   ...{internal:5_st_cu}...                a static function's namespace-like part
 *
 * The runtime matches it against the image's own kernel list; check-abi and
 * the generator's image-entry check match it against nvcc's entries. The
 * pattern is the same for every compilation of the same file, so the
 * manifest (and kstub diff) compares it as it compares any symbol.
 *
 * No CUDA and no allocation: the generator and the tests compile it too.
 */
#ifndef KS_SYMBOL_H
#define KS_SYMBOL_H

#include <stddef.h>

/* Whether \p symbol is a pattern (has a per-compilation part) rather than a name. */
int ks__symbol_is_pattern(const char *symbol);

/*
 * The name a pattern stands for in a whole-program image when it has no part
 * that changes per compilation (a static kernel outside anonymous
 * namespaces): the pattern without its "{static:…}" prefix. NULL when the
 * pattern has such a part (the name must be looked up in the image's list).
 */
const char *ks__symbol_plain(const char *pattern);

/*
 * Whether the device symbol \p name is one \p pattern stands for (a plain
 * symbol matches only itself). With \p any_file, the file part of each
 * per-compilation part is not compared: what a "not found" message offers
 * when the image was compiled from a file of another name.
 */
int ks__symbol_match(const char *pattern, const char *name, int any_file);

#endif /* KS_SYMBOL_H */
