# CC_CHECK_VERBS: libibverbs headers (optional; auto|yes|no|DIR).
# libibverbs is opened with dlopen at run time.
AC_DEFUN([CC_CHECK_VERBS], [
  AC_ARG_WITH([verbs],
    [AS_HELP_STRING([--with-verbs@<:@=DIR@:>@], [rdma-core libibverbs (default: auto)])],
    [], [with_verbs=auto])
  cc_have_verbs=no
  AS_IF([test "x$with_verbs" != xno], [
    cc_save_CPPFLAGS=$CPPFLAGS
    AS_CASE([$with_verbs], [yes|auto], [], [VERBS_CPPFLAGS="-I$with_verbs/include"])
    CPPFLAGS="$CPPFLAGS $VERBS_CPPFLAGS"
    AC_CHECK_HEADER([infiniband/verbs.h], [cc_have_verbs=yes], [cc_have_verbs=no])
    CPPFLAGS=$cc_save_CPPFLAGS
  ])
  AS_IF([test "x$with_verbs" != xno && test "x$with_verbs" != xauto && test "x$cc_have_verbs" != xyes],
    [AC_MSG_ERROR([--with-verbs given but infiniband/verbs.h not found: apt-get install libibverbs-dev])])
  AS_IF([test "x$cc_have_verbs" = xyes],
    [AC_DEFINE([CC_HAVE_VERBS], [1], [verbs support compiled in (library opened at run time)])])
  AC_SUBST([VERBS_CPPFLAGS])
])
