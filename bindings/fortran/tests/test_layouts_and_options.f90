!> The rest of xFFL's DistributedState through the Fortran bindings: a caller's FSDP mesh, HSDP from
!> its fields, the senders of each federated group, string options and the mesh with its shape
!> capacity. Worked values of DESIGN.md 3.3 and spec/xffl-examples.md; invalid inputs give the C
!> status in stat, the values in errmsg, and change nothing (the JSON description stays the same).
program test_layouts_and_options
  use xffl
  use xffl_fortran_testing
  implicit none
  type(xffl_state) :: st, plain
  type(xffl_group) :: g
  integer :: ios, r
  integer, allocatable :: shape(:), ranks(:)
  character(len=:), allocatable :: msg, before, text

  ! ---- set_fsdp_mesh: W = 12, rank 5, a mesh given in any order is kept sorted.
  call st%create()
  call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 5, 12)
  call st%set_fsdp_mesh([9, 5, 7, 11])
  call expect_true("fsdp mesh: is_fsdp_setup", st%is_fsdp_setup())
  call st%mesh(XFFL_MESH_FSDP, shape, ranks)
  call expect_ints("fsdp mesh shape", shape, [4])
  call expect_ints("fsdp mesh ranks", ranks, [5, 7, 9, 11])
  g = st%group(XFFL_GROUP_FSDP)
  call expect_ints("fsdp group", g%ranks(), [5, 7, 9, 11])
  call st%unset_fsdp()

  before = st%describe(XFFL_FORMAT_JSON)
  call st%set_fsdp_mesh([5, 12], stat=ios, errmsg=msg)
  call expect_status("fsdp mesh rank 12", ios, XFFL_EINVAL)
  call expect_contains("fsdp mesh rank 12 message", msg, "rank 12 of the fsdp mesh outside [0, 12)")
  call st%set_fsdp_mesh([5, 6, 5], stat=ios, errmsg=msg)
  call expect_status("fsdp mesh duplicate", ios, XFFL_EINVAL)
  call expect_contains("fsdp mesh duplicate message", msg, "rank 5 appears twice")
  call st%set_fsdp_mesh([0, 1], stat=ios, errmsg=msg)
  call expect_status("fsdp mesh without the caller", ios, XFFL_EINVAL)
  call expect_contains("fsdp mesh without the caller message", msg, "rank 5 is not in the fsdp mesh [0, 1]")
  text = st%describe(XFFL_FORMAT_JSON)
  call expect_true("refused fsdp meshes changed nothing", text == before)

  ! ---- set_hsdp_manual equals set_hsdp for every rank of W = 8, S = 2 (spec 5.1).
  do r = 0, 7
    call plain%create()
    call plain%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, r, 8)
    call plain%set_hsdp(2)
    call st%destroy()
    call st%create()
    call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, r, 8)
    call st%set_hsdp_manual(mod(r, 2), 2, r / 2, [4])
    call expect_true("set_hsdp_manual equals set_hsdp", st%describe(XFFL_FORMAT_JSON) == plain%describe(XFFL_FORMAT_JSON))
    call plain%destroy()
  end do
  ! st is rank 7 now: rl 1, rr 3, replica-dim peers 1,3,5,7, shard-dim 6,7.
  g = st%group(XFFL_GROUP_HSDP_REPLICA)
  call expect_ints("hsdp manual replica group of rank 7", g%ranks(), [1, 3, 5, 7])
  g = st%group(XFFL_GROUP_HSDP_SHARD)
  call expect_ints("hsdp manual shard group of rank 7", g%ranks(), [6, 7])
  call st%unset_hsdp()
  before = st%describe(XFFL_FORMAT_JSON)
  call st%set_hsdp_manual(1, 2, 3, [3], stat=ios, errmsg=msg)
  call expect_status("hsdp manual replica_world_size 3", ios, XFFL_EINVAL)
  call expect_contains("hsdp manual replica_world_size 3 message", msg, &
                       "replica_world_size (3,) is not world size 8 / replica_local_size 2 = 4")
  call st%set_hsdp_manual(0, 2, 3, [4], stat=ios, errmsg=msg)
  call expect_status("hsdp manual wrong column", ios, XFFL_EINVAL)
  call expect_contains("hsdp manual wrong column message", msg, "replica_local_rank 0 is not rank 7 mod")
  call st%set_hsdp_manual(1, 2, 3, [2, 2], stat=ios, errmsg=msg)
  call expect_status("hsdp manual two entries", ios, XFFL_EINVAL)
  call expect_contains("hsdp manual two entries message", msg, "replica_world_size has 2 entries")
  text = st%describe(XFFL_FORMAT_JSON)
  call expect_true("refused hsdp manual changed nothing", text == before)
  call st%destroy()

  ! ---- the senders of DESIGN.md 3.3: W = 12, F = (4, 8), S = 2.
  call st%create()
  call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 5, 12)
  ranks = st%communicating_processes(0, stat=ios)
  call expect_status("senders without federated scaling", ios, XFFL_ESTATE)
  call st%federated_scaling([4, 8], 2)
  call expect_ints("C_0", st%communicating_processes(0), [0, 3])
  call expect_ints("C_1", st%communicating_processes(1), [4, 7])
  ranks = st%communicating_processes(2, stat=ios, errmsg=msg)
  call expect_status("C_2 does not exist", ios, XFFL_EINVAL)
  call expect_contains("C_2 message", msg, "federated rank 2 outside [0, 2)")
  call expect_int("C_2 gives no ranks", size(ranks), 0)
  call st%mesh(XFFL_MESH_HSDP, shape, ranks)
  call expect_ints("hsdp mesh shape of federation 1", shape, [4, 2])
  call expect_ints("hsdp mesh ranks of federation 1", ranks, span(4, 11))
  call st%destroy()

  ! ---- string options: before set_global; the token write-only and never echoed.
  call st%create()
  call st%set_option_string(XFFL_OPT_JOB_ID, "fortran-job")
  text = st%get_option_string(XFFL_OPT_JOB_ID)
  call expect_true("job id round trip", text == "fortran-job")
  call st%set_option_string(XFFL_OPT_JOB_ID, "", stat=ios, errmsg=msg)
  call expect_status("empty job id", ios, XFFL_EINVAL)
  call st%set_option_string(XFFL_OPT_AUTH_TOKEN, "f0rtran-secret")
  text = st%get_option_string(XFFL_OPT_AUTH_TOKEN, stat=ios, errmsg=msg)
  call expect_status("token is write-only", ios, XFFL_EINVAL)
  call expect_true("no token in the message", index(msg, "f0rtran-secret") == 0)
  call expect_int("no token returned", len(text), 0)
  call st%set_option_string(XFFL_OPT_TIMEOUT_MS, "5", stat=ios, errmsg=msg)
  call expect_status("int key to the string setter", ios, XFFL_EINVAL)
  call expect_contains("int key message", msg, "is an integer option")
  call st%set_option(XFFL_OPT_JOB_ID, 1, stat=ios)
  call expect_status("string key to the int setter", ios, XFFL_EINVAL)
  call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 0, 1)
  call st%set_option_string(XFFL_OPT_JOB_ID, "late", stat=ios, errmsg=msg)
  call expect_status("job id after set_global", ios, XFFL_ESTATE)
  call expect_contains("job id after set_global message", msg, "xffl_set_global")
  call st%destroy()

  call finish("test_layouts_and_options")
end program test_layouts_and_options
