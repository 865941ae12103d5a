!> xffl_set_log_handler: the library's log lines reach a Fortran subroutine with level, rank and text;
!> xffl_clear_log_handler sends them to stderr again (the handler then sees nothing more).
module log_capture
  implicit none
  integer, save :: lines = 0, last_level = -9, last_rank = -9
  character(len=256), save :: last_text = ""
contains
  subroutine capture(level, rank, message)
    integer, intent(in) :: level, rank
    character(len=*), intent(in) :: message
    if (index(message, "group creation for xffl_set_hsdp took ") /= 1) return
    lines = lines + 1
    last_level = level
    last_rank = rank
    last_text = message
  end subroutine capture
end module log_capture

program test_log_handler
  use xffl
  use xffl_fortran_testing
  use log_capture
  implicit none
  integer :: ios

  call xffl_set_log_handler(capture, stat=ios)
  call expect_status("xffl_set_log_handler", ios, XFFL_OK)
  call run_layout()
  call expect_int("lines captured", lines, 1)
  call expect_int("level", last_level, XFFL_LOG_INFO)
  call expect_int("rank", last_rank, 1)
  call expect_true("text ends with ms: " // trim(last_text), index(trim(last_text), " ms", back=.true.) > 0)

  call xffl_clear_log_handler(stat=ios)
  call expect_status("xffl_clear_log_handler", ios, XFFL_OK)
  call run_layout()
  call expect_int("lines after clear", lines, 1)
  call finish("test_log_handler")
contains
  !> Rank 1 of 4 sets up HSDP 2 at level INFO: "group creation for xffl_set_hsdp took ... ms".
  subroutine run_layout()
    type(xffl_state) :: st
    call st%create()
    call st%set_option(XFFL_OPT_LOG_LEVEL, XFFL_LOG_INFO)
    call st%set_global(XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 29500, 1, 4)
    call st%set_hsdp(2)
    call st%destroy()
  end subroutine run_layout
end program test_log_handler
