// activations.hpp — a C++ header shared by host and device code (issue 14):
// an enum class in a namespace, as C++ projects write one. C cannot include
// it, so kstub mirrors the type; C++ callers pass nn::Act values directly.
#pragma once
#include <cstdint>

namespace nn {
enum class Act : int { None = 0, Relu = 1, Gelu = 2 };
inline namespace v1 {
enum class Round : std::uint8_t { Nearest = 1, Down = 2 };
}
} // namespace nn
