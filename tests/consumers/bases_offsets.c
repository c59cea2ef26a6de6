/*
 * bases_offsets.c — prints "<kernel> <offset>" for each field of
 * bases_fields.h, the offset its C mirror (abi_bases.kstub.h) gives it;
 * <kernel> names bases_device.cu's kernel that reads the field.
 */
#include <stddef.h>
#include <stdio.h>

#include "abi_bases.kstub.h"
#include "bases_fields.h"

#define PRINT(T, id, c, cxx) printf("%s %zu\n", "read_" #T "_" #id, offsetof(bases_##T, c));

int main(void)
{
    BASES_FIELDS(PRINT)
    return 0;
}
