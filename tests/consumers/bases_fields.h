/*
 * bases_fields.h — the fields of tests/corpus/abi_bases.cu's derived classes,
 * each as X(class, id, C mirror's member, C++ member), id naming the field in
 * kernel names: bases_offsets.c prints
 * each C offset, bases_device.cu makes a kernel reading each C++ member, so
 * check_real's base_fields_are_at_device_offsets compares them with the
 * offsets nvcc's PTX loads them from.
 */
#define BASES_FIELDS(X) \
    X(Hides, Named_x, Named_x, Named::x) X(Hides, y, y, y) X(Hides, x, x, x) \
    X(Both, x, x, x) X(Both, Named_y, Named_y, Named::y) X(Both, Other_y, Other_y, Other::y) X(Both, x2, x2, x2) \
    X(ReusesTail, a, a, a) X(ReusesTail, b, b, b) X(ReusesTail, c, c, c) X(ReusesTail, s, s, s) \
    X(KeepsTail, a, a, a) X(KeepsTail, b, b, b) X(KeepsTail, c, c, c) \
    X(Twice, x, x, x) X(Twice, y, y, y) X(Twice, z, z, z) \
    X(TagHolder, x, x, x) X(WithEmpty, x, x, x) X(WithEmpty, y, y, y) \
    X(Multi, d, d, d) X(Multi, c, c, c) X(Multi, i, i, i) \
    X(Level2, a, a, a) X(Level2, b, b, b) X(Level2, s, s, s) X(Level2, z, z, z) \
    X(OverBase, v, v, v) X(OverBase, w, w, w) \
    X(FromTemplate, TBase_t, TBase_t, TBase<double>::t) X(FromTemplate, TBase_t_, TBase_t_, TBase<char>::t) \
    X(FromTemplate, n, n, n) \
    X(FromAnon, k, k, k) X(FromAnon, range_hi, range.hi, range.hi) X(FromAnon, k2, k2, k2) \
    X(Outer, h_Named_x, h.Named_x, h.Named::x) X(Outer, h_x, h.x, h.x) X(Outer, r_c, r.c, r.c) X(Outer, r_s, r.s, r.s) \
    X(GemmParams, batch_stride_A, batch_stride_A, batch_stride_A) X(GemmParams, ptr_A, ptr_A, ptr_A) \
    X(GemmParams, alpha, alpha, alpha)
