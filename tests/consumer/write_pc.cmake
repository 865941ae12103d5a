# cmake -DSOURCE_DIR=.. -DOUTPUT=.. -DLIBDIR=.. -DINCLUDEDIR=.. -P write_pc.cmake
# Writes xffl.pc for an arbitrary layout with the project's own function, without configuring a build.
include(${SOURCE_DIR}/cmake/XfflPkgConfig.cmake)
set(PROJECT_DESCRIPTION "xffl (consumer test)")
set(PROJECT_VERSION 0.1.0)
set(CMAKE_INSTALL_PREFIX /nonexistent)
xffl_write_pkgconfig(${SOURCE_DIR}/pkgconfig/xffl.pc.in ${OUTPUT} "${LIBDIR}" "${INCLUDEDIR}" "")
