!> The Fortran face of xffl: derived types xffl_state and xffl_group with type-bound procedures.
!>
!> Errors: every fallible procedure ends with `integer, optional, intent(out) :: stat` and
!> `character(len=:), allocatable, optional, intent(out) :: errmsg`. stat receives the C status
!> (XFFL_OK = 0, errors negative), errmsg the library's message naming the values involved. Without
!> stat, a failure stops the program (error stop) with that message, like an I/O statement without
!> iostat.
!>
!> Lifetimes: call destroy explicitly (gfortran 12 does not run finalizers reliably). A state's
!> destroy is local and never blocks on peers. Groups from st%group are borrowed from the state;
!> groups from st%create_process_group are owned and must be destroyed before their state.
!> A request from st%federated_average_start is owned: wait (or test until done), then free.
module xffl
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_int, c_size_t, c_double, c_char, &
                                         c_null_char, c_loc, c_associated, c_f_pointer, c_funloc, &
                                         c_null_funptr
  use, intrinsic :: iso_fortran_env, only: real32, real64, int8, int32, int64
  ! The reductions are typed handles here (type xffl_op below); xffl_c's integers keep their names there.
  use xffl_c, C_XFFL_SUM => XFFL_SUM, C_XFFL_AVG => XFFL_AVG, C_XFFL_MIN => XFFL_MIN, C_XFFL_MAX => XFFL_MAX, &
              C_XFFL_PROD => XFFL_PROD
  implicit none
  private

  public :: xffl_state, xffl_group, xffl_op, xffl_request
  public :: xffl_status_name, xffl_library_version, xffl_get_version, xffl_device_mesh
  public :: xffl_log_handler, xffl_set_log_handler, xffl_clear_log_handler
  ! every constant of xffl_c, so that `use xffl` is enough
  public :: XFFL_OK, XFFL_EINVAL, XFFL_ESTATE, XFFL_ENOTSET, XFFL_ENOMEM, XFFL_EUNSUPPORTED, XFFL_ETIMEOUT
  public :: XFFL_EPEER, XFFL_EAUTH, XFFL_ENETWORK, XFFL_EBACKEND, XFFL_EBUFSIZE, XFFL_EINTERNAL, XFFL_EQUORUM
  public :: XFFL_BACKEND_NONE, XFFL_BACKEND_UCX, XFFL_BACKEND_NCCL, XFFL_DEVICE_CPU, XFFL_DEVICE_CUDA
  public :: XFFL_DEVICE_META, XFFL_F32, XFFL_F64, XFFL_F16, XFFL_BF16, XFFL_I8, XFFL_U8, XFFL_I32
  public :: XFFL_I64, XFFL_SUM, XFFL_AVG, XFFL_MIN, XFFL_MAX, XFFL_PROD, XFFL_ATTR_BACKEND
  public :: XFFL_ATTR_DEVICE_TYPE, XFFL_ATTR_MASTER_PORT, XFFL_ATTR_RANK, XFFL_ATTR_WORLD_SIZE
  public :: XFFL_ATTR_NODE_LOCAL_RANK, XFFL_ATTR_NODE_LOCAL_SIZE, XFFL_ATTR_NODE_RANK
  public :: XFFL_ATTR_NODE_WORLD_SIZE, XFFL_ATTR_REPLICA_LOCAL_RANK, XFFL_ATTR_REPLICA_LOCAL_SIZE
  public :: XFFL_ATTR_REPLICA_RANK, XFFL_ATTR_REPLICA_WORLD_SIZE, XFFL_ATTR_FEDERATED_LOCAL_RANK
  public :: XFFL_ATTR_FEDERATED_LOCAL_SIZE, XFFL_ATTR_FEDERATED_RANK, XFFL_ATTR_FEDERATED_WORLD_SIZE
  public :: XFFL_ATTR_IS_SENDER, XFFL_ATTR_RECEIVE_FROM, XFFL_ATTR_STREAMS, XFFL_ATTR_CURRENT_DEVICE
  public :: XFFL_ATTR_DEVICE_COUNT, XFFL_ATTR_INIT_DEVICE, XFFL_ATTR_META_INITIALIZATION, XFFL_ATTR_HSDP
  public :: XFFL_OPT_TIMEOUT_MS, XFFL_OPT_FEDERATED_STRATEGY, XFFL_OPT_LOG_LEVEL, XFFL_FEDAVG_HIERARCHICAL
  public :: XFFL_OPT_CROSS_FACILITY_BACKEND, XFFL_OPT_AUTH_TOKEN, XFFL_OPT_JOB_ID, XFFL_OPT_UCX_PROCESS_SETTINGS
  public :: XFFL_OPT_ENQUEUE_ONLY
  public :: XFFL_OPT_WIRE_FORMAT, XFFL_OPT_ERROR_FEEDBACK, XFFL_WIRE_F32, XFFL_WIRE_BF16, XFFL_WIRE_F16
  public :: XFFL_WIRE_INT8_BLOCK, XFFL_WIRE_INT4_BLOCK
  public :: XFFL_BACKEND_WAN, XFFL_OPT_WAN_STREAMS, XFFL_OPT_WAN_ENCRYPTION, XFFL_WAN_ENCRYPTION_NONE
  public :: XFFL_WAN_ENCRYPTION_AES_256_GCM, XFFL_WAN_ENCRYPTION_CHACHA20_POLY1305
  public :: XFFL_ATTR_FEDERATION_EPOCH, XFFL_ATTR_FEDERATION_ROUND, XFFL_ATTR_LIVE_FACILITIES
  public :: XFFL_OPT_FACILITY_FAULTS, XFFL_OPT_FEDERATION_QUORUM, XFFL_FACILITY_FAULTS_FAIL
  public :: XFFL_FACILITY_FAULTS_CONTINUE
  public :: XFFL_FEDAVG_FLAT, XFFL_LOG_ERROR, XFFL_LOG_WARN, XFFL_LOG_INFO, XFFL_LOG_DEBUG
  public :: XFFL_GROUP_WORLD, XFFL_GROUP_FSDP, XFFL_GROUP_HSDP_REPLICA, XFFL_GROUP_HSDP_SHARD
  public :: XFFL_GROUP_FEDERATED, XFFL_GROUP_REPLICA, XFFL_GROUP_FEDERATION, XFFL_MESH_FSDP
  public :: XFFL_MESH_HSDP, XFFL_FORMAT_TEXT, XFFL_FORMAT_JSON

  !> A reduction: XFFL_SUM, XFFL_AVG, XFFL_MIN, XFFL_MAX or XFFL_PROD. Typed rather than an integer, so
  !> an op is never taken for a count or a rank, and the in-place allreduce(buf, op) stays distinct from
  !> allreduce(send, recv, op) for integer arrays of any rank.
  type :: xffl_op
    private
    integer(c_int) :: value = 0
  end type xffl_op

  type(xffl_op), parameter :: XFFL_SUM = xffl_op(C_XFFL_SUM)
  type(xffl_op), parameter :: XFFL_AVG = xffl_op(C_XFFL_AVG)
  type(xffl_op), parameter :: XFFL_MIN = xffl_op(C_XFFL_MIN)
  type(xffl_op), parameter :: XFFL_MAX = xffl_op(C_XFFL_MAX)
  type(xffl_op), parameter :: XFFL_PROD = xffl_op(C_XFFL_PROD)

  !> An array as C sees it: its first element's address (NULL unless contiguous), its element count
  !> and whether it is one block of memory.
  type :: buffer_view
    type(c_ptr) :: address = c_null_ptr
    integer(c_size_t) :: count = 0
    logical :: contiguous = .true.
  end type buffer_view

  !> One process's distributed state (xFFL's DistributedState). Not thread-safe.
  type :: xffl_state
    private
    type(c_ptr) :: handle = c_null_ptr
  contains
    procedure :: create => state_create
    procedure :: from_env => state_from_env
    procedure :: destroy => state_destroy
    procedure :: is_created => state_is_created
    procedure :: set_global => state_set_global
    procedure :: set_node => state_set_node
    procedure :: set_exec_device => state_set_exec_device
    procedure :: set_init_device => state_set_init_device
    procedure :: set_fsdp => state_set_fsdp
    procedure :: set_fsdp_mesh => state_set_fsdp_mesh
    procedure :: set_hsdp => state_set_hsdp
    procedure :: set_hsdp_manual => state_set_hsdp_manual
    procedure :: communicating_processes => state_communicating_processes
    procedure :: federated_scaling => state_federated_scaling
    procedure :: unset_fsdp => state_unset_fsdp
    procedure :: unset_hsdp => state_unset_hsdp
    procedure :: unset_federated_scaling => state_unset_federated_scaling
    procedure :: is_node_setup => state_is_node_setup
    procedure :: is_fsdp_setup => state_is_fsdp_setup
    procedure :: is_hsdp_setup => state_is_hsdp_setup
    procedure :: is_federated_scaling_setup => state_is_federated_scaling_setup
    procedure :: get_int => state_get_int
    procedure :: get_ints => state_get_ints
    procedure :: master_addr => state_master_addr
    procedure :: describe => state_describe
    procedure :: group => state_group
    procedure :: mesh => state_mesh
    procedure :: create_process_group => state_create_process_group
    procedure :: set_option => state_set_option
    procedure :: get_option => state_get_option
    procedure :: set_option_string => state_set_option_string
    procedure :: get_option_string => state_get_option_string
    procedure :: stream => state_stream
    procedure :: set_federated_weights => state_set_federated_weights
    ! federated_average(buf): one specific per kind, arrays of any rank (generated: xffl_typed.fypp)
    include "xffl_state_bindings.inc"
  end type xffl_state

  !> A process group: borrowed from the state's layout, or owned (create_process_group).
  type :: xffl_group
    private
    type(c_ptr) :: handle = c_null_ptr
  contains
    procedure :: destroy => group_destroy
    procedure :: is_valid => group_is_valid
    procedure :: size => group_size
    procedure :: rank => group_rank
    procedure :: ranks => group_ranks
    procedure :: description => group_description
    procedure :: barrier => group_barrier
    ! allreduce(send, recv, op), allreduce(buf, op), broadcast(buf, root), allgather(send, recv),
    ! reduce_scatter(send, recv, op): one specific per kind, arrays of any rank (generated: xffl_typed.fypp)
    include "xffl_group_bindings.inc"
  end type xffl_group

  !> A federated average in flight (st%federated_average_start, include/xffl/request.h). Its buffer must
  !> not be read or written until test says done or wait returns; meanwhile the state answers its
  !> getters and every other call gets XFFL_ESTATE. free ends it (waiting first if still in flight).
  type :: xffl_request
    private
    type(c_ptr) :: handle = c_null_ptr
  contains
    procedure :: test => request_test
    procedure :: wait => request_wait
    procedure :: free => request_free
    procedure :: is_valid => request_is_valid
  end type xffl_request

  !> A receiver of the library's log lines (xffl_set_log_handler): the level (XFFL_LOG_ERROR ..
  !> XFFL_LOG_DEBUG), the rank of the state that wrote it (-1 while unknown) and the text without the
  !> "[xffl rank N] LEVEL: " prefix.
  abstract interface
    subroutine xffl_log_handler(level, rank, message)
      integer, intent(in) :: level, rank
      character(len=*), intent(in) :: message
    end subroutine xffl_log_handler
  end interface

  ! The installed handler: process-wide, as the C callback it stands behind.
  procedure(xffl_log_handler), pointer, save :: installed_log_handler => null()

  interface
    ! libc's strlen, to read the C strings the library returns (not part of the xffl ABI).
    pure function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
  end interface

