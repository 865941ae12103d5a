!> Assertions for the Fortran binding tests: each failure prints what was compared, where, and the values;
!> finish() ends the program with a non-zero exit code when anything failed.
module xffl_fortran_testing
  use xffl
  implicit none
  private
  public :: expect_int, expect_ints, expect_true, expect_contains, expect_status, finish, ranks_of, span
  integer, save :: failures = 0, checks = 0

contains

  subroutine fail(where, text)
    character(len=*), intent(in) :: where, text
    failures = failures + 1
    write(*, '(a)') "FAIL " // where // ": " // text
  end subroutine fail

  function fmt_ints(values) result(text)
    integer, intent(in) :: values(:)
    character(len=:), allocatable :: text
    character(len=16) :: item
    integer :: i
    text = "("
    do i = 1, size(values)
      write(item, '(i0)') values(i)
      text = text // trim(item)
      if (i < size(values)) text = text // ","
    end do
    text = text // ")"
  end function fmt_ints

  subroutine expect_int(where, got, want)
    character(len=*), intent(in) :: where
    integer, intent(in) :: got, want
    checks = checks + 1
    if (got /= want) call fail(where, "got " // fmt_ints([got]) // ", want " // fmt_ints([want]))
  end subroutine expect_int

  subroutine expect_ints(where, got, want)
    character(len=*), intent(in) :: where
    integer, intent(in) :: got(:), want(:)
    checks = checks + 1
    if (size(got) /= size(want)) then
      call fail(where, "got " // fmt_ints(got) // ", want " // fmt_ints(want))
    else if (any(got /= want)) then
      call fail(where, "got " // fmt_ints(got) // ", want " // fmt_ints(want))
    end if
  end subroutine expect_ints

  subroutine expect_true(where, condition)
    character(len=*), intent(in) :: where
    logical, intent(in) :: condition
    checks = checks + 1
    if (.not. condition) call fail(where, "condition is false")
  end subroutine expect_true

  subroutine expect_contains(where, text, part)
    character(len=*), intent(in) :: where, text, part
    checks = checks + 1
    if (index(text, part) == 0) call fail(where, "'" // text // "' does not contain '" // part // "'")
  end subroutine expect_contains

  !> A status with the library's name for both values, so a wrong code reads as words.
  subroutine expect_status(where, got, want)
    character(len=*), intent(in) :: where
    integer, intent(in) :: got, want
    checks = checks + 1
    if (got /= want) call fail(where, "status " // xffl_status_name(got) // ", want " // xffl_status_name(want))
  end subroutine expect_status

  !> Members of a group written as a list; -1 entries are padding.
  pure function ranks_of(list) result(members)
    integer, intent(in) :: list(:)
    integer, allocatable :: members(:)
    members = pack(list, list >= 0)
  end function ranks_of

  !> lo, lo+1, ..., hi
  pure function span(lo, hi) result(values)
    integer, intent(in) :: lo, hi
    integer :: values(hi - lo + 1), i
    values = [(i, i = lo, hi)]
  end function span

  subroutine finish(name)
    character(len=*), intent(in) :: name
    if (failures > 0) then
      write(*, '(a, i0, a, i0, a)') name // ": ", failures, " of ", checks, " checks failed"
      error stop 1
    end if
    write(*, '(a, i0, a)') name // ": all ", checks, " checks passed"
  end subroutine finish
end module xffl_fortran_testing
