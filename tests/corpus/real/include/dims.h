/* dims.h — a C header of the application: a typedef'd anonymous struct, as
 * C code writes them (issue 18, item 2). */
#ifndef DIMS_H
#define DIMS_H

typedef struct {
    int w, h;
    float scale;
} Dimensions;

#endif
