/*
 * cold_null.c — cold start, the floor: a process that does nothing. Its
 * exec-to-exit time is the cost of starting any process on the machine.
 * Prints the line every cold-start program prints (see coldstart.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long t = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
    printf("main=%llu done=%llu\n", t, t);
    return 0;
}
