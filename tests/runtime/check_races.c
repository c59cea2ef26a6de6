/*
 * check_races.c — the races check's happens-before core (runtime/races.c)
 * over recorded call sequences: what CUPTI would have told it, fed directly.
 * Each case is one of issue 45's: unordered writers, writers ordered by an
 * event, by a synchronisation, by one stream, by the legacy default stream;
 * readers; a reader and a writer; disjoint halves with extent hints (and the
 * same without them: a possible race naming the hint); an async copy into a
 * buffer another stream's kernel reads; frees; two threads' streams; a
 * double-buffered pipeline over many rounds.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "races.h"
#include "testutil.h"

enum { CTX = 0x100, S1 = 0x5001, S2 = 0x5002, LEGACY = 0x1, E1 = 0xe1, E2 = 0xe2 };
#define BUF 0x70000000ull        /* one 4096-byte allocation */
#define BUF2 0x71000000ull

static ks__hb *h;

static void setup(void)
{
    h = ks__hb_new();
    ck_assert_ptr_nonnull(h);
    ks__hb_stream_create(h, S1, CTX, KS__STREAM_NONBLOCKING);
    ks__hb_stream_create(h, S2, CTX, KS__STREAM_NONBLOCKING);
    ks__hb_stream_create(h, LEGACY, CTX, KS__STREAM_LEGACY);
}

static void teardown(void)
{
    ks__hb_delete(h);
}

static ks__hb_op op_on(const char *what, uint64_t stream, int line)
{
    ks__hb_op o = {what, "app.c", line, stream, CTX, KS__STREAM_BLOCKING,
                   stream == LEGACY ? "the legacy default stream" : NULL};
    return o;
}

/* A kernel \p what on \p stream touching [lo, hi) of BUF through parameter \p param. */
static void kernel(const char *what, uint64_t stream, const char *param, int write, uint64_t lo, uint64_t hi,
                   int possible, int line)
{
    ks__hb_op o = op_on(what, stream, line);
    ks__hb_access a = {BUF, 4096, BUF + lo, BUF + hi, write, possible, param};
    ks__hb_op_issue(h, &o, &a, 1);
}

static void record(uint64_t ev, uint64_t stream)
{
    ks__hb_op o = op_on("cuEventRecord", stream, 0);
    ks__hb_event_record(h, ev, &o);
}

static void wait_ev(uint64_t stream, uint64_t ev)
{
    ks__hb_op o = op_on("cuStreamWaitEvent", stream, 0);
    ks__hb_stream_wait(h, &o, ev);
}

/* Fail unless \p t holds (or lacks) \p needle. */
static void has(const char *t, const char *needle)
{
    ck_assert_msg(strstr(t, needle) != NULL, "expected \"%s\" in: %s", needle, t);
}

static void lacks(const char *t, const char *needle)
{
    ck_assert_msg(strstr(t, needle) == NULL, "did not expect \"%s\" in: %s", needle, t);
}

/* Exactly \p n reports pending: the first is kept in text, all are taken
 * (every is in all, one after another). */
static char text[4096], all[16384];
static void expect_reports(size_t n)
{
    ck_assert_uint_eq(ks__hb_pending(h), n);
    all[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char one[4096];
        ck_assert_int_eq(ks__hb_take(h, one, sizeof one), 1);
        if (i == 0)
            memcpy(text, one, sizeof one);
        strncat(all, one, sizeof all - strlen(all) - 2);
        strcat(all, "\n");
    }
    ck_assert_uint_eq(ks__hb_pending(h), 0);
}

