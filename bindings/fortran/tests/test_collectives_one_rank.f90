!> Typed collectives and federated averaging (arrays of any rank and kind) in a 1-rank world with backend
!> none (the only world that needs no network): values come back exactly, sizes are checked, groups
!> created by the caller are owned and destroyed before the state.
program test_collectives_one_rank
  use, intrinsic :: iso_fortran_env, only: real32, real64, int8, int32, int64
  use xffl
  use xffl_fortran_testing
  implicit none
  type(xffl_state) :: st
  type(xffl_group) :: world, custom
  real(real32) :: s32(5), r32(5)
  real(real64) :: s64(4), r64(4)
  integer(int32) :: i32(3), o32(3)
  integer(int64) :: i64(3), o64(3)
  real(real64) :: m2(2, 3), o2(3, 2), g2(2, 3)
  integer(int32) :: t3(2, 3, 4)
  integer(int8) :: b8(3, 2)
  integer :: ios, i
  character(len=:), allocatable :: msg
  real(real32), target :: nb(4)
  type(xffl_request) :: req
  logical :: done

  call st%create()
  call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 0, 1)

  world = st%group(XFFL_GROUP_WORLD)
  call expect_int("world size", world%size(), 1)
  call expect_int("world rank", world%rank(), 0)

  custom = st%create_process_group([0], "my group")
  call expect_true("custom group valid", custom%is_valid())
  call expect_ints("custom group ranks", custom%ranks(), [0])
  call expect_contains("custom group description", custom%description(), "my group")

  s32 = [(real(i, real32) * 1.5_real32, i = 1, 5)]
  r32 = -1
  call custom%allreduce(s32, r32, XFFL_SUM)
  call expect_true("allreduce r32 out of place", all(r32 == s32))
  s64 = [0.25d0, -1d0, 3d0, 1d300]
  call world%allreduce(s64, XFFL_MAX)
  call expect_true("allreduce r64 in place", all(s64 == [0.25d0, -1d0, 3d0, 1d300]))
  i32 = [7, -8, 9]
  o32 = 0
  call world%allreduce(i32, o32, XFFL_PROD)
  call expect_ints("allreduce i32", o32, [7, -8, 9])
  i64 = [huge(1_int64), -huge(1_int64), 0_int64]
  call world%allreduce(i64, XFFL_AVG)
  call expect_true("allreduce i64 avg of one", all(i64 == [huge(1_int64), -huge(1_int64), 0_int64]))

  r64 = [1d0, 2d0, 3d0, 4d0]
  call world%broadcast(r64, 0)
  call expect_true("broadcast r64", all(r64 == [1d0, 2d0, 3d0, 4d0]))
  call world%broadcast(r64, 3, stat=ios, errmsg=msg)
  call expect_status("broadcast from a non-member", ios, XFFL_EINVAL)
  call expect_contains("broadcast root named", msg, "3")

  o64 = 0
  call world%allgather(i64, o64)
  call expect_true("allgather i64", all(o64 == i64))
  call world%allgather(i64, o64(1:2), stat=ios, errmsg=msg)
  call expect_status("allgather with a short recv", ios, XFFL_EINVAL)
  call expect_contains("allgather size message", msg, "allgather")
  r32 = 0
  call world%reduce_scatter(s32, r32, XFFL_MIN)
  call expect_true("reduce_scatter r32", all(r32 == s32))
  call world%allreduce(s32, r32(1:4), XFFL_SUM, stat=ios)
  call expect_status("allreduce with different sizes", ios, XFFL_EINVAL)
  call expect_contains("allreduce size message names both counts", msg_of(world, s32, r32(1:4)), "5 elements, recv 4")
  call world%barrier()
  ! (An unknown reduction cannot be written: ops are typed handles, type(xffl_op), checked at compile time.)

  ! Arrays of any rank and every kind: a 2-D and a 3-D array, int8.
  m2 = reshape([(real(i, real64), i = 1, 6)], [2, 3])
  o2 = 0
  call world%allreduce(m2, o2, XFFL_SUM)
  call expect_true("allreduce 2-D r64 (2x3 into 3x2)", all(reshape(o2, [6]) == reshape(m2, [6])))
  t3 = reshape([(int(i, int32), i = 1, 24)], [2, 3, 4])
  call world%allreduce(t3, XFFL_MAX)
  call expect_true("allreduce 3-D i32 in place", all(reshape(t3, [24]) == [(i, i = 1, 24)]))
  b8 = reshape([(int(i - 3, int8), i = 1, 6)], [3, 2])
  call world%broadcast(b8, 0)
  call expect_true("broadcast 2-D int8", all(reshape(b8, [6]) == [(int(i - 3, int8), i = 1, 6)]))
  g2 = 0
  call world%allgather(m2, g2)
  call expect_true("allgather 2-D r64", all(g2 == m2))

  ! A non-contiguous section is refused with a message (never a crash, never a silent copy).
  call world%allreduce(m2(1, :), XFFL_SUM, stat=ios, errmsg=msg)
  call expect_status("allreduce of a strided section", ios, XFFL_EINVAL)
  call expect_contains("strided section message", msg, "allreduce: buf is not contiguous")
  call world%allreduce(s32, r32(1:5:2), XFFL_SUM, stat=ios, errmsg=msg)
  call expect_status("allreduce into a strided recv", ios, XFFL_EINVAL)
  call expect_contains("strided recv message", msg, "allreduce: recv is not contiguous")
  call world%broadcast(t3(:, 1, :), 0, stat=ios, errmsg=msg)
  call expect_status("broadcast of a strided 3-D section", ios, XFFL_EINVAL)
  call expect_contains("strided broadcast message", msg, "broadcast: buf is not contiguous")
  call world%allreduce(m2(:, 2:3), XFFL_SUM, stat=ios)
  call expect_status("a contiguous section (whole columns) is accepted", ios, XFFL_OK)

  ! Federated averaging needs federated scaling; then, in a 1-rank job, the mean of one group is itself.
  call st%federated_average(s64, stat=ios, errmsg=msg)
  call expect_status("federated_average without federated scaling", ios, XFFL_ESTATE)
  call st%federated_scaling([1])
  call st%federated_average(s32)
  call expect_true("federated_average r32", all(s32 == [(real(i, real32) * 1.5_real32, i = 1, 5)]))
  s64 = [0.5d0, 1.5d0, -2d0, 8d0]
  call st%federated_average(s64)
  call expect_true("federated_average r64", all(s64 == [0.5d0, 1.5d0, -2d0, 8d0]))
  i32 = [1, 2, 3]
  call st%federated_average(i32)
  call expect_ints("federated_average i32", i32, [1, 2, 3])
  i64 = [4, 5, 6]
  call st%federated_average(i64)
  call expect_true("federated_average i64", all(i64 == [4, 5, 6]))
  call st%set_federated_weights([2d0])
  s64 = [0.5d0, 1.5d0, -2d0, 8d0]
  call st%federated_average(s64)
  call expect_true("weighted federated_average r64", all(s64 == [0.5d0, 1.5d0, -2d0, 8d0]))
  call st%set_federated_weights([1d0, 1d0], stat=ios)
  call expect_status("two weights for one group", ios, XFFL_EINVAL)
  call st%set_federated_weights([real(real64) ::])
  m2 = reshape([(real(i, real64) / 4, i = 1, 6)], [2, 3])
  call st%federated_average(m2)
  call expect_true("federated_average 2-D r64", all(reshape(m2, [6]) == [(real(i, real64) / 4, i = 1, 6)]))
  call st%federated_average(m2(2, :), stat=ios, errmsg=msg)
  call expect_status("federated_average of a strided section", ios, XFFL_EINVAL)
  call expect_contains("federated_average section message", msg, "federated_average: buf is not contiguous")

  ! Nonblocking: the request holds the state (its getters answer, the rest is XFFL_ESTATE) until wait.
  nb = [1.5_real32, -2.0_real32, 0.25_real32, 3.0_real32]
  call st%federated_average_start(nb, req)
  call expect_true("request valid", req%is_valid())
  call expect_int("a getter in flight", st%get_int(XFFL_ATTR_RANK), 0)
  call world%barrier(stat=ios, errmsg=msg)
  call expect_status("barrier while a request is in flight", ios, XFFL_ESTATE)
  call expect_contains("barrier in flight message", msg, "xffl_federated_average_start")
  call req%wait()
  call req%test(done)
  call expect_true("request done after wait", done)
  call req%free()
  call expect_true("request freed", .not. req%is_valid())
  call expect_true("nonblocking federated_average r32", all(nb == [1.5_real32, -2.0_real32, 0.25_real32, 3.0_real32]))
  call world%barrier()

  call custom%destroy()
  call expect_true("custom group destroyed", .not. custom%is_valid())
  call st%destroy()
  call finish("test_collectives_one_rank")
contains
  !> The message of an allreduce that must fail.
  function msg_of(group, send, recv) result(text)
    type(xffl_group), intent(in) :: group
    real(real32), intent(in) :: send(:)
    real(real32), intent(inout) :: recv(:)
    character(len=:), allocatable :: text
    integer :: status
    call group%allreduce(send, recv, XFFL_SUM, stat=status, errmsg=text)
  end function msg_of
end program test_collectives_one_rank
