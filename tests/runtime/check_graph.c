/*
 * check_graph.c — libkstub's graphs against the fake driver (tests/support/fake_cuda.c):
 * the generated <kernel>_node / <kernel>_node_set entry points of the golden
 * file (tests/golden/basic.kstub.c, compiled in), and the runtime's graph
 * life cycle (runtime/graph.c).
 *
 * The fake records each kernel node a cuGraphLaunch runs with the bytes of
 * its arguments at the kernel's offsets, as it records a launch, so a node
 * and a stub call with the same arguments can be compared byte for byte.
 * Each case runs in its own process (libkstub resolves its driver once).
 */
#include "runtime_fixture.h"    /* the fake driver's controls (fake), ck_assert_status */
#include "testutil.h"           /* run_suite */
#include "basic.kstub.h"

/* Register a generated kernel's layout with the fake, from its own descriptor. */
static void register_kernel(const ks_kernel *k)
{
    size_t off[16], size[16];
    for (unsigned i = 0; i < k->nparams; i++)
        off[i] = k->params[i].offset, size[i] = k->params[i].size;
    fake.set_params(k->symbol, k->nparams, off, size);
}

static void setup(void)
{
    fake_cuda_open();
    unsetenv("KSTUB_LOADER");
    register_kernel(&fill_kernel);
    register_kernel(&mixed_kernel);
    register_kernel(&no_params_kernel);
    register_kernel(&physics_clamp__floatp_float_float_kernel);
}

/* ---- a three-kernel graph, the same calls as stubs ------------------------------ */

static float *const OUT = (float *)(uintptr_t)0x7f0000001000;
static float *const X = (float *)(uintptr_t)0x7f0000002000;
static volatile unsigned *const FLAGS = (volatile unsigned *)(uintptr_t)0x7f0000003000;
static const float *const IN = (const float *)(uintptr_t)0x7f0000004000;

typedef struct built {
    ks_graph graph;
    fill_node_t fill;
    mixed_node_t mixed;
    no_params_node_t none;
    physics_clamp__floatp_float_float_node_t clamp;
    ks_graph_exec exec;
} built;

/* fill -> mixed -> {no_params, clamp}: scalars of every width, a bool, pointers. */
static void build(built *b, float value)
{
    ck_assert_status(ks_graph_create(&b->graph), KS_OK);
    ck_assert_ptr_nonnull(b->graph);
    ck_assert_status(fill_node(b->graph, NULL, 0, &b->fill, ks_launch_1d(4, 256), OUT, value, (size_t)1024),
                     KS_OK);
    ck_assert_status(mixed_node(b->graph, &b->fill.node, 1, &b->mixed, ks_launch_1d(2, 128), 'q', -2.5, (short)-7,
                                (int64_t)1 << 40, true, IN, FLAGS, NULL),
                     KS_OK);
    ck_assert_status(no_params_node(b->graph, &b->mixed.node, 1, &b->none, ks_launch_1d(1, 32)), KS_OK);
    ck_assert_status(physics_clamp__floatp_float_float_node(b->graph, &b->mixed.node, 1, &b->clamp,
                                                            ks_launch_1d(8, 64), X, -1.0f, 1.0f),
                     KS_OK);
    ck_assert_status(ks_graph_instantiate(b->graph, &b->exec), KS_OK);
    ck_assert_ptr_nonnull(b->exec);
}

static void destroy(built *b)
{
    ck_assert_status(ks_graph_exec_destroy(b->exec), KS_OK);
    ck_assert_status(ks_graph_destroy(b->graph), KS_OK);
}

/* Launch i and launch j ran the same kernel with the same configuration and bytes. */
static void same_launch(int i, int j)
{
    const fake_launch *a = fake.launch(i), *b = fake.launch(j);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(a->symbol, b->symbol);
    ck_assert_mem_eq(a->grid, b->grid, sizeof a->grid);
    ck_assert_mem_eq(a->block, b->block, sizeof a->block);
    ck_assert_uint_eq(a->shared, b->shared);
    ck_assert_uint_eq(a->nparams, b->nparams);
    ck_assert_mem_eq(a->params, b->params, sizeof a->params);
}

START_TEST(nodes_pack_as_stubs_do)
{
    built b;
    build(&b, 2.5f);
    CUstream user = (CUstream)(uintptr_t)0x5150;
    ck_assert_status(ks_graph_launch(b.exec, user), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 4);
    /* The same four calls as stubs, in the graph's order. */
    ck_assert_status(fill(ks_launch_on(ks_launch_1d(4, 256), user), OUT, 2.5f, (size_t)1024), KS_OK);
    ck_assert_status(mixed(ks_launch_1d(2, 128), 'q', -2.5, (short)-7, (int64_t)1 << 40, true, IN, FLAGS, NULL),
                     KS_OK);
    ck_assert_status(no_params(ks_launch_1d(1, 32)), KS_OK);
    ck_assert_status(physics_clamp__floatp_float_float(ks_launch_1d(8, 64), X, -1.0f, 1.0f), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 8);
    for (int i = 0; i < 4; i++) {
        same_launch(i, 4 + i);
        ck_assert_int_eq(fake.launch(i)->graph, 1);
        ck_assert_int_eq(fake.launch(4 + i)->graph, 0);
        ck_assert_ptr_eq(fake.launch(i)->stream, user);
    }
    /* The bytes themselves: fill's value at offset 8, mixed's int64 at 16. */
    float v;
    memcpy(&v, fake.launch(0)->params + 8, sizeof v);
    ck_assert_float_eq(v, 2.5f);
    int64_t i64;
    memcpy(&i64, fake.launch(1)->params + mixed_kernel.params[3].offset, sizeof i64);
    ck_assert_int_eq(i64, (int64_t)1 << 40);
    destroy(&b);
    int execs = -1;
    ck_assert_int_eq(fake.live_graphs(&execs), 0);
    ck_assert_int_eq(execs, 0);
}
END_TEST

