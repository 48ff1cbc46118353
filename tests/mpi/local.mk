# fragment of Makefile.am (owned by this part of the tree)
