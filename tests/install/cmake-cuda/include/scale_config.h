// scale_config.h — found only through the target's include directories.
#pragma once
#if !defined(SCALE_CONFIGURED)
#error "SCALE_CONFIGURED: the target's compile definitions did not reach this file"
#endif
