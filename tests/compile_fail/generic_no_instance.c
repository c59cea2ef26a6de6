/* expect: fill */
/* c-expect: no instance of fill takes these argument types; its instances: fill_int; fill_u16 */
/* only: c11 c++17 */
/* no-werror: no instance is an error in every mode */
/* clang-c-expect: passing 'float *' to parameter of incompatible type 'struct no_instance_of_fill_takes_these_argument_types_its_instances_fill_int_fill_u16' */
/* at-line: 17 */
/* max-lines: 18 */
/* clang-max-lines: 12 */
/* names gcc c11: no instance of fill | fill_int; fill_u16 */
/* names clang c11: passing 'float *' | no_instance_of_fill_takes_these_argument_types_its_instances_fill_int_fill_u16 */
/* names clang++ c++17: 'fill' */
/* lacks: called object | KS__ASSERT | KS_ARG_INSTANCE */
#include "templates.kstub.h"
void call(float *out, uint32_t n);
void call(float *out, uint32_t n)
{
    (void)fill(ks_launch_1d(1, 32), out, 1.0f, n); /* fill<float> was never instantiated */
}
