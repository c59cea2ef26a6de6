/* expect: tagged */
/* only: c++17 gnu++17 */
/* at-line: 9 */
/* The template's one name in C++ (issue 30 #6): Tagged<Color, Act::Gelu> is no instance's type (Act::Relu's is). */
#include "cxx_own_enums.kstub.h"
void call(int *out, Tagged<Color, Act::Gelu> tg);
void call(int *out, Tagged<Color, Act::Gelu> tg)
{
    (void)tagged(ks_launch_1d(1, 1), tg, out); /* Tagged<Color, Act::Gelu>: no instance */
}
