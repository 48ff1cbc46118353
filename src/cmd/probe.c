/* `ccbench probe`: one rank per node describes its node (src/topo), rank 0 merges the nodes
 * into one cluster topology, saves it and prints a summary. With --topology it reads a saved
 * or described topology instead, validates it and prints the same summary (no MPI). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/log.h"
#include "core/text.h"
#include "core/opt.h"
#include "report/outfile.h"
#include "report/report.h"
#include "rte/rte.h"
#include "topo/topo.h"

/* Longest path written (--json, --out's directory, --nccl-topo before %h is expanded). */
#define PROBE_PATH_MAX 4096

struct probe_cfg {
    const char *out, *json, *nccl_topo, *topology, *name;
    const char *hwloc_xml, *sysfs_root;
    int no_gpu_libs, quiet;
};

#define F(x) offsetof(struct probe_cfg, x)
static const struct cc_opt probe_opts[] = {
    {"out", 0, CC_OPT_STR, F(out), "ccbench-results", "DIR", "save topology-<UTC time>.json in DIR"},
    {"json", 0, CC_OPT_STR, F(json), NULL, "FILE", "save the cluster topology to FILE instead"},
    {"nccl-topo", 0, CC_OPT_STR, F(nccl_topo), NULL, "FILE", "write NCCL's topology XML of each node to FILE (%h: hostname)"},
    {"topology", 0, CC_OPT_STR, F(topology), NULL, "FILE", "read a saved or described topology instead of probing (no MPI)"},
    {"name", 0, CC_OPT_STR, F(name), "probed", "NAME", "name of the cluster in the saved file"},
    {"quiet", 'q', CC_OPT_FLAG, F(quiet), NULL, NULL, "no summary on stdout"},
    {"hwloc-xml", 0, CC_OPT_STR, F(hwloc_xml), NULL, "FILE", "probe an hwloc XML export instead of this machine"},
    {"sysfs-root", 0, CC_OPT_STR, F(sysfs_root), NULL, "DIR", "read /sys below DIR (tests; default /, none with --hwloc-xml)", NULL, CC_OPT_HIDDEN},
    {"no-gpu-libs", 0, CC_OPT_FLAG, F(no_gpu_libs), NULL, NULL, "do not open NVML or the CUDA runtime"},
    CC_OPT_END,
};
#undef F

static void probe_help(FILE *o)
{
    fprintf(o, "usage: mpirun -np N ccbench probe [options]\n"
               "       ccbench probe --topology FILE\n\n"
               "Describe every node (one rank per node probes: CPUs, NUMA, GPUs, NICs, PCIe and\n"
               "NVLink paths in NCCL's classes), merge into one cluster topology (JSON, see\n"
               "docs/topology.md), save it and print a summary with the nodes that differ from\n"
               "the majority.\n\noptions:\n");
    cc_opt_help(o, probe_opts);
    fprintf(o, "\nExit status: 0 ok, 2 bad input (option, unreadable or invalid topology or hwloc\n"
               "XML) or an output that cannot be written (the topology or an --nccl-topo file;\n"
               "the topology is saved all the same), 3 a node could not be probed.\n");
}

/* path as a file to compare: its directory resolved (links, ".", "..") and its base name,
 * whether or not the file exists; the text itself when the directory cannot be resolved. */
static void resolve_path(const char *given, char *out, size_t len)
{
    char dir[PROBE_PATH_MAX + 256], real[PATH_MAX], cur[PATH_MAX], link[PATH_MAX];
    struct stat sb;
    snprintf(cur, sizeof cur, "%s", given);
    /* a symbolic link names its target, even one that does not exist yet */
    for (int hop = 0; hop < 16 && lstat(cur, &sb) == 0 && S_ISLNK(sb.st_mode); hop++) {
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n <= 0)
            break;
        link[n] = 0;
        const char *sl = strrchr(cur, '/');
        if (link[0] == '/' || !sl)
            snprintf(cur, sizeof cur, "%s", link);
        else {
            size_t keep = (size_t)(sl - cur + 1), ln = strlen(link);
            if (keep + ln >= sizeof cur)
                break;
            memcpy(cur + keep, link, ln + 1); /* the link's directory, then its target */
        }
    }
    const char *path = cur;
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (realpath(dir, real))
        snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, slash ? slash + 1 : path);
    else
        snprintf(out, len, "%s", path);
}

/* Whether paths a and b name one file, existing or not: the same resolved path, or the same
 * existing file (a link to the other). a's resolved path goes to ra. */
