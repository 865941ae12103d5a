!> Error paths through the Fortran bindings: stat carries the C status, errmsg the library's message
!> with the values involved; calls out of order give XFFL_ESTATE and change nothing.
program test_errors
  use xffl
  use xffl_fortran_testing
  implicit none
  type(xffl_state) :: st, never_created
  type(xffl_group) :: g
  integer :: ios, value, major, minor, patch
  integer, allocatable :: values(:)
  character(len=:), allocatable :: msg, text

  ! A state that was never created: the library sees NULL and says which argument.
  call never_created%set_hsdp(2, stat=ios, errmsg=msg)
  call expect_status("NULL state", ios, XFFL_EINVAL)
  call expect_contains("NULL state message", msg, "st")

  call st%create()
  call expect_true("created", st%is_created())
  call st%create(stat=ios, errmsg=msg)
  call expect_status("create twice", ios, XFFL_ESTATE)
  call expect_contains("create twice message", msg, "destroy it first")

  ! Out of order: a layout before set_global.
  call st%set_hsdp(2, stat=ios, errmsg=msg)
  call expect_status("set_hsdp before set_global", ios, XFFL_ESTATE)
  call expect_true("set_hsdp before set_global has a message", len(msg) > 0)
  call st%federated_scaling([4], 2, stat=ios, errmsg=msg)
  call expect_status("federated_scaling before set_global", ios, XFFL_ESTATE)
  call st%set_fsdp(stat=ios)
  call expect_status("set_fsdp before set_global", ios, XFFL_ESTATE)
  value = st%get_int(XFFL_ATTR_RANK, stat=ios)
  call expect_status("rank before set_global", ios, XFFL_ENOTSET)
  call expect_int("rank before set_global is -1", value, -1)
  text = st%master_addr(stat=ios)
  call expect_status("master_addr before set_global", ios, XFFL_ENOTSET)
  text = st%describe(stat=ios)
  call expect_status("describe works before set_global", ios, XFFL_OK)
  call expect_contains("describe before set_global says None", text, "None")

  ! Invalid input is refused before anything changes, with the values in the message.
  call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 5, 4, stat=ios, errmsg=msg)
  call expect_status("rank 5 of world 4", ios, XFFL_EINVAL)
  call expect_contains("rank 5 of world 4 names the rank", msg, "5")
  call expect_contains("rank 5 of world 4 names the world", msg, "4")
  value = st%get_int(XFFL_ATTR_WORLD_SIZE, stat=ios)
  call expect_status("failed set_global changed nothing", ios, XFFL_ENOTSET)

  call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 1, 8, stat=ios, errmsg=msg)
  call expect_status("set_global", ios, XFFL_OK)
  call expect_int("errmsg is empty on success", len(msg), 0)
  call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 1, 8, stat=ios)
  call expect_status("set_global twice", ios, XFFL_ESTATE)

  call st%federated_scaling([3, 3], stat=ios, errmsg=msg)
  call expect_status("sizes (3,3) in world 8", ios, XFFL_EINVAL)
  call expect_contains("sizes (3,3) names the sum", msg, "6")
  call expect_contains("sizes (3,3) names the world", msg, "8")
  call st%federated_scaling([2, 6], stat=ios, errmsg=msg)
  call expect_status("unequal sizes without hsdp", ios, XFFL_EINVAL)
  call expect_contains("unequal sizes suggest an hsdp", msg, "hsdp")
  call st%federated_scaling([4, 4], 3, stat=ios, errmsg=msg)
  call expect_status("hsdp 3 with sizes (4,4)", ios, XFFL_EINVAL)
  call expect_contains("hsdp 3 is named", msg, "3")
  call st%set_hsdp(3, stat=ios, errmsg=msg)
  call expect_status("hsdp 3 in world 8", ios, XFFL_EINVAL)
  call expect_true("no HSDP after refusals", .not. st%is_hsdp_setup())
  call expect_true("no federated scaling after refusals", .not. st%is_federated_scaling_setup())

  allocate(values(1))
  values = st%get_ints(XFFL_ATTR_FEDERATED_LOCAL_SIZE, stat=ios)
  call expect_status("federated_local_size before the layout", ios, XFFL_ENOTSET)
  call expect_int("failed get_ints gives an empty array", size(values), 0)
  g = st%group(XFFL_GROUP_FEDERATED, stat=ios, errmsg=msg)
  call expect_status("FEDERATED group before the layout", ios, XFFL_ENOTSET)
  g = st%group(99, stat=ios)
  call expect_status("unknown group kind", ios, XFFL_EINVAL)
  value = st%get_int(99, stat=ios, errmsg=msg)
  call expect_status("unknown attribute", ios, XFFL_EINVAL)
  value = st%get_int(XFFL_ATTR_FEDERATED_LOCAL_SIZE, stat=ios)
  call expect_status("a tuple attribute through get_int", ios, XFFL_EINVAL)

  ! A layout, then another layout without unset: ESTATE; after unset: fine.
  call st%federated_scaling([4], 2)
  call st%set_hsdp(2, stat=ios)
  call expect_status("set_hsdp over federated scaling", ios, XFFL_ESTATE)
  call st%set_node(1, 4, 0, 2, stat=ios)
  call expect_status("set_node after the layout", ios, XFFL_ESTATE)
  call st%unset_hsdp(stat=ios)
  call expect_status("unset_hsdp of a federated layout", ios, XFFL_ESTATE)
  call st%unset_federated_scaling()
  call st%set_hsdp(2)
  call expect_true("hsdp after unset", st%is_hsdp_setup())

  ! Options at any time; bad values refused.
  call st%set_option(XFFL_OPT_TIMEOUT_MS, 1234)
  call expect_int("timeout option", st%get_option(XFFL_OPT_TIMEOUT_MS), 1234)
  call st%set_option(XFFL_OPT_FEDERATED_STRATEGY, XFFL_FEDAVG_FLAT)
  call expect_int("strategy option", st%get_option(XFFL_OPT_FEDERATED_STRATEGY), XFFL_FEDAVG_FLAT)
  ! ... except the cross-facility backend, which xffl_set_global has read
  call st%set_option(XFFL_OPT_CROSS_FACILITY_BACKEND, XFFL_BACKEND_UCX, stat=ios)
  call expect_status("cross-facility backend after set_global", ios, XFFL_ESTATE)
  call expect_int("cross-facility option", st%get_option(XFFL_OPT_CROSS_FACILITY_BACKEND), XFFL_BACKEND_NONE)
  call st%set_option(XFFL_OPT_LOG_LEVEL, 42, stat=ios)
  call expect_status("log level 42", ios, XFFL_EINVAL)
  call st%set_option(77, 1, stat=ios)
  call expect_status("unknown option", ios, XFFL_EINVAL)

  ! Weights need federated scaling.
  call st%set_federated_weights([1.0d0, 3.0d0], stat=ios)
  call expect_status("weights without federated scaling", ios, XFFL_ESTATE)

  ! Meshes and pure helpers.
  call expect_ints("device mesh (2,3)", xffl_device_mesh([2, 3]), [0, 1, 2, 3, 4, 5])
  values = xffl_device_mesh([2, 0], stat=ios)
  call expect_status("device mesh with a zero extent", ios, XFFL_EINVAL)

  ! Status names and version.
  call expect_contains("status name", xffl_status_name(XFFL_EBUFSIZE), "XFFL_EBUFSIZE")
  call expect_contains("unknown status name", xffl_status_name(12345), "XFFL_UNKNOWN")
  call xffl_get_version(major, minor, patch)
  call expect_true("version is 0.x", major == 0 .and. minor >= 1)
  call expect_contains("version string", xffl_library_version(), ".")

  call st%destroy()
  call expect_true("destroyed", .not. st%is_created())
  call st%destroy()  ! twice is harmless
  call finish("test_errors")
end program test_errors
