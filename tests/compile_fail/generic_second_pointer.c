/* expect: tmpl_axpy */
/* c-expect: no instance of tmpl::axpy takes these argument types; its instances: tmpl_axpy_float_4; tmpl_axpy_double_2 */
/* only: c11 c++17 */
/* no-werror: the instance x picks takes float * for y */
#include "templates.kstub.h"
void call(const float *x, double *y, int64_t n);
void call(const float *x, double *y, int64_t n)
{
    (void)tmpl_axpy(ks_launch_1d(1, 32), 2.0f, x, y, n); /* x says float, y is double * */
}
