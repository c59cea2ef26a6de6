// Golden input: the application's own types from a header host C++ can
// include (cxx_types.hpp), which the generated header uses in C++ with the
// device's layout asserted (issue 30 #6), and types this file declares
// itself, which stay mirrors in C++ too. Generated from its own folder
// (make bless), so that the header's #include is "cxx_types.hpp".
#include "cxx_types.hpp"

enum class Local : unsigned char { A, B = 9 };   // declared here: a mirror in C++ too
struct LocalRec { Local l; Act a; };            // here too, holding the application's Act

__global__ void paint(Color c, Act a, nn::Norm n, Layer::Kind k, Layer l, const Color *all) {}
__global__ void tagged(Tagged<Color, Act::Relu> t, Holder<int>::Mode m, Hidden h) {}
__global__ void local(Local l, LocalRec r) {}
