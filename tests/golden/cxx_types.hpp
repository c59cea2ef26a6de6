// Golden input's header (cxx_types.cu): the application's own types in a
// header host C++ can include. C++ callers of the generated header pass
// them as they are (issue 30 #6); C callers the mirrors.
#pragma once
#include <cstdint>

enum Color { RED, GREEN = 5, BLUE };                          // a plain enum
enum class Act : std::uint8_t { None, Relu, Gelu = 200 };     // an enum class with its underlying type
namespace nn {
enum class Norm : std::int16_t { L1 = -1, L2 = 2 };            // in a namespace
}
struct Layer {
    enum Kind : std::uint16_t { DENSE = 1, CONV = 2 };        // nested in a class
    Kind kind;
    nn::Norm norm;                                            // enums as fields
    Act act;
};
template <typename E, Act A> struct Tagged { E value; int n; };   // enums as template arguments
template <typename T> struct Holder { enum Mode { M_A = 3, M_B }; T v; };   // Holder<int>::Mode: mirrored
namespace {
enum Hidden { H0, H1 = 7 };                                   // an anonymous namespace's: C++ names it ::Hidden
}
