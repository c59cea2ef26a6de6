/*
 * check_trace.c — the trace file (runtime/trace.c, common/tracefmt.h,
 * common/trace_render.c; issue 45) against the fake driver: a record is in
 * the file the moment its launch returns, so a process killed with SIGKILL
 * right after keeps it; threads of two processes appending to one file
 * never overlap and lose nothing (the file grown under them); torn records
 * (reserved, never finished) are rendered as such and the records after
 * them kept; a file that is not a trace is refused, never overwritten; and
 * `kstub trace` prints what the renderer does. One forked process per case.
 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "runtime_fixture.h"    /* the fake driver's controls (fake), ck_assert_status */
#include "testutil.h"           /* run_suite */
#include "trace_lines.h"        /* trace_lines: a trace as kstub trace prints it */

#ifndef KSTUB_PATH
#define KSTUB_PATH "build/bin/kstub"
#endif

/* scale(float *y, int n) */
static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry scale()\n{\n ret;\n}\n";
static ks_image image = KS_IMAGE_INIT("scale.cu", ptx, sizeof ptx, KS_IMAGE_PTX);
static const ks_param_desc params[] = {
    {0, 8, 8, KS_PARAM_POINTER, "y", "float *", 4, 4, NULL, 0, NULL},
    {8, 4, 4, KS_PARAM_SIGNED, "n", "int", 0, 0, NULL, 0, NULL},
};
static ks_kernel scale = KS_KERNEL_INIT(&image, "scale", "scale", 2, params, 0);
static const size_t offs[] = {0, 8}, sizes[] = {8, 4};

static ks_status launch_at(unsigned long long y, int n, const char *file, int line)
{
    void *args[2] = {&y, &n};
    ks_launch l = ks_launch_1d(1, 32);
    return ks_kernel_launch_at(&scale, &l, args, file, line);
}

static char path[64];

static void setup(void)
{
    unsetenv("KSTUB_CHECK");
    unsetenv("KSTUB_TRACE");
    fake_cuda_open();
    fake.set_params("scale", 2, offs, sizes);
    snprintf(path, sizeof path, "/tmp/kstub-trace-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

/* Every line of the rendered trace, parsed; *n of them; torn ones counted in *torn. */
static json_t **records(size_t *n, unsigned long long *torn)
{
    ks__trace_counts c;
    FILE *f = trace_lines(path, &c);
    ck_assert_ptr_nonnull(f);
    size_t cap = 16;
    json_t **all = malloc(cap * sizeof *all);
    char line[8192];
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t err;
        json_t *j = json_loads(line, 0, &err);
        ck_assert_msg(j != NULL, "not JSON (%s): %s", err.text, line);
        if (*n == cap)
            all = realloc(all, (cap *= 2) * sizeof *all);
        all[(*n)++] = j;
    }
    fclose(f);
    *torn = c.torn;
    return all;
}

static void free_records(json_t **all, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(all[i]);
    free(all);
}

static long long num(json_t *j, const char *key)
{
    return json_integer_value(json_object_get(j, key));
}

/* The n of a launch record (its second argument's value). */
static long long arg_n(json_t *j)
{
    return num(json_array_get(json_object_get(j, "args"), 1), "value");
}

/* A process killed with SIGKILL right after a launch returns: its record
 * is in the file, whole, with its status and arguments. */
START_TEST(sigkill_right_after_a_launch_keeps_its_record)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        if (ks_trace_set_file(path) != KS_OK || ks_checks_set(KS_CHECK_TRACE) != KS_OK ||
            launch_at(0x1000, 41, "kill.c", 1) != KS_OK || launch_at(0x2000, 42, "kill.c", 2) != KS_OK)
            _exit(1);
        kill(getpid(), SIGKILL);
        _exit(2);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child was not killed: %d", status);
    size_t n;
    unsigned long long torn;
    json_t **all = records(&n, &torn);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(torn, 0);
    json_t *last = all[1];
    ck_assert_int_eq(num(last, "pid"), child);
    ck_assert_int_eq(num(last, "seq"), 2);
    ck_assert_str_eq(json_string_value(json_object_get(last, "site")), "kill.c:2");
    ck_assert_str_eq(json_string_value(json_object_get(last, "status")), "KS_OK");
    ck_assert_int_eq(arg_n(last), 42);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(last, "args"), 0), "pointer")),
                     "0x2000");
    free_records(all, n);
}
END_TEST

