/* load.c - reading, validating and querying a cluster topology file (docs/topology.md).
 * Validation checks what consumers rely on: types, ranges, matrix shapes and path classes;
 * unknown fields are allowed (descriptions may carry notes). */
#include "topo/topo.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "core/jsonfile.h"
#include "core/log.h"

struct vctx {
    const char *what;
    char *err;
    size_t errlen;
    int failed;
};

static int fail(struct vctx *v, const char *place, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct vctx *v, const char *place, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    if (v->failed++)
        return -1; /* keep the first problem */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cc_errbuf(v->err, v->errlen, "topology '%s': %s: %s", v->what, place, msg);
    return -1;
}

/* Optional member of type `type`; NULL if absent. Complains if present with another type. */
static json_t *opt_member(struct vctx *v, const json_t *o, const char *place, const char *key, json_type type)
{
    json_t *m = json_object_get(o, key);
    static const char *const names[] = {"an object", "an array", "a string", "an integer",
                                        "a number", "true", "false", "null"};
    if (!m)
        return NULL;
    int good = json_typeof(m) == type || (type == JSON_REAL && json_is_number(m)) ||
               (type == JSON_TRUE && json_is_boolean(m));
    if (!good) {
        fail(v, place, "'%s' must be %s", key, type == JSON_TRUE ? "a boolean" : names[type]);
        return NULL;
    }
    return m;
}

static json_t *req_member(struct vctx *v, const json_t *o, const char *place, const char *key, json_type type)
{
    if (!json_object_get(o, key)) {
        fail(v, place, "missing '%s'", key);
        return NULL;
    }
    return opt_member(v, o, place, key, type);
}

static void nonneg(struct vctx *v, const json_t *o, const char *place, const char *key, int integer)
{
    json_t *m = opt_member(v, o, place, key, integer ? JSON_INTEGER : JSON_REAL);
    if (m && json_number_value(m) < 0 && !(integer && json_integer_value(m) == -1))
        fail(v, place, "'%s' must be >= 0, not %g", key, json_number_value(m));
}

int cc_topo_class_rank(const char *cls)
{
    static const char *const c[] = {"X", "NVL", "PIX", "PXB", "PHB", "SYS", NULL};
    for (int i = 0; cls && c[i]; i++)
        if (!strcmp(cls, c[i]))
            return i;
    return -1;
}

static int is_class(const char *s)
{
    return cc_topo_class_rank(s) >= 0;
}

static void check_matrix(struct vctx *v, const json_t *m, const char *place, size_t rows, size_t cols)
{
    char where[160];
    if (!json_is_array(m)) {
        fail(v, place, "must be an array of %zu rows", rows);
        return;
    }
    if (json_array_size(m) != rows) {
        fail(v, place, "has %zu rows for %zu GPUs", json_array_size(m), rows);
        return;
    }
    for (size_t r = 0; r < rows; r++) {
        json_t *row = json_array_get(m, r);
        snprintf(where, sizeof where, "%s[%zu]", place, r);
        if (!json_is_array(row) || json_array_size(row) != cols) {
            fail(v, where, "must be an array of %zu path classes", cols);
            return;
        }
        for (size_t c = 0; c < cols; c++) {
            const char *s = json_string_value(json_array_get(row, c));
            if (!s || !is_class(s)) {
                snprintf(where, sizeof where, "%s[%zu][%zu]", place, r, c);
                fail(v, where, "'%s' is not a path class (X, NVL, PIX, PXB, PHB, SYS)", s ? s : "?");
                return;
            }
        }
    }
}

