/* rte.h - the run-time environment: who am I, how many of us, which node, and the few
 * collective operations the harness itself needs (never used for measured traffic).
 * Implemented over MPI; MPI types stay out of this header (see rte_mpi.h). */
#ifndef CC_RTE_H
#define CC_RTE_H

#include <stddef.h>
#include "core/status.h"

#define CC_HOST_MAX 72 /* a Linux nodename (64) and its NUL, rounded up */

struct cc_rte {
    int rank, size;             /* in the world communicator */
    int local_rank, local_size; /* among ranks of this node (shared-memory split) */
    int node, nnodes;           /* node index in order of first rank, and node count */
    char host[CC_HOST_MAX];     /* this rank's hostname */
    char (*hosts)[CC_HOST_MAX]; /* hostname of every rank, [size] */
    int *node_of;               /* node index of every rank, [size] */
    int initialized_mpi;        /* we called MPI_Init (and so must finalize) */
    void *impl;                 /* MPI communicators, private */
};

enum cc_rte_op { CC_RTE_SUM, CC_RTE_MIN, CC_RTE_MAX };

/* Initialize MPI (if not yet), learn rank/size, split by node, gather hostnames. */
cc_status cc_rte_init(struct cc_rte *r, int *argc, char ***argv);
/* Finalize MPI if cc_rte_init started it. */
void cc_rte_fini(struct cc_rte *r);

cc_status cc_rte_barrier(const struct cc_rte *r);
/* Every rank contributes `bytes` at send; recv receives size*bytes in rank order. */
cc_status cc_rte_allgather(const struct cc_rte *r, const void *send, void *recv, size_t bytes);
cc_status cc_rte_bcast(const struct cc_rte *r, void *buf, size_t bytes, int root);
/* All-to-all of byte blocks: the block for rank k is scounts[k] bytes at send + sdispls[k],
 * the one from rank k lands at recv + rdispls[k] (rcounts[k] bytes). Counts and
 * displacements are MPI's ints: callers keep every buffer under INT_MAX bytes. */
cc_status cc_rte_alltoallv(const struct cc_rte *r, const void *send, const int *scounts,
                           const int *sdispls, void *recv, const int *rcounts,
                           const int *rdispls);
/* The smallest and the largest v over all ranks, each with the lowest rank that holds it. */
cc_status cc_rte_minmaxloc(const struct cc_rte *r, double v, double *min, int *min_rank,
                           double *max, int *max_rank);
/* In-place element-wise reduction of n doubles across all ranks. */
cc_status cc_rte_allreduce_d(const struct cc_rte *r, double *v, size_t n, enum cc_rte_op op);
/* In-place element-wise reduction of n long longs across all ranks. */
cc_status cc_rte_allreduce_ll(const struct cc_rte *r, long long *v, size_t n, enum cc_rte_op op);
/* Gather variable-length byte strings to rank 0: on rank 0, *out is a malloc'd array of
 * size pointers (each malloc'd, NUL-terminated). Other ranks get NULL. Every rank returns
 * the same status, none is left waiting: CC_ETOOBIG when the strings together pass 2 GiB
 * (MPI's int counts), CC_ENOMEM when rank 0 is out of memory, CC_EPEER on an MPI error (rank 0
 * may also fail alone with CC_ENOMEM at the very end). */
cc_status cc_rte_gather_str(const struct cc_rte *r, const char *s, char ***out);
/* The gather's layout: displ[i] = where string i (lens[i] bytes with its NUL) starts, *total
 * the sum. CC_ETOOBIG when a length is below 1 (a string too long to count) or the total
 * passes INT_MAX. */
cc_status cc_rte_gather_layout(const int *lens, int n, int *displ, size_t *total);
/* An alarm for a phase in which ranks wait on each other outside MPI (sockets): a rank that
 * gives up raises it, and the others, polling it, stop waiting at once instead of at their
 * deadline. Every rank arms it before the phase (collective) and disarms it after (local);
 * the ranks agree on the phase's outcome afterwards by other means. */
struct cc_rte_alarm;
/* Collective. CC_ENOMEM (some rank out of memory; every rank returns it) or CC_EPEER (an MPI
 * error) leave *a NULL: the phase then runs without the alarm, as if never raised. */
cc_status cc_rte_alarm_arm(const struct cc_rte *r, struct cc_rte_alarm **a);
/* Tell every other rank (once; later calls do nothing). NULL: nothing. */
void cc_rte_alarm_raise(struct cc_rte_alarm *a);
/* The first rank seen to raise the alarm, or -1 (never blocks). NULL: -1. */
int cc_rte_alarm_test(struct cc_rte_alarm *a);
/* Collective, after the phase: keep listening (rank 0 passing notices on to every rank)
 * until every rank has finished the phase or cc_now() passes the deadline. Without it, a
 * rank 0 done early would no longer pass on the notice of a rank that gave up later. */
void cc_rte_alarm_settle(struct cc_rte_alarm *a, double deadline);
/* Local: stop listening and free (the alarm's communicator is kept until MPI_Finalize, for
 * notices still on their way; the alarm too while its own messages are in flight). NULL:
 * nothing. Returns CC_OK. */
cc_status cc_rte_alarm_disarm(const struct cc_rte *r, struct cc_rte_alarm *a);
/* Abort every rank with an exit code (never returns). */
void cc_rte_abort(const struct cc_rte *r, int code) __attribute__((noreturn));
/* This process's rank as its launcher tells it before MPI starts (Open MPI, PMIx, PMI,
 * Slurm), or -1 when no launcher started it. Lets only the first rank print a usage error or
 * --help that every rank would print alike. */
int cc_rte_launcher_rank(void);
/* Whether this process speaks for its arguments before MPI starts: the first rank (or no
 * launcher), and in an Open MPI MPMD job (mpirun A : B) the first rank of each app context,
 * whose arguments may differ from the first one's. */
int cc_rte_launcher_speaks(void);
/* Seconds from a monotonic clock. */
double cc_now(void);

#endif
