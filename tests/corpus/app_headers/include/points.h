/* points.h — a type beside device code written through macros from
 * another header: neither C nor host C++ can compile it (issue 39 #19). */
#ifndef POINTS_H
#define POINTS_H
#include "hd_macros.h"
typedef struct point2 {
    float x, y;
} point2;
HD inline float norm2(point2 p) { return p.x * p.x + p.y * p.y; }
KERNEL void points_touch(point2 *p) { p->x = 0.0f; }
#endif
