/* `ccbench bench`: parse options (one table), agree across ranks, run the harness, write
 * the text table, JSON Lines and CSV as each size finishes. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "bench/harness.h"
#include "cmd/cmd.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/size.h"
#include "report/outfile.h"
#include "report/report.h"
#include "rte/rte.h"
#include "topo/topo.h"

struct bench_cfg {
    size_t minbytes, maxbytes, stepbytes;
    double stepfactor;
    long long iters;
    int warmup, check, root, avg;
    const char *op, *dtype, *coll, *backend;
    int inplace, outofplace;
    double precision, max_time;
    long long min_iters, max_iters;
    const char *json, *csv;
    long long seed;
    double timeout;
    int iter_barrier, quiet, progress_mode;
    /* backend knobs */
    const char *tcp_if;
    int tcp_family;
    int tcp_streams;
    size_t tcp_chunk;
    int gpu;
    const char *nccl_path;
    int cuda_graph;
    const char *ib_dev;
    int gid_index, ib_qps;
    int corrupt, stop, stop_startup, fail_startup, busy, slow_row;
};

static const char *const time_modes[] = {"0", "1", "2", "3", NULL};
static const char *const progress_modes[] = {"auto", "on", "off", NULL};
static const char *const family_names[] = {"auto", "ipv4", "ipv6", NULL};

#define F(x) offsetof(struct bench_cfg, x)
static const struct cc_opt bench_opts[] = {
    {"minbytes", 'b', CC_OPT_SIZE, F(minbytes), "8", "SIZE", "smallest size in bytes (K/M/G suffixes)"},
    {"maxbytes", 'e', CC_OPT_SIZE, F(maxbytes), "64M", "SIZE", "largest size in bytes"},
    {"stepfactor", 'f', CC_OPT_DOUBLE, F(stepfactor), "2", "F", "multiply the size by F each step (at least 1; 1: add -i instead)"},
    {"stepbytes", 'i', CC_OPT_SIZE, F(stepbytes), "0", "SIZE", "add SIZE each step (only with -f 1)"},
    {"iters", 'n', CC_OPT_LONG, F(iters), "0", "N", "timed iterations per size; 0: adaptive (see --precision)", NULL, CC_OPT_RANGE, 0, 1e9},
    {"warmup", 'w', CC_OPT_INT, F(warmup), "3", "N", "untimed warm-up iterations per size", NULL, CC_OPT_RANGE, 0, 1e6},
    {"check", 'c', CC_OPT_INT, F(check), "1", "N", "checked iterations after timing (0: no check)", NULL, CC_OPT_RANGE, 0, 1000},
    {"op", 'o', CC_OPT_STR, F(op), "sum", "LIST", "reduction operators: sum,prod,min,max,avg or all"},
    {"datatype", 'd', CC_OPT_STR, F(dtype), "float32", "LIST", "element types: int8,uint8,int32,uint32,int64,uint64,float16,bfloat16,float32,float64 or all"},
    {"root", 'r', CC_OPT_INT, F(root), "0", "RANK", "root of broadcast and reduce (0 to ranks-1)"},
    {"average", 'a', CC_OPT_CHOICE, F(avg), "1", "0|1|2|3", "cross-rank time: 0 rank 0, 1 average, 2 min, 3 max", time_modes},
    {"coll", 0, CC_OPT_STR, F(coll), "allreduce", "LIST", "collectives: allreduce,allgather,reducescatter,broadcast,reduce,alltoall,sendrecv or all"},
    {"backend", 0, CC_OPT_STR, F(backend), "mpi", "NAME", "transport: mpi, tcp, verbs, nccl (see `ccbench backends`)"},
    {"inplace", 0, CC_OPT_FLAG, F(inplace), NULL, NULL, "measure in-place only"},
    {"outofplace", 0, CC_OPT_FLAG, F(outofplace), NULL, NULL, "measure out-of-place only (default: both)"},
    {"precision", 0, CC_OPT_DOUBLE, F(precision), "2", "PCT", "adaptive: stop when the 95% CI of the mean is within +-PCT%", NULL, CC_OPT_RANGE, 0.01, 100},
    {"max-time", 0, CC_OPT_DOUBLE, F(max_time), "0.2", "SEC", "adaptive: stop after SEC seconds of timing per size (once --min-iters ran)", NULL, CC_OPT_RANGE, 0.001, 86400},
    {"min-iters", 0, CC_OPT_LONG, F(min_iters), "5", "N", "adaptive: at least N timed iterations", NULL, CC_OPT_RANGE, 2, 1e9},
    {"max-iters", 0, CC_OPT_LONG, F(max_iters), "1000000", "N", "never more than N timed iterations (-n included)", NULL, CC_OPT_RANGE, 1, 1e9},
    {"json", 0, CC_OPT_STR, F(json), NULL, "FILE", "write JSON Lines (header, one object per measurement, summary)"},
    {"csv", 0, CC_OPT_STR, F(csv), NULL, "FILE", "write CSV, one line per measurement"},
    {"seed", 0, CC_OPT_LONG, F(seed), "42", "N", "seed of the generated inputs"},
    {"timeout", 0, CC_OPT_DOUBLE, F(timeout), "60", "SEC", "deadline of any single operation; the watchdog aborts after 1.5 x it + 5 s, naming the rank likely to blame", NULL, CC_OPT_RANGE, 0.1, 86400},
    {"iter-barrier", 0, CC_OPT_INT, F(iter_barrier), "1", "0|1", "barrier (untimed) between timed iterations", NULL, CC_OPT_RANGE, 0, 1},
    {"quiet", 'q', CC_OPT_FLAG, F(quiet), NULL, NULL, "no table on stdout (files and summary only)"},
    {"progress", 0, CC_OPT_CHOICE, F(progress_mode), "auto", NULL, "progress line on stdout, erased before each row: auto (when stdout ends on a terminal), on, off", progress_modes},
    {"tcp-if", 0, CC_OPT_STR, F(tcp_if), NULL, "LIST", "tcp: interfaces, NCCL_SOCKET_IFNAME syntax (prefixes, ^exclude, =exact)"},
    {"tcp-family", 0, CC_OPT_CHOICE, F(tcp_family), "auto", NULL, "tcp: address family; auto: NCCL_SOCKET_FAMILY, else IPv4 before IPv6", family_names},
    {"tcp-streams", 0, CC_OPT_INT, F(tcp_streams), "1", "K", "tcp: sockets per peer", NULL, CC_OPT_RANGE, 1, 64},
    {"tcp-chunk", 0, CC_OPT_SIZE, F(tcp_chunk), "0", "SIZE", "tcp: pipeline chunk size, 4K to 16M (0: automatic, 512K)", NULL, CC_OPT_RANGE, 0, 16 << 20},
    {"gpu", 0, CC_OPT_INT, F(gpu), "-1", "N", "nccl: CUDA device of this rank (-1: local rank modulo the GPUs it sees); verbs: RDMA into GPU N memory (GPUDirect)", NULL, CC_OPT_RANGE, -1, 1023},
    {"nccl-path", 0, CC_OPT_STR, F(nccl_path), "auto", "PATH", "nccl: nvlink|shm|net-ib|net-socket|auto"},
    {"cuda-graph", 'G', CC_OPT_INT, F(cuda_graph), "0", "N", "nccl: capture N launches in a CUDA graph (0: off)", NULL, CC_OPT_RANGE, 0, 1e6},
    {"ib-dev", 0, CC_OPT_STR, F(ib_dev), NULL, "LIST", "verbs: device[:port], NCCL_IB_HCA syntax"},
    {"gid-index", 0, CC_OPT_INT, F(gid_index), "-1", "N", "verbs: GID index, 0 to 255 (-1: a routable RoCE v2 GID)", NULL, CC_OPT_RANGE, -1, 255},
    {"ib-qps", 0, CC_OPT_INT, F(ib_qps), "1", "N", "verbs: queue pairs per peer", NULL, CC_OPT_RANGE, 1, 64},
    {"debug-corrupt", 0, CC_OPT_INT, F(corrupt), "-1", "RANK", "corrupt one output element on RANK (tests)", NULL, CC_OPT_HIDDEN},
    {"debug-slow-row", 0, CC_OPT_INT, F(slow_row), "0", "N", "rank 0 stays inside the writing of its Nth row until a signal comes (tests)", NULL, CC_OPT_HIDDEN},
    {"debug-busy", 0, CC_OPT_INT, F(busy), "-1", "RANK", "RANK stays in host work, outside any operation, when it first checks a result (tests)", NULL, CC_OPT_HIDDEN},
    {"debug-fail-startup", 0, CC_OPT_INT, F(fail_startup), "-1", "RANK", "tcp: RANK gives up at start-up 1 s after connecting to the lower ranks (tests)", NULL, CC_OPT_HIDDEN},
    {"debug-stop-startup", 0, CC_OPT_INT, F(stop_startup), "-1", "RANK", "tcp: RANK stops itself (SIGSTOP) during start-up (tests)", NULL, CC_OPT_HIDDEN},
    {"debug-stop", 0, CC_OPT_INT, F(stop), "-1", "RANK", "tcp: RANK stops itself (SIGSTOP) in its 50th collective (tests)", NULL, CC_OPT_HIDDEN},
    CC_OPT_END,
};
#undef F

