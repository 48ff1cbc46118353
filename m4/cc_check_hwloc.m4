# CC_CHECK_HWLOC: hwloc 2.x through pkg-config (required).
AC_DEFUN([CC_CHECK_HWLOC], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
    [AC_MSG_ERROR([hwloc >= 2.0 not found: apt-get install libhwloc-dev])])
])
