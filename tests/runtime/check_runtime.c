/*
 * check_runtime.c — libkstub against a fake driver (tests/support/fake_cuda.c), so
 * the whole runtime (driver loading, image load, ABI check, launch, errors,
 * contexts, threads, NVRTC and its cache) is tested on machines without a
 * GPU. The cases live in check_runtime_*.c, one file per area, sharing
 * tests/support/runtime_fixture.h; this file makes them one suite.
 *
 * Each case runs in its own forked process (forced below, whatever CK_FORK
 * says): libkstub loads its driver once per process and the test kernels
 * keep their handles in static storage, so a fresh process per case is what
 * makes the cases independent.
 */
#include "runtime_fixture.h"
#include "testutil.h"     /* run_suite */

static Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    runtime_cases_driver(s);
    runtime_cases_launch(s);
    runtime_cases_load(s);
    runtime_cases_nvrtc(s);
    runtime_cases_cache(s);
    runtime_cases_cache_key(s);
    runtime_cases_global(s);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--secure-env-probe") == 0)
        return secure_env_probe();
    /* Not CK_FORK's default of "ask the environment": see the top of the file. */
    return run_suite(runtime_suite(), CK_FORK);
}