static int same_file(const char *a, const char *b, char *ra, size_t len)
{
    char rb[PROBE_PATH_MAX + PATH_MAX];
    struct stat sa, sb;
    resolve_path(a, ra, len);
    resolve_path(b, rb, sizeof rb);
    if (strcmp(ra, rb) == 0)
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
}

/* FILE with "%h" replaced by the hostname. */
static void expand_host(const char *pat, const char *host, char *out, size_t len)
{
    size_t k = 0;
    for (const char *s = pat; *s && k + 1 < len; s++) {
        if (s[0] == '%' && s[1] == 'h') {
            k += (size_t)snprintf(out + k, len - k, "%s", host);
            if (k >= len)
                k = len - 1;
            s++;
        } else {
            out[k++] = *s;
        }
    }
    out[k] = 0;
}

/* ---- output files, written whole or not at all ------------------------------------------- */

struct out_file {
    FILE *f;
    int borrowed;                    /* f is stdout or stderr: flushed, never closed */
    char path[PROBE_PATH_MAX + 320]; /* where the file ends up */
    char tmp[PROBE_PATH_MAX + 340];  /* the temporary file beside it; "" writing path itself */
};

/* Open an output file: a temporary file in its directory, which out_close renames over it once
 * everything is written, so that a write that fails (a full disk, a refused topology) leaves
 * the old file or none, never a part; the old file's mode and group are kept. Written directly
 * instead: the process's stdout or stderr (through its own stream), whatever is no regular
 * file (a device, a FIFO), another user's file (its owner kept), a file with hard links, one
 * whose group cannot be kept, and a file in a directory that refuses new files (EACCES,
 * EPERM). A file this user may not write is refused; a symbolic link is kept and its target
 * written (ELOOP for a loop). 0, or -1 with errno set. */