static void bench_help(FILE *o)
{
    fprintf(o, "usage: mpirun -np N ccbench bench [options]\n\n"
               "Measure collectives over a size sweep; report time, algbw and busbw as nccl-tests\n"
               "does, plus p50/p99 and the slowest rank; check the results of every size.\n\noptions:\n");
    cc_opt_help(o, bench_opts);
    fprintf(o, "\nExit status: 0 ok, 1 wrong results, 2 bad input or environment (an output file\n"
               "that cannot be written too), 3 runtime fault (timeout, peer lost), 130 interrupted\n"
               "(SIGINT), 143 stopped by SIGTERM. Under Open MPI's mpirun, ^C makes mpirun end the\n"
               "ranks with SIGTERM and exit 1 itself (see docs/bench.md).\n");
}

/* ---- signals: print what was measured, keep the files, leave ---------------------------
 * SIGINT is ^C (exit 130). SIGTERM comes from a launcher ending the job (mpirun, after
 * another rank died or on its own ^C) or from a batch system's time limit (exit 143): the
 * run was not interrupted by its user, and says so. */

/* The summary a handler writes, formatted beforehand (a handler may not format). Two copies:
 * rows rewrite the one not published, then publish it, so a signal never sees half of one.
 * Sized for every collective, type and operator (about 200 text and 400 JSON bytes each);
 * lines that would not fit are left out whole. */
#define SIG_TEXT_MAX (CC_SUMMARY_SLOTS * 200)
#define SIG_JSON_MAX (CC_SUMMARY_SLOTS * 400)
static struct sig_summary {
    char text[SIG_TEXT_MAX];
    size_t text_len;
    char json[3][SIG_JSON_MAX]; /* the summary lines after SIGINT, SIGTERM, the watchdog */
    size_t json_len[3];
} sig_sum[2];
/* the copy a handler may write; -1: none yet. Published with release order after the copy
 * is complete, read with acquire order by a handler or the watchdog's thread. */
static atomic_int sig_pub = -1;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler reads sig_pub");
/* Who writes to rank 0's outputs now: the main thread (a header or a row), a signal's
 * handler or the watchdog (the summary; the process then ends). Changed by compare-and-swap
 * only, so that a summary never lands inside a line and is written once. */
enum { OUT_IDLE, OUT_MAIN, OUT_HANDLER, OUT_WATCHDOG };
static atomic_int sig_out;
static int sig_json_fd = -1;

/* Write the published summary: JSON lines `t` (0 SIGINT, 1 SIGTERM, 2 watchdog) to the file,
 * then msg and the text to stdout, with write(2) only. The file first, and no death by
 * SIGPIPE: a launcher that ends the job may have closed the pipe behind our stdout already. */
static void write_summary(int t, const char *msg, size_t len)
{
    struct sigaction ign;
    ssize_t w;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, NULL);
    int k = atomic_load_explicit(&sig_pub, memory_order_acquire);
    const struct sig_summary *p = k >= 0 ? &sig_sum[k] : NULL;
    if (p && sig_json_fd >= 0 && p->json_len[t])
        w = write(sig_json_fd, p->json[t], p->json_len[t]);
    w = write(STDOUT_FILENO, msg, len);
    if (p && p->text_len)
        w = write(STDOUT_FILENO, p->text, p->text_len);
    (void)w;
}

/* A signal that comes while the main thread writes a header or a row (stdio may pass a long
 * line to the kernel in pieces: a summary between two would tear it) waits for the line: on
 * another thread (MPI's own may take a process-directed signal), 2 s at most (a write
 * blocked on a full pipe); on the main thread it is left pending and handled right after the
 * line. Blocking the signals instead would only steer them to those other threads. */
static atomic_int sig_pending;
static pid_t sig_main_tid;

static void park(void)
{
    for (;;)
        pause(); /* the summary's writer ends the process */
}