/* A GPU's "pcie" and "nvlink": counts that are integers, -1 when unknown. */
static void check_gpu_links(struct vctx *v, const json_t *g, const char *place)
{
    static const char *const pcie_keys[] = {"gen", "width", "max_gen", "max_width"};
    char sub[200];
    json_t *pcie = opt_member(v, g, place, "pcie", JSON_OBJECT);
    snprintf(sub, sizeof sub, "%s.pcie", place);
    for (size_t k = 0; pcie && k < sizeof pcie_keys / sizeof pcie_keys[0]; k++)
        nonneg(v, pcie, sub, pcie_keys[k], 1);
    json_t *nv = opt_member(v, g, place, "nvlink", JSON_OBJECT);
    if (!nv)
        return;
    snprintf(sub, sizeof sub, "%s.nvlink", place);
    nonneg(v, nv, sub, "links", 1);
    nonneg(v, nv, sub, "up", 1);
    const json_t *links = json_object_get(nv, "links"), *up = json_object_get(nv, "up");
    if (json_is_integer(links) && json_is_integer(up) && json_integer_value(links) >= 0 &&
        json_integer_value(up) > json_integer_value(links))
        fail(v, sub, "'up' (%lld) is more than 'links' (%lld)", (long long)json_integer_value(up),
             (long long)json_integer_value(links));
    json_t *peers = opt_member(v, nv, sub, "peers", JSON_ARRAY);
    size_t i;
    json_t *pr;
    json_array_foreach(peers, i, pr) {
        char ps[240];
        snprintf(ps, sizeof ps, "%s.peers[%zu]", sub, i);
        if (!json_is_object(pr)) {
            fail(v, ps, "must be an object");
            continue;
        }
        opt_member(v, pr, ps, "target", JSON_STRING);
        nonneg(v, pr, ps, "count", 1);
        const char *kind = json_string_value(opt_member(v, pr, ps, "kind", JSON_STRING));
        if (kind && strcmp(kind, "gpu") && strcmp(kind, "nvswitch") && strcmp(kind, "unknown"))
            fail(v, ps, "'kind' must be gpu, nvswitch or unknown, not '%s'", kind);
    }
}

static void check_node(struct vctx *v, const json_t *n, size_t ni)
{
    char place[128], sub[160];
    snprintf(place, sizeof place, "nodes[%zu]", ni);
    if (!json_is_object(n)) {
        fail(v, place, "must be an object");
        return;
    }
    req_member(v, n, place, "hostname", JSON_STRING);
    json_t *count = opt_member(v, n, place, "count", JSON_INTEGER);
    if (count && (json_integer_value(count) < 1 || json_integer_value(count) > 1000000))
        fail(v, place, "'count' must be from 1 to 1000000, not %lld",
             (long long)json_integer_value(count));
    json_t *cpu = opt_member(v, n, place, "cpu", JSON_OBJECT);
    if (cpu) {
        snprintf(sub, sizeof sub, "%s.cpu", place);
        nonneg(v, cpu, sub, "sockets", 1);
        nonneg(v, cpu, sub, "cores", 1);
        nonneg(v, cpu, sub, "pus", 1);
    }
    nonneg(v, n, place, "memory_bytes", 1);
    opt_member(v, n, place, "numa", JSON_ARRAY);
    json_t *gpus = req_member(v, n, place, "gpus", JSON_ARRAY);
    json_t *nics = opt_member(v, n, place, "nics", JSON_ARRAY);
    size_t i;
    json_t *x;
    json_array_foreach(gpus, i, x) {
        snprintf(sub, sizeof sub, "%s.gpus[%zu]", place, i);
        if (!json_is_object(x)) {
            fail(v, sub, "must be an object");
            continue;
        }
        opt_member(v, x, sub, "model", JSON_STRING);
        opt_member(v, x, sub, "pci_bus_id", JSON_STRING);
        nonneg(v, x, sub, "memory_bytes", 1);
        json_t *gm = json_object_get(x, "memory_bytes");
        if (json_is_integer(gm) && json_integer_value(gm) > (json_int_t)1e15)
            fail(v, sub, "'memory_bytes' %lld is more than a GPU has (1e15)",
                 (long long)json_integer_value(gm));
        nonneg(v, x, sub, "numa", 1);
        nonneg(v, x, sub, "sm", 1);
        check_gpu_links(v, x, sub);
    }
    json_array_foreach(nics, i, x) {
        snprintf(sub, sizeof sub, "%s.nics[%zu]", place, i);
        if (!json_is_object(x)) {
            fail(v, sub, "must be an object");
            continue;
        }
        req_member(v, x, sub, "name", JSON_STRING);
        const char *kind = json_string_value(opt_member(v, x, sub, "kind", JSON_STRING));
        if (kind && strcmp(kind, "ib") && strcmp(kind, "roce") && strcmp(kind, "eth"))
            fail(v, sub, "'kind' must be ib, roce or eth, not '%s'", kind);
        nonneg(v, x, sub, "rate_gbps", 0);
        nonneg(v, x, sub, "numa", 1);
        json_t *ports = opt_member(v, x, sub, "ports", JSON_ARRAY);
        size_t j;
        json_t *pt;
        json_array_foreach(ports, j, pt) {
            char ps[200];
            snprintf(ps, sizeof ps, "%s.ports[%zu]", sub, j);
            if (!json_is_object(pt))
                fail(v, ps, "must be an object");
            else
                nonneg(v, pt, ps, "rate_gbps", 0);
        }
    }
    json_t *paths = opt_member(v, n, place, "paths", JSON_OBJECT);
    if (paths && !v->failed) {
        size_t ng = json_array_size(gpus), nn = json_array_size(nics);
        json_t *m;
        if ((m = json_object_get(paths, "gpu_gpu"))) {
            snprintf(sub, sizeof sub, "%s.paths.gpu_gpu", place);
            check_matrix(v, m, sub, ng, ng);
        }
        if ((m = json_object_get(paths, "gpu_nic"))) {
            snprintf(sub, sizeof sub, "%s.paths.gpu_nic", place);
            check_matrix(v, m, sub, ng, nn);
        }
    }
    json_t *exp = opt_member(v, n, place, "expected", JSON_OBJECT);
    if (exp) {
        const char *k;
        json_t *val;
        snprintf(sub, sizeof sub, "%s.expected", place);
        json_object_foreach(exp, k, val) {
            if (json_is_number(val))
                nonneg(v, exp, sub, k, 0);
        }
    }
}