START_TEST(entry_points_resolved_for_this_cuda)
{
    built b;
    build(&b, 1.0f);
    const char *names[] = {"cuGraphCreate", "cuGraphAddKernelNode", "cuGraphInstantiateWithFlags",
                           "cuGraphLaunch", "cuGraphExecUpdate", "cuGraphKernelNodeGetParams",
                           "cuGraphExecKernelNodeSetParams", "cuGraphDestroy", "cuGraphExecDestroy"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(fake.proc_version_of(names[i]) == CUDA_VERSION, "%s looked up at %d", names[i],
                      fake.proc_version_of(names[i]));
    destroy(&b);
}
END_TEST

START_TEST(streams_pass_through)
{
    built b;
    build(&b, 1.0f);
    ks_stream streams[3] = {NULL, KS_STREAM_PER_THREAD, (ks_stream)(uintptr_t)0xabc0};
    for (int s = 0; s < 3; s++) {
        ck_assert_status(ks_graph_launch(b.exec, streams[s]), KS_OK);
        ck_assert_ptr_eq(fake.launch(4 * s)->stream, streams[s]);
        ck_assert_ptr_eq(fake.launch(4 * s + 3)->stream, streams[s]);
    }
    destroy(&b);
}
END_TEST

START_TEST(node_set_changes_the_next_launches_only_of_that_instance)
{
    built b;
    build(&b, 1.0f);
    ck_assert_status(fill_node_set(b.exec, b.fill, ks_launch_1d(16, 64), X, 7.0f, (size_t)99), KS_OK);
    ck_assert_status(physics_clamp__floatp_float_float_node_set(b.exec, b.clamp, ks_launch_1d(3, 32), OUT,
                                                                 0.0f, 0.5f),
                     KS_OK);
    ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(16, 64), X, 7.0f, (size_t)99), KS_OK);
    ck_assert_status(physics_clamp__floatp_float_float(ks_launch_1d(3, 32), OUT, 0.0f, 0.5f), KS_OK);
    same_launch(0, 4);
    same_launch(3, 5);
    /* The graph itself keeps what it was built with: a new instance launches that. */
    ks_graph_exec second;
    ck_assert_status(ks_graph_instantiate(b.graph, &second), KS_OK);
    ck_assert_status(ks_graph_launch(second, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(4, 256), OUT, 1.0f, (size_t)1024), KS_OK);
    same_launch(6, 10);
    ck_assert_status(ks_graph_exec_destroy(second), KS_OK);
    destroy(&b);
}
END_TEST

START_TEST(node_set_refuses_another_kernels_node)
{
    built b;
    build(&b, 1.0f);
    /* clamp's update on fill's node, known only as a ks_graph_node (the typed
     * node_set does not compile with it): the driver would switch the
     * kernel; the checked path refuses. */
    float lo = 0.0f, hi = 1.0f;
    float *x = X;
    void *clamp_args[3] = {&x, &lo, &hi};
    ks_launch one = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_node_set(&physics_clamp__floatp_float_float_kernel, b.exec, b.fill.node, &one,
                                        clamp_args),
                     KS_ERR_GRAPH_MISMATCH);
    ck_assert_message_has("physics::clamp");
    ck_assert_message_has("launches another kernel");
    ck_assert_message_has("cuGraphKernelNodeGetParams: 'fill'");   /* and names the kernel it has */
    ck_assert_int_eq(fake.calls("cuGraphExecKernelNodeSetParams"), 0);
    /* An empty node the application added with the driver: not a kernel node. */
    void *fn = NULL;
    ck_assert_status(ks_driver_proc("cuGraphAddEmptyNode", &fn), KS_OK);
    CUresult (*add_empty)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
    memcpy(&add_empty, &fn, sizeof fn);
    CUgraphNode empty;
    ck_assert_int_eq(add_empty(&empty, b.graph, &b.none.node, 1), CUDA_SUCCESS);
    float zero = 0.0f;
    size_t count = 1;
    void *packed[3] = {&x, &zero, &count};
    ck_assert_status(ks_kernel_node_set(&fill_kernel, b.exec, empty, &one, packed), KS_ERR_GRAPH_MISMATCH);
    ck_assert_message_has("is not a kernel node");
    ck_assert_message_has("cuGraphKernelNodeGetParams");
    /* A node of fill in another graph: not in this instance, the driver says so. */
    ks_graph other;
    fill_node_t stray;
    ck_assert_status(ks_graph_create(&other), KS_OK);
    ck_assert_status(fill_node(other, NULL, 0, &stray, ks_launch_1d(1, 32), X, 0.0f, (size_t)1), KS_OK);
    ck_assert_status(fill_node_set(b.exec, stray, ks_launch_1d(1, 32), X, 0.0f, (size_t)1), KS_ERR_DRIVER);
    ck_assert_message_has("cuGraphExecKernelNodeSetParams");
    ck_assert_message_has("CUDA_ERROR_INVALID_VALUE");
    /* Nothing changed: the instance still launches what it was built with. */
    ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(4, 256), OUT, 1.0f, (size_t)1024), KS_OK);
    same_launch(0, 4);
    ck_assert_status(ks_graph_destroy(other), KS_OK);
    destroy(&b);
}
END_TEST

