// gen_whole seed: names kstub itself emits or the runtime declares, used as
// user names (issue 10 #3, #12); mutants splice these into other seeds.
struct S { double d; };
extern "C" __global__ void k3(float *ks__kernel_k3) {}
extern "C" __global__ void own(int ks__args, int ks_kernel_launch, int KS_RESTRICT,
                               int ks_status, int names_kstub_image) {}
extern "C" __global__ void ks_launch_1d(int *x) {}
extern "C" __global__ void S(struct S s) {}
extern "C" __global__ void k3_kernel(int launch, int stream) {}
template <typename... Ts> __global__ void kp(Ts... args) {}
template __global__ void kp<int, float, double>(int, float, double);
