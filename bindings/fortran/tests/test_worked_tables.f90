!> The worked tables of shared/spec/xffl-examples.md (what xFFL's Python computes), rank by rank, through
!> the Fortran bindings with backend none: every field, every group's members, the meshes, the text form.
program test_worked_tables
  use xffl
  use xffl_fortran_testing
  implicit none
  integer :: r, r_  ! r_: index of the implied-do loops that spell out whole columns

  ! 5.1: W = 8, no federation, hsdp = 2
  do r = 0, 7
    call check_plain_hsdp(r)
  end do

  ! 5.2: W = 8, federated = 4 -> (4,4), hsdp = 2
  do r = 0, 7
    call check_rank("5.2", 8, 0, [4], 2, r, [4, 4], [2, 2], &
      fl=[0, 1, 2, 3, 0, 1, 2, 3], f=[0, 0, 0, 0, 1, 1, 1, 1], rl=[0, 1, 0, 1, 0, 1, 0, 1], &
      rr=[0, 0, 1, 1, 0, 0, 1, 1], sender=[1, 0, 0, 1, 1, 0, 0, 1], recv=[-1, 3, 0, -1, -1, 7, 4, -1], &
      fg=reshape([0, 4, 1, 5, 2, 6, 3, 7, 0, 4, 1, 5, 2, 6, 3, 7], [2, 8]), &
      rg=reshape([0, 2, 1, 3, 0, 2, 1, 3, 4, 6, 5, 7, 4, 6, 5, 7], [2, 8]), &
      shard=reshape([0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7], [2, 8]), &
      fed_lo=[0, 0, 0, 0, 4, 4, 4, 4], fed_hi=[3, 3, 3, 3, 7, 7, 7, 7], &
      mesh_rows=[2, 2, 2, 2, 2, 2, 2, 2])
  end do

  ! 5.3: W = 8, federated = 4, no HSDP
  do r = 0, 7
    call check_fsdp_federation(r)
  end do

  ! 5.4: W = 12, federated = (4,8) asymmetric, hsdp = 2
  do r = 0, 11
    call check_rank("5.4", 12, 0, [4, 8], 2, r, [4, 8], [2, 4], &
      fl=[0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7], f=[0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1], &
      rl=[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1], rr=[0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3], &
      sender=[1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0], recv=[-1, 3, 0, -1, -1, 7, 4, -1, 4, 7, 4, 7], &
      fg=reshape([0, 4, 1, -1, 2, -1, 3, 7, 0, 4, 5, -1, 6, -1, 3, 7, 8, -1, 9, -1, 10, -1, 11, -1], [2, 12]), &
      rg=reshape([0, 2, -1, -1, 1, 3, -1, -1, 0, 2, -1, -1, 1, 3, -1, -1, &
                  4, 6, 8, 10, 5, 7, 9, 11, 4, 6, 8, 10, 5, 7, 9, 11, 4, 6, 8, 10, 5, 7, 9, 11, &
                  4, 6, 8, 10, 5, 7, 9, 11], [4, 12]), &
      shard=reshape([0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9, 8, 9, 10, 11, 10, 11], [2, 12]), &
      fed_lo=[0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4], fed_hi=[3, 3, 3, 3, 11, 11, 11, 11, 11, 11, 11, 11], &
      mesh_rows=[2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4])
  end do

  ! 5.6: W = 16, 4 ranks per node, federated = 8 -> (8,8), hsdp = 4
  do r = 0, 15
    call check_rank("5.6", 16, 4, [8], 4, r, [8, 8], [2, 2], &
      fl=[(mod(r_, 8), r_ = 0, 15)], f=[(r_ / 8, r_ = 0, 15)], &
      rl=[(mod(r_, 4), r_ = 0, 15)], rr=[(mod(r_, 8) / 4, r_ = 0, 15)], &
      sender=[1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1], &
      recv=[-1, 5, -1, 7, 0, -1, 2, -1, -1, 13, -1, 15, 8, -1, 10, -1], &
      fg=reshape([(mod(r_, 8), mod(r_, 8) + 8, r_ = 0, 15)], [2, 16]), &
      rg=reshape([((r_ / 8) * 8 + mod(r_, 4), (r_ / 8) * 8 + mod(r_, 4) + 4, r_ = 0, 15)], [2, 16]), &
      shard=reshape([(span(4 * (r_ / 4), 4 * (r_ / 4) + 3), r_ = 0, 15)], [4, 16]), &
      fed_lo=[(8 * (r_ / 8), r_ = 0, 15)], fed_hi=[(8 * (r_ / 8) + 7, r_ = 0, 15)], &
      mesh_rows=[(2, r_ = 0, 15)])
  end do

  call check_text_form()
  call check_stream_instances()
  call finish("test_worked_tables")

contains

  function label(table, r, what) result(text)
    character(len=*), intent(in) :: table, what
    integer, intent(in) :: r
    character(len=:), allocatable :: text
    character(len=8) :: num
    write(num, '(i0)') r
    text = table // " rank " // trim(num) // " " // what
  end function label

  !> Rank r of the given federated HSDP job, with backend none (topology only).
  subroutine make_state(st, w, node_size, sizes, hsdp, r)
    type(xffl_state), intent(inout) :: st
    integer, intent(in) :: w, node_size, sizes(:), hsdp, r
    call st%create()
    call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, r, w)
    if (node_size > 0) call st%set_node(mod(r, node_size), node_size, r / node_size, w / node_size)
    call st%federated_scaling(sizes, hsdp)
  end subroutine make_state

  subroutine check_rank(table, w, node_size, sizes, hsdp, r, local_sizes, replica_worlds, fl, f, rl, rr, sender, &
                        recv, fg, rg, shard, fed_lo, fed_hi, mesh_rows)
    character(len=*), intent(in) :: table
    integer, intent(in) :: w, node_size, sizes(:), hsdp, r, local_sizes(:), replica_worlds(:)
    integer, intent(in) :: fl(0:), f(0:), rl(0:), rr(0:), sender(0:), recv(0:), fg(:, 0:), rg(:, 0:), shard(:, 0:)
    integer, intent(in) :: fed_lo(0:), fed_hi(0:), mesh_rows(0:)
    type(xffl_state) :: st
    type(xffl_group) :: g
    integer :: ios, value
    integer, allocatable :: shape(:), mesh_ranks(:)
    character(len=:), allocatable :: msg

    call make_state(st, w, node_size, sizes, hsdp, r)
    call expect_int(label(table, r, "rank"), st%get_int(XFFL_ATTR_RANK), r)
    call expect_int(label(table, r, "world_size"), st%get_int(XFFL_ATTR_WORLD_SIZE), w)
    if (node_size > 0) then
      call expect_int(label(table, r, "node_local_rank"), st%get_int(XFFL_ATTR_NODE_LOCAL_RANK), mod(r, node_size))
      call expect_int(label(table, r, "node_local_size"), st%get_int(XFFL_ATTR_NODE_LOCAL_SIZE), node_size)
      call expect_int(label(table, r, "node_rank"), st%get_int(XFFL_ATTR_NODE_RANK), r / node_size)
      call expect_int(label(table, r, "node_world_size"), st%get_int(XFFL_ATTR_NODE_WORLD_SIZE), w / node_size)
      call expect_true(label(table, r, "is_node_setup"), st%is_node_setup())
    end if
    call expect_int(label(table, r, "federated_local_rank"), st%get_int(XFFL_ATTR_FEDERATED_LOCAL_RANK), fl(r))
    call expect_int(label(table, r, "federated_rank"), st%get_int(XFFL_ATTR_FEDERATED_RANK), f(r))
    call expect_int(label(table, r, "federated_world_size"), st%get_int(XFFL_ATTR_FEDERATED_WORLD_SIZE), &
                    size(local_sizes))
    call expect_ints(label(table, r, "federated_local_size"), st%get_ints(XFFL_ATTR_FEDERATED_LOCAL_SIZE), &
                     local_sizes)
    call expect_int(label(table, r, "replica_local_rank"), st%get_int(XFFL_ATTR_REPLICA_LOCAL_RANK), rl(r))
    call expect_int(label(table, r, "replica_local_size"), st%get_int(XFFL_ATTR_REPLICA_LOCAL_SIZE), hsdp)
    call expect_int(label(table, r, "replica_rank"), st%get_int(XFFL_ATTR_REPLICA_RANK), rr(r))
    call expect_ints(label(table, r, "replica_world_size"), st%get_ints(XFFL_ATTR_REPLICA_WORLD_SIZE), &
                     replica_worlds)
    call expect_int(label(table, r, "is_sender"), st%get_int(XFFL_ATTR_IS_SENDER), sender(r))
    value = st%get_int(XFFL_ATTR_RECEIVE_FROM, stat=ios, errmsg=msg)
    if (recv(r) < 0) then
      call expect_status(label(table, r, "receive_from (None)"), ios, XFFL_ENOTSET)
      call expect_true(label(table, r, "receive_from ENOTSET has a message"), len(msg) > 0)
    else
      call expect_status(label(table, r, "receive_from status"), ios, XFFL_OK)
      call expect_int(label(table, r, "receive_from"), value, recv(r))
    end if
    call expect_true(label(table, r, "is_federated_scaling_setup"), st%is_federated_scaling_setup())
    call expect_true(label(table, r, "is_hsdp_setup"), st%is_hsdp_setup())
    call expect_true(label(table, r, "not is_fsdp_setup"), .not. st%is_fsdp_setup())

    g = st%group(XFFL_GROUP_FEDERATED)
    call expect_ints(label(table, r, "FEDERATED group"), g%ranks(), ranks_of(fg(:, r)))
    g = st%group(XFFL_GROUP_REPLICA)
    call expect_ints(label(table, r, "REPLICA group"), g%ranks(), ranks_of(rg(:, r)))
    g = st%group(XFFL_GROUP_HSDP_REPLICA)
    call expect_ints(label(table, r, "HSDP_REPLICA group"), g%ranks(), ranks_of(rg(:, r)))
    g = st%group(XFFL_GROUP_HSDP_SHARD)
    call expect_ints(label(table, r, "HSDP_SHARD group"), g%ranks(), ranks_of(shard(:, r)))
    call expect_int(label(table, r, "HSDP_SHARD group rank"), g%rank(), rl(r))
    g = st%group(XFFL_GROUP_FEDERATION)
    call expect_ints(label(table, r, "FEDERATION group"), g%ranks(), span(fed_lo(r), fed_hi(r)))
    call expect_int(label(table, r, "FEDERATION group rank"), g%rank(), fl(r))
    g = st%group(XFFL_GROUP_WORLD)
    call expect_ints(label(table, r, "WORLD group"), g%ranks(), span(0, w - 1))

    call st%mesh(XFFL_MESH_HSDP, shape, mesh_ranks)
    call expect_ints(label(table, r, "hsdp_mesh shape"), shape, [mesh_rows(r), hsdp])
    call expect_ints(label(table, r, "hsdp_mesh ranks"), mesh_ranks, span(fed_lo(r), fed_hi(r)))
    call st%mesh(XFFL_MESH_FSDP, shape, mesh_ranks, stat=ios)
    call expect_status(label(table, r, "fsdp_mesh (None)"), ios, XFFL_ENOTSET)
    call st%destroy()
  end subroutine check_rank

  subroutine check_plain_hsdp(r)
    integer, intent(in) :: r
    type(xffl_state) :: st
    type(xffl_group) :: g
    integer :: ios, value
    integer, allocatable :: shape(:), mesh_ranks(:)
    call st%create()
    call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, r, 8)
    call st%set_hsdp(2)
    call expect_int(label("5.1", r, "replica_local_rank"), st%get_int(XFFL_ATTR_REPLICA_LOCAL_RANK), mod(r, 2))
    call expect_int(label("5.1", r, "replica_local_size"), st%get_int(XFFL_ATTR_REPLICA_LOCAL_SIZE), 2)
    call expect_int(label("5.1", r, "replica_rank"), st%get_int(XFFL_ATTR_REPLICA_RANK), r / 2)
    call expect_ints(label("5.1", r, "replica_world_size"), st%get_ints(XFFL_ATTR_REPLICA_WORLD_SIZE), [4])
    g = st%group(XFFL_GROUP_HSDP_REPLICA)
    call expect_ints(label("5.1", r, "replica-dim peers"), g%ranks(), mod(r, 2) + [0, 2, 4, 6])
    g = st%group(XFFL_GROUP_HSDP_SHARD)
    call expect_ints(label("5.1", r, "shard-dim peers"), g%ranks(), 2 * (r / 2) + [0, 1])
    call st%mesh(XFFL_MESH_HSDP, shape, mesh_ranks)
    call expect_ints(label("5.1", r, "hsdp_mesh shape"), shape, [4, 2])
    call expect_ints(label("5.1", r, "hsdp_mesh ranks"), mesh_ranks, span(0, 7))
    value = st%get_int(XFFL_ATTR_FEDERATED_RANK, stat=ios)
    call expect_status(label("5.1", r, "federated_rank (None)"), ios, XFFL_ENOTSET)
    value = st%get_int(XFFL_ATTR_IS_SENDER, stat=ios)
    call expect_status(label("5.1", r, "is_sender (None)"), ios, XFFL_ENOTSET)
    g = st%group(XFFL_GROUP_FEDERATED, stat=ios)
    call expect_status(label("5.1", r, "FEDERATED group (None)"), ios, XFFL_ENOTSET)
    call expect_true(label("5.1", r, "group left invalid"), .not. g%is_valid())
    call expect_true(label("5.1", r, "is_hsdp_setup"), st%is_hsdp_setup())
    call expect_true(label("5.1", r, "not is_federated_scaling_setup"), .not. st%is_federated_scaling_setup())
    ! Plain FSDP afterwards: the whole world in one 1-D mesh.
    call st%unset_hsdp()
    call st%set_fsdp()
    call st%mesh(XFFL_MESH_FSDP, shape, mesh_ranks)
    call expect_ints(label("5.1", r, "fsdp_mesh shape"), shape, [8])
    call expect_ints(label("5.1", r, "fsdp_mesh ranks"), mesh_ranks, span(0, 7))
    call st%destroy()
  end subroutine check_plain_hsdp

  subroutine check_fsdp_federation(r)
    integer, intent(in) :: r
    type(xffl_state) :: st
    type(xffl_group) :: g
    integer :: ios, value
    integer, allocatable :: shape(:), mesh_ranks(:)
    call make_state(st, 8, 0, [4], 0, r)
    call expect_int(label("5.3", r, "federated_local_rank"), st%get_int(XFFL_ATTR_FEDERATED_LOCAL_RANK), mod(r, 4))
    call expect_int(label("5.3", r, "federated_rank"), st%get_int(XFFL_ATTR_FEDERATED_RANK), r / 4)
    call expect_ints(label("5.3", r, "federated_local_size"), st%get_ints(XFFL_ATTR_FEDERATED_LOCAL_SIZE), [4, 4])
    call expect_int(label("5.3", r, "is_sender"), st%get_int(XFFL_ATTR_IS_SENDER), 1)
    value = st%get_int(XFFL_ATTR_RECEIVE_FROM, stat=ios)
    call expect_status(label("5.3", r, "receive_from (None)"), ios, XFFL_ENOTSET)
    value = st%get_int(XFFL_ATTR_REPLICA_RANK, stat=ios)
    call expect_status(label("5.3", r, "replica_rank (None)"), ios, XFFL_ENOTSET)
    g = st%group(XFFL_GROUP_FEDERATED)
    call expect_ints(label("5.3", r, "FEDERATED group"), g%ranks(), mod(r, 4) + [0, 4])
    g = st%group(XFFL_GROUP_FEDERATION)
    call expect_ints(label("5.3", r, "FEDERATION group"), g%ranks(), 4 * (r / 4) + [0, 1, 2, 3])
    g = st%group(XFFL_GROUP_REPLICA, stat=ios)
    call expect_status(label("5.3", r, "REPLICA group (None)"), ios, XFFL_ENOTSET)
    call st%mesh(XFFL_MESH_FSDP, shape, mesh_ranks)
    call expect_ints(label("5.3", r, "fsdp_mesh shape"), shape, [4])
    call expect_ints(label("5.3", r, "fsdp_mesh"), mesh_ranks, 4 * (r / 4) + [0, 1, 2, 3])
    call st%mesh(XFFL_MESH_HSDP, shape, mesh_ranks, stat=ios)
    call expect_status(label("5.3", r, "hsdp_mesh (None)"), ios, XFFL_ENOTSET)
    call expect_true(label("5.3", r, "is_fsdp_setup"), st%is_fsdp_setup())
    call st%destroy()
  end subroutine check_fsdp_federation

  !> The text form of rank 1 of 5.2, as the spec shows it, and the JSON form's field names.
  subroutine check_text_form()
    type(xffl_state) :: st
    character(len=:), allocatable :: text
    character(len=*), parameter :: tab = char(9)
    call make_state(st, 8, 0, [4], 2, 1)
    text = st%describe()
    call expect_contains("5.2 rank 1 text banner", text, "*** xFFL Distributed Setup ***")
    call expect_contains("5.2 rank 1 text replica rank", text, "Replica rank" // tab // tab // "0")
    call expect_contains("5.2 rank 1 text replica world size", text, &
                         "Replica world size" // tab // tab // "(2, 2)")
    call expect_contains("5.2 rank 1 text federated local size", text, &
                         "Federated local size" // tab // "(4, 4)")
    call expect_contains("5.2 rank 1 text receives from", text, "Receives from" // tab // tab // "3")
    call expect_contains("5.2 rank 1 text federated group", text, "Federated group" // tab // tab // "[1, 5]")
    call expect_contains("5.2 rank 1 text replica group", text, "Replica group" // tab // tab // "[1, 3]")
    call expect_contains("5.2 rank 1 text federation", text, "Federation" // tab // tab // tab // "[0, 1, 2, 3]")
    call expect_contains("5.2 rank 1 text FSDP", text, "FSDP" // tab // tab // tab // "None")
    text = st%describe(XFFL_FORMAT_JSON)
    call expect_contains("5.2 rank 1 json receive_from", text, '"receive_from"')
    call expect_contains("5.2 rank 1 json federated_local_size", text, '"federated_local_size"')
    call expect_contains("5.2 rank 1 json master_addr", text, "127.0.0.1")
    call expect_contains("5.2 rank 1 master_addr", st%master_addr(), "127.0.0.1")
    call expect_int("5.2 rank 1 master_addr length", len(st%master_addr()), 9)
    call st%destroy()
  end subroutine check_text_form

  !> 5.2 with 3 streams: FEDERATED and REPLICA get 3 instances with the same members.
  subroutine check_stream_instances()
    type(xffl_state) :: st
    type(xffl_group) :: g
    integer :: k, ios
    call st%create()
    call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 5, 8)
    call st%set_exec_device(-1, streams=3)
    call st%federated_scaling([4], hsdp=2)
    call expect_int("5.2 streams", st%get_int(XFFL_ATTR_STREAMS), 3)
    do k = 0, 2
      g = st%group(XFFL_GROUP_FEDERATED, instance=k)
      call expect_ints("5.2 rank 5 FEDERATED instance", g%ranks(), [1, 5])
      g = st%group(XFFL_GROUP_REPLICA, instance=k)
      call expect_ints("5.2 rank 5 REPLICA instance", g%ranks(), [5, 7])
    end do
    g = st%group(XFFL_GROUP_FEDERATED, instance=3, stat=ios)
    call expect_status("5.2 FEDERATED instance 3 of 3", ios, XFFL_EINVAL)
    call st%destroy()
  end subroutine check_stream_instances
end program test_worked_tables