START_TEST(unordered_writers_are_reported_naming_both)
{
    kernel("kernel 'fill'", S1, "out", 1, 0, 4096, 0, 10);
    kernel("kernel 'scale'", S2, "y", 1, 1024, 2048, 0, 20);
    expect_reports(1);
    has(text, "races: kernel 'scale' on stream 0x5002 (parameter y, writes bytes [1024, 2048)) at app.c:20");
    has(text, "kernel 'fill' on stream 0x5001 (parameter out, writes bytes [0, 4096)) at app.c:10");
    has(text, "touch bytes [1024, 2048) of the allocation at 0x70000000 (4096 bytes), both writing");
    has(text, "nothing the program does orders them");
    has(text, "overlapped in time in this run is not known");
    lacks(text, "possibly");
}
END_TEST

/* What the glue says of a stream now: S1 busy, S2 idle, others not known. */
static int busy_now(void *user, uint64_t stream)
{
    (void)user;
    return stream == S1 ? 1 : stream == S2 ? 0 : -1;
}

START_TEST(a_report_says_whether_this_run_overlapped_them)
{
    ks__hb_set_busy(h, busy_now, NULL);
    kernel("kernel 'long'", S1, "x", 1, 0, 4096, 0, 1);
    kernel("kernel 'b'", S2, "x", 1, 0, 4096, 0, 2);      /* S1 still busy */
    expect_reports(1);
    has(text, "in this run they may have overlapped in time (the earlier one's stream was still busy)");
    kernel("kernel 'c'", S1, "x", 1, 0, 4096, 0, 3);      /* S2 had finished */
    expect_reports(1);
    has(text, "in this run they did not overlap in time");
    has(text, "but nothing makes another run wait");
    ks__hb_ctx_sync(h, CTX);
    kernel("kernel 'd'", 0x77, "x", 1, 0, 4096, 0, 4);
    kernel("kernel 'e'", S1, "x", 1, 0, 4096, 0, 5);      /* 0x77: not known */
    expect_reports(1);
    has(text, "whether they overlapped in time in this run is not known");
}
END_TEST

START_TEST(writers_ordered_by_an_event_are_not_reported)
{
    kernel("kernel 'fill'", S1, "out", 1, 0, 4096, 0, 10);
    record(E1, S1);
    wait_ev(S2, E1);
    kernel("kernel 'scale'", S2, "y", 1, 0, 4096, 0, 20);
    expect_reports(0);
    /* The event stands for the work before it only. */
    record(E2, S1);
    kernel("kernel 'fill'", S1, "out", 1, 0, 4096, 0, 11);
    /* ... and fill at line 11 follows nothing of S2: it races with scale at line 20. */
    wait_ev(S2, E2);
    kernel("kernel 'scale'", S2, "y", 1, 0, 4096, 0, 21);
    expect_reports(2);
    has(all, "kernel 'fill' on stream 0x5001 (parameter out, writes bytes [0, 4096)) at app.c:11 and "
             "kernel 'scale' on stream 0x5002 (parameter y, writes bytes [0, 4096)) at app.c:20");
    has(all, "kernel 'scale' on stream 0x5002 (parameter y, writes bytes [0, 4096)) at app.c:21 and "
             "kernel 'fill' on stream 0x5001 (parameter out, writes bytes [0, 4096)) at app.c:11");
}
END_TEST

START_TEST(writers_ordered_by_a_synchronisation_are_not_reported)
{
    kernel("kernel 'a'", S1, "x", 1, 0, 4096, 0, 1);
    ks__hb_stream_sync(h, S1);
    kernel("kernel 'b'", S2, "x", 1, 0, 4096, 0, 2);
    ks__hb_ctx_sync(h, CTX);
    kernel("kernel 'c'", S1, "x", 1, 0, 4096, 0, 3);
    record(E1, S1);
    ks__hb_event_sync(h, E1);
    kernel("kernel 'd'", S2, "x", 1, 0, 4096, 0, 4);
    expect_reports(0);
    /* Synchronising another stream orders nothing. */
    ks__hb_ctx_sync(h, CTX);
    kernel("kernel 'e'", S1, "x", 1, 0, 4096, 0, 5);
    ks__hb_stream_sync(h, S2);
    kernel("kernel 'f'", S2, "x", 1, 0, 4096, 0, 6);
    expect_reports(1);
}
END_TEST

