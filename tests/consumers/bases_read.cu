// bases_read.cu — reads the bytes bases_fill.c wrote from the C mirrors as
// tests/corpus/abi_bases.cu's own classes, compiled by nvcc, and checks each
// field through its C++ name (a hidden base field as "h.Named::x"): the C
// names of flattened base fields land where nvcc lays the fields out.
#include "abi_bases.cu"

#include <cstdio>
#include <cstdlib>

static FILE *f;
static int bad;

template <typename T> static T next()
{
    T v;
    if (std::fread(static_cast<void *>(&v), sizeof v, 1, f) != 1) {
        std::printf("short read\n");
        std::exit(2);
    }
    return v;
}

#define EXPECT(e) do { if (!(e)) { std::printf("%s:%d: %s\n", __FILE__, __LINE__, #e); bad = 1; } } while (0)

int main(int argc, char **argv)
{
    using namespace bases;
    f = argc > 1 ? std::fopen(argv[1], "rb") : nullptr;
    if (!f)
        return 2;
    { auto h = next<Hides>(); EXPECT(h.Named::x == 1); EXPECT(h.y == 2); EXPECT(h.x == 3.5f); }
    { auto b = next<Both>(); EXPECT(b.x == 4); EXPECT(b.Named::y == 5); EXPECT(b.Other::y == 6); EXPECT(b.x2 == 7); }
    { auto r = next<ReusesTail>(); EXPECT(r.a == 8); EXPECT(r.b == 9); EXPECT(r.c == 10); EXPECT(r.s == 11); }
    { auto k = next<KeepsTail>(); EXPECT(k.a == 12); EXPECT(k.b == 13); EXPECT(k.c == 14); }
    { auto tw = next<Twice>(); EXPECT(tw.x == 15); EXPECT(tw.y == 16.5f); EXPECT(tw.z == 17); }
    { auto m = next<Multi>(); EXPECT(m.d == 18.25); EXPECT(m.c == 19); EXPECT(m.i == 20); }
    { auto l = next<Level2>(); EXPECT(l.a == 21); EXPECT(l.b == 22); EXPECT(l.s == 23); EXPECT(l.z == 24); }
    { auto o = next<OverBase>(); EXPECT(o.v == 25); EXPECT(o.w == 26); }
    { auto ft = next<FromTemplate>(); EXPECT(ft.TBase<double>::t == 27.5); EXPECT(ft.TBase<char>::t == 28); EXPECT(ft.n == 29); }
    { auto fa = next<FromAnon>(); EXPECT(fa.k == 30); EXPECT(fa.i == 31); EXPECT(fa.range.lo == 32); EXPECT(fa.range.hi == 33); EXPECT(fa.k2 == 34); }
    { auto ou = next<Outer>(); EXPECT(ou.c == 35); EXPECT(ou.h.Named::x == 36); EXPECT(ou.h.y == 37); EXPECT(ou.h.x == 38.5f);
      EXPECT(ou.r.a == 39); EXPECT(ou.r.b == 40); EXPECT(ou.r.c == 41); EXPECT(ou.r.s == 42); }
    { auto g = next<GemmParams>(); EXPECT(g.mode == 43); EXPECT(g.batch_count == 44); EXPECT(g.batch_stride_A == 45);
      EXPECT(g.ptr_A == reinterpret_cast<const float *>(0x1000)); EXPECT(g.alpha == 46.5f); }
    { auto th = next<TagHolder>(); EXPECT(th.x == 47); }
    { auto we = next<WithEmpty>(); EXPECT(we.x == 48); EXPECT(we.y == 49.5f); }
    EXPECT(std::fgetc(f) == EOF);
    return bad;
}
