// Types shared by the kernels; kstub.mk's depfiles make the stubs depend on it.
typedef float real_t;
typedef int index_t;
