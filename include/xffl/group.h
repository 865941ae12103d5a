/**
 * @file xffl/group.h
 * @brief Process groups: the families computed by the layout, and groups of any rank list.
 *
 * A group knows its member list (global ranks: in the order of DESIGN.md section 3.2 for the layout's
 * groups, sorted for xffl_create_process_group), the caller's index in it, and a description.
 *
 * Lifetimes. Groups from xffl_get_group are borrowed: they end with the layout that made them
 * (xffl_unset_fsdp, xffl_unset_hsdp, xffl_unset_federated_scaling; a new layout needs one of these
 * first) or with xffl_state_destroy. A collective on a borrowed group whose layout was unset returns
 * XFFL_ESTATE naming the call that ended it (its size, members and description still read as
 * before); after xffl_state_destroy every borrowed handle is freed memory. xffl_group_destroy ignores
 * borrowed groups. Groups from xffl_create_process_group are owned by the caller and must be
 * destroyed (xffl_group_destroy) before their state.
 */
#ifndef XFFL_GROUP_H
#define XFFL_GROUP_H

#include <stddef.h>

#include "types.h"

XFFL_BEGIN_DECLS

/**
 * @brief A group of the current layout.
 * @param[in] st the state
 * @param[in] kind the family (WORLD, FSDP, HSDP_REPLICA, HSDP_SHARD, FEDERATED, REPLICA, FEDERATION)
 * @param[in] instance 0, or < streams for FEDERATED and REPLICA (same members, one instance per CUDA
 *            stream for NCCL; all share the state's UCX worker, so not for concurrent host threads)
 * @param[out] out borrowed group; written only on success
 * @return XFFL_OK; XFFL_EINVAL (NULL, unknown kind, instance out of range); XFFL_ENOTSET when the
 *         layout has no such group (e.g. FEDERATED without federated scaling); XFFL_ESTATE when
 *         another call on the state is in progress (state.h, Thread-safety).
 * @note Local: the layout call made the group.
 */
XFFL_API xffl_status_t xffl_get_group(const xffl_state_t *st, xffl_group_kind_t kind, int instance,
                                      xffl_group_t **out);

/**
 * @brief A new group of arbitrary members.
 *
 * The group's rank order is the sorted order of `ranks` (as torch's new_group, which xFFL's
 * create_process_group calls): members may list the ranks in any order and get the same group.
 * Every group has an identity that no other live group sharing a member can have, by construction:
 * the n-th group a rank makes of one member set is the n-th of every other member, and the job's
 * rendezvous store (served by rank 0) hands each such group a slot of its own (one round trip, no
 * collective, no world barrier). Members make the groups of one member set in the same order.
 * @param[in] st the state (after xffl_set_global)
 * @param[in] ranks distinct global ranks in [0, W), any order; must contain the caller's rank; copied
 * @param[in] n number of ranks, >= 1
 * @param[in] description free text, copied; NULL gives "custom"
 * @param[out] out owned group; destroy it with xffl_group_destroy before the state
 * @return XFFL_OK; XFFL_EINVAL (NULL, n == 0, a duplicate, a rank outside [0, W), the caller not a
 *         member: the message names the rank); XFFL_ESTATE before set_global, or when another call on
 *         the state is in progress; XFFL_ENOMEM (also when 2^19 process groups of the job are live at
 *         once); XFFL_EPEER / XFFL_ENETWORK / XFFL_ETIMEOUT when the store cannot be asked (the
 *         message names the store's address, this rank and the group); XFFL_EUNSUPPORTED /
 *         XFFL_EBACKEND when the backend cannot make the group's communicator.
 * @note Called by the members only, never a world-wide collective. With XFFL_BACKEND_NONE it is local.
 *       Calls on one state and its groups must not overlap (state.h, Thread-safety).
 */
XFFL_API xffl_status_t xffl_create_process_group(xffl_state_t *st, const int *ranks, size_t n,
                                                 const char *description, xffl_group_t **out);

/**
 * @brief Destroy an owned group. NULL and borrowed groups are ignored.
 * @param[in] group an owned group (xffl_create_process_group), a borrowed one, or NULL
 * @note Local, never blocks. Not checked against overlap: no other call may use the group meanwhile
 *       or after it (use after free).
 */
XFFL_API void xffl_group_destroy(xffl_group_t *group);

/**
 * @brief Number of members.
 * @param[in] group the group
 * @param[out] size the member count; written only on success
 * @return XFFL_OK; XFFL_EINVAL (NULL group or size).
 * @note Local. Reads what never changes in a group: allowed at any time while the group lives, even
 *       during another call on its state.
 */
XFFL_API xffl_status_t xffl_group_size(const xffl_group_t *group, int *size);

/**
 * @brief The caller's index among the members (its group rank).
 * @param[in] group the group
 * @param[out] rank in [0, size); written only on success
 * @return XFFL_OK; XFFL_EINVAL (NULL group or rank).
 * @note Local; allowed at any time while the group lives, as xffl_group_size.
 */
XFFL_API xffl_status_t xffl_group_rank(const xffl_group_t *group, int *rank);

/**
 * @brief The members as global ranks, in group-rank order.
 * @param[in] group the group
 * @param[out] buf receives the len members on XFFL_OK (untouched otherwise); may be NULL when cap is 0
 * @param[in] cap capacity of buf in elements
 * @param[out] len number of members, written on XFFL_OK and XFFL_EBUFSIZE
 * @return XFFL_OK; XFFL_EINVAL (NULL group or len, NULL buf with cap > 0); XFFL_EBUFSIZE when
 *         cap < len.
 * @note Local; allowed at any time while the group lives, as xffl_group_size.
 */
XFFL_API xffl_status_t xffl_group_ranks(const xffl_group_t *group, int *buf, size_t cap, size_t *len);

/**
 * @brief A human-readable description ("federated group 0 of 3, shard 1").
 * @param[in] group the group, or NULL
 * @return a NUL-terminated string owned by the group (valid while it lives), or "" for NULL; never NULL.
 * @note Local; allowed at any time while the group lives, as xffl_group_size.
 */
XFFL_API const char *xffl_group_description(const xffl_group_t *group);

XFFL_END_DECLS

#endif /* XFFL_GROUP_H */