/* A child forked after tracing began writes into the same mapping as a
 * process of its own: its pid, its sequence from 1. */
START_TEST(a_forked_child_traces_as_itself)
{
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    ck_assert_status(launch_at(0x1000, 1, "fork.c", 1), KS_OK);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0)
        _exit(launch_at(0x1000, 2, "fork.c", 2) == KS_OK ? 0 : 1);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_status(launch_at(0x1000, 3, "fork.c", 3), KS_OK);
    size_t n;
    unsigned long long torn;
    json_t **all = records(&n, &torn);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(torn, 0);
    long long want_pid[3] = {getpid(), child, getpid()}, want_seq[3] = {1, 1, 2};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(arg_n(all[i]), (long long)i + 1);
        ck_assert_int_eq(num(all[i], "pid"), want_pid[i]);
        ck_assert_int_eq(num(all[i], "seq"), want_seq[i]);
    }
    free_records(all, n);
}
END_TEST

enum { PROCS = 2, THREADS = 4, EACH = 1500 };

static void *launcher(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < EACH; i++)
        if (launch_at(0x1000, t * EACH + i, NULL, 0) != KS_OK)
            return (void *)1;
    return NULL;
}

/* Two processes, each with its own opening of one file, and four threads
 * in each, launch 12,000 times together (the file grows past its first
 * chunk while they do): every record is in the file, whole, once; none
 * overlaps another (each parses, none is torn). */
