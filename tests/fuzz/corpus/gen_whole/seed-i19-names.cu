// Issue 19 #4 and #5: the stub's own parameter names taken by the kernel, and
// names the runtime's headers #define.
struct KSTUB_VERSION_MINOR { int KSTUB_VERSION_PATCH; };
extern "C" __global__ void own(int launch, int ks_launch_, int stream, int ks_stream_,
                               int n_items, int ks_n_items_, int ks_launch__) {}
extern "C" __global__ void macros(KSTUB_VERSION_MINOR v, int KSTUB_H, int KSTUB_TYPES_H,
                                  int KSTUB_VERSION, int KSTUB_VERSION_MAJOR, float KS_RESTRICT) {}
