/**
 * @file xffl/version.h
 * @brief Library version, at compile time (macros) and at run time (xffl_version).
 */
#ifndef XFFL_VERSION_H
#define XFFL_VERSION_H

#include "types.h"

/** @brief Major version of the headers a program is compiled with (xffl_version gives the library's). */
#define XFFL_VERSION_MAJOR 0
/** @brief Minor version of the headers a program is compiled with. */
#define XFFL_VERSION_MINOR 1
/** @brief Patch version of the headers a program is compiled with. */
#define XFFL_VERSION_PATCH 0

XFFL_BEGIN_DECLS

/**
 * @brief Version of the loaded library (compare with the XFFL_VERSION_* macros of the headers).
 * @param[out] major the major version; may be NULL
 * @param[out] minor the minor version; may be NULL
 * @param[out] patch the patch version; may be NULL
 * @note Thread-safe; never fails.
 */
XFFL_API void xffl_version(int *major, int *minor, int *patch);

/**
 * @brief The version of the loaded library as text.
 * @return "MAJOR.MINOR.PATCH", a static string, never NULL.
 * @note Thread-safe; never fails.
 */
XFFL_API const char *xffl_version_string(void);

XFFL_END_DECLS

#endif /* XFFL_VERSION_H */
