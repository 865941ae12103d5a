!> The xffl example in Fortran: print this rank's plan of the job, then average a small "model" across
!> the federated groups.
!>
!> Alone it runs as a 1-rank world with backend none. Under xffl-run (or torchrun, SLURM with the same
!> variables) it reads RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, XFFL_FEDERATED ("4" or "2,6"),
!> XFFL_HSDP and XFFL_BACKEND (none, ucx or nccl):
!>     xffl-run -n 8 --federated 2,6 --hsdp 2 -- ./xffl_example_fortran
program plan_and_average
  use, intrinsic :: iso_fortran_env, only: real32
  use xffl
  implicit none
  type(xffl_state) :: st
  integer :: rank, world, hsdp, backend, f, ios
  integer, allocatable :: sizes(:)
  character(len=:), allocatable :: msg
  real(real32) :: weights(4)

  rank = env_int("RANK", 0)
  world = env_int("WORLD_SIZE", 1)
  hsdp = env_int("XFFL_HSDP", 0)
  sizes = env_ints("XFFL_FEDERATED", world)
  backend = XFFL_BACKEND_NONE
  if (world > 1) backend = XFFL_BACKEND_UCX
  if (env_text("XFFL_BACKEND", "") == "nccl") backend = XFFL_BACKEND_NCCL
  if (env_text("XFFL_BACKEND", "") == "none") backend = XFFL_BACKEND_NONE

  call st%create()
  ! Without stat, any failure stops the program with the library's message.
  call st%set_global(backend, XFFL_DEVICE_CPU, env_text("MASTER_ADDR", "127.0.0.1"), &
                     env_int("MASTER_PORT", 29500), rank, world)
  call st%federated_scaling(sizes, hsdp)

  if (rank == 0) print '(a)', st%describe()
  f = st%get_int(XFFL_ATTR_FEDERATED_RANK)

  ! Each federated group trained its own model; the average makes them equal again.
  weights = real(f + 1, real32) * [1.0, 2.0, 3.0, 4.0]
  call st%federated_average(weights, stat=ios, errmsg=msg)
  if (ios /= XFFL_OK) then
    print '(a, i0, a)', "rank ", rank, ": federated average failed: " // msg
    call st%destroy()
    error stop 1
  end if
  print '(a, i0, a, i0, a, 4f8.3)', "rank ", rank, " (federated group ", f, ") averaged model:", weights
  call st%destroy()
  deallocate(sizes)  ! main-program allocatables are not freed at the end of the program

contains

  function env_text(name, default) result(value)
    character(len=*), intent(in) :: name, default
    character(len=:), allocatable :: value
    integer :: length, status
    call get_environment_variable(name, length=length, status=status)
    if (status /= 0 .or. length == 0) then
      value = default
      return
    end if
    allocate(character(len=length) :: value)
    call get_environment_variable(name, value)
  end function env_text

  integer function env_int(name, default)
    character(len=*), intent(in) :: name
    integer, intent(in) :: default
    character(len=:), allocatable :: text
    text = env_text(name, "")
    env_int = default
    if (len(text) > 0) read(text, *) env_int
  end function env_int

  function env_ints(name, default) result(values)
    character(len=*), intent(in) :: name
    integer, intent(in) :: default
    integer, allocatable :: values(:)
    character(len=:), allocatable :: text
    integer :: i
    text = env_text(name, "")
    if (len(text) == 0) then
      values = [default]
    else
      allocate(values(1 + count([(text(i:i) == ",", i = 1, len(text))])))
      read(text, *) values
    end if
  end function env_ints
end program plan_and_average
