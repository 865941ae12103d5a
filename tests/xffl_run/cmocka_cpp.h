// cmocka for C++ tests. Include it after every other header: cmocka's _fail macro collides with a
// name inside the C++ standard headers, and Debian's cmocka.h declares its functions without
// extern "C".
#ifndef XFFL_RUN_CMOCKA_CPP_H
#define XFFL_RUN_CMOCKA_CPP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#endif
