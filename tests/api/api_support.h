/* Helpers shared by the black-box API tests: they only use the public C API of libxffl.so.
 * Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>. Every helper fails the current
 * cmocka test (with the context string) instead of returning an error. */
#ifndef XFFL_API_SUPPORT_H
#define XFFL_API_SUPPORT_H

#include <stddef.h>

#include <xffl.h>

#define API_MASTER_ADDR "127.0.0.1"
#define API_MASTER_PORT 29500
#define API_MAX_LIST 4096

/* A fresh state after xffl_set_global(NONE, CPU, 127.0.0.1, 29500, rank, world). */
xffl_state_t *api_global_state(int world, int rank);

/* The value of `option` in a fresh state (its default, or what the environment sets now). */
int api_option_of_new_state(xffl_option_t option);

/* Parses "0,4", "0-3", "(5)", "4-7,12" into out; returns the count. "" gives 0. */
size_t api_parse_ranks(const char *text, int *out, size_t cap);

/* Formats ranks as "0,1,2" into buf (truncated with "..." if needed); returns buf. */
const char *api_format_ranks(const int *ranks, size_t n, char *buf, size_t cap);

/* Reads the member list of a group into out (cap entries); returns the count. */
size_t api_group_members(const xffl_group_t *group, int *out, size_t cap, const char *ctx);

/* expected NULL: the group kind must give XFFL_ENOTSET. Otherwise its member list (in order), its size and
 * the caller's index (xffl_group_rank) must match. Returns the group (NULL when not set). */
xffl_group_t *api_expect_group(const xffl_state_t *st, xffl_group_kind_t kind, int instance, const char *expected,
                               const char *ctx);

/* API_NONE expects XFFL_ENOTSET, anything else the value. */
#define API_NONE (-2147483647 - 1)
void api_expect_int(const xffl_state_t *st, xffl_attr_t attr, int expected, const char *ctx);

/* expected NULL expects XFFL_ENOTSET; otherwise a rank-list string ("4,4"). */
void api_expect_ints(const xffl_state_t *st, xffl_attr_t attr, const char *expected, const char *ctx);

/* expected NULL expects XFFL_ENOTSET; otherwise "SHAPE:RANKS", e.g. "2,2:0-3" or "8:0-7". */
void api_expect_mesh(const xffl_state_t *st, xffl_mesh_kind_t kind, const char *expected, const char *ctx);

/* 1 when word occurs in text with no identifier character right before or after it. */
int api_has_word(const char *text, const char *word);

/* Fails unless the last error message contains needle (plain substring). */
void api_expect_message_contains(const char *needle, const char *ctx);

#endif
