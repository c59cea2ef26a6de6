/* own_enums.c — a C caller of cxx_own_enums.cu's stubs (issue 30 #6): the
 * same launches as own_enums.cpp, with the C mirrors of the application's
 * enums and records. check-real runs both against the fake driver and
 * compares the bytes each launch packed. */
#include "cxx_own_enums.kstub.h"

#include <string.h>

int c_enums_launch(float *x, const void *all, void *colors, int *out);

int c_enums_launch(float *x, const void *all, void *colors, int *out)
{
    ks_launch l = ks_launch_1d(1, 32);
    Layer y;
    memset(&y, 0, sizeof y);
    y.kind = Layer_Kind_CONV;
    y.norm = nn_Norm_L2;
    y.color = Color_GREEN;
    y.act = Act_Relu;
    y.flags = 3;
    y.width = -4;
    Tagged_Color_Act_Relu tc;
    tc.value = Color_BLUE;
    tc.alt = Color_RED;
    tc.n = 7;
    Tagged_nn_Norm_Act_Gelu tn;
    tn.value = nn_Norm_L1;
    tn.alt = nn_Norm_L2;
    tn.n = -2;
    LocalRec r;
    r.l = Local_B;
    r.a = Act_Gelu;
    r.n = nn_Norm_L1;
    int rc = 0;
    rc |= (int)paint(l, Color_BLUE, Act_Gelu, nn_Norm_L1, nn_Pool_AVG_POOL, Layer_Kind_CONV, x);
    rc |= (int)layer(l, y, (const Layer *)all, (Color *)colors);
    rc |= (int)tagged_Color_Act_Relu(l, tc, out);
    rc |= (int)tagged_nn_Norm_Act_Gelu(l, tn, out);
    rc |= (int)local(l, Local_B, r, Holder_Mode_M_B, out);
    rc |= (int)paint(l, Color_BLUE, Act_Gelu, nn_Norm_L1, nn_Pool_AVG_POOL, Layer_Kind_CONV, x);
    return rc;
}
