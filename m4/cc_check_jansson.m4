# CC_CHECK_JANSSON: the JSON library (required).
AC_DEFUN([CC_CHECK_JANSSON], [
  PKG_CHECK_MODULES([JANSSON], [jansson >= 2.10], [],
    [AC_MSG_ERROR([jansson >= 2.10 not found: apt-get install libjansson-dev])])
])
