/* codes.h — a C header whose unused static array fails a -Werror build of
 * every file that includes it (-Wunused-variable; issue 39 #19). */
#ifndef CODES_H
#define CODES_H
typedef enum code_t { CODE_A, CODE_C, CODE_G, CODE_T } code_t;
static int code_weights[4] = {1, 2, 3, 4};
#endif
