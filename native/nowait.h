/* The no-wait placement loop (nowait.c), for the Python module that calls it (nowait_module.c). */
#ifndef SRFABRIC_NOWAIT_H
#define SRFABRIC_NOWAIT_H

#include <stdint.h>

int srfabric_nowait(int32_t n_links, int32_t n_streams, const int64_t *periods, const int64_t *sizes,
		    const int64_t *block_at, const int64_t *blocks, int64_t words, int64_t grid, int32_t *chosen,
		    int64_t *offsets);

#endif