static void on_signal(int sig)
{
    static const char intr[] = "\n# interrupted (SIGINT): summary of the sizes measured so far\n";
    static const char term[] = "\n# stopped by SIGTERM (the launcher ended the job: another rank "
                               "died, mpirun was interrupted, or a time limit): summary of the "
                               "sizes measured so far\n";
    int t = sig == SIGTERM;
    for (int waited = 0;; waited++) {
        int was = OUT_IDLE;
        if (atomic_compare_exchange_strong(&sig_out, &was, OUT_HANDLER))
            break;
        if (was == OUT_HANDLER)
            park(); /* another handler writes the summary */
        if (was == OUT_WATCHDOG) {
            /* the watchdog is writing its summary and ends the process (status 3) */
            struct timespec pause = {1, 0};
            nanosleep(&pause, NULL);
            _exit(3);
        }
        /* OUT_MAIN: a line is being written */
        if ((pid_t)syscall(SYS_gettid) == sig_main_tid) {
            atomic_store(&sig_pending, sig); /* the line is finished first, then this */
            return;
        }
        if (waited >= 2000) {
            atomic_store(&sig_out, OUT_HANDLER); /* a write stuck for 2 s: go ahead anyway */
            break;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (t)
        write_summary(1, term, sizeof term - 1);
    else
        write_summary(0, intr, sizeof intr - 1);
    _exit(t ? 143 : 130);
}

/* The watchdog is ending a hung run (its thread; the main thread is stuck in an operation):
 * rank 0 leaves the summary of what was measured, as after a runtime fault. */
static void on_watchdog(void)
{
    static const char msg[] = "\n# stopped by the watchdog (an operation hung): summary of the "
                              "sizes measured so far\n";
    int was = OUT_IDLE;
    if (atomic_load(&sig_pub) < 0)
        return; /* not rank 0, or nothing measured yet */
    if (!atomic_compare_exchange_strong(&sig_out, &was, OUT_WATCHDOG)) {
        if (was != OUT_MAIN)
            return; /* a signal's handler writes the summary */
        atomic_store(&sig_out, OUT_WATCHDOG); /* the main thread is stuck inside a write */
    }
    write_summary(2, msg, sizeof msg - 1);
}

/* Rank 0, from the output files' creation to the run's own handlers (the backend's start-up
 * may wait up to --timeout): ^C or SIGTERM removes the files this run created, as a start
 * that fails does, and ends the process. unlink and _exit are async-signal-safe. */
static const char *volatile early_unlink[2];

static void on_signal_early(int sig)
{
    for (int i = 0; i < 2; i++)
        if (early_unlink[i])
            unlink(early_unlink[i]);
    _exit(128 + sig);
}

/* Ranks other than 0: a launcher that ends the job sends SIGTERM to every rank, then SIGKILL
 * to all of them as soon as one is gone (Open MPI's mpirun does). Dying at once would often
 * take rank 0 down before it wrote its summary; leave it a moment. */
static void on_signal_later(int sig)
{
    struct timespec pause = {0, 500000000};
    (void)sig;
    cc_watchdog_leave(); /* the wait is no hang: no watchdog line while it lasts */
    nanosleep(&pause, NULL);
    _exit(143);
}

/* The main thread is about to write a header or a row; when the summary is being written
 * instead, it waits for the end of the process. */
static void writing_begin(void)
{
    int was = OUT_IDLE;
    if (!atomic_compare_exchange_strong(&sig_out, &was, OUT_MAIN))
        park();
}

/* The line is written: a signal that came meanwhile on this thread is handled now, as its
 * handler would (with SIGINT and SIGTERM held, as during a handler). */
static void writing_end(void)
{
    int was = OUT_MAIN;
    if (!atomic_compare_exchange_strong(&sig_out, &was, OUT_IDLE))
        park(); /* the summary's writer went ahead (a write stuck for 2 s) */
    int sig = atomic_exchange(&sig_pending, 0);
    if (sig) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGINT);
        sigaddset(&s, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &s, NULL);
        on_signal(sig);
    }
}

/* ---- per-run state --------------------------------------------------------------------- */

enum { OUT_JSON, OUT_CSV, OUT_COUNT };

struct run {
    const struct cc_rte *rte;
    struct cc_sink sinks[3];
    const char *sink_name[3]; /* for messages: a file's path or "standard output" */
    int is_file[3];
    int nsinks;
    int ran;                  /* rank 0: the sweep started (on_start) */
    struct cc_outfile *outs;  /* [OUT_COUNT], checked; truncated by on_start */
    json_t *header;
    int quiet, places;
    int begun[3];             /* the sink's header was written */
    int bad[3];               /* the sink could not be written (said once) */
    struct cc_summary sums[CC_SUMMARY_SLOTS];
    /* rank 0: each summary's lines as a handler writes them (text; JSON after SIGINT,
     * SIGTERM, the watchdog), formatted when its row arrives */
    struct { char *text, *json[3]; } lines[CC_SUMMARY_SLOTS];
    int progress;
    int rows, slow_row;       /* rank 0: rows written; debug: the row whose writing is slow */
};

/* Rank 0: a sink could not be written (errno says why). */
static cc_status sink_failed(struct run *r, int i)
{
    int e = errno;
    if (r->is_file[i])
        cc_err("cannot write '%s': %s", r->sink_name[i], strerror(e));
    else
        cc_err_stdout(e); /* main() checks stdout too: one line between them */
    r->bad[i] = 1;
    return CC_EIO;
}

/* Flush what rank 0 printed; a failure is said once, while errno still has its reason. */
static void flush_stdout(void)
{
    if (cc_report_flush(stdout) != 0)
        cc_err_stdout(errno);
}

/* Append a line and its newline to buf (of size cap, used len) if all of it fits. */
static void append_line(char *buf, size_t cap, size_t *len, const char *line, int newline)
{
    size_t n = line ? strlen(line) : 0;
    if (!n || *len + n + (size_t)newline >= cap)
        return;
    memcpy(buf + *len, line, n);
    *len += n;
    if (newline)
        buf[(*len)++] = '\n';
}

/* Reformat the lines of the summary in `slot`, then assemble every summary's lines into the
 * copy a signal handler does not see, and publish it. */
