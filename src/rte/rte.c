#include "rte/rte.h"
#include "rte/rte_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/text.h"

struct rte_impl {
    MPI_Comm world, node;
};

double cc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cc_rte_launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", NULL};
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

int cc_rte_launcher_speaks(void)
{
    int rank = cc_rte_launcher_rank();
    if (rank <= 0)
        return 1;
    /* Open MPI's MPMD jobs (mpirun A : B): each app context has its own arguments, so the
     * first rank of each one speaks for it (OMPI_APP_CTX_NUM_PROCS lists their sizes) */
    const char *app = getenv("OMPI_MCA_orte_app_num"), *sizes = getenv("OMPI_APP_CTX_NUM_PROCS");
    if (!app || !sizes)
        return 0;
    int k = atoi(app), first = 0;
    const char *s = sizes;
    for (int i = 0; i < k && *s; i++) {
        char *end;
        long n = strtol(s, &end, 10);
        if (end == s || n < 0)
            return 0;
        first += (int)n;
        s = end;
    }
    return k > 0 && rank == first;
}

MPI_Comm cc_rte_comm(const struct cc_rte *r) { return ((struct rte_impl *)r->impl)->world; }
MPI_Comm cc_rte_node_comm(const struct cc_rte *r) { return ((struct rte_impl *)r->impl)->node; }

static cc_status mpi_st(int rc) { return rc == MPI_SUCCESS ? CC_OK : CC_EPEER; }

cc_status cc_rte_init(struct cc_rte *r, int *argc, char ***argv)
{
    int inited = 0;
    struct rte_impl *im;

    memset(r, 0, sizeof *r);
    MPI_Initialized(&inited);
    if (!inited) {
        /* Plain MPI_Init: only the main thread calls MPI (the watchdog and library threads
         * never do), and asking Open MPI 4.1 for any thread level above single added about
         * 0.2 us to every small collective here (measured against the reference loop) */
        if (MPI_Init(argc, argv) != MPI_SUCCESS)
            return CC_EPEER;
        r->initialized_mpi = 1;
    }
    im = calloc(1, sizeof *im);
    if (!im)
        return CC_ENOMEM;
    r->impl = im;
    MPI_Comm_dup(MPI_COMM_WORLD, &im->world);
    MPI_Comm_set_errhandler(im->world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(im->world, &r->rank);
    MPI_Comm_size(im->world, &r->size);
    MPI_Comm_split_type(im->world, MPI_COMM_TYPE_SHARED, r->rank, MPI_INFO_NULL, &im->node);
    MPI_Comm_rank(im->node, &r->local_rank);
    MPI_Comm_size(im->node, &r->local_size);
    struct utsname un; /* the nodename gethostname gives, whole at 64 characters */
    if (uname(&un) == 0 && un.nodename[0])
        snprintf(r->host, sizeof r->host, "%s", un.nodename);
    else
        strcpy(r->host, "unknown");
    cc_text_line(r->host); /* any bytes may be a nodename: one line of UTF-8 for every output */

    r->hosts = calloc((size_t)r->size, sizeof *r->hosts);
    r->node_of = calloc((size_t)r->size, sizeof *r->node_of);
    int *leaders = calloc((size_t)r->size, sizeof *leaders);
    /* every rank leaves together when one could not allocate: none waits in a gather */
    int ok = r->hosts && r->node_of && leaders, all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, im->world) != MPI_SUCCESS || !all) {
        free(leaders);
        return CC_ENOMEM;
    }
    MPI_Allgather(r->host, CC_HOST_MAX, MPI_CHAR, r->hosts, CC_HOST_MAX, MPI_CHAR, im->world);
    /* Node index = order of first appearance of the node's lowest rank. Ranks of one
     * shared-memory domain report the world rank of their local rank 0. */
    int leader = r->rank;
    MPI_Bcast(&leader, 1, MPI_INT, 0, im->node);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, im->world);
    r->nnodes = 0;
    for (int i = 0; i < r->size; i++) {
        if (leaders[i] == i)
            r->node_of[i] = r->nnodes++;
        else
            r->node_of[i] = r->node_of[leaders[i]];
    }
    r->node = r->node_of[r->rank];
    free(leaders);
    cc_log_set_identity(r->host, r->rank);
    return CC_OK;
}

void cc_rte_fini(struct cc_rte *r)
{
    struct rte_impl *im = r->impl;
    if (im) {
        MPI_Comm_free(&im->node);
        MPI_Comm_free(&im->world);
        free(im);
    }
    free(r->hosts);
    free(r->node_of);
    if (r->initialized_mpi)
        MPI_Finalize();
    memset(r, 0, sizeof *r);
}

cc_status cc_rte_barrier(const struct cc_rte *r) { return mpi_st(MPI_Barrier(cc_rte_comm(r))); }

