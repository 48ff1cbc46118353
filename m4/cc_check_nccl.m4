# CC_CHECK_NCCL: NCCL headers (optional; auto|yes|no|DIR; needs CUDA).
# libnccl is opened with dlopen at run time.
AC_DEFUN([CC_CHECK_NCCL], [
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@], [NCCL (default: auto, looks beside CUDA and in /usr)])],
    [], [with_nccl=auto])
  cc_have_nccl=no; cc_nccl_dir=
  AS_IF([test "x$with_nccl" != xno && test "x$cc_have_cuda" = xyes], [
    AS_CASE([$with_nccl], [yes|auto], [cc_nccl_dirs="$cc_cuda_dir /usr"], [cc_nccl_dirs=$with_nccl])
    for cc_d in $cc_nccl_dirs; do
      AS_IF([test -f "$cc_d/include/nccl.h"], [cc_have_nccl=yes; cc_nccl_dir=$cc_d; break])
    done
  ])
  AS_IF([test "x$with_nccl" != xno && test "x$with_nccl" != xauto && test "x$cc_have_nccl" != xyes],
    [AC_MSG_ERROR([--with-nccl given but nccl.h not found (NCCL also needs CUDA)])])
  dnl the header must compile as C: ccbench's NCCL code is C, and a header that does not
  dnl (a future change, a broken install) is said here rather than by a failed build
  AS_IF([test "x$cc_have_nccl" = xyes], [
    cc_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$cc_nccl_dir/include $CUDA_CPPFLAGS"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>]],
                                       [[ncclComm_t c = 0; ncclUniqueId id; (void)c; (void)id;]])],
      [], [cc_have_nccl=no
           AS_IF([test "x$with_nccl" = xauto],
             [AC_MSG_WARN([$cc_nccl_dir/include/nccl.h does not compile as C: the NCCL backend is left out])],
             [AC_MSG_ERROR([$cc_nccl_dir/include/nccl.h does not compile as C (see config.log)])])])
    CPPFLAGS=$cc_save_CPPFLAGS
  ])
  AS_IF([test "x$cc_have_nccl" = xyes], [
    NCCL_CPPFLAGS="-I$cc_nccl_dir/include"
    AC_DEFINE([CC_HAVE_NCCL], [1], [NCCL support compiled in (library opened at run time)])
  ])
  AC_MSG_CHECKING([for NCCL headers])
  AC_MSG_RESULT([$cc_have_nccl $cc_nccl_dir])
  AC_SUBST([NCCL_CPPFLAGS])
])
