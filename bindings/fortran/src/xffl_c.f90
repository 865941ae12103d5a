!> Raw interfaces to the xffl C API: one bind(C) interface per function of the headers in include/xffl/, and every
!> enum constant as an integer(c_int) parameter. Hand-written in one regular shape so that
!> bindings/fortran/check_interfaces.py can compare each one with clang's reading of the header
!> (argument count, kinds, value vs reference, pointer depth, result) and fail on any difference.
!>
!> Conventions: opaque handles are type(c_ptr); `T **out` is `type(c_ptr), intent(out)` (passed by
!> reference); `int *` / `size_t *` are integer(c_int) / integer(c_size_t) by reference (scalars or
!> assumed-size arrays); strings in are NUL-terminated character(kind=c_char) arrays; buffers of any
!> dtype and `stream` are type(c_ptr), value. An argument that C allows to be NULL is `optional`
!> (absent = NULL). Prefer module xffl, which does all of this for you.
module xffl_c
  use, intrinsic :: iso_c_binding, only: c_int, c_size_t, c_double, c_char, c_ptr, c_funptr
  implicit none
  private :: c_int, c_size_t, c_double, c_char, c_ptr, c_funptr

  ! xffl_status_t
  integer(c_int), parameter, public :: XFFL_OK = 0
  integer(c_int), parameter, public :: XFFL_EINVAL = -1
  integer(c_int), parameter, public :: XFFL_ESTATE = -2
  integer(c_int), parameter, public :: XFFL_ENOTSET = -3
  integer(c_int), parameter, public :: XFFL_ENOMEM = -4
  integer(c_int), parameter, public :: XFFL_EUNSUPPORTED = -5
  integer(c_int), parameter, public :: XFFL_ETIMEOUT = -6
  integer(c_int), parameter, public :: XFFL_EPEER = -7
  integer(c_int), parameter, public :: XFFL_EAUTH = -8
  integer(c_int), parameter, public :: XFFL_ENETWORK = -9
  integer(c_int), parameter, public :: XFFL_EBACKEND = -10
  integer(c_int), parameter, public :: XFFL_EBUFSIZE = -11
  integer(c_int), parameter, public :: XFFL_EINTERNAL = -12
  integer(c_int), parameter, public :: XFFL_EQUORUM = -13
  ! xffl_backend_t
  integer(c_int), parameter, public :: XFFL_BACKEND_NONE = 0
  integer(c_int), parameter, public :: XFFL_BACKEND_UCX = 1
  integer(c_int), parameter, public :: XFFL_BACKEND_NCCL = 2
  integer(c_int), parameter, public :: XFFL_BACKEND_WAN = 3
  ! xffl_device_t
  integer(c_int), parameter, public :: XFFL_DEVICE_CPU = 0
  integer(c_int), parameter, public :: XFFL_DEVICE_CUDA = 1
  integer(c_int), parameter, public :: XFFL_DEVICE_META = 2
  ! xffl_dtype_t
  integer(c_int), parameter, public :: XFFL_F32 = 0
  integer(c_int), parameter, public :: XFFL_F64 = 1
  integer(c_int), parameter, public :: XFFL_F16 = 2
  integer(c_int), parameter, public :: XFFL_BF16 = 3
  integer(c_int), parameter, public :: XFFL_I8 = 4
  integer(c_int), parameter, public :: XFFL_U8 = 5
  integer(c_int), parameter, public :: XFFL_I32 = 6
  integer(c_int), parameter, public :: XFFL_I64 = 7
  ! xffl_redop_t
  integer(c_int), parameter, public :: XFFL_SUM = 0
  integer(c_int), parameter, public :: XFFL_AVG = 1
  integer(c_int), parameter, public :: XFFL_MIN = 2
  integer(c_int), parameter, public :: XFFL_MAX = 3
  integer(c_int), parameter, public :: XFFL_PROD = 4
  ! xffl_attr_t
  integer(c_int), parameter, public :: XFFL_ATTR_BACKEND = 0
  integer(c_int), parameter, public :: XFFL_ATTR_DEVICE_TYPE = 1
  integer(c_int), parameter, public :: XFFL_ATTR_MASTER_PORT = 2
  integer(c_int), parameter, public :: XFFL_ATTR_RANK = 3
  integer(c_int), parameter, public :: XFFL_ATTR_WORLD_SIZE = 4
  integer(c_int), parameter, public :: XFFL_ATTR_NODE_LOCAL_RANK = 5
  integer(c_int), parameter, public :: XFFL_ATTR_NODE_LOCAL_SIZE = 6
  integer(c_int), parameter, public :: XFFL_ATTR_NODE_RANK = 7
  integer(c_int), parameter, public :: XFFL_ATTR_NODE_WORLD_SIZE = 8
  integer(c_int), parameter, public :: XFFL_ATTR_REPLICA_LOCAL_RANK = 9
  integer(c_int), parameter, public :: XFFL_ATTR_REPLICA_LOCAL_SIZE = 10
  integer(c_int), parameter, public :: XFFL_ATTR_REPLICA_RANK = 11
  integer(c_int), parameter, public :: XFFL_ATTR_REPLICA_WORLD_SIZE = 12
  integer(c_int), parameter, public :: XFFL_ATTR_FEDERATED_LOCAL_RANK = 13
  integer(c_int), parameter, public :: XFFL_ATTR_FEDERATED_LOCAL_SIZE = 14
  integer(c_int), parameter, public :: XFFL_ATTR_FEDERATED_RANK = 15
  integer(c_int), parameter, public :: XFFL_ATTR_FEDERATED_WORLD_SIZE = 16
  integer(c_int), parameter, public :: XFFL_ATTR_IS_SENDER = 17
  integer(c_int), parameter, public :: XFFL_ATTR_RECEIVE_FROM = 18
  integer(c_int), parameter, public :: XFFL_ATTR_STREAMS = 19
  integer(c_int), parameter, public :: XFFL_ATTR_CURRENT_DEVICE = 20
  integer(c_int), parameter, public :: XFFL_ATTR_DEVICE_COUNT = 21
  integer(c_int), parameter, public :: XFFL_ATTR_INIT_DEVICE = 22
  integer(c_int), parameter, public :: XFFL_ATTR_META_INITIALIZATION = 23
  integer(c_int), parameter, public :: XFFL_ATTR_HSDP = 24
  integer(c_int), parameter, public :: XFFL_ATTR_FEDERATION_EPOCH = 25
  integer(c_int), parameter, public :: XFFL_ATTR_FEDERATION_ROUND = 26
  integer(c_int), parameter, public :: XFFL_ATTR_LIVE_FACILITIES = 27
  ! xffl_option_t
  integer(c_int), parameter, public :: XFFL_OPT_TIMEOUT_MS = 0
  integer(c_int), parameter, public :: XFFL_OPT_FEDERATED_STRATEGY = 1
  integer(c_int), parameter, public :: XFFL_OPT_LOG_LEVEL = 2
  integer(c_int), parameter, public :: XFFL_OPT_CROSS_FACILITY_BACKEND = 3
  integer(c_int), parameter, public :: XFFL_OPT_AUTH_TOKEN = 4
  integer(c_int), parameter, public :: XFFL_OPT_JOB_ID = 5
  integer(c_int), parameter, public :: XFFL_OPT_UCX_PROCESS_SETTINGS = 6
  integer(c_int), parameter, public :: XFFL_OPT_ENQUEUE_ONLY = 7
  integer(c_int), parameter, public :: XFFL_OPT_WIRE_FORMAT = 8
  integer(c_int), parameter, public :: XFFL_OPT_ERROR_FEEDBACK = 9
  ! xffl_wire_format_t
  integer(c_int), parameter, public :: XFFL_WIRE_F32 = 0
  integer(c_int), parameter, public :: XFFL_WIRE_BF16 = 1
  integer(c_int), parameter, public :: XFFL_WIRE_F16 = 2
  integer(c_int), parameter, public :: XFFL_WIRE_INT8_BLOCK = 3
  integer(c_int), parameter, public :: XFFL_WIRE_INT4_BLOCK = 4
  integer(c_int), parameter, public :: XFFL_OPT_WAN_STREAMS = 10
  integer(c_int), parameter, public :: XFFL_OPT_WAN_ENCRYPTION = 11
  ! xffl_wan_encryption_t
  integer(c_int), parameter, public :: XFFL_WAN_ENCRYPTION_NONE = 0
  integer(c_int), parameter, public :: XFFL_WAN_ENCRYPTION_AES_256_GCM = 1
  integer(c_int), parameter, public :: XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305 = 2
  integer(c_int), parameter, public :: XFFL_OPT_FACILITY_FAULTS = 12
  integer(c_int), parameter, public :: XFFL_OPT_FEDERATION_QUORUM = 13
  ! xffl_facility_faults_t
  integer(c_int), parameter, public :: XFFL_FACILITY_FAULTS_FAIL = 0
  integer(c_int), parameter, public :: XFFL_FACILITY_FAULTS_CONTINUE = 1
  ! xffl_federated_strategy_t
  integer(c_int), parameter, public :: XFFL_FEDAVG_HIERARCHICAL = 0
  integer(c_int), parameter, public :: XFFL_FEDAVG_FLAT = 1
  ! xffl_log_level_t
  integer(c_int), parameter, public :: XFFL_LOG_ERROR = 0
  integer(c_int), parameter, public :: XFFL_LOG_WARN = 1
  integer(c_int), parameter, public :: XFFL_LOG_INFO = 2
  integer(c_int), parameter, public :: XFFL_LOG_DEBUG = 3
  ! xffl_group_kind_t
  integer(c_int), parameter, public :: XFFL_GROUP_WORLD = 0
  integer(c_int), parameter, public :: XFFL_GROUP_FSDP = 1
  integer(c_int), parameter, public :: XFFL_GROUP_HSDP_REPLICA = 2
  integer(c_int), parameter, public :: XFFL_GROUP_HSDP_SHARD = 3
  integer(c_int), parameter, public :: XFFL_GROUP_FEDERATED = 4
  integer(c_int), parameter, public :: XFFL_GROUP_REPLICA = 5
  integer(c_int), parameter, public :: XFFL_GROUP_FEDERATION = 6
  ! xffl_mesh_kind_t
  integer(c_int), parameter, public :: XFFL_MESH_FSDP = 0
  integer(c_int), parameter, public :: XFFL_MESH_HSDP = 1
  ! xffl_format_t
  integer(c_int), parameter, public :: XFFL_FORMAT_TEXT = 0
  integer(c_int), parameter, public :: XFFL_FORMAT_JSON = 1

  interface
    ! ---- xffl/status.h ----------------------------------------------------------------------------
    function xffl_status_string(status) bind(C, name="xffl_status_string") result(res)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: res
    end function xffl_status_string

    function xffl_last_error_message() bind(C, name="xffl_last_error_message") result(res)
      import :: c_ptr
      type(c_ptr) :: res
    end function xffl_last_error_message

    ! ---- xffl/version.h ---------------------------------------------------------------------------
    subroutine xffl_version(major, minor, patch) bind(C, name="xffl_version")
      import :: c_int
      integer(c_int), intent(out) :: major
      integer(c_int), intent(out) :: minor
      integer(c_int), intent(out) :: patch
    end subroutine xffl_version

    function xffl_version_string() bind(C, name="xffl_version_string") result(res)
      import :: c_ptr
      type(c_ptr) :: res
    end function xffl_version_string

    ! ---- xffl/log.h -------------------------------------------------------------------------------
    ! callback: c_funloc of a bind(C) subroutine (level, rank, message, user_data), all by value, or
    ! c_null_funptr to restore stderr.
    function xffl_set_log_callback(callback, user_data) bind(C, name="xffl_set_log_callback") result(res)
      import :: c_int, c_ptr, c_funptr
      type(c_funptr), value :: callback
      type(c_ptr), value :: user_data
      integer(c_int) :: res
    end function xffl_set_log_callback

    ! ---- xffl/state.h -----------------------------------------------------------------------------
    function xffl_state_create(out) bind(C, name="xffl_state_create") result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int) :: res
    end function xffl_state_create

    function xffl_state_from_env(out) bind(C, name="xffl_state_from_env") result(res)
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int) :: res
    end function xffl_state_from_env

    subroutine xffl_state_destroy(st) bind(C, name="xffl_state_destroy")
      import :: c_ptr
      type(c_ptr), value :: st
    end subroutine xffl_state_destroy

    function xffl_set_global(st, backend, device_type, master_addr, master_port, rank, world_size) &
        bind(C, name="xffl_set_global") result(res)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: st
      integer(c_int), value :: backend
      integer(c_int), value :: device_type
      character(kind=c_char), intent(in) :: master_addr(*)
      integer(c_int), value :: master_port
      integer(c_int), value :: rank
      integer(c_int), value :: world_size
      integer(c_int) :: res
    end function xffl_set_global

    function xffl_set_node(st, node_local_rank, node_local_size, node_rank, node_world_size) &
        bind(C, name="xffl_set_node") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: node_local_rank
      integer(c_int), value :: node_local_size
      integer(c_int), value :: node_rank
      integer(c_int), value :: node_world_size
      integer(c_int) :: res
    end function xffl_set_node

    function xffl_set_exec_device(st, device_index, streams) bind(C, name="xffl_set_exec_device") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: device_index
      integer(c_int), value :: streams
      integer(c_int) :: res
    end function xffl_set_exec_device

    function xffl_set_init_device(st, init_device, meta_initialization) &
        bind(C, name="xffl_set_init_device") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: init_device
      integer(c_int), value :: meta_initialization
      integer(c_int) :: res
    end function xffl_set_init_device

    function xffl_set_fsdp(st) bind(C, name="xffl_set_fsdp") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_set_fsdp

    function xffl_set_fsdp_mesh(st, ranks, n) bind(C, name="xffl_set_fsdp_mesh") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      integer(c_int), intent(in) :: ranks(*)
      integer(c_size_t), value :: n
      integer(c_int) :: res
    end function xffl_set_fsdp_mesh

    function xffl_set_hsdp_manual(st, replica_local_rank, replica_local_size, replica_rank, replica_world_size, n) &
        bind(C, name="xffl_set_hsdp_manual") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      integer(c_int), value :: replica_local_rank
      integer(c_int), value :: replica_local_size
      integer(c_int), value :: replica_rank
      integer(c_int), intent(in) :: replica_world_size(*)
      integer(c_size_t), value :: n
      integer(c_int) :: res
    end function xffl_set_hsdp_manual

    function xffl_get_communicating_processes(st, federated_rank, ranks, cap, len) &
        bind(C, name="xffl_get_communicating_processes") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      integer(c_int), value :: federated_rank
      integer(c_int), intent(inout) :: ranks(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_get_communicating_processes

    function xffl_set_hsdp(st, hsdp) bind(C, name="xffl_set_hsdp") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: hsdp
      integer(c_int) :: res
    end function xffl_set_hsdp

    function xffl_federated_scaling(st, sizes, n_sizes, hsdp) bind(C, name="xffl_federated_scaling") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      integer(c_int), intent(in) :: sizes(*)
      integer(c_size_t), value :: n_sizes
      integer(c_int), value :: hsdp
      integer(c_int) :: res
    end function xffl_federated_scaling

    function xffl_unset_fsdp(st) bind(C, name="xffl_unset_fsdp") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_unset_fsdp

    function xffl_unset_hsdp(st) bind(C, name="xffl_unset_hsdp") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_unset_hsdp

    function xffl_unset_federated_scaling(st) bind(C, name="xffl_unset_federated_scaling") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_unset_federated_scaling

    function xffl_is_node_setup(st) bind(C, name="xffl_is_node_setup") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_is_node_setup

    function xffl_is_fsdp_setup(st) bind(C, name="xffl_is_fsdp_setup") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_is_fsdp_setup

    function xffl_is_hsdp_setup(st) bind(C, name="xffl_is_hsdp_setup") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_is_hsdp_setup

    function xffl_is_federated_scaling_setup(st) bind(C, name="xffl_is_federated_scaling_setup") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: res
    end function xffl_is_federated_scaling_setup

    function xffl_get_int(st, attr, value) bind(C, name="xffl_get_int") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: attr
      integer(c_int), intent(out) :: value
      integer(c_int) :: res
    end function xffl_get_int

    function xffl_get_ints(st, attr, buf, cap, len) bind(C, name="xffl_get_ints") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      integer(c_int), value :: attr
      integer(c_int), intent(inout) :: buf(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_get_ints

    function xffl_get_master_addr(st, buf, cap, len) bind(C, name="xffl_get_master_addr") result(res)
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: st
      character(kind=c_char), intent(inout) :: buf(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_get_master_addr

    function xffl_set_option(st, option, value) bind(C, name="xffl_set_option") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: option
      integer(c_int), value :: value
      integer(c_int) :: res
    end function xffl_set_option

    function xffl_get_option(st, option, value) bind(C, name="xffl_get_option") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: option
      integer(c_int), intent(out) :: value
      integer(c_int) :: res
    end function xffl_get_option

    function xffl_set_option_string(st, option, text) bind(C, name="xffl_set_option_string") result(res)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: st
      integer(c_int), value :: option
      character(kind=c_char), intent(in) :: text(*)
      integer(c_int) :: res
    end function xffl_set_option_string

    function xffl_get_option_string(st, option, buf, cap, len) bind(C, name="xffl_get_option_string") result(res)
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: st
      integer(c_int), value :: option
      character(kind=c_char), intent(inout) :: buf(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_get_option_string

    function xffl_get_stream(st, index, stream) bind(C, name="xffl_get_stream") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: index
      type(c_ptr), intent(out) :: stream
      integer(c_int) :: res
    end function xffl_get_stream

    function xffl_state_describe(st, format, buf, cap, len) bind(C, name="xffl_state_describe") result(res)
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: st
      integer(c_int), value :: format
      character(kind=c_char), intent(inout) :: buf(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_state_describe

    ! ---- xffl/group.h -----------------------------------------------------------------------------
    function xffl_get_group(st, kind, instance, out) bind(C, name="xffl_get_group") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int), value :: kind
      integer(c_int), value :: instance
      type(c_ptr), intent(out) :: out
      integer(c_int) :: res
    end function xffl_get_group

    function xffl_create_process_group(st, ranks, n, description, out) &
        bind(C, name="xffl_create_process_group") result(res)
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: st
      integer(c_int), intent(in) :: ranks(*)
      integer(c_size_t), value :: n
      character(kind=c_char), intent(in), optional :: description(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: res
    end function xffl_create_process_group

    subroutine xffl_group_destroy(group) bind(C, name="xffl_group_destroy")
      import :: c_ptr
      type(c_ptr), value :: group
    end subroutine xffl_group_destroy

    function xffl_group_size(group, size) bind(C, name="xffl_group_size") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: group
      integer(c_int), intent(out) :: size
      integer(c_int) :: res
    end function xffl_group_size

    function xffl_group_rank(group, rank) bind(C, name="xffl_group_rank") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: group
      integer(c_int), intent(out) :: rank
      integer(c_int) :: res
    end function xffl_group_rank

    function xffl_group_ranks(group, buf, cap, len) bind(C, name="xffl_group_ranks") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: group
      integer(c_int), intent(inout) :: buf(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_group_ranks

    function xffl_group_description(group) bind(C, name="xffl_group_description") result(res)
      import :: c_ptr
      type(c_ptr), value :: group
      type(c_ptr) :: res
    end function xffl_group_description

    ! ---- xffl/mesh.h ------------------------------------------------------------------------------
    function xffl_get_mesh(st, kind, shape, shape_cap, ndim, ranks, cap, len) bind(C, name="xffl_get_mesh") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      integer(c_int), value :: kind
      integer(c_int), intent(inout) :: shape(*)
      integer(c_size_t), value :: shape_cap
      integer(c_size_t), intent(out) :: ndim
      integer(c_int), intent(inout) :: ranks(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_get_mesh

    function xffl_create_device_mesh(shape, ndim, ranks, cap, len) bind(C, name="xffl_create_device_mesh") result(res)
      import :: c_int, c_size_t
      integer(c_int), intent(in) :: shape(*)
      integer(c_size_t), value :: ndim
      integer(c_int), intent(inout) :: ranks(*)
      integer(c_size_t), value :: cap
      integer(c_size_t), intent(out) :: len
      integer(c_int) :: res
    end function xffl_create_device_mesh

    ! ---- xffl/collective.h ------------------------------------------------------------------------
    function xffl_allreduce(group, send, recv, count, dtype, op, stream) bind(C, name="xffl_allreduce") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: group
      type(c_ptr), value :: send
      type(c_ptr), value :: recv
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function xffl_allreduce

    function xffl_broadcast(group, buf, count, dtype, root, stream) bind(C, name="xffl_broadcast") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: group
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function xffl_broadcast

    function xffl_allgather(group, send, recv, send_count, dtype, stream) bind(C, name="xffl_allgather") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: group
      type(c_ptr), value :: send
      type(c_ptr), value :: recv
      integer(c_size_t), value :: send_count
      integer(c_int), value :: dtype
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function xffl_allgather

    function xffl_reduce_scatter(group, send, recv, recv_count, dtype, op, stream) &
        bind(C, name="xffl_reduce_scatter") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: group
      type(c_ptr), value :: send
      type(c_ptr), value :: recv
      integer(c_size_t), value :: recv_count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function xffl_reduce_scatter

    function xffl_barrier(group) bind(C, name="xffl_barrier") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: group
      integer(c_int) :: res
    end function xffl_barrier

    ! ---- xffl/federated.h -------------------------------------------------------------------------
    function xffl_federated_average(st, buf, count, dtype, stream) bind(C, name="xffl_federated_average") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function xffl_federated_average

    function xffl_federated_average_many(st, bufs, counts, n, dtype, stream) &
        bind(C, name="xffl_federated_average_many") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      type(c_ptr), intent(in) :: bufs(*)
      integer(c_size_t), intent(in) :: counts(*)
      integer(c_size_t), value :: n
      integer(c_int), value :: dtype
      type(c_ptr), value :: stream
      integer(c_int) :: res
    end function xffl_federated_average_many

    function xffl_federated_average_start(st, buf, count, dtype, stream, req) &
        bind(C, name="xffl_federated_average_start") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      type(c_ptr), value :: stream
      type(c_ptr), intent(out) :: req
      integer(c_int) :: res
    end function xffl_federated_average_start

    function xffl_federated_average_many_start(st, bufs, counts, n, dtype, stream, req) &
        bind(C, name="xffl_federated_average_many_start") result(res)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: st
      type(c_ptr), intent(in) :: bufs(*)
      integer(c_size_t), intent(in) :: counts(*)
      integer(c_size_t), value :: n
      integer(c_int), value :: dtype
      type(c_ptr), value :: stream
      type(c_ptr), intent(out) :: req
      integer(c_int) :: res
    end function xffl_federated_average_many_start

    function xffl_set_federated_weights(st, weights, n) bind(C, name="xffl_set_federated_weights") result(res)
      import :: c_int, c_ptr, c_size_t, c_double
      type(c_ptr), value :: st
      real(c_double), intent(in), optional :: weights(*)
      integer(c_size_t), value :: n
      integer(c_int) :: res
    end function xffl_set_federated_weights

    ! ---- xffl/request.h ---------------------------------------------------------------------------
    function xffl_request_test(req, done) bind(C, name="xffl_request_test") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: req
      integer(c_int), intent(out) :: done
      integer(c_int) :: res
    end function xffl_request_test

    function xffl_request_wait(req) bind(C, name="xffl_request_wait") result(res)
      import :: c_int, c_ptr
      type(c_ptr), value :: req
      integer(c_int) :: res
    end function xffl_request_wait

    subroutine xffl_request_free(req) bind(C, name="xffl_request_free")
      import :: c_ptr
      type(c_ptr), value :: req
    end subroutine xffl_request_free
  end interface
end module xffl_c