START_TEST(one_stream_is_ordered)
{
    for (int i = 0; i < 50; i++)
        kernel("kernel 'step'", S1, "x", 1, 0, 4096, 0, 1);
    expect_reports(0);
}
END_TEST

START_TEST(legacy_default_stream_orders_blocking_streams)
{
    ks__hb_stream_create(h, 0xb1, CTX, KS__STREAM_BLOCKING);
    ks__hb_stream_create(h, 0xb2, CTX, KS__STREAM_BLOCKING);
    kernel("kernel 'a'", 0xb1, "x", 1, 0, 4096, 0, 1);
    kernel("kernel 'b'", LEGACY, "x", 1, 0, 4096, 0, 2);     /* waits for 0xb1 */
    kernel("kernel 'c'", 0xb2, "x", 1, 0, 4096, 0, 3);       /* waits for the legacy stream */
    expect_reports(0);
    /* A non-blocking stream is ordered with neither. */
    kernel("kernel 'd'", S1, "x", 1, 0, 4096, 0, 4);
    expect_reports(3);                                       /* d against a, b and c */
    has(text, "kernel 'd' on stream 0x5001");
    ks__hb_ctx_sync(h, CTX);
    /* Blocking streams of another context are not ordered by this legacy stream. */
    ks__hb_stream_create(h, 0xc1, CTX + 1, KS__STREAM_BLOCKING);
    kernel("kernel 'e'", LEGACY, "x", 1, 0, 4096, 0, 5);
    kernel("kernel 'f'", 0xc1, "x", 1, 0, 4096, 0, 6);
    expect_reports(1);
    has(text, "kernel 'f' on stream 0xc1");
    has(text, "and kernel 'e' on the legacy default stream");
}
END_TEST

START_TEST(two_readers_are_not_reported)
{
    kernel("kernel 'a'", S1, "x", 0, 0, 4096, 0, 1);
    kernel("kernel 'b'", S2, "x", 0, 0, 4096, 0, 2);
    expect_reports(0);
}
END_TEST

START_TEST(a_reader_and_a_writer_are_reported)
{
    kernel("kernel 'r'", S1, "in", 0, 0, 4096, 0, 1);
    kernel("kernel 'w'", S2, "out", 1, 4000, 4096, 0, 2);
    expect_reports(1);
    has(text, "(parameter in, reads bytes [0, 4096))");
    has(text, "bytes [4000, 4096) of the allocation at 0x70000000 (4096 bytes), one writing");
}
END_TEST

START_TEST(disjoint_halves_with_extents_are_not_reported)
{
    kernel("kernel 'lo'", S1, "y", 1, 0, 2048, 0, 1);
    kernel("kernel 'hi'", S2, "y", 1, 2048, 4096, 0, 2);
    expect_reports(0);
}
END_TEST

START_TEST(without_extents_a_conflict_is_possible_and_names_the_hint)
{
    kernel("kernel 'lo'", S1, "y", 1, 0, 4096, 1, 1);          /* from its pointer to the end */
    kernel("kernel 'hi'", S2, "y", 1, 2048, 4096, 1, 2);
    expect_reports(1);
    has(text, "races: possibly: ");
    has(text, "writes bytes [0, 4096) up to the allocation's end");
    has(text, "kernel 'lo' has no extent hint for y");
    has(text, "'// kstub:extent(y, COUNT)' on the kernel settles it");
}
END_TEST