START_TEST(exec_update_checks_topology_and_kernels)
{
    built b;
    build(&b, 1.0f);
    /* The same shape with other arguments: updated in place. */
    built again;
    build(&again, 9.0f);
    ck_assert_status(ks_graph_exec_update(b.exec, again.graph), KS_OK);
    ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(4, 256), OUT, 9.0f, (size_t)1024), KS_OK);
    same_launch(0, 4);
    /* One node fewer: refused, the instance unchanged. */
    ks_graph small;
    fill_node_t n;
    ck_assert_status(ks_graph_create(&small), KS_OK);
    ck_assert_status(fill_node(small, NULL, 0, &n, ks_launch_1d(4, 256), OUT, 3.0f, (size_t)1024), KS_OK);
    ck_assert_status(ks_graph_exec_update(b.exec, small), KS_ERR_GRAPH_MISMATCH);
    ck_assert_message_has("the topology changed");
    ck_assert_message_has("cuGraphExecUpdate");
    /* Same shape, another kernel at the root. */
    ks_graph swapped;
    physics_clamp__floatp_float_float_node_t s1;
    mixed_node_t s2;
    no_params_node_t s3, s4;
    ck_assert_status(ks_graph_create(&swapped), KS_OK);
    ck_assert_status(physics_clamp__floatp_float_float_node(swapped, NULL, 0, &s1, ks_launch_1d(1, 32), X, 0.0f, 1.0f),
                     KS_OK);
    ck_assert_status(mixed_node(swapped, &s1.node, 1, &s2, ks_launch_1d(2, 128), 'q', -2.5, (short)-7, (int64_t)1, true,
                                IN, FLAGS, NULL),
                     KS_OK);
    ck_assert_status(no_params_node(swapped, &s2.node, 1, &s3, ks_launch_1d(1, 32)), KS_OK);
    ck_assert_status(no_params_node(swapped, &s2.node, 1, &s4, ks_launch_1d(1, 32)), KS_OK);
    ck_assert_status(ks_graph_exec_update(b.exec, swapped), KS_ERR_GRAPH_MISMATCH);
    ck_assert_message_has("function changed");
    ck_assert_message_has("cuGraphExecUpdate");
    ck_assert_message_has("a node of kernel '_ZN7physics5clampEPfff'");   /* the node that differs */
    int before = fake.launch_count();
    ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    same_launch(0, before);
    ck_assert_status(ks_graph_destroy(small), KS_OK);
    ck_assert_status(ks_graph_destroy(swapped), KS_OK);
    destroy(&again);
    destroy(&b);
}
END_TEST

