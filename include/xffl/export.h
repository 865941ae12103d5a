/**
 * @file xffl/export.h
 * @brief Symbol export macro of the xffl C API.
 *
 * The library is built with hidden default visibility; only declarations marked XFFL_API are exported.
 */
#ifndef XFFL_EXPORT_H
#define XFFL_EXPORT_H

/**
 * @def XFFL_API
 * @brief Marks a declaration of the C API as exported from libxffl.
 *
 * GCC and Clang: default visibility; Windows: dllexport while the library is built
 * (XFFL_BUILDING_LIBRARY), dllimport otherwise; empty elsewhere.
 */
#if defined(_WIN32)
#  if defined(XFFL_BUILDING_LIBRARY)
#    define XFFL_API __declspec(dllexport)
#  else
#    define XFFL_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define XFFL_API __attribute__((visibility("default")))
#else
#  define XFFL_API
#endif

/**
 * @def XFFL_BEGIN_DECLS
 * @brief Opens the declarations of a header: `extern "C" {` in C++, empty in C.
 */
/**
 * @def XFFL_END_DECLS
 * @brief Closes what XFFL_BEGIN_DECLS opened: `}` in C++, empty in C.
 */
#ifdef __cplusplus
#  define XFFL_BEGIN_DECLS extern "C" {
#  define XFFL_END_DECLS }
#else
#  define XFFL_BEGIN_DECLS
#  define XFFL_END_DECLS
#endif

/**
 * @def XFFL_ENUM_BASE
 * @brief The underlying type of every public enum: `: int` in C++, empty in C.
 *
 * In C++ every public enum has the fixed underlying type int, so any int a C caller passes is a valid
 * value that the library can check and refuse (in C++ an out-of-range value of an enum without a fixed
 * type is undefined). In C the enums are int-sized anyway: the ABI is the same in both languages.
 */
#ifdef __cplusplus
#  define XFFL_ENUM_BASE : int
#else
#  define XFFL_ENUM_BASE
#endif

#endif /* XFFL_EXPORT_H */
