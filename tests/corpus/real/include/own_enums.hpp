// own_enums.hpp — enums of the application's own in a header host C++ can
// include (issue 30 #6): a plain enum, an enum class with its underlying
// type, enums in a namespace, an enum nested in a class, enums as fields and
// as template arguments. C++ callers of the generated header pass these
// values as they have them, with no cast; C callers the mirrors.
#pragma once
#include <cstdint>

enum Color { RED, GREEN = 5, BLUE };

enum class Act : std::uint8_t { None, Relu, Gelu = 200 };

namespace nn {
enum class Norm : std::int16_t { L1 = -1, L2 = 2 };
enum Pool { MAX_POOL, AVG_POOL };
} // namespace nn

struct Layer {
    enum Kind : std::uint16_t { DENSE = 1, CONV = 2 };
    Kind kind;
    nn::Norm norm;
    Color color;
    Act act;
    std::uint8_t flags;
    std::int16_t width;
};

// An enum as a template's type argument and as its value argument.
template <typename E, Act A>
struct Tagged {
    E value, alt;
    int n;
};

// An enum inside a class template: "Holder<int>::Mode" has no name C++
// could be given from the parse, so it keeps its mirror in C++ too.
template <typename T>
struct Holder {
    enum Mode { M_A = 3, M_B };
    T v;
};
