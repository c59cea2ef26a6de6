/* c */ #include "h.h"
#include <x.h>
#\
include "y.h"
// kstub:name k = k2
