// Pointers to arrays (issue 18, item 6): "float (*input)[28]" is a pointer
// nvcc passes as any other. The array it points to is a C typedef named
// from its element and dimensions ("float_arr28", "float_arr5_5"), so the
// stub's parameter is "float_arr28 *input", which a C caller's
// float (*)[28] converts to; const stays on the elements.
struct Cell {
    float v;
    int n;
};

__global__ void conv(float (*input)[28], const float (*w)[5][5], float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = input[i][0] * w[0][0][0];
}

__global__ void cells(Cell (*grid)[4], unsigned int (*counts)[3], double (*__restrict__ acc)[2])
{
    grid[0][0].v = (float)counts[0][0] + (float)acc[0][1];
}

template <typename T, int N>
__global__ void rows(T (*m)[N], int nrows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nrows)
        for (int j = 0; j < N; j++)
            m[r][j] *= T(2);
}

template __global__ void rows<float, 28>(float (*)[28], int);
template __global__ void rows<int, 7>(int (*)[7], int);
