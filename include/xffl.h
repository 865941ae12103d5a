/**
 * @file xffl.h
 * @brief Umbrella header of xffl, the distributed state of cross-facility federated learning.
 *
 * Conventions: output parameters are written only on success; `_create` returns an owned object and
 * `_destroy` ends it (NULL-safe, local); `_get_*` returns borrowed data. Every failing call leaves a
 * thread-local message (xffl_last_error_message) that names the values involved.
 */
#ifndef XFFL_H
#define XFFL_H

#include "xffl/export.h"
#include "xffl/types.h"
#include "xffl/status.h"
#include "xffl/version.h"
#include "xffl/log.h"
#include "xffl/state.h"
#include "xffl/group.h"
#include "xffl/mesh.h"
#include "xffl/collective.h"
#include "xffl/request.h"
#include "xffl/federated.h"

#endif /* XFFL_H */
