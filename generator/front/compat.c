/*
 * compat.c — what nvcc gives a .cu file and clang's CUDA mode does not, so
 * that bodies parse as nvcc parses them: a header kstub includes before the
 * input (never written to disk: libclang reads it from memory under
 * KS_COMPAT_PATH, and the depfile leaves it out), and extra parse flags.
 *
 * Nothing here may change a type's layout or a kernel's signature: it only
 * declares functions nvcc's headers declare and clang's lack, with nvcc's
 * signatures, and adds a search directory nvcc's host compiler has.
 *
 * Each entry was found missing by parsing a probe with clang 22 and CUDA 13
 * (tests/corpus/compat_*.cu hold one class each; nvcc compiles them):
 *
 *  - cache-hint loads and stores (sm_32_intrinsics.h). clang's wrapper does
 *    not include that header (it defines __ldg with builtins instead) and
 *    its own __clang_cuda_intrinsics.h has __ldcg, __ldcs and __ldcv (all
 *    but 'unsigned long') and __stwt (all but long and unsigned long), and
 *    none of __ldca, __ldlu, __stwb, __stcg, __stcs. The missing overloads
 *    are declared here exactly as sm_32_intrinsics.h declares them; that
 *    header's guard is then defined, so a file that includes it directly
 *    gets clang's and these instead of a second, conflicting set.
 *  - host-side min and max: nvcc declares every overload of
 *    crt/math_functions.h __host__ __device__; clang's wrapper makes them
 *    __device__ only, so max(a, b) in a host function found nothing. Host
 *    overloads with nvcc's parameter lists sit beside clang's device ones
 *    (clang overloads on __host__/__device__), so overload resolution on
 *    each side gives nvcc's answer, ambiguities included.
 *  - host-side isfinite, isnan, isinf and signbit in the global namespace
 *    (nvcc: __host__ __device__; clang: device-only templates). Host
 *    templates here: a non-template (a using-declaration of std's, from
 *    <math.h>) still wins wherever one is visible, and nothing conflicts.
 *  - <new>: nvcc's crt/common_functions.h, which every .cu gets through
 *    cuda_runtime.h, includes it, so placement new is declared in every
 *    file (Thrust's uninitialized_fill.h uses it in device code without
 *    including <new>); clang's wrapper does not. Included here, it brings
 *    clang's cuda_wrappers/<new> with the device-side placement forms.
 *  - <stdio.h>, <stdlib.h>, <string.h>, <time.h>, <assert.h> and <utility>:
 *    crt/common_functions.h includes the first five (outside NVRTC) and
 *    cuda_runtime.h the last (C++11 and later), so an application header
 *    that uses FILE, clock_t, CLOCKS_PER_SEC, time, assert or std::swap
 *    without including them compiles under nvcc; clang's wrapper brings
 *    only some of them (no FILE, no CLOCKS_PER_SEC, no assert).
 *  - __managed__: nvcc makes it a device variable the host reaches too;
 *    clang's CUDA mode ignores the attribute (it is HIP's), which left a
 *    __managed__ variable a host one, and a kernel that used it "referred
 *    to a __host__ variable". Defined here as __device__ (variable.c tells
 *    it from a plain __device__ one by the __managed__ token as written).
 *  - <omp.h>: nvcc's host compiler (gcc) finds it in its own include
 *    folder, clang does not; that folder is searched last (-idirafter), so
 *    clang's own headers keep precedence.
 */