cc_status cc_rte_allgather(const struct cc_rte *r, const void *send, void *recv, size_t bytes)
{
    return mpi_st(MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                                cc_rte_comm(r)));
}

cc_status cc_rte_bcast(const struct cc_rte *r, void *buf, size_t bytes, int root)
{
    return mpi_st(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, cc_rte_comm(r)));
}

cc_status cc_rte_alltoallv(const struct cc_rte *r, const void *send, const int *scounts,
                           const int *sdispls, void *recv, const int *rcounts,
                           const int *rdispls)
{
    return mpi_st(MPI_Alltoallv(send, scounts, sdispls, MPI_BYTE, recv, rcounts, rdispls,
                                MPI_BYTE, cc_rte_comm(r)));
}

static MPI_Op rte_op(enum cc_rte_op op)
{
    return op == CC_RTE_MIN ? MPI_MIN : op == CC_RTE_MAX ? MPI_MAX : MPI_SUM;
}

cc_status cc_rte_minmaxloc(const struct cc_rte *r, double v, double *min, int *min_rank,
                           double *max, int *max_rank)
{
    struct { double v; int rank; } in = {v, r->rank}, lo, hi;
    int rc = MPI_Allreduce(&in, &lo, 1, MPI_DOUBLE_INT, MPI_MINLOC, cc_rte_comm(r));
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(&in, &hi, 1, MPI_DOUBLE_INT, MPI_MAXLOC, cc_rte_comm(r));
    if (rc != MPI_SUCCESS)
        return CC_EPEER;
    *min = lo.v, *min_rank = lo.rank, *max = hi.v, *max_rank = hi.rank;
    return CC_OK;
}

cc_status cc_rte_allreduce_d(const struct cc_rte *r, double *v, size_t n, enum cc_rte_op op)
{
    return mpi_st(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, rte_op(op), cc_rte_comm(r)));
}

cc_status cc_rte_allreduce_ll(const struct cc_rte *r, long long *v, size_t n, enum cc_rte_op op)
{
    return mpi_st(
        MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_LONG_LONG, rte_op(op), cc_rte_comm(r)));
}

/* ---- alarm ----------------------------------------------------------------------------- */

/* A rank that gives up tells rank 0, and rank 0 tells every rank (once, naming the first
 * that gave up): at most 2 x size notices however many ranks give up together (every rank
 * out of file descriptors at once), not size squared. A rank 0 that is itself stuck leaves
 * the others to their deadlines, as without the alarm. */
struct cc_rte_alarm {
    MPI_Comm comm;        /* its own, so notices never meet another message */
    MPI_Request rreq;     /* the receive of the first notice */
    MPI_Request *sreq;    /* [size]: this rank's notices (rank 0: to every rank) */
    MPI_Request breq;     /* settle's barrier */
    int in, out;          /* the notice received and sent: the rank that gave up */
    int from, sent, size, rank;
};

static void alarm_send(struct cc_rte_alarm *a, int who)
{
    if (a->sent)
        return;
    a->sent = 1;
    a->out = who;
    a->sreq = malloc((size_t)a->size * sizeof *a->sreq);
    for (int i = 0; a->sreq && i < a->size; i++) {
        a->sreq[i] = MPI_REQUEST_NULL;
        if (i != a->rank && (a->rank == 0 || i == 0))
            MPI_Isend(&a->out, 1, MPI_INT, i, 0, a->comm, &a->sreq[i]);
    }
}

cc_status cc_rte_alarm_arm(const struct cc_rte *r, struct cc_rte_alarm **out)
{
    struct cc_rte_alarm *a = calloc(1, sizeof *a);
    MPI_Comm comm;
    *out = NULL;
    if (MPI_Comm_dup(cc_rte_comm(r), &comm) != MPI_SUCCESS) {
        free(a);
        return CC_EPEER;
    }
    long long ok = a != NULL;
    int rc = MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_LONG_LONG, MPI_MIN, comm);
    if (rc != MPI_SUCCESS || !ok) {
        /* on every rank alike: nobody waits for a notice that cannot come */
        MPI_Comm_free(&comm);
        free(a);
        return rc != MPI_SUCCESS ? CC_EPEER : CC_ENOMEM;
    }
    a->comm = comm;
    a->breq = MPI_REQUEST_NULL;
    a->size = r->size;
    a->rank = r->rank;
    a->from = -1;
    if (MPI_Irecv(&a->in, 1, MPI_INT, MPI_ANY_SOURCE, 0, a->comm, &a->rreq) != MPI_SUCCESS)
        a->rreq = MPI_REQUEST_NULL;
    *out = a;
    return CC_OK;
}

void cc_rte_alarm_raise(struct cc_rte_alarm *a)
{
    if (a && a->from < 0)
        alarm_send(a, a->rank);
}

