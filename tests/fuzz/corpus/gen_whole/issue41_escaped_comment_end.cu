/* configuration *\
/
#pragma pack(push, 1)
#include <tuple>
#pragma pack(pop)
__global__ void k(std::tuple<char, int> t) { (void)t; }
