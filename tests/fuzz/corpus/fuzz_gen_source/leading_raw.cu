#include <cuda_runtime.h>
/* c */ # include <a b>
%:include <c>
#include <x.h>
#if 0
#include <d>
#endif
const char *s = R"(
#include <e>
)";
