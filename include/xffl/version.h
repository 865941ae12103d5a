/**
 * @file xffl/version.h
 * @brief Library version, at compile time (macros) and at run time (xffl_version).
 */
#ifndef XFFL_VERSION_H
#define XFFL_VERSION_H

#include "types.h"

#define XFFL_VERSION_MAJOR 0
#define XFFL_VERSION_MINOR 1
#define XFFL_VERSION_PATCH 0

XFFL_BEGIN_DECLS

/**
 * @brief Version of the loaded library.
 * @param[out] major may be NULL
 * @param[out] minor may be NULL
 * @param[out] patch may be NULL
 */
XFFL_API void xffl_version(int *major, int *minor, int *patch);

/** @brief The version as "MAJOR.MINOR.PATCH"; a static string. */
XFFL_API const char *xffl_version_string(void);

XFFL_END_DECLS

#endif /* XFFL_VERSION_H */
