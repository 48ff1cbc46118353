/* `ccbench gpu`: copy bandwidth of the GPUs of this node (no MPI): host<->device, within
 * each device, and the peer-to-peer matrix, by copy engine and by kernel. The engine is
 * gpu/copybw.h; this file parses options and prints. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/size.h"
#include "gpu/copybw.h"
#include "report/outfile.h"
#include "report/report.h"

struct gpu_cfg {
    size_t bytes;
    int iters, reps, warmup, engine, list;
    const char *tests, *devices, *json;
    double expect_d2d;
};

static const char *const engines[] = {"both", "ce", "sm", NULL};

#define F(x) offsetof(struct gpu_cfg, x)
static const struct cc_opt gpu_opts[] = {
    {"size", 'b', CC_OPT_SIZE, F(bytes), "256M", "SIZE", "bytes per copy (per direction), multiple of 16"},
    {"iters", 'n', CC_OPT_INT, F(iters), "10", "N", "back-to-back copies per timed repetition", NULL, CC_OPT_RANGE, 1, 1e6},
    {"reps", 'r', CC_OPT_INT, F(reps), "5", "N", "timed repetitions (median, min and max reported)", NULL, CC_OPT_RANGE, 1, 1000},
    {"warmup", 'w', CC_OPT_INT, F(warmup), "2", "N", "untimed copies before each figure", NULL, CC_OPT_RANGE, 0, 1000},
    {"tests", 't', CC_OPT_STR, F(tests), "all", "LIST", "h2d,d2h,h-bidir,d2d,p2p-write,p2p-read,p2p-bidir; groups host, p2p, all"},
    {"engine", 'E', CC_OPT_CHOICE, F(engine), "both", NULL, "ce: copy engines (cudaMemcpyAsync), sm: copy kernel", engines},
    {"devices", 'D', CC_OPT_STR, F(devices), NULL, "LIST", "GPU indices to use, e.g. 0,1 (default: all visible)"},
    {"json", 0, CC_OPT_STR, F(json), NULL, "FILE", "write JSON Lines (header, one object per figure)"},
    {"expect-d2d", 0, CC_OPT_DOUBLE, F(expect_d2d), "0", "GBPS", "print each GPU's device-local copy as a ratio of GBPS (memory traffic, read+write)", NULL, CC_OPT_RANGE, 0, 1e6},
    {"list", 'l', CC_OPT_FLAG, F(list), NULL, NULL, "list the GPUs and exit"},
    CC_OPT_END,
};
#undef F

static void gpu_help(FILE *o)
{
    fprintf(o, "usage: ccbench gpu [options]\n\n"
               "Copy bandwidth of this node's GPUs, by copy engine (ce) and by kernel (sm):\n"
               "host->device, device->host, both at once, within each device, and between every\n"
               "pair of GPUs (write: issued by the source, read: issued by the destination, and\n"
               "both directions at once). GB/s are 1e9 bytes per second of bytes copied; the\n"
               "device-local line also shows the memory traffic (read + write, twice the copy).\n"
               "\noptions:\n");
    cc_opt_help(o, gpu_opts);
    fprintf(o, "\nExit status: 0 ok, 1 a copy produced wrong data, 2 bad option, no GPU/driver or\n"
               "a --json file that cannot be written, 3 CUDA failure.\n");
}

static cc_status parse_tests(const char *text, unsigned *mask, char *err, size_t errlen)
{
    const char *p = text;
    char w[64];
    int more;
    *mask = 0;
    while ((more = cc_list_next(&p, "copy test", text, w, sizeof w, err, errlen)) > 0) {
        int i = cc_choice_index(cc_copy_test_names, w);
        if (i >= 0)
            *mask |= 1u << i;
        else if (strcmp(w, "host") == 0)
            *mask |= 1u << CC_COPY_H2D | 1u << CC_COPY_D2H | 1u << CC_COPY_HBIDIR;
        else if (strcmp(w, "p2p") == 0)
            *mask |= 1u << CC_COPY_P2P_WRITE | 1u << CC_COPY_P2P_READ | 1u << CC_COPY_P2P_BIDIR;
        else if (strcmp(w, "all") == 0)
            *mask |= (1u << CC_COPY_TEST_COUNT) - 1;
        else {
            cc_errbuf(err, errlen, "unknown copy test '%s' (h2d, d2h, h-bidir, d2d, p2p-write, "
                      "p2p-read, p2p-bidir, host, p2p, all)", w);
            return CC_EUSAGE;
        }
    }
    if (more < 0)
        return CC_EUSAGE;
    if (!*mask) {
        cc_errbuf(err, errlen, "no copy test selected");
        return CC_EUSAGE;
    }
    return CC_OK;
}

static cc_status parse_devices(const char *text, int **devs, int *n, char *err, size_t errlen)
{
    *devs = NULL;
    *n = 0;
    if (!text)
        return CC_OK;
    int *d = calloc(strlen(text) + 1, sizeof *d);
    if (!d)
        return CC_ENOMEM;
    for (const char *s = text;;) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 1023 || errno || (*end && *end != ',')) {
            cc_errbuf(err, errlen, "bad GPU list '%s' (comma-separated indices like 0,1)", text);
            free(d);
            return CC_EUSAGE;
        }
        for (int i = 0; i < *n; i++)
            if (d[i] == (int)v) {
                cc_errbuf(err, errlen, "GPU %ld listed twice in '%s'", v, text);
                free(d);
                return CC_EUSAGE;
            }
        d[(*n)++] = (int)v;
        if (!*end)
            break;
        s = end + 1;
    }
    *devs = d;
    return CC_OK;
}

/* results kept for the matrices and the d2d ratio */
struct out {
    FILE *json;
    const char *json_path;
    int json_bad; /* a write to --json failed (and was said): no more JSON, exit 2 */
    int json_borrowed; /* json is stdout or stderr: flushed, not closed */
    struct cc_copy_result *res;
    size_t n, cap;
    int ndev_max;
};

