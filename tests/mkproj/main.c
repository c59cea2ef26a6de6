/* The sample project's program: calls the kernel through its generated stub. */
#include "scale.kstub.h"

#include <stdio.h>

int main(void)
{
    /* No GPU is needed to build this; running it launches on device 0. */
    ks_status st = scale_rows(ks_launch_1d(1, 32), NULL, 2.0f, 0);
    printf("scale_rows: %d\n", (int)st);
    return 0;
}