cc_status cc_topo_validate(const json_t *topo, const char *what, char *err, size_t errlen)
{
    struct vctx v = {what, err, errlen, 0};
    if (!json_is_object(topo)) {
        fail(&v, "top level", "must be an object");
        return CC_EPARSE;
    }
    const char *schema = json_string_value(req_member(&v, topo, "top level", "schema", JSON_STRING));
    if (schema && strcmp(schema, CC_TOPO_SCHEMA) != 0)
        fail(&v, "schema", "'%s' is not '%s'", schema, CC_TOPO_SCHEMA);
    json_t *nodes = req_member(&v, topo, "top level", "nodes", JSON_ARRAY);
    if (nodes && json_array_size(nodes) == 0)
        fail(&v, "nodes", "must list at least one node");
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) check_node(&v, n, i);
    json_t *miss = opt_member(&v, topo, "top level", "missing", JSON_ARRAY);
    json_array_foreach(miss, i, n) {
        char place[48];
        snprintf(place, sizeof place, "missing[%zu]", i);
        if (!json_is_object(n)) {
            fail(&v, place, "must be an object");
            continue;
        }
        req_member(&v, n, place, "hostname", JSON_STRING);
        opt_member(&v, n, place, "reason", JSON_STRING);
    }
    json_t *fab = opt_member(&v, topo, "top level", "fabric", JSON_OBJECT);
    if (fab) {
        const char *fk = json_string_value(opt_member(&v, fab, "fabric", "kind", JSON_STRING));
        if (fk && strcmp(fk, "infiniband") && strcmp(fk, "roce") && strcmp(fk, "ethernet") &&
            strcmp(fk, "none"))
            fail(&v, "fabric", "'kind' must be infiniband, roce, ethernet or none, not '%s'", fk);
        json_t *fn = json_object_get(fab, "nics_per_node");
        if (fk && strcmp(fk, "none") == 0 && json_is_integer(fn) && json_integer_value(fn) > 0)
            fail(&v, "fabric", "'kind' none with %lld NICs per node",
                 (long long)json_integer_value(fn));
        nonneg(&v, fab, "fabric", "nics_per_node", 1);
        nonneg(&v, fab, "fabric", "rate_gbps_per_nic", 0);
        nonneg(&v, fab, "fabric", "inter_allreduce_busbw_GBps", 0);
    }
    return v.failed ? CC_EPARSE : CC_OK;
}