/* Write one JSON Lines object to --json, flushed so that a run cut short keeps its figures;
 * the first failure is said, naming the file, and ends the JSON output. */
static void json_line(struct out *o, json_t *j)
{
    if (!o->json || o->json_bad)
        return;
    errno = 0;
    if (json_dumpf(j, o->json, JSON_COMPACT) != 0 || fputc('\n', o->json) == EOF ||
        cc_report_flush(o->json) != 0) {
        cc_err("cannot write '%s': %s", o->json_path, strerror(errno ? errno : EIO));
        o->json_bad = 1;
    }
}

static void fmt_dev(int d, char *buf, size_t len)
{
    if (d < 0)
        snprintf(buf, len, "host");
    else
        snprintf(buf, len, "gpu%d", d);
}

static void on_result(const struct cc_copy_result *r, void *user)
{
    struct out *o = user;
    char s[16], d[16];
    fmt_dev(r->src, s, sizeof s);
    fmt_dev(r->dst, d, sizeof d);
    if (r->na)
        printf("%-10s %-3s %-5s %-5s %12s  n/a: %s\n", cc_copy_test_names[r->test],
               cc_copy_engine_names[r->engine], s, d, "", r->na);
    else
    {
        char note[64] = "";
        if (r->test == CC_COPY_D2D)
            snprintf(note, sizeof note, "  memory traffic %.1f GB/s", 2 * r->gbps_med);
        else if (r->test >= CC_COPY_P2P_WRITE && !r->peer)
            snprintf(note, sizeof note, "  no peer access: staged by the driver");
        else if (r->test >= CC_COPY_P2P_WRITE && r->peer == 2)
            snprintf(note, sizeof note, "  peer access one way: the other staged");
        printf("%-10s %-3s %-5s %-5s %12.1f %10.1f %10.1f%s\n", cc_copy_test_names[r->test],
               cc_copy_engine_names[r->engine], s, d, r->gbps_med, r->gbps_min, r->gbps_max, note);
    }
    fflush(stdout);
    if (o->json) {
        json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:i, s:I, s:f, s:f, s:f}", "type", "gpu_copy",
                              "test", cc_copy_test_names[r->test], "engine",
                              cc_copy_engine_names[r->engine], "src", r->src, "dst", r->dst,
                              "bytes", (json_int_t)r->bytes, "GBps_median", r->gbps_med,
                              "GBps_min", r->gbps_min, "GBps_max", r->gbps_max);
        if (r->test >= CC_COPY_P2P_WRITE) {
            json_object_set_new(j, "peer_access", json_boolean(r->peer == 1));
            if (r->peer == 2)
                json_object_set_new(j, "peer_access_one_way", json_true());
        }
        if (r->test <= CC_COPY_HBIDIR)
            json_object_set_new(j, "host_numa", r->host_numa >= 0 ? json_integer(r->host_numa)
                                                                   : json_null());
        if (r->na)
            json_object_set_new(j, "na", json_string(r->na));
        json_line(o, j);
        json_decref(j);
    }
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 64;
        struct cc_copy_result *nr = realloc(o->res, nc * sizeof *nr);
        if (!nr)
            return;
        o->res = nr;
        o->cap = nc;
    }
    o->res[o->n++] = *r;
    if (r->src >= o->ndev_max)
        o->ndev_max = r->src + 1;
    if (r->dst >= o->ndev_max)
        o->ndev_max = r->dst + 1;
}