#include "base/options.h"
#include "front/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char compat_header[] =
    "/* kstub's nvcc compatibility header (generator/compat.c) */\n"
    "#pragma clang system_header\n"
    "#if defined(__cplusplus) && defined(__CUDA__)\n"
    /* ---- the C library headers and <new>, as nvcc's cuda_runtime.h and
     *      crt/common_functions.h include them in every .cu ---- */
    "#include <string.h>\n"
    "#include <time.h>\n"
    "#include <new>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <assert.h>\n"
    "#include <utility>\n"
    /* ---- cache-hint loads and stores: sm_32_intrinsics.h's missing overloads ---- */
    "#define __SM_32_INTRINSICS_H__\n"
    "#define __SM_32_INTRINSICS_HPP__\n"
    "#define __KSTUB_LD(F, T) static __device__ __inline__ T F(const T *ptr);\n"
    "#define __KSTUB_ST(F, T) static __device__ __inline__ void F(T *ptr, T value);\n"
    "#define __KSTUB_ALL(M, F) \\\n"
    "    M(F, long) M(F, unsigned long) M(F, char) M(F, signed char) M(F, short) M(F, int) \\\n"
    "    M(F, long long) M(F, char2) M(F, char4) M(F, short2) M(F, short4) M(F, int2) \\\n"
    "    M(F, int4) M(F, longlong2) M(F, unsigned char) M(F, unsigned short) \\\n"
    "    M(F, unsigned int) M(F, unsigned long long) M(F, uchar2) M(F, uchar4) \\\n"
    "    M(F, ushort2) M(F, ushort4) M(F, uint2) M(F, uint4) M(F, ulonglong2) M(F, float) \\\n"
    "    M(F, double) M(F, float2) M(F, float4) M(F, double2)\n"
    "__KSTUB_ALL(__KSTUB_LD, __ldca)\n"
    "__KSTUB_ALL(__KSTUB_LD, __ldlu)\n"
    "__KSTUB_LD(__ldcg, unsigned long)\n"
    "__KSTUB_LD(__ldcs, unsigned long)\n"
    "__KSTUB_LD(__ldcv, unsigned long)\n"
    "__KSTUB_ALL(__KSTUB_ST, __stwb)\n"
    "__KSTUB_ALL(__KSTUB_ST, __stcg)\n"
    "__KSTUB_ALL(__KSTUB_ST, __stcs)\n"
    "__KSTUB_ST(__stwt, long)\n"
    "__KSTUB_ST(__stwt, unsigned long)\n"
    "#undef __KSTUB_ALL\n"
    "#undef __KSTUB_ST\n"
    "#undef __KSTUB_LD\n"
    /* ---- host min and max: crt/math_functions.h's overloads, host side ---- */
    "#define __KSTUB_MM(R, A, B) \\\n"
    "    static inline __host__ R min(const A a, const B b) { return b < a ? (R)b : (R)a; } \\\n"
    "    static inline __host__ R max(const A a, const B b) { return a < b ? (R)b : (R)a; }\n"
    "__KSTUB_MM(int, int, int)\n"
    "__KSTUB_MM(unsigned int, unsigned int, unsigned int)\n"
    "__KSTUB_MM(unsigned int, int, unsigned int)\n"
    "__KSTUB_MM(unsigned int, unsigned int, int)\n"
    "__KSTUB_MM(long int, long int, long int)\n"
    "__KSTUB_MM(unsigned long int, unsigned long int, unsigned long int)\n"
    "__KSTUB_MM(unsigned long int, long int, unsigned long int)\n"
    "__KSTUB_MM(unsigned long int, unsigned long int, long int)\n"
    "__KSTUB_MM(long long int, long long int, long long int)\n"
    "__KSTUB_MM(unsigned long long int, unsigned long long int, unsigned long long int)\n"
    "__KSTUB_MM(unsigned long long int, long long int, unsigned long long int)\n"
    "__KSTUB_MM(unsigned long long int, unsigned long long int, long long int)\n"
    "__KSTUB_MM(float, float, float)\n"
    "__KSTUB_MM(double, double, double)\n"
    "__KSTUB_MM(double, float, double)\n"
    "__KSTUB_MM(double, double, float)\n"
    "#undef __KSTUB_MM\n"
    /* ---- host classification in the global namespace ---- */
    "template <typename __KsT> static inline __host__ bool isfinite(__KsT __x) "
    "{ return __builtin_isfinite(__x); }\n"
    "template <typename __KsT> static inline __host__ bool isnan(__KsT __x) "
    "{ return __builtin_isnan(__x); }\n"
    "template <typename __KsT> static inline __host__ bool isinf(__KsT __x) "
    "{ return __builtin_isinf(__x); }\n"
    "template <typename __KsT> static inline __host__ bool signbit(__KsT __x) "
    "{ return __builtin_signbit(__x); }\n"
    /* ---- __managed__: a device variable the host can also reach ---- */
    "#undef __managed__\n"
    "#define __managed__ __attribute__((device))\n"
    "#endif\n";

const char *ks_compat_header(size_t *len)
{
    *len = sizeof compat_header - 1;
    return compat_header;
}

/* gcc's own include folder ("gcc -print-file-name=include"), where omp.h
 * lives; NULL when gcc cannot be run or the folder has no omp.h. Looked up
 * once per process. */
static const char *gcc_include_dir(void)
{
    static int looked;
    static char dir[4096];
    if (looked)
        return dir[0] ? dir : NULL;
    looked = 1;
    int fd[2];
    if (pipe(fd) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        freopen("/dev/null", "w", stderr);
        execlp("gcc", "gcc", "-print-file-name=include", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (pid > 0 && n + 1 < sizeof dir && (r = read(fd[0], dir + n, sizeof dir - 1 - n)) > 0)
        n += (size_t)r;
    close(fd[0]);
    dir[n] = '\0';
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        n = 0;
    while (n && (dir[n - 1] == '\n' || dir[n - 1] == '\r'))
        dir[--n] = '\0';
    dir[n] = '\0';
    if (dir[0] != '/') {
        dir[0] = '\0';
        return NULL;
    }
    char probe[4096 + 8];
    snprintf(probe, sizeof probe, "%s/omp.h", dir);
    if (access(probe, R_OK) != 0)
        dir[0] = '\0';
    return dir[0] ? dir : NULL;
}

size_t ks_compat_args(const ks_options *opts, const char **args, size_t max)
{
    (void)opts;
    size_t n = 0;
    const char *gcc = gcc_include_dir();
    if (gcc && n + 2 <= max && n + 2 <= KS_COMPAT_MAX_ARGS) {
        args[n++] = "-idirafter";
        args[n++] = gcc;
    }
    return n;
}
