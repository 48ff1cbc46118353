/* rte_mpi.h - the MPI communicators behind a struct cc_rte, for code that speaks MPI itself
 * (the MPI backend, bootstrap exchanges of other backends). */
#ifndef CC_RTE_MPI_H
#define CC_RTE_MPI_H

#include <mpi.h>
#include "rte/rte.h"

/* Duplicate of MPI_COMM_WORLD owned by the rte (measured traffic uses its own dup). */
MPI_Comm cc_rte_comm(const struct cc_rte *r);
/* Ranks of this node (MPI_COMM_TYPE_SHARED split). */
MPI_Comm cc_rte_node_comm(const struct cc_rte *r);

#endif