START_TEST(an_async_copy_into_a_buffer_another_stream_reads_is_reported)
{
    kernel("kernel 'use'", S1, "in", 0, 0, 4096, 0, 1);
    ks__hb_op o = op_on("cuMemcpyHtoDAsync", S2, 0);
    o.file = NULL;
    ks__hb_access a = {BUF, 4096, BUF, BUF + 4096, 1, 0, "dst"};
    ks__hb_op_issue(h, &o, &a, 1);
    expect_reports(1);
    has(text, "races: cuMemcpyHtoDAsync on stream 0x5002 (parameter dst, writes bytes [0, 4096)) "
                     "(call site not known) and kernel 'use'");
    /* A memset ordered by an event is fine. */
    record(E1, S2);
    wait_ev(S1, E1);
    kernel("kernel 'use'", S1, "in", 0, 0, 4096, 0, 2);
    expect_reports(0);
}
END_TEST

START_TEST(a_free_on_another_stream_while_in_use_is_reported)
{
    kernel("kernel 'use'", S1, "x", 0, 0, 4096, 0, 7);
    ks__hb_op f = op_on("cuMemFreeAsync", S2, 9);
    ks__hb_free(h, &f, BUF, 1);
    expect_reports(1);
    has(text, "races: cuMemFreeAsync of the allocation at 0x70000000 (4096 bytes) on stream 0x5002 "
                     "at app.c:9 is not ordered after kernel 'use' on stream 0x5001");
    has(text, "a use after free");
}
END_TEST

START_TEST(a_free_after_an_event_is_not_reported)
{
    kernel("kernel 'use'", S1, "x", 0, 0, 4096, 0, 7);
    record(E1, S1);
    wait_ev(S2, E1);
    ks__hb_op f = op_on("cuMemFreeAsync", S2, 9);
    ks__hb_free(h, &f, BUF, 1);
    expect_reports(0);
    /* The address comes back in a new allocation: nothing of the old one is held against it. */
    ks__hb_alloc(h, BUF, 4096);
    kernel("kernel 'again'", S2, "x", 1, 0, 4096, 0, 8);
    expect_reports(0);
}
END_TEST

START_TEST(a_host_free_needs_the_host_to_have_seen_the_use)
{
    kernel("kernel 'use'", S1, "x", 1, 0, 4096, 0, 7);
    ks__hb_op f = op_on("cuMemFree", 0, 12);
    ks__hb_free(h, &f, BUF, 0);
    expect_reports(1);
    has(text, "races: cuMemFree of the allocation at 0x70000000 (4096 bytes) by the host at app.c:12");
    kernel("kernel 'use'", S1, "x", 1, 0, 4096, 0, 7);
    ks__hb_stream_sync(h, S1);
    ks__hb_free(h, &f, BUF, 0);
    expect_reports(0);
}
END_TEST

START_TEST(two_threads_with_their_own_streams)
{
    /* Each thread's per-thread default stream (blocking) and its own buffer. */
    ks__hb_stream_create(h, 0x9001, CTX, KS__STREAM_BLOCKING);
    ks__hb_stream_create(h, 0x9002, CTX, KS__STREAM_BLOCKING);
    for (int i = 0; i < 10; i++) {
        kernel("kernel 't1'", 0x9001, "x", 1, 0, 2048, 0, 1);
        ks__hb_op o = op_on("kernel 't2'", 0x9002, 2);
        ks__hb_access a = {BUF2, 4096, BUF2, BUF2 + 4096, 1, 0, "x"};
        ks__hb_op_issue(h, &o, &a, 1);
    }
    expect_reports(0);
    /* Sharing one buffer without order is a race. */
    ks__hb_op o = op_on("kernel 't2'", 0x9002, 3);
    ks__hb_access a = {BUF, 4096, BUF, BUF + 4096, 0, 0, "x"};
    ks__hb_op_issue(h, &o, &a, 1);
    expect_reports(1);
}
END_TEST

