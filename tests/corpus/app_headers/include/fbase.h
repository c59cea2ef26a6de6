/* fbase.h — typedef'd anonymous enum and struct inside extern "C", as C
 * headers meant for C++ too write them (issue 39 #18): the generated
 * header includes it and names both by their typedef names. */
#ifndef FBASE_H
#define FBASE_H
#ifdef __cplusplus
extern "C" {
#endif
typedef enum { A, C, G, U } fbase_t;
typedef struct { int len; fbase_t first; } fseq_t;
#ifdef __cplusplus
}
#endif
#endif
