/*
 * prelude_seen.h — whether a layer of leading includes pays: the cache's
 * small record of which inputs started with which list (prelude_seen.c).
 */
#ifndef KSTUB_PRELUDE_SEEN_H
#define KSTUB_PRELUDE_SEEN_H

/* Whether a layer should be built or used for the leading includes of key
 * (the whole prelude's key, pch.c's ks_prelude_key, 32 bytes) in input:
 * 1 when another input has started with the same list (the record says
 * so), or the rule (KSTUB_LAYERS) is "always", or the record cannot be
 * used; 0 otherwise, after recording input (the rule "seen", the default,
 * or "never"). */
int ks_prelude_layer_pays(int dirfd, const unsigned char *key, const char *input);

#endif
