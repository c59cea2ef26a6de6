/* span.h — not self-contained: uint32_t and size_t come from whatever
 * the includer included first (issue 39 #19). */
#ifndef SPAN_H
#define SPAN_H
typedef struct span_t {
    uint32_t n;
    size_t cap;
} span_t;
#endif
