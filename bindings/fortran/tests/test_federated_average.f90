!> Federated averaging from Fortran across ranks. Launched by xffl-run (or alone as a 1-rank world), it
!> reads its place in the job from the environment:
!>   RANK, WORLD_SIZE                 this process (default 0 and 1)
!>   MASTER_ADDR, MASTER_PORT         rendezvous (default 127.0.0.1 and 29500)
!>   XFFL_FEDERATED                   federated group sizes in processes, "4" or "2,6" (default WORLD_SIZE)
!>   XFFL_HSDP                        replica size, 0 for none (default 0)
!>   XFFL_BACKEND                     none, ucx or nccl (default ucx when WORLD_SIZE > 1, else none)
!> Every rank of federated group f holds 100*(f+1) + shard + i/2 in element i; after the average every
!> rank must hold mean_f(100*(f+1)) + shard + i/2 exactly. Exit 77 (skip) if the backend is not built.
program test_federated_average
  use, intrinsic :: iso_fortran_env, only: real32, real64, error_unit
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