START_TEST(configuration_checked_before_the_driver)
{
    ks_graph g;
    fill_node_t n;
    mixed_node_t m;
    ks_graph_node raw = (ks_graph_node)(uintptr_t)1;
    n.node = (ks_graph_node)(uintptr_t)1;
    n.ks__target.ks__kern = (void *)1;
    ck_assert_status(ks_graph_create(&g), KS_OK);
    ck_assert_status(fill_node(g, NULL, 0, &n, ks_launch_1d(0, 32), OUT, 1.0f, (size_t)1), KS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(n.node);
    ck_assert_ptr_null(n.ks__target.ks__kern);   /* the handle is zeroed: an update of it is refused */
    ck_assert_message_has("must have every dimension >= 1");
    /* mixed has __launch_bounds__(128). */
    ck_assert_status(mixed_node(g, NULL, 0, &m, ks_launch_1d(1, 256), 'a', 0.0, (short)0, (int64_t)0, false, IN,
                                FLAGS, NULL),
                     KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("__launch_bounds__ allows 128");
    ks_launch big = ks_launch_1d(1, 32);
    big.shared_bytes = 64 * 1024;
    ck_assert_status(fill_node(g, NULL, 0, &n, big, OUT, 1.0f, (size_t)1), KS_ERR_INVALID_CONFIG);
    ck_assert_message_has("ks_kernel_set_max_shared");
    ks_launch_attrs a = ks_launch_attrs_cooperative(ks_launch_attrs_none());
    ck_assert_status(fill_node(g, NULL, 0, &n, ks_launch_with(ks_launch_1d(1, 32), &a), OUT, 1.0f, (size_t)1),
                     KS_ERR_UNSUPPORTED);
    ck_assert_message_has("cuGraphKernelNodeSetAttribute");
    ck_assert_status(fill_node(g, NULL, 1, &n, ks_launch_1d(1, 32), OUT, 1.0f, (size_t)1), KS_ERR_INVALID_VALUE);
    ck_assert_status(fill_node(g, NULL, 0, NULL, ks_launch_1d(1, 32), OUT, 1.0f, (size_t)1), KS_ERR_INVALID_VALUE);
    ck_assert_status(fill_node(NULL, NULL, 0, &n, ks_launch_1d(1, 32), OUT, 1.0f, (size_t)1), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_kernel_node_add(&fill_kernel, g, NULL, 0, &big, NULL, &raw), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_typed_node_add(&fill_kernel, g, NULL, 0, &big, NULL, &raw, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_graph_create(NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_graph_instantiate(g, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_graph_launch(NULL, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_graph_exec_update(NULL, g), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_graph_destroy(NULL), KS_OK);
    ck_assert_status(ks_graph_exec_destroy(NULL), KS_OK);
    ck_assert_int_eq(fake.calls("cuGraphAddKernelNode"), 0);
    /* Opted in, the same node is added. */
    ck_assert_status(ks_kernel_set_max_shared(&fill_kernel, 64 * 1024), KS_OK);
    ck_assert_status(fill_node(g, NULL, 0, &n, big, OUT, 1.0f, (size_t)1), KS_OK);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
}
END_TEST

/* Each driver call a graph makes, failing in turn: the right status, the call
 * named, no handle returned, nothing left behind, and the next try works. */
static const struct { const char *entry; ks_status want; } failing[] = {
    {"cuGraphCreate", KS_ERR_DRIVER},
    {"cuLibraryLoadData", KS_ERR_LOAD},
    {"cuLibraryGetKernel", KS_ERR_DRIVER},        /* INVALID_VALUE: a driver error, not a missing symbol */
    {"cuGraphAddKernelNode", KS_ERR_DRIVER},
    {"cuGraphInstantiateWithFlags", KS_ERR_DRIVER},
    {"cuGraphLaunch", KS_ERR_LAUNCH},
    {"cuGraphKernelNodeGetParams", KS_ERR_DRIVER},   /* once, when the typed node is added */
    {"cuGraphExecKernelNodeSetParams", KS_ERR_DRIVER},
    {"cuGraphExecUpdate", KS_ERR_DRIVER},
    {"cuGraphExecDestroy", KS_ERR_DRIVER},
    {"cuGraphDestroy", KS_ERR_DRIVER},
};

/* One pass of the life cycle; the first failure is returned (and the handles released). */
static ks_status life_cycle(void)
{
    ks_graph g = NULL;
    ks_graph_exec e = NULL;
    fill_node_t n;
    memset(&n, 0, sizeof n);
    ks_status st = ks_graph_create(&g);
    if (st != KS_OK) {
        ck_assert_ptr_null(g);
        return st;
    }
    st = fill_node(g, NULL, 0, &n, ks_launch_1d(1, 32), OUT, 1.0f, (size_t)1);
    if (st != KS_OK)   /* the node is in the graph when only its read-back failed */
        ck_assert(n.node == NULL || fake.calls("cuGraphKernelNodeGetParams") == 1);
    if (st == KS_OK && (st = ks_graph_instantiate(g, &e)) != KS_OK)
        ck_assert_ptr_null(e);
    if (st == KS_OK)
        st = ks_graph_launch(e, NULL);
    if (st == KS_OK)
        st = fill_node_set(e, n, ks_launch_1d(2, 32), X, 2.0f, (size_t)2);
    if (st == KS_OK)
        st = ks_graph_exec_update(e, g);
    ks_status st2 = ks_graph_exec_destroy(e);
    if (st2 != KS_OK) {
        if (st == KS_OK)
            st = st2;
        ck_assert_status(ks_graph_exec_destroy(e), KS_OK);   /* released after all */
    }
    st2 = ks_graph_destroy(g);
    if (st2 != KS_OK) {
        if (st == KS_OK)
            st = st2;
        ck_assert_status(ks_graph_destroy(g), KS_OK);
    }
    return st;
}

START_TEST(each_driver_call_failing)
{
    fake.inject(failing[_i].entry, CUDA_ERROR_INVALID_VALUE, 1);
    ck_assert_status(life_cycle(), failing[_i].want);
    ck_assert_message_has(failing[_i].entry);
    int execs = -1;
    ck_assert_int_eq(fake.live_graphs(&execs), 0);
    ck_assert_int_eq(execs, 0);
    /* The next try goes through, and the launch it made is fill's. */
    int before = fake.launch_count();
    ck_assert_status(life_cycle(), KS_OK);
    ck_assert_int_eq(fake.launch_count(), before + 1);
    ck_assert_str_eq(fake.launch(before)->symbol, "fill");
    ck_assert_int_eq(fake.live_graphs(&execs), 0);
    ck_assert_int_eq(execs, 0);
}
END_TEST

START_TEST(a_driver_without_graphs)
{
    fake.hide("cuGraphAddKernelNode");
    ks_graph g = (ks_graph)(uintptr_t)1;
    ck_assert_status(ks_graph_create(&g), KS_ERR_UNSUPPORTED);
    ck_assert_ptr_null(g);
    ck_assert_message_has("lacks cuGraphAddKernelNode");
    /* Stubs are unaffected. */
    ck_assert_status(fill(ks_launch_1d(1, 32), OUT, 1.0f, (size_t)1), KS_OK);
}
END_TEST

START_TEST(a_thread_without_a_context)
{
    fake.no_current_context();
    built b;
    build(&b, 1.0f);   /* cuGraphAddKernelNode fails once without a context; the primary one is made current */
    ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 4);
    ck_assert_int_eq(fake.launch(0)->ctx, 0);
    destroy(&b);
}
END_TEST

START_TEST(module_fallback_nodes_use_the_contexts_function)
{
    setenv("KSTUB_LOADER", "module", 1);
    built b;
    build(&b, 4.0f);
    ck_assert_int_eq(fake.live_modules(), 1);
    ck_assert_int_eq(fake.calls("cuLibraryLoadData"), 0);
    ck_assert_status(fill_node_set(b.exec, b.fill, ks_launch_1d(5, 32), X, 5.0f, (size_t)5), KS_OK);
    float *x = X;
    float lo = 0.0f, hi = 1.0f;
    void *clamp_args[3] = {&x, &lo, &hi};
    ks_launch one = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_node_set(&physics_clamp__floatp_float_float_kernel, b.exec, b.fill.node, &one,
                                        clamp_args),
                     KS_ERR_GRAPH_MISMATCH);
    ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(5, 32), X, 5.0f, (size_t)5), KS_OK);
    same_launch(0, 4);
    destroy(&b);
}
END_TEST

START_TEST(thousand_updates_and_replays)
{
    built b;
    build(&b, 0.0f);
    for (int r = 0; r < 1000; r++) {
        ck_assert_status(fill_node_set(b.exec, b.fill, ks_launch_1d(4, 256), OUT, (float)r, (size_t)r), KS_OK);
        ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    }
    /* The fake keeps the first 64 launches: each replay's fill saw its own r. */
    for (int r = 0; r < FAKE_CUDA_MAX_LAUNCHES / 4; r++) {
        const fake_launch *l = fake.launch(4 * r);
        float v;
        size_t n;
        memcpy(&v, l->params + fill_kernel.params[1].offset, sizeof v);
        memcpy(&n, l->params + fill_kernel.params[2].offset, sizeof n);
        ck_assert_float_eq(v, (float)r);
        ck_assert_uint_eq(n, (size_t)r);
    }
    ck_assert_int_eq(fake.calls("cuGraphLaunch"), 1000);
    ck_assert_int_eq(fake.calls("cuGraphExecKernelNodeSetParams"), 1000);
    destroy(&b);
}
END_TEST

START_TEST(a_missing_symbol_refuses_the_node)
{
    /* The symbol is not in the image: the node is refused as the stub would be. */
    fake.inject("cuLibraryGetKernel", CUDA_ERROR_NOT_FOUND, 1);
    ks_graph g;
    fill_node_t n;
    n.node = (ks_graph_node)(uintptr_t)1;
    ck_assert_status(ks_graph_create(&g), KS_OK);
    ck_assert_status(fill_node(g, NULL, 0, &n, ks_launch_1d(1, 32), OUT, 1.0f, (size_t)1), KS_ERR_SYMBOL_NOT_FOUND);
    ck_assert_ptr_null(n.node);
    ck_assert_message_has("kernel 'fill'");
    ck_assert_message_has("cuLibraryGetKernel");
    ck_assert_int_eq(fake.calls("cuGraphAddKernelNode"), 0);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
}
END_TEST

START_TEST(a_node_is_refused_by_the_abi_check)
{
    /* The loaded mixed has a float where the stub packs the double d: the
     * load-time check refuses the node before the driver sees it. */
    size_t off[8], size[8];
    for (unsigned i = 0; i < mixed_kernel.nparams; i++)
        off[i] = mixed_kernel.params[i].offset, size[i] = mixed_kernel.params[i].size;
    size[1] = 4;
    fake.set_params(mixed_kernel.symbol, mixed_kernel.nparams, off, size);
    ks_graph g;
    fill_node_t root;
    mixed_node_t n;
    n.node = (ks_graph_node)(uintptr_t)1;
    ck_assert_status(ks_graph_create(&g), KS_OK);
    ck_assert_status(fill_node(g, NULL, 0, &root, ks_launch_1d(1, 32), OUT, 1.0f, (size_t)1), KS_OK);
    ck_assert_status(mixed_node(g, &root.node, 1, &n, ks_launch_1d(1, 32), 'a', 0.0, (short)0, (int64_t)0, false, IN,
                                FLAGS, NULL),
                     KS_ERR_ABI_MISMATCH);
    ck_assert_ptr_null(n.node);
    ck_assert_message_has("kernel 'mixed'");
    ck_assert_message_has("parameter 1");
    ck_assert_message_has("offset 8 size 4");
    ck_assert_int_eq(fake.calls("cuGraphAddKernelNode"), 1);   /* fill's only */
    /* Not published: refused again, and the stub is refused the same way. */
    ck_assert_status(mixed_node(g, &root.node, 1, &n, ks_launch_1d(1, 32), 'a', 0.0, (short)0, (int64_t)0, false, IN,
                                FLAGS, NULL),
                     KS_ERR_ABI_MISMATCH);
    ck_assert_status(mixed(ks_launch_1d(1, 32), 'a', 0.0, (short)0, (int64_t)0, false, IN, FLAGS, NULL),
                     KS_ERR_ABI_MISMATCH);
    ck_assert_int_eq(fake.launch_count(), 0);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
}
END_TEST

/* Issue 23: a typed node's update is one cuGraphExecKernelNodeSetParams; the
 * driver is asked which kernel the node launches only once, when it is added. */
START_TEST(typed_node_set_reads_nothing_back)
{
    built b;
    build(&b, 1.0f);
    ck_assert_int_eq(fake.calls("cuGraphKernelNodeGetParams"), 4);   /* one per node added */
    for (int r = 0; r < 10; r++)
        ck_assert_status(fill_node_set(b.exec, b.fill, ks_launch_1d(2, 32), X, (float)r, (size_t)r), KS_OK);
    ck_assert_status(no_params_node_set(b.exec, b.none, ks_launch_1d(3, 32)), KS_OK);
    ck_assert_int_eq(fake.calls("cuGraphKernelNodeGetParams"), 4);
    ck_assert_int_eq(fake.calls("cuGraphExecKernelNodeSetParams"), 11);
    ck_assert_status(ks_graph_launch(b.exec, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(2, 32), X, 9.0f, (size_t)9), KS_OK);
    ck_assert_status(no_params(ks_launch_1d(3, 32)), KS_OK);
    same_launch(0, 4);
    same_launch(2, 5);
    /* The configuration is still checked first, and a handle never filled is refused. */
    ck_assert_status(fill_node_set(b.exec, b.fill, ks_launch_1d(1, 2048), X, 0.0f, (size_t)0), KS_ERR_INVALID_CONFIG);
    fill_node_t blank;
    memset(&blank, 0, sizeof blank);
    blank.node = b.fill.node;
    ck_assert_status(fill_node_set(b.exec, blank, ks_launch_1d(1, 32), X, 0.0f, (size_t)0), KS_ERR_INVALID_VALUE);
    ck_assert_message_has("never filled");
    ck_assert_status(fill_node_set(NULL, b.fill, ks_launch_1d(1, 32), X, 0.0f, (size_t)0), KS_ERR_INVALID_VALUE);
    ck_assert_int_eq(fake.calls("cuGraphExecKernelNodeSetParams"), 11);
    destroy(&b);
}
END_TEST

/* A graph of n fill nodes in a chain. */
static ks_graph_exec fill_chain(ks_graph *g, fill_node_t *nodes, int n)
{
    ck_assert_status(ks_graph_create(g), KS_OK);
    for (int i = 0; i < n; i++)
        ck_assert_status(fill_node(*g, i ? &nodes[i - 1].node : NULL, i ? 1 : 0, &nodes[i],
                                   ks_launch_1d((unsigned)i + 1, 32), OUT, -1.0f, (size_t)i),
                         KS_OK);
    ks_graph_exec e;
    ck_assert_status(ks_graph_instantiate(*g, &e), KS_OK);
    return e;
}

START_TEST(nodes_set_updates_every_node_at_once)
{
    enum { N = 12 };
    ks_graph g;
    fill_node_t nodes[N];
    ks_graph_exec e = fill_chain(&g, nodes, N);
    fill_args values[N];
    ks_launch launches[N];
    for (int i = 0; i < N; i++) {
        values[i] = (fill_args){X + i, (float)i * 0.5f, (size_t)(100 + i)};
        launches[i] = ks_launch_1d(2, (unsigned)(32 * (i % 4 + 1)));
    }
    int gets = fake.calls("cuGraphKernelNodeGetParams");
    ck_assert_status(fill_nodes_set(e, N, nodes, launches, values), KS_OK);
    ck_assert_int_eq(fake.calls("cuGraphKernelNodeGetParams"), gets);
    ck_assert_int_eq(fake.calls("cuGraphExecKernelNodeSetParams"), N);
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    for (int i = 0; i < N; i++)
        ck_assert_status(fill(launches[i], X + i, (float)i * 0.5f, (size_t)(100 + i)), KS_OK);
    for (int i = 0; i < N; i++)
        same_launch(i, N + i);
    /* NULL launches: each node keeps the configuration it was added with. */
    ck_assert_status(fill_nodes_set(e, N, nodes, NULL, values), KS_OK);
    int before = fake.launch_count();
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    for (int i = 0; i < N; i++)
        ck_assert_status(fill(ks_launch_1d((unsigned)i + 1, 32), X + i, (float)i * 0.5f, (size_t)(100 + i)), KS_OK);
    for (int i = 0; i < N; i++)
        same_launch(before + i, before + N + i);
    /* Nothing to do, and NULL arrays refused. */
    ck_assert_status(fill_nodes_set(e, 0, NULL, NULL, NULL), KS_OK);
    ck_assert_status(fill_nodes_set(e, 1, NULL, NULL, values), KS_ERR_INVALID_VALUE);
    ck_assert_status(fill_nodes_set(e, 1, nodes, NULL, NULL), KS_ERR_INVALID_VALUE);
    ck_assert_status(ks_graph_exec_destroy(e), KS_OK);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
}
END_TEST

START_TEST(nodes_set_stops_at_the_first_refused_node)
{
    enum { N = 6 };
    ks_graph g;
    fill_node_t nodes[N];
    ks_graph_exec e = fill_chain(&g, nodes, N);
    fill_args values[N];
    ks_launch launches[N];
    for (int i = 0; i < N; i++) {
        values[i] = (fill_args){OUT, 7.0f, (size_t)7};
        launches[i] = ks_launch_1d(1, 64);
    }
    launches[3] = ks_launch_1d(1, 4096);   /* more threads than a block has */
    ck_assert_status(fill_nodes_set(e, N, nodes, launches, values), KS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(fake.calls("cuGraphExecKernelNodeSetParams"), 3);   /* the nodes before it */
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(1, 64), OUT, 7.0f, (size_t)7), KS_OK);
    ck_assert_status(fill(ks_launch_1d(4, 32), OUT, -1.0f, (size_t)3), KS_OK);
    same_launch(2, N);
    same_launch(3, N + 1);
    ck_assert_status(ks_graph_exec_destroy(e), KS_OK);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
}
END_TEST

START_TEST(module_fallback_typed_nodes_keep_their_function)
{
    setenv("KSTUB_LOADER", "module", 1);
    enum { N = 3 };
    ks_graph g;
    fill_node_t nodes[N];
    ks_graph_exec e = fill_chain(&g, nodes, N);
    ck_assert_ptr_null(nodes[0].ks__target.ks__kern);
    ck_assert_ptr_nonnull(nodes[0].ks__target.ks__func);
    fill_args values[N] = {{X, 1.0f, 1}, {X, 2.0f, 2}, {X, 3.0f, 3}};
    ck_assert_status(fill_nodes_set(e, N, nodes, NULL, values), KS_OK);
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    for (int i = 0; i < N; i++)
        ck_assert_status(fill(ks_launch_1d((unsigned)i + 1, 32), X, (float)(i + 1), (size_t)(i + 1)), KS_OK);
    for (int i = 0; i < N; i++)
        same_launch(i, N + i);
    ck_assert_status(ks_graph_exec_destroy(e), KS_OK);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
}
END_TEST

/* cuGraphAddEmptyNode, as the application resolves it through libkstub. */
static CUgraphNode add_empty(ks_graph g, const CUgraphNode *deps, size_t ndeps)
{
    void *fn = NULL;
    ck_assert_status(ks_driver_proc("cuGraphAddEmptyNode", &fn), KS_OK);
    CUresult (*add)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
    memcpy(&add, &fn, sizeof fn);
    CUgraphNode n = NULL;
    ck_assert_int_eq(add(&n, g, deps, ndeps), CUDA_SUCCESS);
    return n;
}

START_TEST(kstub_nodes_mixed_with_the_applications_nodes)
{
    /* empty -> fill -> empty -> {clamp, no_params}: driver nodes as roots and
     * as joins, kstub nodes depending on them and they on kstub nodes. */
    ks_graph g;
    ck_assert_status(ks_graph_create(&g), KS_OK);
    CUgraphNode start = add_empty(g, NULL, 0);
    fill_node_t f;
    physics_clamp__floatp_float_float_node_t c;
    no_params_node_t none;
    ck_assert_status(fill_node(g, &start, 1, &f, ks_launch_1d(2, 64), OUT, 3.0f, (size_t)128), KS_OK);
    CUgraphNode join = add_empty(g, &f.node, 1);
    ck_assert_status(physics_clamp__floatp_float_float_node(g, &join, 1, &c, ks_launch_1d(1, 64), X, -2.0f, 2.0f),
                     KS_OK);
    ks_graph_node both[2] = {join, c.node};
    ck_assert_status(no_params_node(g, both, 2, &none, ks_launch_1d(1, 32)), KS_OK);
    ks_graph_exec e;
    ck_assert_status(ks_graph_instantiate(g, &e), KS_OK);
    ck_assert_status(ks_graph_launch(e, KS_STREAM_PER_THREAD), KS_OK);
    ck_assert_int_eq(fake.launch_count(), 3);   /* the kernel nodes; the empty ones run nothing */
    ck_assert_status(fill(ks_launch_1d(2, 64), OUT, 3.0f, (size_t)128), KS_OK);
    ck_assert_status(physics_clamp__floatp_float_float(ks_launch_1d(1, 64), X, -2.0f, 2.0f), KS_OK);
    ck_assert_status(no_params(ks_launch_1d(1, 32)), KS_OK);
    for (int i = 0; i < 3; i++) {
        same_launch(i, 3 + i);
        ck_assert_ptr_eq(fake.launch(i)->stream, KS_STREAM_PER_THREAD);
    }
    /* A kstub node among driver nodes is updated in place; a driver node is refused. */
    ck_assert_status(fill_node_set(e, f, ks_launch_1d(1, 32), X, 4.0f, (size_t)7), KS_OK);
    float *x = X;
    float four = 4.0f;
    size_t seven = 7;
    void *packed[3] = {&x, &four, &seven};
    ks_launch one = ks_launch_1d(1, 32);
    ck_assert_status(ks_kernel_node_set(&fill_kernel, e, join, &one, packed), KS_ERR_GRAPH_MISMATCH);
    ck_assert_message_has("kernel 'fill'");
    ck_assert_message_has("is not a kernel node");
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(1, 32), X, 4.0f, (size_t)7), KS_OK);
    same_launch(6, 9);
    same_launch(4, 7);
    /* The same mixed shape built again: a whole-graph update takes it. */
    ks_graph g2;
    ck_assert_status(ks_graph_create(&g2), KS_OK);
    CUgraphNode start2 = add_empty(g2, NULL, 0);
    fill_node_t f2;
    physics_clamp__floatp_float_float_node_t c2;
    no_params_node_t none2;
    ck_assert_status(fill_node(g2, &start2, 1, &f2, ks_launch_1d(2, 64), OUT, 8.0f, (size_t)128), KS_OK);
    CUgraphNode join2 = add_empty(g2, &f2.node, 1);
    ck_assert_status(physics_clamp__floatp_float_float_node(g2, &join2, 1, &c2, ks_launch_1d(1, 64), X, 0.0f, 1.0f),
                     KS_OK);
    ks_graph_node both2[2] = {join2, c2.node};
    ck_assert_status(no_params_node(g2, both2, 2, &none2, ks_launch_1d(1, 32)), KS_OK);
    ck_assert_status(ks_graph_exec_update(e, g2), KS_OK);
    int before = fake.launch_count();
    ck_assert_status(ks_graph_launch(e, NULL), KS_OK);
    ck_assert_status(fill(ks_launch_1d(2, 64), OUT, 8.0f, (size_t)128), KS_OK);
    same_launch(before, before + 3);
    /* A driver node where the instance has a kernel node: refused, named. */
    ks_graph g3;
    ck_assert_status(ks_graph_create(&g3), KS_OK);
    CUgraphNode start3 = add_empty(g3, NULL, 0);
    CUgraphNode f3 = add_empty(g3, &start3, 1);
    CUgraphNode join3 = add_empty(g3, &f3, 1);
    physics_clamp__floatp_float_float_node_t c3;
    no_params_node_t none3;
    ck_assert_status(physics_clamp__floatp_float_float_node(g3, &join3, 1, &c3, ks_launch_1d(1, 64), X, 0.0f, 1.0f),
                     KS_OK);
    ks_graph_node both3[2] = {join3, c3.node};
    ck_assert_status(no_params_node(g3, both3, 2, &none3, ks_launch_1d(1, 32)), KS_OK);
    ck_assert_status(ks_graph_exec_update(e, g3), KS_ERR_GRAPH_MISMATCH);
    ck_assert_message_has("a node's type changed");
    ck_assert_message_has("cuGraphExecUpdate");
    ck_assert_status(ks_graph_exec_destroy(e), KS_OK);
    ck_assert_status(ks_graph_destroy(g), KS_OK);
    ck_assert_status(ks_graph_destroy(g2), KS_OK);
    ck_assert_status(ks_graph_destroy(g3), KS_OK);
    int execs = -1;
    ck_assert_int_eq(fake.live_graphs(&execs), 0);
    ck_assert_int_eq(execs, 0);
}
END_TEST

