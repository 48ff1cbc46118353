# CC_CHECK_CUDA: CUDA runtime headers (optional; auto|yes|no|DIR).
# Only headers are used at build time: libcudart is opened with dlopen at run time,
# so the same binary runs on a machine without a GPU driver.
AC_DEFUN([CC_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [CUDA toolkit (default: auto, looks in /usr/local/cuda)])],
    [], [with_cuda=auto])
  cc_have_cuda=no; cc_cuda_dir=
  AS_IF([test "x$with_cuda" != xno], [
    AS_CASE([$with_cuda], [yes|auto], [cc_cuda_dir=/usr/local/cuda], [cc_cuda_dir=$with_cuda])
    cc_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$cc_cuda_dir/include"
    AC_CHECK_HEADER([cuda_runtime_api.h], [cc_have_cuda=yes], [cc_have_cuda=no])
    dnl a directory named by the user must hold the headers itself (not the compiler's path)
    AS_CASE([$with_cuda], [yes|auto], [],
      [AS_IF([test -f "$cc_cuda_dir/include/cuda_runtime_api.h"], [], [cc_have_cuda=no])])
    CPPFLAGS=$cc_save_CPPFLAGS
    AS_UNSET([ac_cv_header_cuda_runtime_api_h])
  ])
  AS_IF([test "x$with_cuda" != xno && test "x$with_cuda" != xauto && test "x$cc_have_cuda" != xyes],
    [AC_MSG_ERROR([--with-cuda given but cuda_runtime_api.h not found under $cc_cuda_dir/include])])
  AS_IF([test "x$cc_have_cuda" = xyes], [
    CUDA_CPPFLAGS="-I$cc_cuda_dir/include"
    AC_DEFINE([CC_HAVE_CUDA], [1], [CUDA support compiled in (library opened at run time)])
    AC_DEFINE_UNQUOTED([CC_CUDA_DIR], ["$cc_cuda_dir"], [CUDA toolkit found at build time])
  ], [cc_cuda_dir=])
  AC_SUBST([CUDA_CPPFLAGS])
])
