/*
 * bases_fill.c — sets every field of the C mirrors of tests/corpus/abi_bases.cu's
 * derived classes (base fields flattened, renamed ones included) to a value of
 * its own, padding poisoned, and writes the bytes to argv[1], for
 * bases_read.cu to read as the C++ classes (check_real's
 * base_fields_land_where_cxx_reads_them).
 */
#include <stdio.h>
#include <string.h>

#include "abi_bases.kstub.h"

#define WRITE(v) fwrite(&(v), sizeof(v), 1, f)
#define POISON(v) memset(&(v), 0xEE, sizeof(v))

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "wb") : NULL;
    if (!f)
        return 2;
    bases_Hides h; POISON(h);
    h.Named_x = 1; h.y = 2; h.x = 3.5f; WRITE(h);
    bases_Both b; POISON(b);
    b.x = 4; b.Named_y = 5; b.Other_y = 6; b.x2 = 7; WRITE(b);
    bases_ReusesTail r; POISON(r);
    r.a = 8; r.b = 9; r.c = 10; r.s = 11; WRITE(r);
    bases_KeepsTail k; POISON(k);
    k.a = 12; k.b = 13; k.c = 14; WRITE(k);
    bases_Twice tw; POISON(tw);
    tw.x = 15; tw.y = 16.5f; tw.z = 17; WRITE(tw);
    bases_Multi m; POISON(m);
    m.d = 18.25; m.c = 19; m.i = 20; WRITE(m);
    bases_Level2 l; POISON(l);
    l.a = 21; l.b = 22; l.s = 23; l.z = 24; WRITE(l);
    bases_OverBase o; POISON(o);
    o.v = 25; o.w = 26; WRITE(o);
    bases_FromTemplate ft; POISON(ft);
    ft.TBase_t = 27.5; ft.TBase_t_ = 28; ft.n = 29; WRITE(ft);
    bases_FromAnon fa; POISON(fa);
    fa.k = 30; fa.ks__anon0.i = 31; fa.range.lo = 32; fa.range.hi = 33; fa.k2 = 34; WRITE(fa);
    bases_Outer ou; POISON(ou);
    ou.c = 35; ou.h.Named_x = 36; ou.h.y = 37; ou.h.x = 38.5f;
    ou.r.a = 39; ou.r.b = 40; ou.r.c = 41; ou.r.s = 42; WRITE(ou);
    bases_GemmParams g; POISON(g);
    g.mode = 43; g.batch_count = 44; g.batch_stride_A = 45; g.ptr_A = (const float *)0x1000;
    g.alpha = 46.5f; WRITE(g);
    bases_TagHolder th; POISON(th);
    th.x = 47; WRITE(th);
    bases_WithEmpty we; POISON(we);
    we.x = 48; we.y = 49.5f; WRITE(we);
    return fclose(f) == 0 ? 0 : 1;
}