/* Print each peer-to-peer figure as a src x dst matrix of median GB/s. */
static void print_matrices(const struct out *o)
{
    int n = o->ndev_max;
    for (int t = CC_COPY_P2P_WRITE; t < CC_COPY_TEST_COUNT; t++)
        for (int e = 0; e < CC_ENGINE_COUNT; e++) {
            int any = 0;
            for (size_t k = 0; k < o->n; k++)
                any |= o->res[k].test == (enum cc_copy_test)t && o->res[k].engine == (enum cc_copy_engine)e;
            if (!any)
                continue;
            printf("\n# %s %s matrix, median GB/s (row: source GPU, column: destination GPU)\n",
                   cc_copy_test_names[t], cc_copy_engine_names[e]);
            printf("%6s", "");
            for (int j = 0; j < n; j++)
                printf(" %9d", j);
            printf("\n");
            for (int i = 0; i < n; i++) {
                printf("%6d", i);
                for (int j = 0; j < n; j++) {
                    const struct cc_copy_result *hit = NULL;
                    for (size_t k = 0; k < o->n; k++) {
                        const struct cc_copy_result *r = &o->res[k];
                        if (r->test == (enum cc_copy_test)t && r->engine == (enum cc_copy_engine)e &&
                            ((r->src == i && r->dst == j) ||
                             (t == CC_COPY_P2P_BIDIR && r->src == j && r->dst == i)))
                            hit = r;
                    }
                    if (!hit)
                        printf(" %9s", "-");
                    else if (hit->na)
                        printf(" %9s", "n/a");
                    else
                        printf(" %9.1f", hit->gbps_med);
                }
                printf("\n");
            }
        }
}

static void print_ratio(const struct out *o, double ref)
{
    for (int g = 0; g < o->ndev_max; g++) {
        const struct cc_copy_result *best = NULL;
        for (size_t k = 0; k < o->n; k++)
            if (o->res[k].test == CC_COPY_D2D && o->res[k].src == g && !o->res[k].na &&
                (!best || o->res[k].gbps_med > best->gbps_med))
                best = &o->res[k];
        if (best)
            printf("# d2d ratio gpu%d: %.1f GB/s memory traffic (%s copy of %.1f GB/s) = %.1f%% "
                   "of %.0f GB/s\n", g, 2 * best->gbps_med, cc_copy_engine_names[best->engine],
                   best->gbps_med, 200 * best->gbps_med / ref, ref);
    }
}