START_TEST(threads_and_processes_share_one_file)
{
    pid_t kids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        kids[p] = fork();
        ck_assert_int_ge(kids[p], 0);
        if (kids[p] == 0) {
            if (ks_trace_set_file(path) != KS_OK || ks_checks_set(KS_CHECK_TRACE) != KS_OK)
                _exit(1);
            pthread_t th[THREADS];
            for (int t = 0; t < THREADS; t++)
                pthread_create(&th[t], NULL, launcher, (void *)(intptr_t)t);
            int failed = 0;
            for (int t = 0; t < THREADS; t++) {
                void *r;
                pthread_join(th[t], &r);
                failed |= r != NULL;
            }
            _exit(failed);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int status;
        ck_assert_int_eq(waitpid(kids[p], &status, 0), kids[p]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d failed: %d", p, status);
    }
    size_t n;
    unsigned long long torn;
    json_t **all = records(&n, &torn);
    ck_assert_uint_eq(torn, 0);
    ck_assert_uint_eq(n, PROCS * THREADS * EACH);
    static unsigned char seen_seq[PROCS][THREADS * EACH + 1], seen_n[PROCS][THREADS * EACH];
    for (size_t i = 0; i < n; i++) {
        long long pid = num(all[i], "pid"), seq = num(all[i], "seq"), v = arg_n(all[i]);
        int p = pid == kids[0] ? 0 : pid == kids[1] ? 1 : -1;
        ck_assert_msg(p >= 0, "record %zu of pid %lld", i, pid);
        ck_assert(seq >= 1 && seq <= THREADS * EACH && v >= 0 && v < THREADS * EACH);
        ck_assert_msg(!seen_seq[p][seq] && !seen_n[p][v], "record %zu twice", i);
        seen_seq[p][seq] = seen_n[p][v] = 1;
    }
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_gt(sb.st_size, KS_TRACE_HEADER + KS_TRACE_CHUNK);   /* it grew while they wrote */
    free_records(all, n);
}
END_TEST

static uint32_t word_at(int fd, off_t off)
{
    uint32_t w;
    ck_assert_int_eq(pread(fd, &w, 4, off), 4);
    return w;
}

static void put_word(int fd, off_t off, uint32_t w)
{
    ck_assert_int_eq(pwrite(fd, &w, 4, off), 4);
}

/* A record whose writer died before marking it whole is torn: rendered as
 * {"torn":true,...} with its offset and bytes, the records after it kept;
 * so is one that died before even its size was stored (found by scanning
 * to the next whole record), and bytes reserved at the end, never
 * written. */
START_TEST(torn_records_rendered_and_skipped)
{
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    for (int i = 1; i <= 3; i++)
        ck_assert_status(launch_at(0x1000, i, "t.c", i), KS_OK);
    ck_assert_status(ks_trace_set_file(NULL), KS_OK);     /* unmapped: the file is the test's now */
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    off_t second = KS_TRACE_HEADER + word_at(fd, KS_TRACE_HEADER + 4);
    uint32_t size2 = word_at(fd, second + 4);
    char want[96];
    snprintf(want, sizeof want, "{\"torn\":true,\"offset\":%lld,\"bytes\":%u}\n", (long long)second, size2);
    for (int how = 0; how < 3; how++) {
        if (how == 0)
            put_word(fd, second, 0);                      /* no mark */
        else if (how == 1)
            put_word(fd, second + 4, 0);                  /* no size either */
        else {
            uint64_t next;                                /* 48 bytes reserved at the end, never written */
            ck_assert_int_eq(pread(fd, &next, 8, 16), 8);
            next += 48;
            ck_assert_int_eq(pwrite(fd, &next, 8, 16), 8);
        }
        ks__trace_counts c;
        FILE *f = trace_lines(path, &c);
        ck_assert_ptr_nonnull(f);
        char line[4096];
        int i = 0;
        while (fgets(line, sizeof line, f)) {
            if (i == 1)
                ck_assert_str_eq(line, want);
            else if (i == 3)
                ck_assert_msg(strstr(line, "{\"torn\":true,") == line && strstr(line, ",\"bytes\":48}"), "%s", line);
            else
                ck_assert_msg(strstr(line, i == 0 ? "\"site\":\"t.c:1\"" : "\"site\":\"t.c:3\""), "%s", line);
            i++;
        }
        fclose(f);
        ck_assert_int_eq(i, how == 2 ? 4 : 3);
        ck_assert_uint_eq(c.records, 2);
        ck_assert_uint_eq(c.torn, how == 2 ? 2 : 1);
    }
    close(fd);
}
END_TEST

/* Whatever bytes a crash or a stray write leaves in the records, the
 * renderer reads within the file and prints what it can: 3,000 traces
 * with random bytes overwritten, each rendered without a fault, every
 * line JSON, one line per record or torn stretch. (A damaged byte inside
 * a marked record is printed as it is: the format has no checksum.) */
START_TEST(damaged_records_never_break_the_renderer)
{
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    for (int i = 1; i <= 8; i++)
        ck_assert_status(launch_at(0x1000, i, i % 2 ? "t.c" : NULL, i), KS_OK);
    ck_assert_status(ks_trace_set_file(NULL), KS_OK);
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    uint64_t end;
    ck_assert_int_eq(pread(fd, &end, 8, 16), 8);
    size_t len = (size_t)end - KS_TRACE_HEADER;
    unsigned char *good = malloc(len);
    ck_assert_int_eq(pread(fd, good, len, KS_TRACE_HEADER), (ssize_t)len);
    unsigned seed = 45;
    for (int round = 0; round < 3000; round++) {
        ck_assert_int_eq(pwrite(fd, good, len, KS_TRACE_HEADER), (ssize_t)len);
        for (int k = 0, flips = 1 + rand_r(&seed) % 8; k < flips; k++) {
            unsigned char b = (unsigned char)rand_r(&seed);
            off_t at = KS_TRACE_HEADER + (off_t)(rand_r(&seed) % len);
            ck_assert_int_eq(pwrite(fd, &b, 1, at), 1);
        }
        ks__trace_counts c;
        FILE *f = trace_lines(path, &c);
        ck_assert_ptr_nonnull(f);
        char line[16384];
        unsigned long long lines = 0;
        while (fgets(line, sizeof line, f)) {
            json_error_t err;
            json_t *j = json_loads(line, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &err);   /* damage: seq past 2^63, NULs */
            ck_assert_msg(j != NULL, "round %d: not JSON (%s): %s", round, err.text, line);
            json_decref(j);
            lines++;
        }
        fclose(f);
        ck_assert_uint_eq(lines, c.records + c.torn);
        ck_assert_uint_le(c.records, 8);
    }
    free(good);
    close(fd);
}
END_TEST

/* A file with other contents (say, a JSON-lines trace of an older kstub)
 * is not a trace: the first launch is refused saying so and the file is
 * left as it was; so is a trace of another format version, which the
 * renderer names. */
START_TEST(a_file_that_is_no_trace_is_not_overwritten)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"seq\":1}\n", f);
    fclose(f);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    ck_assert_status(launch_at(0, 1, NULL, 0), KS_ERR_IO);
    ck_assert_message_has("cannot be opened: it is not empty and not a kstub trace (which is not overwritten)");
    ck_assert_status(launch_at(0, 1, NULL, 0), KS_OK);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_size, 10);
    int fd = open(path, O_RDONLY);
    char why[256];
    ck_assert_int_eq(ks__trace_render(fd, stdout, NULL, why, sizeof why), -1);
    ck_assert_str_eq(why, "not a kstub trace file (no KSTRACE header)");
    close(fd);
    /* a later format */
    ck_assert_int_eq(truncate(path, 0), 0);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(launch_at(0, 1, NULL, 0), KS_OK);
    fd = open(path, O_RDWR);
    put_word(fd, 8, KS_TRACE_VERSION + 1);
    ck_assert_int_eq(ks__trace_render(fd, stdout, NULL, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "format version 2, which this kstub (version 1) does not read"), "%s", why);
    close(fd);
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(launch_at(0, 1, NULL, 0), KS_ERR_IO);
    ck_assert_message_has("it is a kstub trace of format version 2, not 1");
}
END_TEST