int cc_rte_alarm_test(struct cc_rte_alarm *a)
{
    int flag = 0;
    if (!a)
        return -1;
    if (a->from < 0 && a->rreq != MPI_REQUEST_NULL &&
        MPI_Test(&a->rreq, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
        a->from = a->in >= 0 && a->in < a->size ? a->in : 0;
        if (a->rank == 0)
            alarm_send(a, a->from); /* pass it on to every rank */
    }
    return a->from;
}

void cc_rte_alarm_settle(struct cc_rte_alarm *a, double deadline)
{
    int done = 0;
    struct timespec ms = {0, 1000000};
    if (!a || MPI_Ibarrier(a->comm, &a->breq) != MPI_SUCCESS)
        return;
    for (;;) {
        cc_rte_alarm_test(a); /* rank 0: passes a notice on */
        if (MPI_Test(&a->breq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done ||
            cc_now() > deadline)
            return;
        nanosleep(&ms, NULL);
    }
}

cc_status cc_rte_alarm_disarm(const struct cc_rte *r, struct cc_rte_alarm *a)
{
    (void)r;
    if (!a)
        return CC_OK;
    /* Local, so that a rank that gave up never waits here for one that is stuck (the ranks
     * agree on the outcome afterwards, watched). The receive is cancelled; the communicator
     * stays until MPI_Finalize, for a notice still on its way (it must find it, not a later
     * communicator that reused its id), and so does the alarm itself when it has notices or
     * a barrier still in flight: their buffer and requests must outlive them. */
    cc_rte_alarm_test(a); /* rank 0: passes on a notice that came in meanwhile */
    if (a->rreq != MPI_REQUEST_NULL && a->from < 0) {
        MPI_Cancel(&a->rreq);
        MPI_Wait(&a->rreq, MPI_STATUS_IGNORE);
    }
    int busy = a->breq != MPI_REQUEST_NULL;
    if (busy) {
        int done = 0;
        MPI_Test(&a->breq, &done, MPI_STATUS_IGNORE);
        busy = !done;
    }
    for (int i = 0; a->sreq && i < a->size; i++)
        if (a->sreq[i] != MPI_REQUEST_NULL) {
            int done = 0;
            MPI_Test(&a->sreq[i], &done, MPI_STATUS_IGNORE);
            busy |= !done;
        }
    if (!busy) {
        free(a->sreq);
        free(a);
    }
    return CC_OK;
}

cc_status cc_rte_gather_layout(const int *lens, int n, int *displ, size_t *total)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        if (lens[i] < 1 || sum + lens[i] > INT_MAX)
            return CC_ETOOBIG; /* MPI counts and displacements are ints */
        displ[i] = (int)sum;
        sum += lens[i];
    }
    *total = (size_t)sum;
    return CC_OK;
}

/* Rank 0 tells every rank how the gather goes on (a status), so that all enter the next
 * collective or all leave: none waits for one that never comes. */
static cc_status agree(MPI_Comm c, int rank, cc_status st)
{
    int v = (int)st;
    if (MPI_Bcast(&v, 1, MPI_INT, 0, c) != MPI_SUCCESS)
        return CC_EPEER;
    return rank == 0 ? st : (cc_status)v;
}

cc_status cc_rte_gather_str(const struct cc_rte *r, const char *s, char ***out)
{
    MPI_Comm c = cc_rte_comm(r);
    size_t slen = strlen(s);
    int len = slen < INT_MAX ? (int)slen + 1 : -1, *lens = NULL, *displ = NULL;
    size_t total = 0;
    char *all = NULL, **v = NULL;
    cc_status st = CC_OK;
    *out = NULL;
    if (r->rank == 0) {
        lens = calloc((size_t)r->size, sizeof *lens);
        displ = calloc((size_t)r->size, sizeof *displ);
        st = lens && displ ? CC_OK : CC_ENOMEM;
    }
    if ((st = agree(c, r->rank, st)) != CC_OK)
        goto done;
    st = mpi_st(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, c));
    if (r->rank == 0 && st == CC_OK && (st = cc_rte_gather_layout(lens, r->size, displ, &total)) == CC_OK)
        st = (all = malloc(total)) ? CC_OK : CC_ENOMEM;
    if ((st = agree(c, r->rank, st)) != CC_OK)
        goto done;
    st = mpi_st(MPI_Gatherv(s, len, MPI_CHAR, all, lens, displ, MPI_CHAR, 0, c));
    if (r->rank == 0 && st == CC_OK) {
        v = calloc((size_t)r->size, sizeof *v);
        for (int i = 0; v && i < r->size; i++)
            if (!(v[i] = strdup(all + displ[i]))) {
                while (i-- > 0)
                    free(v[i]);
                free(v);
                v = NULL;
            }
        st = v ? CC_OK : CC_ENOMEM;
        *out = v;
    }
done:
    free(all);
    free(lens);
    free(displ);
    return st;
}

void cc_rte_abort(const struct cc_rte *r, int code)
{
    (void)r;
    MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code);
}
