/* untakeable.h — types a C++ caller could not take as its own even if the
 * header compiled alone: one nested in a class template's specialization
 * (C++ cannot name it by its qualified name) and one with a base class
 * (offsetof cannot check it). Not self-contained either (uint32_t comes
 * from the includer), so a trial of it would fail and say so in a note. */
#ifndef UNTAKEABLE_H
#define UNTAKEABLE_H
template <typename T>
struct Holder {
    struct Params {
        T scale;
        uint32_t n;
    };
};

struct Base {
    uint32_t a;
};

struct Derived : Base {
    uint32_t b;
};
#endif