cc_status cc_topo_load(const char *path, json_t **out, char *err, size_t errlen)
{
    json_t *t;
    *out = NULL;
    cc_status st = cc_json_read_file(path, "topology", &t, err, errlen);
    if (st != CC_OK)
        return st;
    st = cc_topo_validate(t, path, err, errlen);
    if (st != CC_OK) {
        json_decref(t);
        return st;
    }
    *out = t;
    return CC_OK;
}

/* ---- accessors -------------------------------------------------------------------------- */

int cc_topo_node_types(const json_t *topo)
{
    return (int)json_array_size(json_object_get(topo, "nodes"));
}

int cc_topo_missing(const json_t *topo)
{
    size_t n = json_array_size(json_object_get(topo, "missing"));
    return n > INT_MAX ? INT_MAX : (int)n;
}

const json_t *cc_topo_node(const json_t *topo, int i)
{
    return i < 0 ? NULL : json_array_get(json_object_get(topo, "nodes"), (size_t)i);
}

int cc_topo_node_count(const json_t *topo)
{
    long long total = 0; /* validated counts are at most a million each */
    for (int i = 0; i < cc_topo_node_types(topo); i++) {
        json_t *c = json_object_get(cc_topo_node(topo, i), "count");
        total += c ? (long long)json_integer_value(c) : 1;
        if (total > INT_MAX)
            return INT_MAX;
    }
    return (int)total;
}

int cc_topo_gpus_per_node(const json_t *topo, int i)
{
    return (int)json_array_size(json_object_get(cc_topo_node(topo, i), "gpus"));
}

int cc_topo_nics_per_node(const json_t *topo, int i)
{
    return (int)json_array_size(json_object_get(cc_topo_node(topo, i), "nics"));
}

long long cc_topo_gpu_memory(const json_t *topo, int i)
{
    long long min = 0;
    size_t k;
    json_t *g;
    json_array_foreach(json_object_get(cc_topo_node(topo, i), "gpus"), k, g) {
        long long m = (long long)json_integer_value(json_object_get(g, "memory_bytes"));
        if (m > 0 && (min == 0 || m < min))
            min = m;
    }
    return min;
}

double cc_topo_expected(const json_t *topo, int i, const char *key)
{
    json_t *v = json_object_get(json_object_get(cc_topo_node(topo, i), "expected"), key);
    return json_is_number(v) ? json_number_value(v) : -1;
}

double cc_topo_fabric(const json_t *topo, const char *key)
{
    json_t *v = json_object_get(json_object_get(topo, "fabric"), key);
    return json_is_number(v) ? json_number_value(v) : -1;
}

const char *cc_topo_path(const json_t *topo, int i, const char *matrix, int a, int b)
{
    json_t *m = json_object_get(json_object_get(cc_topo_node(topo, i), "paths"), matrix);
    if (a < 0 || b < 0)
        return NULL;
    return json_string_value(json_array_get(json_array_get(m, (size_t)a), (size_t)b));
}

int cc_topo_nearest_nic(const json_t *topo, int i, int gpu)
{
    /* by path class; among equals a NIC with a port up before one without, RDMA before
     * Ethernet (a management port or a storage NIC that is down is no GPU's nearest) */
    int best = -1, best_key = INT_MAX;
    const json_t *nics = json_object_get(cc_topo_node(topo, i), "nics");
    for (int n = 0; n < cc_topo_nics_per_node(topo, i); n++) {
        int r = cc_topo_class_rank(cc_topo_path(topo, i, "gpu_nic", gpu, n));
        const json_t *nic = json_array_get(nics, (size_t)n);
        const char *kind = json_string_value(json_object_get(nic, "kind"));
        int key = r * 4 + (cc_topo_nic_up(nic) ? 0 : 2) + (kind && !strcmp(kind, "eth"));
        if (r >= 0 && key < best_key) {
            best = n;
            best_key = key;
        }
    }
    return best;
}