int cc_cmd_gpu(int argc, char **argv)
{
    struct gpu_cfg cfg;
    struct cc_opt_result res = {0};
    char err[1024], host[256] = "?";
    struct cc_copy_params p = {0};
    struct cc_gpu_info *info = NULL;
    struct out o = {0};
    int *devs = NULL, ndev = 0, ngpu = 0, rc = 0;
    cc_status st;

    res.pos = calloc((size_t)argc + 1, sizeof *res.pos);
    if (!res.pos)
        return 3;
    st = cc_opt_parse(gpu_opts, argc - 1, argv + 1, &cfg, &res, err, sizeof err);
    if (res.help) {
        gpu_help(stdout);
        free(res.pos);
        return 0;
    }
    if (st == CC_OK && res.npos) {
        snprintf(err, sizeof err, "unexpected argument '%s' (see ccbench gpu --help)", res.pos[0]);
        st = CC_EUSAGE;
    }
    free(res.pos);
    if (st == CC_OK)
        st = parse_tests(cfg.tests, &p.tests, err, sizeof err);
    if (st == CC_OK)
        st = parse_devices(cfg.devices, &devs, &ndev, err, sizeof err);
    if (st == CC_OK && (cfg.bytes < 16 || cfg.bytes % 16)) {
        snprintf(err, sizeof err, "--size %zu must be a positive multiple of 16 bytes", cfg.bytes);
        st = CC_EUSAGE;
    }
    if (st == CC_OK)
        st = cc_gpu_list(&info, &ngpu, err, sizeof err);
    for (int i = 0; st == CC_OK && i < ndev; i++) /* before --json is opened (truncated) */
        if (devs[i] >= ngpu) {
            snprintf(err, sizeof err, "GPU %d does not exist (%d visible)", devs[i], ngpu);
            st = CC_EUSAGE;
        }
    /* peer-to-peer copies need two GPUs: asked for alone, a clear error; among others, said */
    unsigned p2p = 1u << CC_COPY_P2P_WRITE | 1u << CC_COPY_P2P_READ | 1u << CC_COPY_P2P_BIDIR;
    int nsel = ndev ? ndev : ngpu;
    if (st == CC_OK && !cfg.list && nsel < 2 && (p.tests & p2p)) {
        if (!(p.tests & ~p2p)) {
            snprintf(err, sizeof err, "the peer-to-peer tests need two GPUs; %d %s", nsel,
                     ndev ? "selected by --devices" : "visible");
            st = CC_EUSAGE;
        } else {
            cc_warn("peer-to-peer tests left out: %d GPU %s", nsel,
                    ndev ? "selected by --devices" : "visible");
            p.tests &= ~p2p;
        }
    }
    if (st != CC_OK) {
        cc_err("%s", err);
        free(devs);
        free(info);
        return cc_status_exit(st);
    }
    /* copies no larger than the L2, back to back over the same buffers, are timed partly
     * from the cache: their device figures are no memory rates */
    unsigned devcopies = p2p | 1u << CC_COPY_D2D;
    for (int i = 0; !cfg.list && (p.tests & devcopies) && i < nsel; i++) {
        const struct cc_gpu_info *g = &info[ndev ? devs[i] : i];
        if (g->l2_bytes > 0 && cfg.bytes <= (size_t)g->l2_bytes) {
            char sz[32], l2[32];
            cc_size_format(cfg.bytes, sz, sizeof sz);
            cc_size_format((size_t)g->l2_bytes, l2, sizeof l2);
            cc_warn("--size %s is no larger than gpu%d's %s of L2: copies of the same buffers "
                    "are timed partly from the cache (use several times the L2)", sz, g->index,
                    l2);
            break; /* said once */
        }
    }
    gethostname(host, sizeof host - 1);
    char rt[32], drv[32];
    cc_gpu_versions(rt, drv, sizeof rt);
    printf("# ccbench %s gpu on %s: CUDA runtime %s, driver supports CUDA %s\n", PACKAGE_VERSION,
           host, rt, drv);
    for (int i = 0; i < ngpu; i++)
        printf("# gpu%d: %s, PCI %s, %d SMs\n", i, info[i].name, info[i].busid, info[i].sms);
    if (cfg.list)
        goto out;

    p.bytes = cfg.bytes;
    p.iters = cfg.iters;
    p.reps = cfg.reps;
    p.warmup = cfg.warmup;
    p.engines = cfg.engine == 0 ? 3u : 1u << (cfg.engine - 1);
    p.devs = devs;
    p.ndevs = ndev;
    if (cfg.json) {
        o.json_path = cfg.json;
        /* the file stdout or stderr writes to (`> run.txt --json run.txt`): through them */
        FILE *twin = cc_std_twin(cfg.json);
        o.json_borrowed = twin != NULL;
        if (!(o.json = twin ? twin : cc_fopen_write(cfg.json))) {
            cc_err("cannot write --json file '%s': %s", cfg.json,
                   cc_open_strerror(cfg.json, errno));
            rc = 2;
            goto out;
        }
        json_t *h = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:i, s:i, s:i}", "type", "header",
                              "command", "gpu", "host", host, "cuda_runtime", rt, "cuda_driver",
                              drv, "bytes", (json_int_t)p.bytes, "iters", p.iters, "reps", p.reps,
                              "warmup", p.warmup);
        json_t *g = json_array();
        for (int i = 0; i < ngpu; i++)
            json_array_append_new(g, json_pack("{s:i, s:s, s:s, s:i}", "index", i, "name",
                                               info[i].name, "pci_bus_id", info[i].busid, "sms",
                                               info[i].sms));
        json_object_set_new(h, "gpus", g);
        char ts[64];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_set_new(h, "start_time", json_string(ts));
        json_line(&o, h);
        json_decref(h);
        if (o.json_bad) /* said; measuring for a file that cannot take the figures is moot */
            goto out;
    }
    char sz[32];
    printf("# %s per copy, %d copies per repetition, %d repetitions; GB/s = 1e9 bytes/s of bytes "
           "copied (both directions summed for bidir)\n",
           cc_size_format(p.bytes, sz, sizeof sz), p.iters, p.reps);
    printf("%-10s %-3s %-5s %-5s %12s %10s %10s\n", "# test", "eng", "src", "dst", "GB/s(med)",
           "min", "max");
    st = cc_copy_run(&p, on_result, &o, err, sizeof err);
    print_matrices(&o);
    if (cfg.expect_d2d > 0)
        print_ratio(&o, cfg.expect_d2d);
    if (st != CC_OK) {
        cc_err("%s", err);
        rc = cc_status_exit(st);
    }
out:
    errno = 0;
    if (o.json && (o.json_borrowed ? fflush(o.json) : fclose(o.json)) != 0 && !o.json_bad) {
        cc_err("cannot write '%s': %s", cfg.json, strerror(errno ? errno : EIO));
        o.json_bad = 1;
    }
    if (o.json_bad)
        rc = rc ? rc : 2; /* an output that cannot be written: 2, as for bench */
    free(o.res);
    free(info);
    free(devs);
    return rc;
}