contains

  ! ---- helpers ----------------------------------------------------------------------------------

  !> A NUL-terminated copy of a Fortran string (trailing blanks kept: the caller trims if it wants).
  pure function to_c(text) result(c_text)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=:), allocatable :: c_text
    c_text = text // c_null_char
  end function to_c

  !> A Fortran copy of a NUL-terminated C string owned by the library ("" for NULL).
  function from_c(ptr) result(text)
    type(c_ptr), intent(in) :: ptr
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(ptr)) then
      text = ""
      return
    end if
    n = int(c_strlen(ptr))
    call c_f_pointer(ptr, chars, [n])
    allocate(character(len=n) :: text)
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function from_c

  !> Report a status: set stat; put the library's message (or "") in why; without stat, stop with it.
  !> Callers copy why into their optional errmsg themselves: gfortran 12 loses the value of an optional
  !> deferred-length character dummy passed on to another procedure, so errmsg is never passed on.
  subroutine check(rc, stat, why)
    integer(c_int), intent(in) :: rc
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    if (present(stat)) stat = int(rc)
    if (rc == XFFL_OK) then
      why = ""
      return
    end if
    why = from_c(xffl_last_error_message())
    if (.not. present(stat)) error stop "xffl: " // from_c(xffl_status_string(rc)) // ": " // why
  end subroutine check

  !> A failure found on the Fortran side, before calling C: sets stat, or stops with the message.
  !> The caller assigns errmsg itself (see check for why).
  subroutine fail_here(rc, message, stat)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: message
    integer, optional, intent(out) :: stat
    if (present(stat)) stat = int(rc)
    if (.not. present(stat)) error stop "xffl: " // from_c(xffl_status_string(rc)) // ": " // message
  end subroutine fail_here

  ! ---- module procedures ------------------------------------------------------------------------

  !> The C callback behind xffl_set_log_handler: hands the line to the Fortran handler.
  subroutine log_line_from_c(level, rank, message, user_data) bind(C)
    integer(c_int), value :: level, rank
    type(c_ptr), value :: message, user_data  ! user_data: always NULL (the handler is module state)
    if (c_associated(user_data)) return
    if (associated(installed_log_handler)) call installed_log_handler(int(level), int(rank), from_c(message))
  end subroutine log_line_from_c

  !> Sends every later log line of the library (every state of the process) to handler instead of
  !> stderr; which lines exist is still chosen per state by XFFL_OPT_LOG_LEVEL. Process-wide. The
  !> handler runs on whichever thread writes the line (also the library's own threads), one line at a
  !> time; it must not call xffl (stat = XFFL_ESTATE for this procedure called from inside it).
  subroutine xffl_set_log_handler(handler, stat, errmsg)
    procedure(xffl_log_handler) :: handler
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: rc
    ! Stop the old handler first, so no line reaches a half-switched pointer.
    rc = xffl_set_log_callback(c_null_funptr, c_null_ptr)
    if (rc == XFFL_OK) then
      installed_log_handler => handler
      rc = xffl_set_log_callback(c_funloc(log_line_from_c), c_null_ptr)
    end if
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine xffl_set_log_handler

  !> Log lines go to stderr again.
  subroutine xffl_clear_log_handler(stat, errmsg)
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: rc
    rc = xffl_set_log_callback(c_null_funptr, c_null_ptr)
    if (rc == XFFL_OK) installed_log_handler => null()
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine xffl_clear_log_handler

  !> "XFFL_EINVAL: invalid argument" for any status value.
  function xffl_status_name(status) result(text)
    integer, intent(in) :: status
    character(len=:), allocatable :: text
    text = from_c(xffl_status_string(int(status, c_int)))
  end function xffl_status_name

  !> The loaded library's version as "MAJOR.MINOR.PATCH".
  function xffl_library_version() result(text)
    character(len=:), allocatable :: text
    text = from_c(xffl_version_string())
  end function xffl_library_version

  subroutine xffl_get_version(major, minor, patch)
    integer, intent(out) :: major, minor, patch
    integer(c_int) :: c_major, c_minor, c_patch
    call xffl_version(c_major, c_minor, c_patch)
    major = int(c_major)
    minor = int(c_minor)
    patch = int(c_patch)
  end subroutine xffl_get_version

  !> The row-major rank grid 0 .. product(shape)-1 of a mesh shape (pure arithmetic).
  function xffl_device_mesh(shape, stat, errmsg) result(ranks)
    integer, intent(in) :: shape(:)
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer, allocatable :: ranks(:)
    integer(c_int) :: c_shape(max(size(shape), 1)), probe(1), rc
    integer(c_int), allocatable :: c_ranks(:)
    integer(c_size_t) :: length, cap
    c_shape(1:size(shape)) = int(shape, c_int)
    rc = xffl_create_device_mesh(c_shape, size(shape, kind=c_size_t), probe, 0_c_size_t, length)
    if (rc == XFFL_EBUFSIZE .or. rc == XFFL_OK) then
      allocate(c_ranks(max(length, 1_c_size_t)))
      cap = length
      rc = xffl_create_device_mesh(c_shape, size(shape, kind=c_size_t), c_ranks, cap, length)
    end if
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
    if (rc == XFFL_OK) then
      ranks = int(c_ranks(1:length))
    else
      allocate(ranks(0))
    end if
  end function xffl_device_mesh

  ! ---- xffl_state: lifetime ----------------------------------------------------------------------

  !> An empty state (local; options start from XFFL_TIMEOUT and XFFL_LOG_LEVEL).
  subroutine state_create(self, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    type(c_ptr) :: handle
    integer(c_int) :: rc
    if (c_associated(self%handle)) then
      if (present(errmsg)) errmsg = "create: this xffl_state already holds a state; destroy it first"
      call fail_here(XFFL_ESTATE, "create: this xffl_state already holds a state; destroy it first", stat)
      return
    end if
    rc = xffl_state_create(handle)
    if (rc == XFFL_OK) self%handle = handle
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_create

  !> A fully set-up state from the launcher's environment (torchrun, SLURM, Open MPI, XFFL_*). Collective.
  subroutine state_from_env(self, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    type(c_ptr) :: handle
    integer(c_int) :: rc
    if (c_associated(self%handle)) then
      if (present(errmsg)) errmsg = "from_env: this xffl_state already holds a state; destroy it first"
      call fail_here(XFFL_ESTATE, "from_env: this xffl_state already holds a state; destroy it first", stat)
      return
    end if
    rc = xffl_state_from_env(handle)
    if (rc == XFFL_OK) self%handle = handle
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_from_env

  !> Destroy the state and every group it owns (local, never blocks). Safe to call twice.
  subroutine state_destroy(self)
    class(xffl_state), intent(inout) :: self
    call xffl_state_destroy(self%handle)
    self%handle = c_null_ptr
  end subroutine state_destroy

  logical function state_is_created(self)
    class(xffl_state), intent(in) :: self
    state_is_created = c_associated(self%handle)
  end function state_is_created

  ! ---- xffl_state: set-up -------------------------------------------------------------------------

  !> Global information and the backend (collective for UCX and NCCL).
  subroutine state_set_global(self, backend, device_type, master_addr, master_port, rank, world_size, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: backend, device_type
    character(len=*), intent(in) :: master_addr
    integer, intent(in) :: master_port, rank, world_size
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_set_global(self%handle, int(backend, c_int), int(device_type, c_int), to_c(trim(master_addr)), &
                               int(master_port, c_int), int(rank, c_int), int(world_size, c_int)), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_global

  subroutine state_set_node(self, node_local_rank, node_local_size, node_rank, node_world_size, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: node_local_rank, node_local_size, node_rank, node_world_size
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_set_node(self%handle, int(node_local_rank, c_int), int(node_local_size, c_int), &
                             int(node_rank, c_int), int(node_world_size, c_int)), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_node

  !> Execution device (-1: node_local_rank modulo the device count) and stream instances (default 1).
  subroutine state_set_exec_device(self, device_index, streams, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: device_index
    integer, optional, intent(in) :: streams
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: k
    k = 1
    if (present(streams)) k = int(streams, c_int)
    call check(xffl_set_exec_device(self%handle, int(device_index, c_int), k), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_exec_device

  subroutine state_set_init_device(self, init_device, meta_initialization, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: init_device
    logical, intent(in) :: meta_initialization
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_set_init_device(self%handle, int(init_device, c_int), merge(1_c_int, 0_c_int, &
                                    meta_initialization)), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_init_device

  subroutine state_set_fsdp(self, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_set_fsdp(self%handle), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_fsdp

  !> FSDP over the caller's 1-D mesh (xFFL's set_fsdp(mesh)): the FSDP group is those ranks, in
  !> ascending order; the caller must be one of them. With NCCL every rank calls it (the meshes
  !> partition the world).
  subroutine state_set_fsdp_mesh(self, ranks, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: ranks(:)
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: c_ranks(max(size(ranks), 1))
    c_ranks(1:size(ranks)) = int(ranks, c_int)
    call check(xffl_set_fsdp_mesh(self%handle, c_ranks, size(ranks, kind=c_size_t)), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_fsdp_mesh

  !> HSDP from its fields (xFFL's _partial_hsdp_setup_manual), validated and completed into the layout
  !> of set_hsdp(replica_local_size); replica_world_size has one entry.
  subroutine state_set_hsdp_manual(self, replica_local_rank, replica_local_size, replica_rank, replica_world_size, &
                                   stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: replica_local_rank, replica_local_size, replica_rank
    integer, intent(in) :: replica_world_size(:)
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: c_sizes(max(size(replica_world_size), 1))
    c_sizes(1:size(replica_world_size)) = int(replica_world_size, c_int)
    call check(xffl_set_hsdp_manual(self%handle, int(replica_local_rank, c_int), int(replica_local_size, c_int), &
                                    int(replica_rank, c_int), c_sizes, size(replica_world_size, kind=c_size_t)), &
               stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_hsdp_manual

  !> The senders C_g of federated group g (xFFL's _get_communicating_processes), in shard order.
  function state_communicating_processes(self, federated_rank, stat, errmsg) result(ranks)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: federated_rank
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer, allocatable :: ranks(:)
    integer(c_int), allocatable :: buf(:)
    integer(c_size_t) :: length, cap
    integer(c_int) :: rc
    allocate(buf(1))
    rc = xffl_get_communicating_processes(self%handle, int(federated_rank, c_int), buf, 0_c_size_t, length)
    if (rc == XFFL_EBUFSIZE .or. rc == XFFL_OK) then
      deallocate(buf)
      allocate(buf(max(length, 1_c_size_t)))
      cap = length
      rc = xffl_get_communicating_processes(self%handle, int(federated_rank, c_int), buf, cap, length)
    end if
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
    if (rc == XFFL_OK) then
      ranks = int(buf(1:length))
    else
      allocate(ranks(0))
    end if
  end function state_communicating_processes

  subroutine state_set_hsdp(self, hsdp, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: hsdp
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_set_hsdp(self%handle, int(hsdp, c_int)), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_hsdp

  !> Federated groups of the given sizes in processes (one size expands); hsdp 0 or absent: none.
  subroutine state_federated_scaling(self, sizes, hsdp, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: sizes(:)
    integer, optional, intent(in) :: hsdp
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: c_sizes(max(size(sizes), 1)), s
    s = 0
    if (present(hsdp)) s = int(hsdp, c_int)
    c_sizes(1:size(sizes)) = int(sizes, c_int)
    call check(xffl_federated_scaling(self%handle, c_sizes, size(sizes, kind=c_size_t), s), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_federated_scaling

  subroutine state_unset_fsdp(self, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_unset_fsdp(self%handle), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_unset_fsdp

  subroutine state_unset_hsdp(self, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_unset_hsdp(self%handle), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_unset_hsdp

  subroutine state_unset_federated_scaling(self, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_unset_federated_scaling(self%handle), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_unset_federated_scaling

  logical function state_is_node_setup(self)
    class(xffl_state), intent(in) :: self
    state_is_node_setup = xffl_is_node_setup(self%handle) /= 0
  end function state_is_node_setup

  logical function state_is_fsdp_setup(self)
    class(xffl_state), intent(in) :: self
    state_is_fsdp_setup = xffl_is_fsdp_setup(self%handle) /= 0
  end function state_is_fsdp_setup

  logical function state_is_hsdp_setup(self)
    class(xffl_state), intent(in) :: self
    state_is_hsdp_setup = xffl_is_hsdp_setup(self%handle) /= 0
  end function state_is_hsdp_setup

  logical function state_is_federated_scaling_setup(self)
    class(xffl_state), intent(in) :: self
    state_is_federated_scaling_setup = xffl_is_federated_scaling_setup(self%handle) /= 0
  end function state_is_federated_scaling_setup

  ! ---- xffl_state: fields -------------------------------------------------------------------------

  !> A scalar field (XFFL_ATTR_*); XFFL_ENOTSET where Python would hold None (the result is then -1).
  function state_get_int(self, attr, stat, errmsg) result(value)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: attr
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer :: value
    integer(c_int) :: c_value, rc
    rc = xffl_get_int(self%handle, int(attr, c_int), c_value)
    value = -1
    if (rc == XFFL_OK) value = int(c_value)
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_get_int

  !> A tuple field (replica_world_size, federated_local_size), or a scalar as a 1-element array.
  function state_get_ints(self, attr, stat, errmsg) result(values)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: attr
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer, allocatable :: values(:)
    integer(c_int), allocatable :: buf(:)
    integer(c_size_t) :: length, cap
    integer(c_int) :: rc
    allocate(buf(1))
    rc = xffl_get_ints(self%handle, int(attr, c_int), buf, 0_c_size_t, length)
    if (rc == XFFL_EBUFSIZE .or. rc == XFFL_OK) then
      deallocate(buf)
      allocate(buf(max(length, 1_c_size_t)))
      cap = length
      rc = xffl_get_ints(self%handle, int(attr, c_int), buf, cap, length)
    end if
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
    if (rc == XFFL_OK) then
      values = int(buf(1:length))
    else
      allocate(values(0))
    end if
  end function state_get_ints

  !> Read a string with the library's two-step EBUFSIZE protocol (ask the length, then copy).
  function read_text(self, format, want_addr, rc) result(text)
    class(xffl_state), intent(in) :: self
    integer(c_int), intent(in) :: format
    logical, intent(in) :: want_addr
    integer(c_int), intent(out) :: rc
    character(len=:), allocatable :: text
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: length, cap, i
    allocate(buf(1))
    if (want_addr) then
      rc = xffl_get_master_addr(self%handle, buf, 0_c_size_t, length)
    else
      rc = xffl_state_describe(self%handle, format, buf, 0_c_size_t, length)
    end if
    text = ""
    if (rc /= XFFL_EBUFSIZE .and. rc /= XFFL_OK) return
    deallocate(buf)
    allocate(buf(length + 1))
    if (want_addr) then
      cap = length + 1
      rc = xffl_get_master_addr(self%handle, buf, cap, length)
    else
      cap = length + 1
      rc = xffl_state_describe(self%handle, format, buf, cap, length)
    end if
    if (rc /= XFFL_OK) return
    deallocate(text)
    allocate(character(len=length) :: text)
    do i = 1, length
      text(i:i) = buf(i)
    end do
  end function read_text

  !> The master address given to set_global.
  function state_master_addr(self, stat, errmsg) result(text)
    class(xffl_state), intent(in) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    character(len=:), allocatable :: text
    integer(c_int) :: rc
    text = read_text(self, XFFL_FORMAT_TEXT, .true., rc)
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_master_addr

  !> The state as text (xFFL's __str__ layout; default) or JSON (format = XFFL_FORMAT_JSON).
  function state_describe(self, format, stat, errmsg) result(text)
    class(xffl_state), intent(in) :: self
    integer, optional, intent(in) :: format
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    character(len=:), allocatable :: text
    integer(c_int) :: rc, fmt
    fmt = XFFL_FORMAT_TEXT
    if (present(format)) fmt = int(format, c_int)
    text = read_text(self, fmt, .false., rc)
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_describe

  !> A group of the current layout (XFFL_GROUP_*), borrowed from the state; instance < streams (default 0).
  function state_group(self, kind, instance, stat, errmsg) result(group)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: kind
    integer, optional, intent(in) :: instance
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    type(xffl_group) :: group
    type(c_ptr) :: handle
    integer(c_int) :: rc, k
    k = 0
    if (present(instance)) k = int(instance, c_int)
    rc = xffl_get_group(self%handle, int(kind, c_int), k, handle)
    if (rc == XFFL_OK) group%handle = handle
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_group

  !> The mesh (XFFL_MESH_FSDP or XFFL_MESH_HSDP) containing this rank: its shape (1 or 2 extents) and
  !> its ranks in row-major order (for HSDP: replica by replica).
  subroutine state_mesh(self, kind, shape, ranks, stat, errmsg)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: kind
    integer, allocatable, intent(out) :: shape(:), ranks(:)
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: c_shape(2), rc
    integer(c_int), allocatable :: c_ranks(:)
    integer(c_size_t) :: ndim, length, cap
    allocate(c_ranks(1))
    c_shape = 0
    rc = xffl_get_mesh(self%handle, int(kind, c_int), c_shape, 2_c_size_t, ndim, c_ranks, 0_c_size_t, length)
    if (rc == XFFL_EBUFSIZE .or. rc == XFFL_OK) then
      deallocate(c_ranks)
      allocate(c_ranks(max(length, 1_c_size_t)))
      cap = length
      rc = xffl_get_mesh(self%handle, int(kind, c_int), c_shape, 2_c_size_t, ndim, c_ranks, cap, length)
    end if
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
    if (rc == XFFL_OK) then
      shape = int(c_shape(1:ndim))
      ranks = int(c_ranks(1:length))
    else
      allocate(shape(0), ranks(0))
    end if
  end subroutine state_mesh

  !> A new owned group of the given global ranks, in any order (the group's rank order is the sorted one)
  !> (called by the members only). Destroy it before the state.
  function state_create_process_group(self, ranks, description, stat, errmsg) result(group)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: ranks(:)
    character(len=*), optional, intent(in) :: description
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    type(xffl_group) :: group
    type(c_ptr) :: handle
    integer(c_int) :: c_ranks(max(size(ranks), 1)), rc
    c_ranks(1:size(ranks)) = int(ranks, c_int)
    if (present(description)) then
      rc = xffl_create_process_group(self%handle, c_ranks, size(ranks, kind=c_size_t), to_c(description), handle)
    else
      rc = xffl_create_process_group(self%handle, c_ranks, size(ranks, kind=c_size_t), out=handle)
    end if
    if (rc == XFFL_OK) group%handle = handle
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_create_process_group

  subroutine state_set_option(self, option, value, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: option, value
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_set_option(self%handle, int(option, c_int), int(value, c_int)), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_option

  function state_get_option(self, option, stat, errmsg) result(value)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: option
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer :: value
    integer(c_int) :: c_value, rc
    rc = xffl_get_option(self%handle, int(option, c_int), c_value)
    value = -1
    if (rc == XFFL_OK) value = int(c_value)
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_get_option

  !> Set a string option (XFFL_OPT_AUTH_TOKEN, XFFL_OPT_JOB_ID) before set_global: the thread-safe way
  !> to give what the environment gives otherwise. Trailing blanks of text are kept.
  subroutine state_set_option_string(self, option, text, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    integer, intent(in) :: option
    character(len=*), intent(in) :: text
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_set_option_string(self%handle, int(option, c_int), to_c(text)), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine state_set_option_string

  !> Read a string option (XFFL_OPT_JOB_ID; the auth token is write-only: an error).
  function state_get_option_string(self, option, stat, errmsg) result(text)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: option
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    character(len=:), allocatable :: text
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: length, cap, i
    integer(c_int) :: rc
    allocate(buf(1))
    text = ""
    rc = xffl_get_option_string(self%handle, int(option, c_int), buf, 0_c_size_t, length)
    if (rc == XFFL_EBUFSIZE .or. rc == XFFL_OK) then
      deallocate(buf)
      allocate(buf(length + 1))
      cap = length + 1
      rc = xffl_get_option_string(self%handle, int(option, c_int), buf, cap, length)
    end if
    if (rc == XFFL_OK) then
      deallocate(text)
      allocate(character(len=length) :: text)
      do i = 1, length
        text(i:i) = buf(i)
      end do
    end if
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_get_option_string

  !> The execution device's stream `index` (a cudaStream_t as c_ptr), borrowed from the state.
  function state_stream(self, index, stat, errmsg) result(stream)
    class(xffl_state), intent(in) :: self
    integer, intent(in) :: index
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    type(c_ptr) :: stream
    integer(c_int) :: rc
    stream = c_null_ptr
    rc = xffl_get_stream(self%handle, int(index, c_int), stream)
    if (rc /= XFFL_OK) stream = c_null_ptr
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function state_stream

  !> Weight of each federated group in the average (FedAvg by sample count); an empty array clears them.
  subroutine state_set_federated_weights(self, weights, stat, errmsg)
    class(xffl_state), intent(inout) :: self
    real(real64), intent(in) :: weights(:)
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    real(c_double) :: c_weights(max(size(weights), 1))
    if (size(weights) == 0) then
      call check(xffl_set_federated_weights(self%handle, n=0_c_size_t), stat, why)
      if (present(errmsg)) errmsg = why
    else
      c_weights(1:size(weights)) = real(weights, c_double)
      call check(xffl_set_federated_weights(self%handle, c_weights, size(weights, kind=c_size_t)), stat, why)
      if (present(errmsg)) errmsg = why
    end if
  end subroutine state_set_federated_weights

  ! ---- xffl_group ---------------------------------------------------------------------------------

  !> End an owned group (local). Borrowed groups are only forgotten: their state owns them.
  subroutine group_destroy(self)
    class(xffl_group), intent(inout) :: self
    call xffl_group_destroy(self%handle)
    self%handle = c_null_ptr
  end subroutine group_destroy

  logical function group_is_valid(self)
    class(xffl_group), intent(in) :: self
    group_is_valid = c_associated(self%handle)
  end function group_is_valid

  !> Number of members.
  function group_size(self, stat, errmsg) result(n)
    class(xffl_group), intent(in) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer :: n
    integer(c_int) :: c_n, rc
    rc = xffl_group_size(self%handle, c_n)
    n = -1
    if (rc == XFFL_OK) n = int(c_n)
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function group_size

  !> The caller's index among the members (0-based, as in C).
  function group_rank(self, stat, errmsg) result(r)
    class(xffl_group), intent(in) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer :: r
    integer(c_int) :: c_r, rc
    rc = xffl_group_rank(self%handle, c_r)
    r = -1
    if (rc == XFFL_OK) r = int(c_r)
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
  end function group_rank

  !> The members as global ranks, in group-rank order.
  function group_ranks(self, stat, errmsg) result(ranks)
    class(xffl_group), intent(in) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer, allocatable :: ranks(:)
    integer(c_int), allocatable :: buf(:)
    integer(c_size_t) :: length, cap
    integer(c_int) :: rc
    allocate(buf(1))
    rc = xffl_group_ranks(self%handle, buf, 0_c_size_t, length)
    if (rc == XFFL_EBUFSIZE .or. rc == XFFL_OK) then
      deallocate(buf)
      allocate(buf(max(length, 1_c_size_t)))
      cap = length
      rc = xffl_group_ranks(self%handle, buf, cap, length)
    end if
    call check(rc, stat, why)
    if (present(errmsg)) errmsg = why
    if (rc == XFFL_OK) then
      ranks = int(buf(1:length))
    else
      allocate(ranks(0))
    end if
  end function group_ranks

  !> A human-readable description ("" for an invalid group).
  function group_description(self) result(text)
    class(xffl_group), intent(in) :: self
    character(len=:), allocatable :: text
    text = from_c(xffl_group_description(self%handle))
  end function group_description

  !> Returns once every member has entered (bounded by the state's timeout).
  subroutine group_barrier(self, stat, errmsg)
    class(xffl_group), intent(in) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_barrier(self%handle), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine group_barrier

  ! ---- collectives and federated averaging: one procedure per operation, for every kind and rank ----
  ! The generated specifics (xffl_typed_procedures.inc) describe their array as a buffer_view and call
  ! these; every check and message lives here once.

  !> The element count of a view as text, for messages.
  function count_text(n) result(text)
    integer(c_size_t), intent(in) :: n
    character(len=:), allocatable :: text
    character(len=24) :: digits
    write (digits, '(i0)') n
    text = trim(digits)
  end function count_text

  !> A failure found before calling C: why = message, then stat (or stop) as fail_here.
  subroutine refuse(message, stat, why)
    character(len=*), intent(in) :: message
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    why = message
    call fail_here(XFFL_EINVAL, message, stat)
  end subroutine refuse

  !> False (after refusing) when an array is a non-contiguous section: C needs one block of memory, and
  !> the bindings never copy behind the caller's back (a copy-in/copy-out would hide the cost and break
  !> in-place collectives).
  logical function contiguous_or_refuse(call_name, arg_name, view, stat, why) result(ok)
    character(len=*), intent(in) :: call_name, arg_name
    type(buffer_view), intent(in) :: view
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    ok = view%contiguous
    if (.not. ok) call refuse(call_name // ": " // arg_name // " is not contiguous (an array section with a " // &
                              "stride?); pass a contiguous array, or a contiguous copy of the section", stat, why)
  end function contiguous_or_refuse

  !> Federated average of this rank's shard, in place (collective over the whole job).
  subroutine state_federated_average_any(self, buf, dtype, stat, why)
    class(xffl_state), intent(in) :: self
    type(buffer_view), intent(in) :: buf
    integer(c_int), intent(in) :: dtype
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    if (.not. contiguous_or_refuse("federated_average", "buf", buf, stat, why)) return
    call check(xffl_federated_average(self%handle, buf%address, buf%count, dtype, c_null_ptr), stat, why)
  end subroutine state_federated_average_any

  !> recv = op over the members' send arrays; in_place: send and recv are the same array (buf). Shapes
  !> may differ; element counts must match.
  subroutine group_allreduce_any(self, send, recv, in_place, dtype, op, stat, why)
    class(xffl_group), intent(in) :: self
    type(buffer_view), intent(in) :: send, recv
    logical, intent(in) :: in_place
    integer(c_int), intent(in) :: dtype
    type(xffl_op), intent(in) :: op
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    if (in_place) then
      if (.not. contiguous_or_refuse("allreduce", "buf", send, stat, why)) return
    else if (.not. contiguous_or_refuse("allreduce", "send", send, stat, why)) then
      return
    end if
    if (.not. contiguous_or_refuse("allreduce", "recv", recv, stat, why)) return
    if (recv%count /= send%count) then
      call refuse("allreduce: send has " // count_text(send%count) // " elements, recv " // &
                  count_text(recv%count) // "; they must be equal", stat, why)
      return
    end if
    call check(xffl_allreduce(self%handle, send%address, recv%address, send%count, dtype, op%value, c_null_ptr), &
               stat, why)
  end subroutine group_allreduce_any

  !> buf of the member whose global rank is root, copied to every member.
  subroutine group_broadcast_any(self, buf, dtype, root, stat, why)
    class(xffl_group), intent(in) :: self
    type(buffer_view), intent(in) :: buf
    integer(c_int), intent(in) :: dtype
    integer, intent(in) :: root
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    if (.not. contiguous_or_refuse("broadcast", "buf", buf, stat, why)) return
    call check(xffl_broadcast(self%handle, buf%address, buf%count, dtype, int(root, c_int), c_null_ptr), stat, why)
  end subroutine group_broadcast_any

  !> recv = the members' send arrays concatenated in group-rank order (size(recv) = size(send) * members).
  subroutine group_allgather_any(self, send, recv, dtype, stat, why)
    class(xffl_group), intent(in) :: self
    type(buffer_view), intent(in) :: send, recv
    integer(c_int), intent(in) :: dtype
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    integer(c_size_t) :: members
    if (.not. contiguous_or_refuse("allgather", "send", send, stat, why)) return
    if (.not. contiguous_or_refuse("allgather", "recv", recv, stat, why)) return
    members = int(self%size(), c_size_t)
    if (recv%count /= send%count * members) then
      call refuse("allgather: size(recv) must be size(send) times the group size: recv has " // &
                  count_text(recv%count) // " elements, send " // count_text(send%count) // ", " // &
                  count_text(members) // " members", stat, why)
      return
    end if
    call check(xffl_allgather(self%handle, send%address, recv%address, send%count, dtype, c_null_ptr), stat, why)
  end subroutine group_allgather_any

  !> recv = this member's block of the reduction (size(send) = size(recv) * members).
  subroutine group_reduce_scatter_any(self, send, recv, dtype, op, stat, why)
    class(xffl_group), intent(in) :: self
    type(buffer_view), intent(in) :: send, recv
    integer(c_int), intent(in) :: dtype
    type(xffl_op), intent(in) :: op
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    integer(c_size_t) :: members
    if (.not. contiguous_or_refuse("reduce_scatter", "send", send, stat, why)) return
    if (.not. contiguous_or_refuse("reduce_scatter", "recv", recv, stat, why)) return
    members = int(self%size(), c_size_t)
    if (send%count /= recv%count * members) then
      call refuse("reduce_scatter: size(send) must be size(recv) times the group size: send has " // &
                  count_text(send%count) // " elements, recv " // count_text(recv%count) // ", " // &
                  count_text(members) // " members", stat, why)
      return
    end if
    call check(xffl_reduce_scatter(self%handle, send%address, recv%address, recv%count, dtype, op%value, &
                                   c_null_ptr), stat, why)
  end subroutine group_reduce_scatter_any

  !> Starts the federated average of this rank's shard without waiting (collective over the whole job).
  !> The C side keeps buf's address: the actual argument must be contiguous and have the TARGET (or
  !> POINTER) attribute, and stay untouched until the request is done.
  subroutine state_federated_average_start_any(self, buf, dtype, req, stat, why)
    class(xffl_state), intent(in) :: self
    type(buffer_view), intent(in) :: buf
    integer(c_int), intent(in) :: dtype
    type(xffl_request), intent(inout) :: req
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, intent(out) :: why
    type(c_ptr) :: handle
    integer(c_int) :: rc
    if (.not. contiguous_or_refuse("federated_average_start", "buf", buf, stat, why)) return
    handle = c_null_ptr
    rc = xffl_federated_average_start(self%handle, buf%address, buf%count, dtype, c_null_ptr, handle)
    if (rc == XFFL_OK) req%handle = handle
    call check(rc, stat, why)
  end subroutine state_federated_average_start_any

  !> Whether the request is done (never blocks); once done, stat is the average's status.
  subroutine request_test(self, done, stat, errmsg)
    class(xffl_request), intent(in) :: self
    logical, intent(out) :: done
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    integer(c_int) :: flag
    flag = 0
    call check(xffl_request_test(self%handle, flag), stat, why)
    done = flag /= 0
    if (present(errmsg)) errmsg = why
  end subroutine request_test

  !> Waits (sleeping, bounded by the timeout) until the request is done; stat is the average's status.
  subroutine request_wait(self, stat, errmsg)
    class(xffl_request), intent(in) :: self
    integer, optional, intent(out) :: stat
    character(len=:), allocatable, optional, intent(out) :: errmsg
    character(len=:), allocatable :: why
    call check(xffl_request_wait(self%handle), stat, why)
    if (present(errmsg)) errmsg = why
  end subroutine request_wait

  !> Ends the request, waiting for it first if still in flight. Safe to call twice.
  subroutine request_free(self)
    class(xffl_request), intent(inout) :: self
    call xffl_request_free(self%handle)
    self%handle = c_null_ptr
  end subroutine request_free

  logical function request_is_valid(self)
    class(xffl_request), intent(in) :: self
    request_is_valid = c_associated(self%handle)
  end function request_is_valid

  ! ---- the specifics of every kind (generated from xffl_typed.fypp) ---------------------------------
  include "xffl_typed_procedures.inc"

end module xffl
