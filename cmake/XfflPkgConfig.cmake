# xffl_pkgconfig_prefix(<out-var> <libdir>)
#
# The value of `prefix=` in xffl.pc, which is installed in <libdir>/pkgconfig. A relative libdir gives
# "${pcfiledir}/<path from the .pc directory back to the prefix>", so the installed tree can be moved or
# copied anywhere: "../.." for lib, "../../.." for Debian's multiarch lib/x86_64-linux-gnu. An absolute
# libdir (the user asked for a fixed place) gives CMAKE_INSTALL_PREFIX itself: nothing to relocate.
function(xffl_pkgconfig_prefix out_var libdir)
  if(IS_ABSOLUTE "${libdir}")
    set(${out_var} "${CMAKE_INSTALL_PREFIX}" PARENT_SCOPE)
    return()
  endif()
  # Any absolute anchor works: only the shape of the path below it matters.
  set(anchor "/xffl-prefix")
  file(RELATIVE_PATH back "${anchor}/${libdir}/pkgconfig" "${anchor}")
  string(REGEX REPLACE "/$" "" back "${back}")
  if(back STREQUAL "")
    set(${out_var} "\${pcfiledir}" PARENT_SCOPE)
  else()
    set(${out_var} "\${pcfiledir}/${back}" PARENT_SCOPE)
  endif()
endfunction()

# xffl_pkgconfig_dir(<out-var> <dir>)
#
# A directory of the .pc file relative to ${prefix} when it is relative, as given when it is absolute.
function(xffl_pkgconfig_dir out_var dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out_var} "${dir}" PARENT_SCOPE)
  else()
    set(${out_var} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

# xffl_write_pkgconfig(<template> <output> <libdir> <includedir> <requires-private>)
#
# Writes xffl.pc from its template. Usable from a project (configure time) and from `cmake -P` scripts,
# which is how tests/consumer checks the multiarch layout without configuring a second build.
function(xffl_write_pkgconfig template output libdir includedir requires_private)
  xffl_pkgconfig_prefix(XFFL_PC_PREFIX "${libdir}")
  xffl_pkgconfig_dir(XFFL_PC_LIBDIR "${libdir}")
  xffl_pkgconfig_dir(XFFL_PC_INCLUDEDIR "${includedir}")
  set(XFFL_PC_REQUIRES_PRIVATE "${requires_private}")
  configure_file("${template}" "${output}" @ONLY)
endfunction()
