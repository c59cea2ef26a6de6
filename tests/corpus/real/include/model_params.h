/* model_params.h — parameters shared by host and device code (C and C++).
 * Written for kstub's real-project corpus (issue 14). */
#ifndef MODEL_PARAMS_H
#define MODEL_PARAMS_H

#include <stdint.h>

typedef enum Activation { ACT_NONE = 0, ACT_RELU = 1, ACT_GELU = 2 } Activation;

typedef struct LayerShape {
    int32_t batch;
    int32_t channels;
    int64_t stride;      /* elements between rows */
    Activation act;
} LayerShape;

#endif
