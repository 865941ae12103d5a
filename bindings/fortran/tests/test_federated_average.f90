!> Federated averaging from Fortran across ranks. Launched by xffl-run (or alone as a 1-rank world), it
!> reads its place in the job from the environment:
!>   RANK, WORLD_SIZE                 this process (default 0 and 1)
!>   MASTER_ADDR, MASTER_PORT         rendezvous (default 127.0.0.1 and 29500)
!>   XFFL_FEDERATED                   federated group sizes in processes, "4" or "2,6" (default WORLD_SIZE)
!>   XFFL_HSDP                        replica size, 0 for none (default 0)
!>   XFFL_BACKEND                     none, ucx or nccl (default ucx when WORLD_SIZE > 1, else none)
!> Every rank of federated group f holds 100*(f+1) + shard + i/2 in element i; after the average every
!> rank must hold mean_f(100*(f+1)) + shard + i/2 exactly. The same holds for a 2-D (real64, 40x25) and a
!> 3-D (real32, 10x10x10) model, and an allreduce over WORLD of a 2-D and a 3-D array gives every rank the
!> sum over ranks; a strided section is refused on every rank, and the job goes on. Exit 77 (skip) if the
!> backend is not built.
program test_federated_average
  use, intrinsic :: iso_fortran_env, only: real32, real64, int64, error_unit
  use xffl
  use xffl_fortran_testing
  implicit none
  integer, parameter :: n = 1000
  type(xffl_state) :: st
  integer :: rank, world, port, hsdp, backend, f, groups, shard, ios, i
  integer, allocatable :: sizes(:)
  character(len=:), allocatable :: addr, msg
  real(real64) :: model(n), expected(n), base
  real(real32) :: small(n)
  real(real64) :: model2(40, 25), expected2(40, 25)
  real(real32) :: model3(10, 10, 10)
  integer(int64) :: counts2(3, 4), sums2(3, 4)
  integer :: counts3(2, 3, 2), j, k
  type(xffl_group) :: world_group

  rank = env_int("RANK", 0)
  world = env_int("WORLD_SIZE", 1)
  port = env_int("MASTER_PORT", 29500)
  hsdp = env_int("XFFL_HSDP", 0)
  addr = env_text("MASTER_ADDR", "127.0.0.1")
  sizes = env_ints("XFFL_FEDERATED", world)
  backend = backend_of(env_text("XFFL_BACKEND", merge("ucx ", "none", world > 1)))

  call st%create()
  call st%set_option(XFFL_OPT_TIMEOUT_MS, 30000)
  call st%set_global(backend, XFFL_DEVICE_CPU, addr, port, rank, world, stat=ios, errmsg=msg)
  if (ios == XFFL_EUNSUPPORTED) then
    write(error_unit, '(a)') "skipped: " // msg
    call st%destroy()
    stop 77
  end if
  call expect_status("set_global", ios, XFFL_OK)
  call st%federated_scaling(sizes, hsdp)

  f = st%get_int(XFFL_ATTR_FEDERATED_RANK)
  groups = st%get_int(XFFL_ATTR_FEDERATED_WORLD_SIZE)
  shard = 0
  if (hsdp > 0) shard = st%get_int(XFFL_ATTR_REPLICA_LOCAL_RANK)
  model = [(100d0 * (f + 1) + shard + 0.5d0 * i, i = 1, n)]
  base = 100d0 * (groups + 1) / 2d0
  expected = [(base + shard + 0.5d0 * i, i = 1, n)]
  call st%federated_average(model)
  call expect_true("federated average of real64 is the mean over groups", all(model == expected))

  small = real([(100 * (f + 1) + shard, i = 1, n)], real32)
  call st%federated_average(small)
  call expect_true("federated average of real32", all(small == real(base + shard, real32)))

  ! Arrays of rank 2 and 3, as a model's layers are: same values as above, laid out in columns.
  model2 = reshape([(100d0 * (f + 1) + shard + 0.5d0 * i, i = 1, n)], [40, 25])
  expected2 = reshape(expected, [40, 25])
  call st%federated_average(model2)
  call expect_true("federated average of a 2-D real64 array", all(model2 == expected2))
  model3 = reshape(real([(100 * (f + 1) + shard, i = 1, n)], real32), [10, 10, 10])
  call st%federated_average(model3)
  call expect_true("federated average of a 3-D real32 array", all(model3 == real(base + shard, real32)))

  ! allreduce over WORLD of a 2-D (in place) and a 3-D (send, recv) array: the sum over ranks.
  world_group = st%group(XFFL_GROUP_WORLD)
  counts2 = reshape([(int(rank + 1, int64) * i, i = 1, 12)], [3, 4])
  call world_group%allreduce(counts2, XFFL_SUM)
  sums2 = reshape([(int(world, int64) * (world + 1) / 2 * i, i = 1, 12)], [3, 4])
  call expect_true("allreduce of a 2-D int64 array over WORLD", all(counts2 == sums2))
  counts3 = reshape([(((rank + i + 10 * j + 100 * k, i = 1, 2), j = 1, 3), k = 1, 2)], [2, 3, 2])
  block
    integer :: maxima(2, 3, 2)
    call world_group%allreduce(counts3, maxima, XFFL_MAX)
    call expect_true("allreduce MAX of a 3-D integer array over WORLD", &
                     all(maxima == reshape([(((world - 1 + i + 10 * j + 100 * k, i = 1, 2), j = 1, 3), k = 1, 2)], &
                                           [2, 3, 2])))
  end block

  ! Every rank passes a strided section: refused locally with a message, before any communication,
  ! so no rank waits for another and the job can go on.
  call world_group%allreduce(counts2(1, :), XFFL_SUM, stat=ios, errmsg=msg)
  call expect_status("allreduce of a strided section", ios, XFFL_EINVAL)
  call expect_true("strided section message: " // msg, index(msg, "buf is not contiguous") > 0)
  call st%federated_average(model2(1:40:2, :), stat=ios, errmsg=msg)
  call expect_status("federated average of a strided section", ios, XFFL_EINVAL)
  call world_group%barrier()

  call st%destroy()
  call finish("test_federated_average")

contains

  function env_text(name, default) result(value)
    character(len=*), intent(in) :: name, default
    character(len=:), allocatable :: value
    integer :: length, status
    call get_environment_variable(name, length=length, status=status)
    if (status /= 0 .or. length == 0) then
      value = trim(default)
      return
    end if
    allocate(character(len=length) :: value)
    call get_environment_variable(name, value)
  end function env_text

  integer function env_int(name, default)
    character(len=*), intent(in) :: name
    integer, intent(in) :: default
    character(len=:), allocatable :: text
    integer :: ios
    text = env_text(name, "")
    env_int = default
    if (len(text) > 0) then
      read(text, *, iostat=ios) env_int
      if (ios /= 0) error stop "test_federated_average: " // name // " is not an integer: " // text
    end if
  end function env_int

  !> "2,6" -> [2, 6]
  function env_ints(name, default) result(values)
    character(len=*), intent(in) :: name
    integer, intent(in) :: default
    integer, allocatable :: values(:)
    character(len=:), allocatable :: text
    integer :: count, ios
    text = env_text(name, "")
    if (len(text) == 0) then
      values = [default]
      return
    end if
    count = 1 + count_commas(text)
    allocate(values(count))
    read(text, *, iostat=ios) values
    if (ios /= 0) error stop "test_federated_average: " // name // " is not a list of integers: " // text
  end function env_ints

  integer function count_commas(text)
    character(len=*), intent(in) :: text
    integer :: i
    count_commas = 0
    do i = 1, len(text)
      if (text(i:i) == ",") count_commas = count_commas + 1
    end do
  end function count_commas

  integer function backend_of(name)
    character(len=*), intent(in) :: name
    select case (trim(name))
    case ("none")
      backend_of = XFFL_BACKEND_NONE
    case ("ucx")
      backend_of = XFFL_BACKEND_UCX
    case ("nccl")
      backend_of = XFFL_BACKEND_NCCL
    case default
      error stop "test_federated_average: XFFL_BACKEND must be none, ucx or nccl"
    end select
  end function backend_of
end program test_federated_average
