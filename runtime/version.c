/*
 * version.c — which libkstub this is (kstub.h's KSTUB_VERSION_* when it was
 * built), for applications and for the descriptor-version message.
 */
#include "internal.h"

#define KS__STR_(x) #x
#define KS__STR(x) KS__STR_(x)

KS__API const char *ks_version(void)
{
    return KS__STR(KSTUB_VERSION_MAJOR) "." KS__STR(KSTUB_VERSION_MINOR) "." KS__STR(KSTUB_VERSION_PATCH);
}

KS__API int ks_version_number(void)
{
    return KSTUB_VERSION;
}
