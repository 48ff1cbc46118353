# CC_CHECK_MPI: find MPI through the wrapper compiler (mpicc --showme) so that the
# project itself is compiled by the plain compiler (sanitizers work as usual).
AC_DEFUN([CC_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi=DIR], [MPI installation (required; default: mpicc on PATH)])],
    [], [with_mpi=yes])
  AS_IF([test "x$with_mpi" = xno], [AC_MSG_ERROR([MPI is required: ccbench is launched by mpirun])])
  AC_ARG_VAR([MPICC], [MPI wrapper compiler used to discover MPI flags])
  AS_IF([test "x$with_mpi" != xyes], [MPICC="$with_mpi/bin/mpicc"])
  AC_PATH_PROG([MPICC], [mpicc], [no])
  AS_IF([test "x$MPICC" = xno],
    [AC_MSG_ERROR([mpicc not found: install Open MPI (apt-get install libopenmpi-dev openmpi-bin)])])
  AC_MSG_CHECKING([MPI compile flags])
  MPI_CPPFLAGS=`$MPICC --showme:compile 2>/dev/null`
  AC_MSG_RESULT([$MPI_CPPFLAGS])
  AC_MSG_CHECKING([MPI link flags])
  MPI_LIBS=`$MPICC --showme:link 2>/dev/null`
  AC_MSG_RESULT([$MPI_LIBS])
  cc_save_CPPFLAGS=$CPPFLAGS; cc_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $MPI_CPPFLAGS"; LIBS="$LIBS $MPI_LIBS"
  AC_CHECK_HEADER([mpi.h], [], [AC_MSG_ERROR([mpi.h not usable with $MPICC flags])])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0); MPI_Finalize();]])],
    [], [AC_MSG_ERROR([cannot link an MPI program with $MPI_LIBS])])
  CPPFLAGS=$cc_save_CPPFLAGS; LIBS=$cc_save_LIBS
  AC_PATH_PROG([MPIRUN], [mpirun], [mpirun])
  AC_SUBST([MPI_CPPFLAGS])
  AC_SUBST([MPI_LIBS])
])
