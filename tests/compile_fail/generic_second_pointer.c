/* expect: tmpl_axpy */
/* c-expect: no instance of tmpl::axpy takes these argument types; its instances: tmpl_axpy_float_4; tmpl_axpy_double_2 */
/* only: c11 c++17 */
/* no-werror: the instance x picks takes float * for y */
/* clang-c-expect: passing 'double *' to parameter of incompatible type 'struct no_instance_of_tmpl_axpy_takes_these_argument_types_its_instances_tmpl_axpy_float_4_tmpl_axpy_double_2' */
/* at-line: 16 */
/* max-lines: 18 */
/* clang-max-lines: 12 */
/* names gcc c11: no instance of tmpl::axpy | tmpl_axpy_float_4; tmpl_axpy_double_2 */
/* names clang c11: tests/compile_fail/generic_second_pointer.c:16:51: error: passing 'double *' */
/* lacks: called object | KS__ASSERT | KS_ARG_INSTANCE */
#include "templates.kstub.h"
void call(const float *x, double *y, int64_t n);
void call(const float *x, double *y, int64_t n)
{
    (void)tmpl_axpy(ks_launch_1d(1, 32), 2.0f, x, y, n); /* x says float, y is double * */
}