static Suite *graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("graph");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, nodes_pack_as_stubs_do);
    tcase_add_test(tc, entry_points_resolved_for_this_cuda);
    tcase_add_test(tc, streams_pass_through);
    tcase_add_test(tc, node_set_changes_the_next_launches_only_of_that_instance);
    tcase_add_test(tc, node_set_refuses_another_kernels_node);
    tcase_add_test(tc, exec_update_checks_topology_and_kernels);
    tcase_add_test(tc, configuration_checked_before_the_driver);
    tcase_add_loop_test(tc, each_driver_call_failing, 0, (int)(sizeof failing / sizeof failing[0]));
    tcase_add_test(tc, a_driver_without_graphs);
    tcase_add_test(tc, a_thread_without_a_context);
    tcase_add_test(tc, module_fallback_nodes_use_the_contexts_function);
    tcase_add_test(tc, thousand_updates_and_replays);
    tcase_add_test(tc, a_missing_symbol_refuses_the_node);
    tcase_add_test(tc, a_node_is_refused_by_the_abi_check);
    tcase_add_test(tc, kstub_nodes_mixed_with_the_applications_nodes);
    tcase_add_test(tc, typed_node_set_reads_nothing_back);
    tcase_add_test(tc, nodes_set_updates_every_node_at_once);
    tcase_add_test(tc, nodes_set_stops_at_the_first_refused_node);
    tcase_add_test(tc, module_fallback_typed_nodes_keep_their_function);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(graph_suite(), CK_FORK);
}