static void refresh_signal_summary(struct run *r, int slot)
{
    static const enum cc_stop stops[3] = {CC_STOP_INTERRUPT, CC_STOP_TERM, CC_STOP_ERROR};
    char text[512];
    free(r->lines[slot].text);
    r->lines[slot].text = cc_summary_line(text, sizeof text, &r->sums[slot]) ? strdup(text) : NULL;
    for (int t = 0; t < 3; t++) {
        json_t *o = cc_summary_json(&r->sums[slot], stops[t]);
        free(r->lines[slot].json[t]);
        r->lines[slot].json[t] = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    int k = atomic_load_explicit(&sig_pub, memory_order_relaxed) == 0 ? 1 : 0;
    struct sig_summary *p = &sig_sum[k];
    p->text_len = 0;
    for (int t = 0; t < 3; t++)
        p->json_len[t] = 0;
    for (int i = 0; i < CC_SUMMARY_SLOTS; i++) {
        if (!r->sums[i].rows)
            continue;
        append_line(p->text, sizeof p->text, &p->text_len, r->lines[i].text, 0);
        for (int t = 0; t < 3; t++)
            append_line(p->json[t], sizeof p->json[t], &p->json_len[t], r->lines[i].json[t], 1);
    }
    atomic_store_explicit(&sig_pub, k, memory_order_release);
}

/* The buffers are there: truncate the files, write the header (rank 0). */
static cc_status on_start(void *user)
{
    struct run *r = user;
    struct cc_text_opts to = {r->places};
    char err[512];
    if (r->rte->rank != 0)
        return CC_OK;
    if (cc_outfiles_commit(r->outs, OUT_COUNT, err, sizeof err) != CC_OK) {
        cc_err("%s", err);
        return CC_EIO;
    }
    r->ran = 1;
    if (!r->quiet) {
        r->sink_name[r->nsinks] = "standard output";
        if (cc_sink_text(&r->sinks[r->nsinks], stdout, &to) != CC_OK) {
            cc_err("cannot set up the table on standard output: out of memory");
            return CC_ENOMEM;
        }
        r->nsinks++;
    }
    for (int i = 0; i < OUT_COUNT; i++) {
        if (!r->outs[i].f)
            continue;
        r->is_file[r->nsinks] = 1;
        r->sink_name[r->nsinks] = r->outs[i].path;
        int own = !r->outs[i].borrowed; /* stdout or stderr stay open */
        cc_status sst = i == OUT_JSON ? cc_sink_jsonl(&r->sinks[r->nsinks], r->outs[i].f, own)
                                      : cc_sink_csv(&r->sinks[r->nsinks], r->outs[i].f, own);
        if (sst != CC_OK) { /* the file stays with outs[], which closes it */
            cc_err("cannot set up the output %s: out of memory", r->outs[i].path);
            return CC_ENOMEM;
        }
        if (i == OUT_JSON)
            sig_json_fd = fileno(r->outs[i].f);
        r->nsinks++;
        r->outs[i].f = NULL; /* the sink owns it now (or borrows it) */
        r->outs[i].fd = -1;
    }
    /* every sink gets the header even when another fails: a broken standard output must
     * not leave the files without theirs (the run stops all the same) */
    cc_status st = CC_OK;
    writing_begin();
    for (int i = 0; i < r->nsinks; i++) {
        if (r->sinks[i].begin(r->sinks[i].state, r->header) != 0) {
            cc_status fst = sink_failed(r, i);
            st = st == CC_OK ? fst : st;
            continue;
        }
        r->begun[i] = 1;
    }
    writing_end();
    return st;
}

static cc_status on_row(const struct cc_row *row, void *user)
{
    struct run *r = user;
    int slot = cc_summary_slot(row);
    cc_summary_add(&r->sums[slot], row);
    if (r->rte->rank != 0)
        return CC_OK;
    /* every sink that still works gets the row even when another fails (a reader of
     * standard output gone): the files keep every row their summary counts */
    cc_status st = CC_OK;
    writing_begin();
    if (r->progress)
        fputs("\r\033[K", stdout);
    for (int i = 0; i < r->nsinks; i++)
        if (!r->bad[i] && r->sinks[i].row(r->sinks[i].state, row) != 0) {
            cc_status fst = sink_failed(r, i);
            st = st == CC_OK ? fst : st;
        }
    if (r->sums[slot].rows) /* a row of n/a only adds nothing */
        refresh_signal_summary(r, slot);
    if (++r->rows == r->slow_row) { /* tests: a signal must wait for the end of the writing */
        /* hold until a signal is pending, then 0.5 s more (at most 30 s in all), so the
         * signal lands inside the writing however slow the machine is */
        double end = cc_now() + 30.0;
        int seen = 0;
        while (cc_now() < end) {
            if (!seen && atomic_load(&sig_pending)) {
                seen = 1;
                end = cc_now() + 0.5;
            }
            struct timespec ms = {0, 10000000};
            nanosleep(&ms, NULL);
        }
    }
    writing_end();
    return st;
}

/* Is fd of process pid (0: this one) a terminal, as far as /proc tells? */
static int fd_is_terminal(long pid, int fd)
{
    char path[64], target[256];
    if (pid == 0)
        return isatty(fd);
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", pid, fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = 0;
    return strncmp(target, "/dev/pts/", 9) == 0 || strncmp(target, "/dev/tty", 8) == 0;
}

/* Does rank 0's standard output end on a terminal? The progress line shares stdout with the
 * table so that the two stay in order (under mpirun stdout and stderr reach the terminal by
 * separate channels, and a progress line on stderr lands in the middle of table rows).
 * Open MPI gives every rank a pseudo-terminal for stdout even when mpirun writes to a file,
 * so the parent's stdout must be a terminal too (mpirun, when it started rank 0 on its own
 * node; or the shell of a run without mpirun). A remote rank 0 (parent orted, srun's step
 * daemon) finds no terminal: --progress on forces it. */
static int stdout_on_terminal(void)
{
    return fd_is_terminal(0, STDOUT_FILENO) && fd_is_terminal((long)getppid(), STDOUT_FILENO);
}

static void on_progress(const struct cc_coll *c, size_t bytes, int done, int total,
                        double elapsed, void *user)
{
    struct run *r = user;
    char sz[32];
    if (r->rte->rank != 0 || !r->progress)
        return;
    double eta = done ? elapsed / done * (total - done) : 0;
    printf("\r\033[K[%d/%d] %s %s  elapsed %.0fs  ETA %s%.0fs", done + 1, total, c->name,
           cc_size_format(bytes, sz, sizeof sz), elapsed, done ? "" : "~", eta);
    fflush(stdout);
}

/* ---- header ------------------------------------------------------------------------------ */

static json_t *make_header(int argc, char **argv, const struct bench_cfg *cfg,
                           const struct cc_rte *rte, const struct cc_backend *be, void *bctx)
{
    extern char **environ;
    json_t *h = json_object(), *a = json_array(), *ranks = json_array(), *env = json_object();
    char ts[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(h, "command", json_string("bench"));
    /* an argument or a variable that is not UTF-8 is kept with its bad bytes as '?': the
     * command line stays whole (json_string would refuse it and leave a gap) */
    for (int i = 0; i < argc; i++)
        json_array_append_new(a, cc_topo_jtext(argv[i]));
    json_object_set_new(h, "argv", a);
    json_object_set_new(h, "version", json_string(PACKAGE_VERSION));
    json_object_set_new(h, "start_time", json_string(ts));
    json_object_set_new(h, "backend", json_string(be->name));
    json_object_set_new(h, "datatype", json_string(cfg->dtype));
    json_object_set_new(h, "op", json_string(cfg->op));
    json_object_set_new(h, "nranks", json_integer(rte->size));
    json_object_set_new(h, "nnodes", json_integer(rte->nnodes));
    for (int i = 0; i < rte->size; i++) {
        json_t *r = json_object();
        json_object_set_new(r, "rank", json_integer(i));
        json_object_set_new(r, "host", json_string(rte->hosts[i]));
        json_object_set_new(r, "node", json_integer(rte->node_of[i]));
        json_array_append_new(ranks, r);
    }
    json_object_set_new(h, "ranks", ranks);
    static const char *const prefixes[] = {"NCCL_", "OMPI_", "UCX_", "CCBENCH_", "CUDA_VISIBLE", NULL};
    for (char **e = environ; e && *e; e++)
        for (int p = 0; prefixes[p]; p++)
            if (strncmp(*e, prefixes[p], strlen(prefixes[p])) == 0) {
                const char *eq = strchr(*e, '=');
                if (!eq)
                    break;
                char key[256];
                size_t n = (size_t)(eq - *e) < sizeof key - 1 ? (size_t)(eq - *e) : sizeof key - 1;
                memcpy(key, *e, n);
                key[n] = 0;
                cc_topo_text(key, sizeof key, key);
                json_object_set_new(env, key, cc_topo_jtext(eq + 1));
                break;
            }
    json_object_set_new(h, "env", env);
    char timing[256];
    if (cfg->iters)
        snprintf(timing, sizeof timing, "%lld iterations per size after %d warm-up, %s",
                 cfg->iters, cfg->warmup, cfg->iter_barrier ? "barrier between iterations" : "no barrier");
    else
        snprintf(timing, sizeof timing,
                 "adaptive: until the 95%% CI is within +-%g%% or %g s per size (at least %lld "
                 "iterations) after %d warm-up, %s",
                 cfg->precision, cfg->max_time, cfg->min_iters, cfg->warmup,
                 cfg->iter_barrier ? "barrier between iterations" : "no barrier");
    json_object_set_new(h, "timing", json_string(timing));
    static const char *const modes[] = {"rank0", "avg", "min", "max"};
    json_object_set_new(h, "time_reduction", json_string(modes[cfg->avg]));
    json_object_set_new(h, "seed", json_integer(cfg->seed));
    json_object_set_new(h, "check_iters", json_integer(cfg->check));
    if (be->describe)
        be->describe(bctx, h);
    return h;
}

/* ---- argument agreement ------------------------------------------------------------------ */

/* Whether an option whose help is `help` applies to `backend`: yes unless the help names
 * backends ("tcp: ...", "nccl: ...; verbs: ...") and not this one; those it names go to
 * owners ("tcp", "nccl or verbs"). */
static int backend_option_for(const char *help, const char *backend, char *owners, size_t len)
{
    static const char *const names[] = {"tcp", "nccl", "verbs"};
    int named = 0, mine = 0;
    size_t k = 0;
    for (size_t b = 0; b < sizeof names / sizeof *names; b++) {
        size_t n = strlen(names[b]);
        for (const char *p = help; p; p = strstr(p, "; "), p = p ? p + 2 : NULL)
            if (!strncmp(p, names[b], n) && p[n] == ':') {
                mine |= !strcmp(backend, names[b]);
                k += (size_t)snprintf(owners + k, k < len ? len - k : 0, "%s%s",
                                      named ? " or " : "", names[b]);
                named = 1;
                break;
            }
    }
    return !named || mine;
}

static cc_status check_same_args(const struct cc_rte *rte, int argc, char **argv)
{
    /* the command line as text (its first 3,000 bytes, for the message), then a tab, the
     * bytes of its arguments and an FNV-1a hash of every one (with the 0 that ends it), so
     * that a difference anywhere is seen, a space inside an argument included */
    enum { SHOWN = 3000 };
    char buf[SHOWN + 64];
    size_t n = 0, total = 0;
    unsigned long long hash = 14695981039346656037ull;
    for (int i = 0; i < argc; i++) {
        const unsigned char *c = (const unsigned char *)argv[i];
        do
            hash = (hash ^ *c) * 1099511628211ull;
        while (*c++);
        total += (size_t)(c - (const unsigned char *)argv[i]) - 1; /* less its 0 */
    }
    for (int i = 0; i < argc && n < SHOWN; i++) {
        int w = snprintf(buf + n, SHOWN - n, "%s%s", i ? " " : "", argv[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    n = n < SHOWN ? n : SHOWN - 1;
    snprintf(buf + n, sizeof buf - n, "\t%zu %016llx", total, hash);
    char **all = NULL;
    int differ = -1;
    if (cc_rte_gather_str(rte, buf, &all) != CC_OK)
        return CC_EPEER;
    if (rte->rank == 0) {
        for (int i = 1; i < rte->size && differ < 0; i++)
            if (strcmp(all[i], all[0]) != 0)
                differ = i;
        if (differ >= 0) {
            /* both from a little before the first difference, 160 bytes at most each */
            const char *a = all[differ], *z = all[0];
            size_t d = 0, la = strcspn(a, "\t"), lz = strcspn(z, "\t");
            while (a[d] && a[d] == z[d])
                d++;
            size_t from = d > 40 ? d - 40 : 0;
            int wa = from < la ? (int)(la - from < 160 ? la - from : 160) : 0;
            int wz = from < lz ? (int)(lz - from < 160 ? lz - from : 160) : 0;
            if (d < la || d < lz || la != lz)
                cc_err("rank %d (%s) was given different arguments: '%s%.*s' (rank 0: "
                       "'%s%.*s')", differ, rte->hosts[differ], from ? "..." : "", wa,
                       from < la ? a + from : "", from ? "..." : "", wz,
                       from < lz ? z + from : "");
            else
                cc_err("rank %d (%s) was given different arguments: the same text, %s",
                       differ, rte->hosts[differ],
                       la >= SHOWN - 1 ? "as far as its first 3,000 bytes go"
                                       : "spaced differently inside its arguments");
        }
        for (int i = 0; i < rte->size; i++)
            free(all[i]);
        free(all);
    }
    if (cc_rte_bcast(rte, &differ, sizeof differ, 0) != CC_OK) {
        /* every rank must take the same way: without rank 0's verdict, stop */
        cc_err("comparing the ranks' arguments: %s", cc_status_str(CC_EPEER));
        return CC_EPEER;
    }
    return differ >= 0 ? CC_EMISMATCH : CC_OK;
}

/* ---- start-up failures -------------------------------------------------------------------- */

/* The backend did not start on some ranks: rank 0 says each distinct reason once (every rank
 * of a job given --tcp-if =eth9 fails alike, a thousand ranks that cannot reach one host say
 * so in one line), naming the ranks when not all share it; the reasons in the order of their
 * first rank, at most INIT_GROUPS_SHOWN of them. */
#define INIT_GROUPS_SHOWN 8
static char **init_msgs; /* for the comparison below */

static int by_message(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b, c = strcmp(init_msgs[x], init_msgs[y]);
    return c ? c : (x > y) - (x < y);
}

struct init_group { int first, count; };

static int by_first(const void *a, const void *b)
{
    const struct init_group *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* Whether a start-up reason only passes on another rank's failure (backend.h). */
static int passes_on(const char *reason)
{
    return strncmp(reason, CC_BACKEND_PEER_FAILED, strlen(CC_BACKEND_PEER_FAILED)) == 0;
}

static void say_init_failures(const struct cc_rte *rte, const struct cc_backend *be, char **all)
{
    int *idx = malloc((size_t)rte->size * sizeof *idx), n = 0, ng = 0, rest = 0;
    struct init_group *g = malloc((size_t)rte->size * sizeof *g);
    if (!idx || !g) {
        cc_err("backend %s did not start (out of memory to say why)", be->name);
        free(idx), free(g);
        return;
    }
    /* a rank that failed only because another did is left out when some rank says why */
    int own = 0;
    for (int i = 0; i < rte->size; i++)
        own += all[i][0] && !passes_on(all[i]);
    for (int i = 0; i < rte->size; i++)
        if (all[i][0] && !(own && passes_on(all[i])))
            idx[n++] = i;
    init_msgs = all;
    qsort(idx, (size_t)n, sizeof *idx, by_message);
    for (int i = 0; i < n; i++) {
        if (i == 0 || strcmp(all[idx[i]], all[idx[i - 1]]) != 0)
            g[ng++] = (struct init_group){idx[i], 0};
        g[ng - 1].count++;
    }
    qsort(g, (size_t)ng, sizeof *g, by_first); /* the lowest first rank first */
    for (int k = 0; k < ng; k++) {
        const char *m = all[g[k].first];
        if (k >= INIT_GROUPS_SHOWN)
            rest += g[k].count;
        else if (g[k].count == rte->size)
            cc_err("backend %s: %s", be->name, m);
        else if (g[k].count == 1)
            cc_err("backend %s on rank %d (%s): %s", be->name, g[k].first, rte->hosts[g[k].first], m);
        else
            cc_err("backend %s on rank %d (%s) and %d more: %s", be->name, g[k].first,
                   rte->hosts[g[k].first], g[k].count - 1, m);
    }
    if (rest)
        cc_err("backend %s: %d more rank(s) failed with other messages", be->name, rest);
    free(idx);
    free(g);
}

static void report_init_failure(const struct cc_rte *rte, const struct cc_backend *be,
                                cc_status st, const char *err)
{
    const char *mine = st == CC_OK ? "" : err[0] ? err : cc_status_str(st);
    char **all = NULL;
    cc_watchdog_enter("reporting a backend that did not start");
    cc_status g = cc_rte_gather_str(rte, mine, &all);
    cc_watchdog_leave();
    if (g != CC_OK) { /* no agreement possible: each failing rank speaks for itself */
        if (st != CC_OK)
            cc_log_set_quiet(0), cc_err("backend %s: %s", be->name, mine);
        return;
    }
    if (rte->rank != 0)
        return;
    say_init_failures(rte, be, all);
    for (int i = 0; i < rte->size; i++)
        free(all[i]);
    free(all);
}

/* ---- main --------------------------------------------------------------------------------- */

int cc_cmd_bench(int argc, char **argv)
{
    struct bench_cfg cfg;
    unsigned char given[sizeof bench_opts / sizeof bench_opts[0]] = {0};
    struct cc_opt_result res = {.given = given};
    char err[512], runerr[512] = "";
    struct cc_rte rte;
    struct run run = {0};
    struct cc_outfile outs[OUT_COUNT] = {{.opt = "--json", .fd = -1}, {.opt = "--csv", .fd = -1}};
    const struct cc_backend *be = NULL;
    void *bctx = NULL;
    json_t *header = NULL;
    cc_status st;
    int rc;

    res.pos = calloc((size_t)argc + 1, sizeof *res.pos);
    if (!res.pos)
        return 3;
    /* parse before MPI too, so --help and bad flags work without mpirun; every rank parsed
     * the same arguments, so only the first one speaks */
    st = cc_opt_parse(bench_opts, argc - 1, argv + 1, &cfg, &res, err, sizeof err);
    if (res.help) {
        if (cc_rte_launcher_speaks())
            bench_help(stdout);
        free(res.pos);
        return 0;
    }
    if (st == CC_OK && res.npos) {
        snprintf(err, sizeof err, "unexpected argument '%s' (see ccbench bench --help)", res.pos[0]);
        st = CC_EUSAGE;
    }
    if (st == CC_OK) { /* the sweep's own values, before MPI; the granules come later */
        struct cc_sweep sw = {cfg.minbytes, cfg.maxbytes, cfg.stepfactor, cfg.stepbytes};
        st = cc_sweep_check(&sw, err, sizeof err);
    }
    if (st == CC_OK && cfg.root < 0) { /* the rank count is checked once MPI is up */
        snprintf(err, sizeof err, "root %d is not a rank (ranks count from 0)", cfg.root);
        st = CC_EUSAGE;
    }
    if (st == CC_OK && cfg.inplace && cfg.outofplace) {
        snprintf(err, sizeof err, "--inplace and --outofplace each select one placement only "
                 "(give neither to measure both)");
        st = CC_EUSAGE;
    }
    if (st == CC_OK && cfg.ib_dev && !cfg.ib_dev[0]) {
        snprintf(err, sizeof err, "--ib-dev needs a device list (leave it out for every port)");
        st = CC_EUSAGE;
    }
    if (st != CC_OK) {
        if (cc_rte_launcher_speaks())
            cc_err("%s", err);
        free(res.pos);
        return 2;
    }
    /* an option of other backends only (its help names them: "tcp: ...", "nccl: ...;
     * verbs: ...") does nothing: said, as it is probably meant for a run with one of them */
    for (int i = 0; bench_opts[i].name && cc_rte_launcher_speaks(); i++) {
        char owners[64] = "";
        if (given[i] && !backend_option_for(bench_opts[i].help, cfg.backend, owners,
                                            sizeof owners))
            cc_warn("--%s is an option of the %s backend: not used with --backend %s",
                    bench_opts[i].name, owners, cfg.backend);
    }
    /* --max-iters alone also lowers the default --min-iters; both given must agree */
    if (!given[cc_opt_find(bench_opts, "min-iters")] && cfg.min_iters > cfg.max_iters)
        cfg.min_iters = cfg.max_iters;
    outs[OUT_JSON].path = cfg.json;
    outs[OUT_CSV].path = cfg.csv;

    if (cc_rte_init(&rte, &argc, &argv) != CC_OK) {
        cc_err("could not start MPI");
        free(res.pos);
        return 2;
    }
    run.rte = &rte;
    if (rte.rank != 0)
        cc_log_set_quiet(cc_log_get_level() < CC_LOG_DEBUG);
    /* a launcher gone before us (a second ^C) closes the pipes behind stdout and stderr: a
     * write then fails with EPIPE, said and handled, instead of killing rank 0 before its
     * summary */
    signal(SIGPIPE, SIG_IGN);
    /* every collective from here on is watched: a rank stuck at start-up (allocating, a
     * backend that never answers) is named instead of leaving the others waiting forever */
    cc_watchdog_on_fire(on_watchdog);
    cc_watchdog_start(&rte, cfg.timeout * 1.5 + 5);

    cc_watchdog_enter("comparing the ranks' arguments");
    st = check_same_args(&rte, argc, argv);
    cc_watchdog_leave();
    if (st == CC_OK) {
        cc_watchdog_enter("exchanging the watchdogs' addresses");
        st = cc_watchdog_connect(&rte);
        cc_watchdog_leave();
        if (st != CC_OK)
            cc_err("could not exchange the watchdogs' addresses: %s", cc_status_str(st));
    }
    if (st != CC_OK) {
        rc = st == CC_EPEER ? cc_status_exit(st) : 2;
        goto out;
    }

    struct cc_bench_params p = {0};
    p.rte = &rte;
    p.coll_mask = cc_coll_parse_list(cfg.coll, err, sizeof err);
    be = cc_backend_find(cfg.backend);
    if (!p.coll_mask) {
        st = CC_EUSAGE;
    } else if (!be) {
        char list[128];
        snprintf(err, sizeof err, "unknown backend '%s' (one of %s)", cfg.backend,
                 cc_backend_list(list, sizeof list));
        st = CC_EUSAGE;
    } else {
        p.backend = be;
        p.dtype_mask = cc_choice_mask(cc_dtype_names, "datatype", cfg.dtype, err, sizeof err);
        p.op_mask = p.dtype_mask ? cc_choice_mask(cc_op_names, "op", cfg.op, err, sizeof err) : 0;
        p.root = cfg.root;
        p.sweep = (struct cc_sweep){cfg.minbytes, cfg.maxbytes, cfg.stepfactor, cfg.stepbytes};
        p.places = (cfg.outofplace ? 1 : 0) | (cfg.inplace ? 2 : 0);
        if (!p.places)
            p.places = 3;
        p.warmup = cfg.warmup;
        p.iters = cfg.iters;
        p.precision_pct = cfg.precision;
        p.max_time_s = cfg.max_time;
        p.min_iters = cfg.min_iters;
        p.max_iters = cfg.max_iters;
        p.check_iters = cfg.check;
        p.time_mode = (enum cc_time_mode)cfg.avg;
        p.iter_barrier = cfg.iter_barrier;
        p.seed = (uint64_t)cfg.seed;
        p.corrupt_rank = cfg.corrupt;
        p.busy_rank1 = cfg.busy + 1;
        p.timeout_s = cfg.timeout;
        p.on_row = on_row;
        p.on_progress = on_progress;
        p.user = &run;
        p.err = runerr;
        p.errlen = sizeof runerr;
        st = p.dtype_mask && p.op_mask ? cc_bench_validate(&p, rte.size, err, sizeof err)
                                       : CC_EUSAGE;
    }
    if (st == CC_OK && !be->built) {
        snprintf(err, sizeof err, "backend '%s' is not built into this binary: %s", be->name,
                 be->how_to_build ? be->how_to_build : "rebuild with its dependency");
        st = CC_ENOTBUILT;
    }
    if (st != CC_OK) {
        if (rte.rank == 0)
            cc_err("%s", err);
        rc = cc_status_exit(st);
        goto out;
    }
    if (rte.rank == 0) {
        char pairs[256];
        size_t n = cc_bench_skipped_pairs(&p, pairs, sizeof pairs);
        if (n)
            cc_warn("skipping %zu op/type pair%s that make%s no sense (integer averages "
                    "truncate): %s", n, n > 1 ? "s" : "", n > 1 ? "" : "s", pairs);
    }

    /* outputs (rank 0): every path checked before the backend starts (which may take the
     * whole --timeout), and no existing file truncated until all of them are usable */
    long long failed = 0;
    if (rte.rank == 0 && cc_outfiles_open(outs, OUT_COUNT, err, sizeof err) != CC_OK) {
        cc_err("%s", err);
        failed = 1;
    }
    cc_watchdog_enter("agreeing on the output files");
    st = cc_rte_bcast(&rte, &failed, sizeof failed, 0);
    cc_watchdog_leave();
    if (st != CC_OK) {
        cc_err("agreeing on the output files: %s", cc_status_str(st));
        rc = cc_status_exit(st);
        goto out;
    }
    if (failed) {
        rc = 2;
        goto out;
    }
    if (rte.rank == 0) {
        for (int i = 0; i < OUT_COUNT && i < 2; i++)
            early_unlink[i] = outs[i].created == 1   ? outs[i].path
                              : outs[i].created == 2 ? outs[i].made
                                                     : NULL;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal_early;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }

    /* backend: every rank must agree that it started */
    struct cc_backend_conf bconf = {
        .timeout_s = cfg.timeout, .seed = (uint64_t)cfg.seed, .max_bytes = cfg.maxbytes,
        .progress = cc_watchdog_progress,
        .tcp_if = cfg.tcp_if, .tcp_family = cfg.tcp_family == 1 ? 4 : cfg.tcp_family == 2 ? 6 : 0,
        .tcp_streams = cfg.tcp_streams, .tcp_chunk = cfg.tcp_chunk, .tcp_stop = cfg.stop + 1, .tcp_stop_startup = cfg.stop_startup + 1,
        .tcp_fail_startup = cfg.fail_startup + 1,
        .gpu = cfg.gpu, .nccl_path = cfg.nccl_path, .cuda_graph = cfg.cuda_graph,
        .ib_dev = cfg.ib_dev, .gid_index = cfg.gid_index, .ib_qps = cfg.ib_qps,
    };
    err[0] = 0;
    cc_watchdog_enter("backend initialization");
    st = be->init(&bconf, &rte, &bctx, err, sizeof err);
    failed = st != CC_OK ? (long long)st : 0;
    /* a rank whose start-up failed waits here for the others; if one of them is stuck, this
     * rank's own reason (often naming it) goes with the watchdog's message */
    static char agree[640]; /* the text below and the whole of err */
    snprintf(agree, sizeof agree, "agreeing that the backend started on every rank%s%s%s",
             st != CC_OK ? " (here it did not: " : "", st != CC_OK ? (err[0] ? err : cc_status_str(st)) : "",
             st != CC_OK ? ")" : "");
    cc_watchdog_enter(agree);
    cc_status ast = cc_rte_allreduce_ll(&rte, &failed, 1, CC_RTE_MAX);
    cc_watchdog_leave();
    if (ast != CC_OK) { /* ranks cannot know each other's state: no collective report */
        cc_err("%s: %s", agree, cc_status_str(ast));
        if (st == CC_OK)
            be->fini(bctx);
        bctx = NULL;
        rc = cc_status_exit(ast);
        goto out;
    }
    if (failed) {
        report_init_failure(&rte, be, st, err);
        if (st == CC_OK)
            be->fini(bctx);
        bctx = NULL;
        rc = cc_status_exit((cc_status)failed);
        goto out;
    }

    p.bctx = bctx;

    for (int i = 0; i < CC_SUMMARY_SLOTS; i++)
        run.sums[i].wrong = -1;
    /* only rank 0 writes outputs: the others need no header (a JSON object per rank) */
    header = rte.rank == 0 ? make_header(argc, argv, &cfg, &rte, be, bctx) : NULL;
    run.header = header;
    run.outs = outs;
    run.quiet = cfg.quiet;
    run.places = p.places;
    run.slow_row = cfg.slow_row;
    if (rte.rank == 0) {
        run.progress = cfg.progress_mode == 1 ||
                       (cfg.progress_mode == 0 && !getenv("CCBENCH_NO_PROGRESS") &&
                        stdout_on_terminal());
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        early_unlink[0] = early_unlink[1] = NULL; /* the run's own handlers from here */
        sig_main_tid = (pid_t)syscall(SYS_gettid);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART; /* a handler that returns (a signal left pending while the
                                   * main thread writes) must not fail that write with EINTR */
        /* ^C reaches mpirun too, which then sends SIGTERM: one handler runs, whole */
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGINT);
        sigaddset(&sa.sa_mask, SIGTERM);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    } else {
        /* mpirun forwards ^C to every rank: let rank 0 report, then the launcher ends us */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        signal(SIGINT, SIG_IGN);
        sa.sa_handler = on_signal_later;
        sigaction(SIGTERM, &sa, NULL);
    }

    p.on_start = on_start;
    st = cc_bench_run(&p);

    /* CC_EIO comes only from on_start or on_row (rank 0 could not write an output, and said
     * so): an environment error, agreed by every rank */
    rc = st == CC_EIO ? 2 : cc_status_exit(st);
    if (rte.rank == 0 && !run.ran) {
        if (st != CC_EIO)
            cc_err("%s", runerr[0] ? runerr : cc_status_str(st));
    } else if (rte.rank == 0) {
        enum cc_stop stop = st == CC_OK || st == CC_EWRONG ? CC_STOP_NONE : CC_STOP_ERROR;
        writing_begin(); /* the final summary is the main thread's: a handler still waiting
                          * for a line, or the watchdog, never writes a second one */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (run.progress) {
            fputs("\r\033[K", stdout);
            fflush(stdout);
        }
        for (int i = 0; i < run.nsinks; i++)
            if (run.begun[i] && !run.bad[i] &&
                run.sinks[i].end(run.sinks[i].state, run.sums, CC_SUMMARY_SLOTS, stop) != 0) {
                sink_failed(&run, i);
                rc = rc ? rc : 2;
            }
        if (cfg.quiet) {
            if (stop != CC_STOP_NONE)
                fputs("# stopped by an error: the summary covers the sizes measured so far\n", stdout);
            if (cc_summary_print(stdout, run.sums, CC_SUMMARY_SLOTS) != 0) {
                cc_err_stdout(errno);
                rc = rc ? rc : 2;
            }
        }
        long long wrong = 0;
        int measured = 0;
        for (int i = 0; i < CC_SUMMARY_SLOTS; i++) {
            wrong += run.sums[i].wrong > 0 ? run.sums[i].wrong : 0;
            measured += run.sums[i].rows;
        }
        if (st == CC_OK && !measured) /* rows of n/a only: say so, not a silent success */
            cc_warn("nothing was measured: every size was n/a for this backend (--json FILE "
                    "records each reason)");
        if (st == CC_EWRONG)
            cc_err("wrong results detected (see the #wrong column)");
        else if (st != CC_OK && st != CC_EIO)
            cc_err("bench stopped: %s%s", runerr[0] ? runerr : cc_status_str(st),
                   wrong ? "; wrong results had been detected before it (see the #wrong column)"
                         : "");
        flush_stdout();
    }

out:
    cc_watchdog_stop();
    for (int i = 0; i < run.nsinks; i++) {
        int bad = run.sinks[i].close(run.sinks[i].state) != 0;
        if (bad && run.begun[i] && !run.bad[i]) {
            sink_failed(&run, i);
            rc = rc ? rc : 2;
        }
        /* where the results are, once complete as far as the run went */
        if (run.is_file[i] && run.begun[i] && !run.bad[i] && !bad)
            printf("# results: %s\n", run.sink_name[i]);
    }
    flush_stdout();
    sig_json_fd = -1;
    cc_outfiles_abandon(outs, OUT_COUNT); /* a start-up that failed leaves no new file behind */
    json_decref(header);
    /* a failed run (exit 3) may leave peers mid-operation: do not wait for them, neither
     * in the backend's shut-down (NCCL's destroy after a stream synchronize) nor in
     * MPI_Finalize; the processes' ends free what the backend held. Rank 0 ends the job at
     * once; the others give it 2 s first, so that what it still has to write (the errors it
     * reports for every rank, its summary) is not cut off by their abort, which kills every
     * rank. Rank 0's abort ends their wait. */
    if (bctx && rc != 3)
        be->fini(bctx);
    if (rc == 3) {
        fflush(NULL);
        if (rte.rank != 0) {
            struct timespec grace = {2, 0};
            while (nanosleep(&grace, &grace) != 0 && errno == EINTR)
                ;
        }
        cc_rte_abort(&rte, rc);
    }
    cc_rte_fini(&rte);
    free(res.pos);
    for (int i = 0; i < CC_SUMMARY_SLOTS; i++) {
        free(run.lines[i].text);
        for (int t = 0; t < 3; t++)
            free(run.lines[i].json[t]);
    }
    return rc;
}
