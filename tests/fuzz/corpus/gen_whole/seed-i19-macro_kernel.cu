// Issue 19 #5: a kernel named after a runtime macro is refused (exit 1).
extern "C" __global__ void fine(int *p) {}
extern "C" __global__ void KSTUB_VERSION(int *p) {}
