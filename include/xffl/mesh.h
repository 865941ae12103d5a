/**
 * @file xffl/mesh.h
 * @brief Device meshes: the rank grids of FSDP (1-D "shard") and HSDP (2-D "replica", "shard").
 */
#ifndef XFFL_MESH_H
#define XFFL_MESH_H

#include <stddef.h>

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief The mesh of the current layout that contains this rank.
 * @param[in] st the state
 * @param[in] kind XFFL_MESH_FSDP or XFFL_MESH_HSDP
 * @param[out] shape receives the ndim extents on XFFL_OK (untouched otherwise); may be NULL when
 *             shape_cap is 0
 * @param[in] shape_cap capacity of shape in elements (2 always suffices)
 * @param[out] ndim 1 (FSDP) or 2 (HSDP), written on XFFL_OK and XFFL_EBUFSIZE
 * @param[out] ranks the global ranks in row-major order on XFFL_OK (untouched otherwise); may be NULL
 *             when cap is 0
 * @param[in] cap capacity of ranks in elements
 * @param[out] len number of ranks, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL st, ndim or len, unknown kind, NULL shape or ranks with a non-zero
 *         capacity); XFFL_ENOTSET when the layout has no such mesh; XFFL_EBUFSIZE when shape_cap < ndim
 *         or cap < len (both ndim and len are written then, so one retry suffices); XFFL_ESTATE when
 *         another call on the state is in progress.
 * @note Local. Changed in 0.2: shape_cap was added (pre-1.0 ABI change).
 */
XFFL_API xffl_status_t xffl_get_mesh(const xffl_state_t *st, xffl_mesh_kind_t kind, int *shape, size_t shape_cap,
                                     size_t *ndim, int *ranks, size_t cap, size_t *len);

/**
 * @brief Pure helper: the row-major rank grid 0 .. prod(shape)-1 of a mesh shape.
 * @param[in] shape ndim extents, each >= 1
 * @param[in] ndim number of dimensions, >= 1
 * @param[out] ranks receives 0 .. len-1 on XFFL_OK (untouched otherwise); may be NULL when cap is 0
 * @param[in] cap capacity of ranks in elements
 * @param[out] len prod(shape), written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL shape or len, ndim == 0, an extent < 1, more than INT_MAX ranks,
 *         NULL ranks with cap > 0); XFFL_EBUFSIZE when cap < len.
 * @note Local and thread-safe: it takes no state.
 */
XFFL_API xffl_status_t xffl_create_device_mesh(const int *shape, size_t ndim, int *ranks, size_t cap, size_t *len);

XFFL_END_DECLS

#endif /* XFFL_MESH_H */
