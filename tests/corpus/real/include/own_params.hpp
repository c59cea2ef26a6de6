// own_params.hpp — the application's own types in a header host C++ can
// include (issue 30 #6): a class template, a plain struct, a struct in a
// namespace. C++ callers of the generated header pass these; C callers the
// mirrors.
#pragma once

template <typename T>
struct OwnParams {
    T *out;
    const T *in;
    T scale;
    int n;
};

struct OwnCfg {
    int rows, cols;
    double eps;
    char tag;
};

namespace geo {
struct Box {
    float lo[3], hi[3];
};
} // namespace geo
