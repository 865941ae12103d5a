!> Without stat, a failing call must stop the program with the library's message (checked by
!> expect_stop.cmake: non-zero exit and "xffl: XFFL_ESTATE: ..." on stderr).
program stop_without_stat
  use xffl
  implicit none
  type(xffl_state) :: st
  call st%create()
  call st%set_hsdp(2)  ! before set_global: XFFL_ESTATE
  write(*, '(a)') "UNREACHABLE: the failure did not stop the program"
  call st%destroy()
end program stop_without_stat