START_TEST(a_double_buffered_pipeline_over_many_rounds)
{
    /* Copy stream fills buffer i%2 while the compute stream works on the other;
     * events order each hand-over both ways. */
    uint64_t filled[2] = {0xf0, 0xf1}, used[2] = {0xd0, 0xd1};
    int recorded_use[2] = {0, 0};
    for (int r = 0; r < 500; r++) {
        int b = r % 2;
        uint64_t lo = (uint64_t)b * 2048;
        if (recorded_use[b])
            wait_ev(S2, used[b]);                 /* don't refill before compute is done with it */
        ks__hb_op c = op_on("cuMemcpyHtoDAsync", S2, 0);
        ks__hb_access w = {BUF, 4096, BUF + lo, BUF + lo + 2048, 1, 0, "dst"};
        ks__hb_op_issue(h, &c, &w, 1);
        record(filled[b], S2);
        wait_ev(S1, filled[b]);
        kernel("kernel 'compute'", S1, "in", 0, lo, lo + 2048, 0, 5);
        record(used[b], S1);
        recorded_use[b] = 1;
    }
    expect_reports(0);
    /* Dropping one wait makes it a race. */
    ks__hb_op c = op_on("cuMemcpyHtoDAsync", S2, 0);
    ks__hb_access w = {BUF, 4096, BUF, BUF + 2048, 1, 0, "dst"};
    kernel("kernel 'compute'", S1, "in", 0, 0, 2048, 0, 6);
    ks__hb_op_issue(h, &c, &w, 1);
    expect_reports(1);
}
END_TEST

START_TEST(a_pair_is_reported_once)
{
    for (int i = 0; i < 100; i++) {
        kernel("kernel 'a'", S1, "x", 1, 0, 4096, 0, 1);
        kernel("kernel 'b'", S2, "x", 1, 0, 4096, 0, 2);
    }
    /* a1 vs b2 and b2 vs a1 (both orders of the pair): two distinct reports. */
    ck_assert_uint_le(ks__hb_pending(h), 2);
    ck_assert_uint_ge(ks__hb_pending(h), 1);
}
END_TEST

START_TEST(a_destroyed_stream_handle_reused_is_a_new_stream)
{
    kernel("kernel 'a'", S1, "x", 1, 0, 4096, 0, 1);
    ks__hb_stream_destroy(h, S1);
    ks__hb_stream_create(h, S1, CTX, KS__STREAM_NONBLOCKING);
    kernel("kernel 'b'", S1, "x", 1, 0, 4096, 0, 2);
    expect_reports(1);
}
END_TEST

static Suite *races_suite(void)
{
    Suite *s = suite_create("races");
    TCase *tc = tcase_create("happens-before");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, unordered_writers_are_reported_naming_both);
    tcase_add_test(tc, a_report_says_whether_this_run_overlapped_them);
    tcase_add_test(tc, writers_ordered_by_an_event_are_not_reported);
    tcase_add_test(tc, writers_ordered_by_a_synchronisation_are_not_reported);
    tcase_add_test(tc, one_stream_is_ordered);
    tcase_add_test(tc, legacy_default_stream_orders_blocking_streams);
    tcase_add_test(tc, two_readers_are_not_reported);
    tcase_add_test(tc, a_reader_and_a_writer_are_reported);
    tcase_add_test(tc, disjoint_halves_with_extents_are_not_reported);
    tcase_add_test(tc, without_extents_a_conflict_is_possible_and_names_the_hint);
    tcase_add_test(tc, an_async_copy_into_a_buffer_another_stream_reads_is_reported);
    tcase_add_test(tc, a_free_on_another_stream_while_in_use_is_reported);
    tcase_add_test(tc, a_free_after_an_event_is_not_reported);
    tcase_add_test(tc, a_host_free_needs_the_host_to_have_seen_the_use);
    tcase_add_test(tc, two_threads_with_their_own_streams);
    tcase_add_test(tc, a_double_buffered_pipeline_over_many_rounds);
    tcase_add_test(tc, a_pair_is_reported_once);
    tcase_add_test(tc, a_destroyed_stream_handle_reused_is_a_new_stream);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(races_suite(), CK_FORK);
}