static int out_open(struct out_file *o, const char *path)
{
    struct stat sb;
    o->f = NULL;
    o->borrowed = 0;
    o->tmp[0] = 0;
    snprintf(o->path, sizeof o->path, "%s", path);
    /* the process's own stdout or stderr, however spelt (/dev/stdout, /dev/fd/1, a link to
     * them, the file the shell redirected them to): written through its stream, whose offset
     * the summary shares */
    if ((o->f = cc_std_twin(path))) {
        o->borrowed = 1;
        return 0;
    }
    /* a symbolic link is kept and its target written, even one not there yet */
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        resolve_path(path, o->path, sizeof o->path);
        if (lstat(o->path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
            errno = ELOOP;
            return -1;
        }
    }
    int exists = stat(o->path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode)) /* a device, a FIFO */
        return (o->f = cc_fopen_write(o->path)) ? 0 : -1;
    /* a file this user may not write stays refused; another user's file, or one with other
     * names (hard links), is written in place: a new file would change its owner (and in a
     * sticky directory could not be renamed over it), or leave its other names behind */
    if (exists && access(o->path, W_OK) != 0)
        return -1;
    if (exists && (sb.st_uid != geteuid() || sb.st_nlink > 1))
        return (o->f = cc_fopen_write(o->path)) ? 0 : -1;
    const char *slash = strrchr(o->path, '/');
    snprintf(o->tmp, sizeof o->tmp, "%.*s.ccbench-XXXXXX", slash ? (int)(slash - o->path + 1) : 0,
             o->path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        o->tmp[0] = 0;
        if (exists && (errno == EACCES || errno == EPERM))
            return (o->f = cc_fopen_write(o->path)) ? 0 : -1;
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    /* the replaced file's mode and group; a group this user cannot give: written in place */
    if (exists && sb.st_gid != getegid() && fchown(fd, (uid_t)-1, sb.st_gid) != 0) {
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = 0;
        return (o->f = cc_fopen_write(o->path)) ? 0 : -1;
    }
    if (fchmod(fd, exists ? sb.st_mode & 07777 : 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = 0;
        errno = e;
        return -1;
    }
    return 0;
}

/* Close the file and, when `keep`, put it in place; else remove what was written. 0, or -1
 * with errno set when the file could not be completed (the temporary file is removed). */
static int out_close(struct out_file *o, int keep)
{
    int e = 0;
    if (o->f && keep && cc_report_flush(o->f) != 0)
        e = errno;
    if (o->f && !o->borrowed && fclose(o->f) != 0 && keep && !e)
        e = errno;
    o->f = NULL;
    if (keep && !e && o->tmp[0] && rename(o->tmp, o->path) != 0)
        e = errno;
    if ((!keep || e) && o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = 0;
    errno = e;
    return e ? -1 : 0;
}

/* Write this node's NCCL topology XML to the --nccl-topo file. */
static cc_status write_nccl_topo(const struct probe_cfg *cfg, struct cc_probe *p, json_t *node,
                                 char *err, size_t errlen)
{
    char path[PROBE_PATH_MAX + 256], why[512] = "";
    expand_host(cfg->nccl_topo, json_string_value(json_object_get(node, "hostname")), path, sizeof path);
    struct out_file o;
    if (out_open(&o, path) != 0) {
        cc_errbuf(err, errlen, "cannot write NCCL topology '%s': %s", path,
                  cc_open_strerror(path, errno));
        return CC_EIO;
    }
    errno = 0;
    cc_status st = cc_probe_nccl_xml(p, node, o.f, why, sizeof why);
    int e = st == CC_OK ? 0 : errno;
    if (out_close(&o, st == CC_OK) != 0 && st == CC_OK) {
        e = errno;
        st = CC_EIO;
    }
    if (st == CC_EIO)
        cc_errbuf(err, errlen, "cannot write NCCL topology '%s': %s", path, strerror(e ? e : EIO));
    else if (st != CC_OK)
        snprintf(err, errlen, "%s", why[0] ? why : cc_status_str(st));
    return st;
}

/* One node's probe, between describing the node and writing its NCCL XML. */
struct node_probe {
    struct cc_probe *p;
    json_t *node;       /* the description, or NULL when the probe failed */
    cc_status st;
    char err[1536];
};

/* Probe this node. With --hwloc-xml the node is named by the file. */
static void probe_node(const struct probe_cfg *cfg, const char *host, struct node_probe *np)
{
    struct cc_probe_opts po = {cfg->hwloc_xml, cfg->sysfs_root, cfg->hwloc_xml ? NULL : host,
                               cfg->no_gpu_libs};
    np->err[0] = 0;
    np->st = cc_probe_open(&np->p, &po, np->err, sizeof np->err);
    if (np->st == CC_OK)
        np->st = cc_probe_node(np->p, &np->node, np->err, sizeof np->err);
}

/* The name %h stands for in this node's --nccl-topo file ("" when the probe failed). */
static const char *node_host(const struct node_probe *np)
{
    const char *h = json_string_value(json_object_get(np->node, "hostname"));
    return h ? h : "";
}

/* Write the node's --nccl-topo file (unless write_xml is 0) and return its JSON text
 * (malloc'd), or that of {"hostname", "error", "status"} when the probe failed. When only
 * the --nccl-topo file could not be written, the node is kept and "nccl_topo_error" says why. */
static char *finish_node(const struct probe_cfg *cfg, const char *host, struct node_probe *np,
                         int write_xml)
{
    cc_status st = np->st;
    json_t *node = np->node;
    char *err = np->err;
    size_t errlen = sizeof np->err;
    if (st == CC_OK && cfg->nccl_topo && write_xml) {
        char xerr[1536];
        cc_status xst = write_nccl_topo(cfg, np->p, node, xerr, sizeof xerr);
        if (xst != CC_OK)
            json_object_set_new(node, "nccl_topo_error",
                                json_pack("{s:o, s:i}", "error", cc_topo_jtext(xerr), "status", (int)xst));
    }
    cc_probe_close(np->p);
    np->p = NULL;
    np->node = NULL;
    char *s = st == CC_OK ? json_dumps(node, JSON_COMPACT) : NULL;
    if (st == CC_OK && !s) {
        st = CC_ENOMEM;
        snprintf(err, errlen, "cannot describe node '%s': out of memory", host);
    }
    json_decref(node);
    if (st != CC_OK) { /* texts made valid UTF-8: a path or host name may be any bytes */
        node = json_pack("{s:o, s:o, s:i}", "hostname", cc_topo_jtext(host), "error",
                         cc_topo_jtext(err[0] ? err : cc_status_str(st)), "status", (int)st);
        s = json_dumps(node, JSON_COMPACT);
        json_decref(node);
    }
    if (!s) { /* still a failure rank 0 hears of */
        char fb[64];
        snprintf(fb, sizeof fb, "{\"error\": \"out of memory\", \"status\": %d}", (int)CC_ENOMEM);
        s = strdup(fb);
    }
    return s;
}

/* Collective: whether two nodes would write one --nccl-topo file, their %h being one name
 * (two machines of one hostname, or one --hwloc-xml export probed on several nodes). `host`
 * is this rank's name for %h ("" when it writes none). Returns 1 with the name in dup, 0, or
 * -1 when the names could not be gathered (then no node writes either). */
static int host_clash(const struct cc_rte *rte, const char *host, char dup[CC_HOST_MAX])
{
    char mine[CC_HOST_MAX] = "";
    char (*all)[CC_HOST_MAX] = calloc((size_t)rte->size, sizeof *all);
    dup[0] = 0;
    if (!all) {
        cc_err("cannot compare node names for --nccl-topo: out of memory");
        cc_rte_abort(rte, 3); /* never leave the others waiting in the collective */
    }
    snprintf(mine, sizeof mine, "%s", host);
    if (cc_rte_allgather(rte, mine, all, sizeof mine) != CC_OK) {
        free(all);
        return -1;
    }
    for (int i = 0; i < rte->size && !dup[0]; i++)
        for (int j = i + 1; all[i][0] && j < rte->size && !dup[0]; j++)
            if (strcmp(all[i], all[j]) == 0)
                memcpy(dup, all[i], CC_HOST_MAX);
    free(all);
    return dup[0] != 0;
}

static int mkdirs(const char *dir)
{
    char buf[PROBE_PATH_MAX + 1];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *s = buf + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* Save the topology to --json, or to <out>/topology-<time>.json (a new name, taken with
 * O_EXCL, then filled). Written whole or not at all (out_open). Returns 0 or -1. */
static int save(const struct probe_cfg *cfg, json_t *topo)
{
    char path[PROBE_PATH_MAX + 64];
    int reserved = 0;
    errno = 0;
    if (cfg->json) {
        snprintf(path, sizeof path, "%s", cfg->json);
    } else {
        char when[32];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
        if (mkdirs(cfg->out) != 0) {
            cc_err("cannot create results directory '%s': %s", cfg->out, strerror(errno));
            return -1;
        }
        /* a new file: two probes in the same second each keep theirs */
        for (int k = 1; k < 100 && !reserved; k++) {
            if (k == 1)
                snprintf(path, sizeof path, "%s/topology-%s.json", cfg->out, when);
            else
                snprintf(path, sizeof path, "%s/topology-%s-%d.json", cfg->out, when, k);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd >= 0) {
                close(fd);
                reserved = 1;
            } else if (errno != EEXIST) {
                break;
            }
        }
        if (!reserved) {
            cc_err("cannot write topology '%s': %s", path, strerror(errno ? errno : EEXIST));
            return -1;
        }
    }
    struct out_file o;
    int bad = out_open(&o, path) != 0, e = bad ? errno : 0;
    if (!bad) {
        errno = 0;
        bad = json_dumpf(topo, o.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
              fputc('\n', o.f) == EOF;
        e = bad ? (errno ? errno : EIO) : 0;
    }
    if (o.f && out_close(&o, !bad) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        if (reserved)
            unlink(path); /* the name taken for this file: nothing of it stays */
        cc_err("cannot write topology '%s': %s", path, cc_open_strerror(path, e));
        return -1;
    }
    cc_info("topology saved to %s", path);
    return 0;
}

/* Rank 0: merge the gathered node texts, save, summarize. Returns the exit code. A node that
 * could not be probed is named in the file's "missing" (with the reason) and makes the exit
 * 3; when no node could be, nothing is saved and the exit is the failure's (2 for a bad
 * --hwloc-xml, else 3). */
static int merge_and_report(const struct probe_cfg *cfg, char **texts, int n)
{
    json_t **nodes = calloc((size_t)n + 1, sizeof *nodes);
    json_t *missing = json_array();
    int got = 0, rc = 0, failed = 0;
    for (int i = 0; nodes && missing && i < n; i++) {
        if (!texts[i] || !texts[i][0])
            continue; /* not a probing rank */
        json_error_t je;
        json_t *o = json_loads(texts[i], 0, &je);
        const char *e = json_string_value(json_object_get(o, "error"));
        if (!o || e) {
            const char *h = json_string_value(json_object_get(o, "hostname"));
            int code = o ? cc_status_exit((cc_status)json_integer_value(json_object_get(o, "status"))) : 3;
            cc_err("cannot probe node '%s': %s", h ? h : "?", e ? e : je.text);
            if (json_array_append_new(missing, json_pack("{s:s, s:s}", "hostname", h ? h : "?",
                                                         "reason", e ? e : je.text)) != 0)
                code = 3; /* out of memory: the file would not say so */
            json_decref(o);
            failed++;
            if (code > rc)
                rc = code;
            continue;
        }
        json_t *x = json_object_get(o, "nccl_topo_error");
        if (x) { /* the node is probed; only its NCCL XML file failed */
            cc_status xs = (cc_status)json_integer_value(json_object_get(x, "status"));
            int code = xs == CC_EIO ? 2 : cc_status_exit(xs); /* an unwritable output: 2 */
            cc_err("%s", json_string_value(json_object_get(x, "error")));
            if (code > rc)
                rc = code;
            json_object_del(o, "nccl_topo_error");
        }
        nodes[got++] = o;
    }
    if (!nodes || !missing || got == 0) {
        if (!nodes || !missing)
            cc_err("cannot merge the node descriptions: out of memory");
        for (int i = 0; nodes && i < got; i++)
            json_decref(nodes[i]);
        free(nodes);
        json_decref(missing);
        return rc ? rc : 3;
    }
    if (failed)
        rc = 3; /* described in part: the file says which nodes are missing */
    json_t *topo = cc_topo_merge(nodes, got, cfg->name);
    if (topo && failed && json_object_set(topo, "missing", missing) != 0) {
        json_decref(topo);
        topo = NULL;
    }
    char err[512];
    if (!topo) {
        cc_err("cannot merge the node descriptions: out of memory");
        rc = 3;
    } else if (cc_topo_validate(topo, "probed", err, sizeof err) != CC_OK) {
        cc_err("%s", err); /* a defect of the probe: say so rather than save a bad file */
        rc = 3;
    } else if (save(cfg, topo) != 0 && rc < 2) {
        rc = 2; /* an output that cannot be written: the environment, as for bench */
    }
    if (topo && !cfg->quiet)
        cc_topo_print_summary(stdout, topo);
    json_decref(topo);
    json_decref(missing);
    for (int i = 0; i < got; i++)
        json_decref(nodes[i]);
    free(nodes);
    return rc;
}

static int show_topology(const struct probe_cfg *cfg, int speak)
{
    json_t *t = NULL;
    char err[1024];
    cc_status st = cc_topo_load(cfg->topology, &t, err, sizeof err);
    if (st != CC_OK) {
        if (speak)
            cc_err("%s", err);
        return 2;
    }
    if (!cfg->quiet && speak)
        cc_topo_print_summary(stdout, t);
    json_decref(t);
    return 0;
}

int cc_cmd_probe(int argc, char **argv)
{
    struct probe_cfg cfg;
    unsigned char given[sizeof probe_opts / sizeof probe_opts[0]] = {0};
    struct cc_opt_result res = {.given = given};
    char err[512];
    struct cc_rte rte;
    int rc;

    res.pos = calloc((size_t)argc + 1, sizeof *res.pos);
    if (!res.pos)
        return 3;
    /* every rank parsed the same arguments: only the first one speaks */
    int speak = cc_rte_launcher_speaks();
    cc_status st = cc_opt_parse(probe_opts, argc - 1, argv + 1, &cfg, &res, err, sizeof err);
    if (res.help) {
        if (speak)
            probe_help(stdout);
        free(res.pos);
        return 0;
    }
    if (st == CC_OK && res.npos) {
        snprintf(err, sizeof err, "unexpected argument '%s' (see ccbench probe --help)", res.pos[0]);
        st = CC_EUSAGE;
    }
    free(res.pos);
    if (st == CC_OK && cfg.topology && (cfg.nccl_topo || cfg.hwloc_xml)) {
        snprintf(err, sizeof err, "--topology reads a file instead of probing: it cannot be "
                 "combined with %s", cfg.nccl_topo ? "--nccl-topo" : "--hwloc-xml");
        st = CC_EUSAGE;
    }
    static const char *const probing_only[] = {"json", "out", "name", "no-gpu-libs",
                                               "sysfs-root"};
    for (size_t i = 0; st == CC_OK && cfg.topology && i < sizeof probing_only / sizeof *probing_only; i++)
        if (given[cc_opt_find(probe_opts, probing_only[i])]) {
            snprintf(err, sizeof err, "--topology reads a file instead of probing: --%s has "
                     "nothing to do then", probing_only[i]);
            st = CC_EUSAGE;
        }
    for (const unsigned char *s = (const unsigned char *)cfg.name; st == CC_OK && s && *s;) {
        size_t n = cc_utf8_len(s); /* the name goes into JSON, which needs UTF-8 */
        if (!n) {
            snprintf(err, sizeof err, "--name is not UTF-8 text (byte %zu is 0x%02x)",
                     (size_t)(s - (const unsigned char *)cfg.name), *s);
            st = CC_EUSAGE;
        }
        s += n;
    }
    for (int i = 0; st == CC_OK && i < 3; i++) {
        static const char *const names[] = {"--nccl-topo", "--json", "--out"};
        const char *v = i == 0 ? cfg.nccl_topo : i == 1 ? cfg.json : cfg.out;
        if (v && !*v) {
            snprintf(err, sizeof err, "%s needs a file name", names[i]);
            st = CC_EUSAGE;
        } else if (v && strlen(v) > PROBE_PATH_MAX - 64) {
            snprintf(err, sizeof err, "%s: a path of %zu characters is longer than %d", names[i],
                     strlen(v), PROBE_PATH_MAX - 64);
            st = CC_EUSAGE;
        }
    }
    if (st != CC_OK) {
        if (speak)
            cc_err("%s", err);
        return 2;
    }
    if (cfg.topology)
        return show_topology(&cfg, speak);

    if (cc_rte_init(&rte, &argc, &argv) != CC_OK) {
        cc_err("could not start MPI");
        return 2;
    }
    if (rte.rank != 0)
        cc_log_set_quiet(cc_log_get_level() < CC_LOG_DEBUG);

    /* one probe per node: the node's first local rank; the NCCL XML files are written once
     * every node is known to have a file of its own */
    struct node_probe np = {0};
    if (rte.local_rank == 0)
        probe_node(&cfg, rte.host, &np);
    /* a node whose --nccl-topo file (%h: its name, known once probed) is the --json file
     * stops every rank before anything is written, said by the first such rank */
    char xml[PROBE_PATH_MAX + 256], same[PROBE_PATH_MAX + PATH_MAX];
    long long same_at = LLONG_MAX;
    if (rte.local_rank == 0 && np.st == CC_OK && cfg.nccl_topo && cfg.json) {
        expand_host(cfg.nccl_topo, node_host(&np), xml, sizeof xml);
        if (same_file(xml, cfg.json, same, sizeof same))
            same_at = rte.rank;
    }
    if (cfg.nccl_topo && cfg.json)
        cc_rte_allreduce_ll(&rte, &same_at, 1, CC_RTE_MIN);
    if (same_at != LLONG_MAX) {
        if (same_at == rte.rank)
            cc_err("--json and --nccl-topo name the same file '%s'", same);
        cc_probe_close(np.p);
        json_decref(np.node);
        cc_rte_fini(&rte);
        return 2;
    }
    char dup[CC_HOST_MAX] = "";
    int clash = cfg.nccl_topo && strstr(cfg.nccl_topo, "%h") ? host_clash(&rte, node_host(&np), dup) : 0;
    char *mine = rte.local_rank == 0 ? finish_node(&cfg, rte.host, &np, clash == 0) : NULL;
    char **all = NULL;
    rc = 0;
    if (clash < 0 && rte.rank == 0)
        cc_err("--nccl-topo '%s': cannot compare the node names: no NCCL topology written",
               cfg.nccl_topo);
    else if (clash && rte.rank == 0)
        cc_err("--nccl-topo '%s': two nodes are named '%s' and would write one file: no NCCL "
               "topology written", cfg.nccl_topo, dup);
    cc_status gs = cc_rte_gather_str(&rte, mine ? mine : "", &all);
    if (gs != CC_OK) { /* every rank has the same status: one says it */
        if (rte.rank == 0)
            cc_err("cannot gather the node descriptions: %s",
                   gs == CC_ETOOBIG ? "more than 2 GiB together" : cc_status_str(gs));
        rc = 3;
    }
    if (rte.rank == 0 && all) {
        rc = merge_and_report(&cfg, all, rte.size);
        if (clash && rc < (clash < 0 ? 3 : 2))
            rc = clash < 0 ? 3 : 2; /* a refused output as one that cannot be written: 2 */
        for (int i = 0; i < rte.size; i++)
            free(all[i]);
        free(all);
    }
    free(mine);
    cc_rte_bcast(&rte, &rc, sizeof rc, 0);
    cc_rte_fini(&rte);
    return rc;
}