/* `kstub trace FILE` prints the renderer's lines; no trace is exit 1 with
 * the reason, no file a usage error. */
START_TEST(kstub_trace_prints_the_lines)
{
    ck_assert_status(ks_trace_set_file(path), KS_OK);
    ck_assert_status(ks_checks_set(KS_CHECK_TRACE), KS_OK);
    ck_assert_status(launch_at(0x1000, 7, "app.c", 3), KS_OK);
    char cmd[256], out[4096];
    snprintf(cmd, sizeof cmd, "%s trace %s 2>&1", KSTUB_PATH, path);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_msg(strstr(out, "\"kernel\":\"scale\",\"symbol\":\"scale\",\"grid\":[1,1,1],\"block\":[32,1,1],"
                              "\"shared\":0,\"stream\":\"0x0\",\"site\":\"app.c:3\",\"status\":\"KS_OK\",\"args\":"
                              "[{\"name\":\"y\",\"type\":\"float *\",\"offset\":0,\"size\":8,\"bytes\":"
                              "\"0010000000000000\",\"pointer\":\"0x1000\"},{\"name\":\"n\",\"type\":\"int\","
                              "\"offset\":8,\"size\":4,\"bytes\":\"07000000\",\"value\":7}]}\n") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "%s trace %s 2>&1", KSTUB_PATH, "/etc/hostname");
    p = popen(cmd, "r");
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    ck_assert_int_eq(WEXITSTATUS(st), 1);
    ck_assert_msg(strstr(out, "kstub trace: error: /etc/hostname: not a kstub trace file"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s trace >/dev/null 2>&1", KSTUB_PATH);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *c = tcase_create("file");
    tcase_add_checked_fixture(c, setup, teardown);
    tcase_set_timeout(c, 120);
    tcase_add_test(c, sigkill_right_after_a_launch_keeps_its_record);
    tcase_add_test(c, a_forked_child_traces_as_itself);
    tcase_add_test(c, threads_and_processes_share_one_file);
    tcase_add_test(c, torn_records_rendered_and_skipped);
    tcase_add_test(c, damaged_records_never_break_the_renderer);
    tcase_add_test(c, a_file_that_is_no_trace_is_not_overwritten);
    tcase_add_test(c, kstub_trace_prints_the_lines);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    return run_suite(trace_suite(), CK_FORK);
}
