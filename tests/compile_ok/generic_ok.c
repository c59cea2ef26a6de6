/* A template's one C name (C11 _Generic, C++ overloads) picks each instance, a pointer to const
 * included; scalars convert as in a call of the instance. */
#include "templates.kstub.h"
void call(int *pi, unsigned short *pu, const double *cx, double *y, float *fx, float *fy, double *dx);
void call(int *pi, unsigned short *pu, const double *cx, double *y, float *fx, float *fy, double *dx)
{
    (void)fill(ks_launch_1d(1, 32), pi, 5, 10u);
    (void)fill(ks_launch_1d(1, 32), pu, 5, 10u);
    (void)tmpl_axpy(ks_launch_1d(1, 32), 2.0, cx, y, (int64_t)3);
    (void)tmpl_axpy(ks_launch_1d(1, 32), 2.0f, fx, fy, (int64_t)3);
    (void)tmpl_axpy(ks_launch_1d(1, 32), 2.0, dx, y, 3);   /* double * for const double * */
    (void)fill_int(ks_launch_1d(1, 32), pi, 5, 10u);   /* the instances stay as they were */
    struct { unsigned value : 3; } bits = {5};
    (void)fill(ks_launch_1d(1, 32), pi, bits.value, 10u);   /* a bit-field, where the instances differ */
}
