// lead
#include <cuda_fp16.h>
/* c */ #include <cstdint>
#include "x.h"
