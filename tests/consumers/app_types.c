/* app_types.c — a C caller of app_types.cu's stubs (issue 14) that includes
 * the application's own header beside the generated one, in either order:
 * LayerShape and Activation are model_params.h's types, not mirrors, so the
 * same values go to the kernel and to the rest of the program. Compiled by
 * check-real as C99 and C11 (gcc, clang; strict mode too) under -Werror. */
#include "model_params.h"
#include "app_types.kstub.h"
#include "model_params.h"   /* again, after: its own guard, no redefinition */

#include <string.h>

int consumer_main(float *x, ks_half *y, const ks_half *hx, ks_bfloat16 *by, const ks_bfloat16 *bx,
                  const nn_Act *acts);

int consumer_main(float *x, ks_half *y, const ks_half *hx, ks_bfloat16 *by, const ks_bfloat16 *bx,
                  const nn_Act *acts)
{
    ks_launch l;
    memset(&l, 0, sizeof l);
    LayerShape shape = {2, 64, 64, ACT_RELU};   /* the application's struct, by value */
    Activation kind = ACT_GELU;                 /* ... and its enum */
    LocalScale s = {1.0f, {0}};                 /* app_types.cu's own struct: a mirror */
    int rc = 0;
    rc |= (int)shaped_act(l, x, shape, kind);
    /* C's enumerators are ints: strict mode wants an Activation. */
    rc |= (int)shaped_act_n(128, NULL, x, shape, kind);
#ifndef KSTUB_STRICT
    rc |= (int)shaped_act(l, x, shape, ACT_NONE);
#endif
    rc |= (int)act_half(l, y, hx, ks_half_from_float(0.5f), nn_Act_Relu, nn_v1_Round_Down, 64);
    rc |= (int)act_bf16(l, by, bx, acts, s, 64);
    return rc;
}
