/* Writers: JSON Lines parse back with every field; CSV has one line per measurement with
 * as many fields as the header; the text table carries nccl-tests' columns; summaries say
 * why a run stopped; write errors are reported; output files are checked before truncation. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tap.h"
#include "report/outfile.h"
#include "report/report.h"

static struct cc_row make_row(size_t bytes, double busbw)
{
    struct cc_row r = {0};
    r.coll = cc_coll_find("allreduce");
    r.backend = "mpi";
    r.dtype = CC_FLOAT32;
    r.op = CC_SUM;
    r.root = -1;
    r.bytes = bytes;
    r.count = bytes / 4;
    r.nranks = 4;
    struct cc_measure m = {.valid = 1, .iters = 10, .time_us = 100, .p50_us = 99, .p99_us = 150,
                           .min_us = 90, .max_us = 160, .ci95_us = 1.5, .algbw = busbw / 1.5,
                           .busbw = busbw, .wrong = 0, .slow_rank = 2, .skew_pct = 3.5, .wall_s = 0.1,
                           .slow_host = "h1"};
    r.m[CC_OOP] = m;
    r.m[CC_INPLACE] = m;
    r.m[CC_INPLACE].wrong = 3;
    return r;
}

static char *slurp(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n)
        s[0] = 0;
    return s;
}

int main(void)
{
    json_t *hdr = json_pack("{s:s,s:s,s:i,s:i,s:s,s:s}", "command", "bench", "backend", "mpi",
                            "nranks", 4, "nnodes", 1, "datatype", "float32", "op", "sum");
    struct cc_row rows[2] = {make_row(1024, 1.0), make_row(1 << 20, 3.0)};
    rows[0].m[CC_INPLACE].iters = 1; /* one timed iteration: no confidence interval */
    static struct cc_summary sum[CC_SUMMARY_SLOTS];
    for (int i = 0; i < CC_SUMMARY_SLOTS; i++)
        sum[i].wrong = -1;
    int slot = cc_summary_slot(&rows[0]);
    for (int i = 0; i < 2; i++)
        cc_summary_add(&sum[cc_summary_slot(&rows[i])], &rows[i]);
    is_near(sum[slot].busbw_largest, 3.0, 1e-12, "summary: busbw at the largest size");
    is_near(sum[slot].busbw_mean, 2.0, 1e-12, "summary: plain mean");
    is_near(sum[slot].busbw_weighted, (1.0 * 1024 + 3.0 * 1048576) / (1024 + 1048576), 1e-12,
            "summary: size-weighted mean");
    is_int(sum[slot].wrong, 6, "summary: wrong summed over placements");
    {
        /* nccl-tests' "Avg bus bandwidth" averages every placement of every size; a size that
         * is no whole number of K or M is printed as it is; nothing checked reads N/A */
        static struct cc_summary one[CC_SUMMARY_SLOTS];
        for (int i = 0; i < CC_SUMMARY_SLOTS; i++)
            one[i].wrong = -1;
        struct cc_row a = make_row(1536 << 10, 2.0), b = make_row(4096, 1.0);
        a.m[CC_INPLACE].busbw = 4.0;
        a.m[CC_OOP].wrong = a.m[CC_INPLACE].wrong = b.m[CC_OOP].wrong = -1;
        b.m[CC_INPLACE].valid = 0;
        int k = cc_summary_slot(&a);
        cc_summary_add(&one[k], &a);
        cc_summary_add(&one[k], &b);
        is_near(one[k].busbw_mean, (2.0 + 4.0 + 1.0) / 3, 1e-12,
                "summary: plain mean over the placements measured, as nccl-tests");
        char ln[512];
        ok(cc_summary_line(ln, sizeof ln, &one[k]) && strstr(ln, " GB/s at 1.5M,") &&
           strstr(ln, "wrong N/A") && !strstr(ln, "CORRUPTION") && !strstr(ln, "one rank"),
           "summary line: 1.5M, and wrong N/A when nothing was checked: %s", ln);
        /* one rank: busbw is 0 for allreduce, so the line gives algbw at the largest size */
        static struct cc_summary solo[CC_SUMMARY_SLOTS];
        struct cc_row c = make_row(1 << 20, 0.0), d = make_row(1024, 0.0);
        c.nranks = d.nranks = 1;
        c.m[CC_OOP].algbw = 2036.5;
        d.m[CC_OOP].algbw = 7.0;
        cc_summary_add(&solo[k], &c);
        cc_summary_add(&solo[k], &d);
        ok(cc_summary_line(ln, sizeof ln, &solo[k]) &&
           strstr(ln, "busbw    0.000 GB/s at 1M,") &&
           strstr(ln, ", one rank: algbw 2036.500 GB/s at 1M"),
           "summary line, one rank: algbw at the largest size: %s", ln);
    }

    /* other types and operators are summaries of their own, never averaged in */
    struct cc_row r64 = make_row(1 << 20, 7.0), rmax = make_row(1 << 20, 5.0);
    r64.dtype = CC_FLOAT64;
    rmax.op = CC_MAX;
    int s64 = cc_summary_slot(&r64), smax = cc_summary_slot(&rmax);
    ok(s64 != slot && smax != slot && s64 != smax && s64 < CC_SUMMARY_SLOTS &&
       smax < CC_SUMMARY_SLOTS, "summary: one slot per collective, type and operator");
    ok(s64 > slot && smax > slot, "summary: slots in sweep order (type, then operator)");
    static struct cc_summary more[CC_SUMMARY_SLOTS];
    memcpy(more, sum, sizeof more);
    cc_summary_add(&more[s64], &r64);
    cc_summary_add(&more[smax], &rmax);
    is_near(more[slot].busbw_largest, 3.0, 1e-12, "summary: float64 and max leave float32 sum alone");
    char lbuf[512];
    ok(cc_summary_line(lbuf, sizeof lbuf, &more[s64]) && strstr(lbuf, "# allreduce float64 sum") &&
       strstr(lbuf, "busbw    7.000 GB/s at 1M"), "summary line names type and operator: %s", lbuf);
    ok(cc_summary_line(lbuf, sizeof lbuf, &more[slot - 1]) == 0 && lbuf[0] == 0,
       "summary line: nothing for an empty summary");
    struct cc_row rag = make_row(1 << 20, 4.0);
    rag.coll = cc_coll_get(CC_ALLGATHER);
    cc_summary_add(&more[cc_summary_slot(&rag)], &rag);
    ok(cc_summary_line(lbuf, sizeof lbuf, &more[cc_summary_slot(&rag)]) &&
       strstr(lbuf, "# allgather float32 ") && !strstr(lbuf, " sum "),
       "summary line: no operator for a collective without one: %s", lbuf);
    json_t *js = cc_summary_json(&more[cc_summary_slot(&rag)], CC_STOP_NONE);
    ok(json_is_null(json_object_get(js, "op")) &&
       strcmp(json_string_value(json_object_get(js, "datatype")), "float32") == 0,
       "summary JSON: datatype, and op null without an operator");
    json_decref(js);
    js = cc_summary_json(&more[smax], CC_STOP_NONE);
    ok(strcmp(json_string_value(json_object_get(js, "op")), "max") == 0, "summary JSON: op");
    json_decref(js);
    char small[40];
    ok(cc_summary_line(small, sizeof small, &more[slot]) == 0 && small[0] == 0,
       "summary line: never half a line in a small buffer");

    /* each placement names its own slowest rank's host (in-place: rank 3 on h3) */
    rows[1].m[CC_INPLACE].slow_rank = 3;
    rows[1].m[CC_INPLACE].slow_host = "h3";

    /* JSON Lines */
    FILE *f = tmpfile();
    struct cc_sink s;
    cc_sink_jsonl(&s, f, 0);
    s.begin(s.state, hdr);
    for (int i = 0; i < 2; i++)
        s.row(s.state, &rows[i]);
    s.end(s.state, sum, CC_SUMMARY_SLOTS, 0);
    char *text = slurp(f);
    s.close(s.state);
    fclose(f);
    int lines = 0, results = 0, good = 1, ci_null = 0, hosts = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t e;
        json_t *o = json_loads(line, 0, &e);
        lines++;
        if (!o) {
            good = 0;
            continue;
        }
        const char *type = json_string_value(json_object_get(o, "type"));
        if (lines == 1)
            ok(type && strcmp(type, "header") == 0, "first line is the header");
        if (type && strcmp(type, "result") == 0) {
            results++;
            json_t *ci = json_object_get(o, "ci95_us");
            long it = (long)json_integer_value(json_object_get(o, "iters"));
            ci_null += json_is_null(ci);
            good &= (it > 1 ? json_is_real(ci) : json_is_null(ci)) &&
                    json_is_real(json_object_get(o, "busbw_GBps")) &&
                    json_is_integer(json_object_get(o, "bytes")) &&
                    json_is_integer(json_object_get(o, "iters")) &&
                    json_is_real(json_object_get(o, "p99_us")) &&
                    json_is_integer(json_object_get(o, "slowest_rank"));
            long sr = (long)json_integer_value(json_object_get(o, "slowest_rank"));
            const char *sh = json_string_value(json_object_get(o, "slowest_host"));
            hosts += sh && strcmp(sh, sr == 3 ? "h3" : "h1") == 0;
        }
        if (type && strcmp(type, "summary") == 0)
            ok(json_integer_value(json_object_get(o, "wrong")) == 6, "summary line carries wrong=6");
        json_decref(o);
    }
    ok(good, "every line is valid JSON with typed fields");
    is_int(ci_null, 1, "ci95_us is null for the one measurement of a single iteration");
    is_int(results, 4, "one result object per size and placement");
    is_int(hosts, 4, "each result's slowest_host is its own slowest rank's (in-place: h3)");
    is_int(lines, 6, "header + 4 results + 1 summary");
    free(text);

    /* CSV */
    f = tmpfile();
    cc_sink_csv(&s, f, 0);
    s.begin(s.state, hdr);
    for (int i = 0; i < 2; i++)
        s.row(s.state, &rows[i]);
    text = slurp(f);
    s.close(s.state);
    fclose(f);
    ok(strstr(text, "busbw_GBps") && strstr(text, "allreduce,mpi,float32,sum,-1,4,1048576,262144,1"),
       "csv: header names units; row values in order");
    ok(strstr(text, "allreduce,mpi,float32,sum,-1,4,1024,256,1,1,100.000,99.000,150.000,90.000,"
                    "160.000,,") != NULL, "csv: an empty ci95_us after a single iteration");
    ok(strstr(text, "160.000,1.500,") != NULL, "csv: ci95_us otherwise");
    ok(strstr(text, ",3,h3,") && strstr(text, ",2,h1,"), "csv: each placement's slowest rank with its host");
    int nlines = 0, fields0 = -1, same = 1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        int fields = 1;
        for (char *p = line; *p; p++)
            fields += *p == ',';
        if (fields0 < 0)
            fields0 = fields;
        same &= fields == fields0;
        nlines++;
    }
    is_int(nlines, 5, "csv: header + 4 measurements");
    ok(same, "csv: every line has %d fields", fields0);
    free(text);
    /* a host named with a comma and a quote: the field quoted, its quote doubled */
    {
        struct cc_row odd = rows[0];
        odd.m[CC_OOP].slow_host = odd.m[CC_INPLACE].slow_host = "rack,\"7\"";
        f = tmpfile();
        cc_sink_csv(&s, f, 0);
        s.begin(s.state, hdr);
        s.row(s.state, &odd);
        text = slurp(f);
        s.close(s.state);
        fclose(f);
        ok(text && strstr(text, ",\"rack,\"\"7\"\"\",") != NULL,
           "csv: a host name with a comma and a quote is one quoted field");
        free(text);
    }

    /* text */
    f = tmpfile();
    struct cc_text_opts to = {3};
    cc_sink_text(&s, f, &to);
    s.begin(s.state, hdr);
    s.row(s.state, &rows[1]);
    s.end(s.state, sum, CC_SUMMARY_SLOTS, 0);
    text = slurp(f);
    s.close(s.state);
    fclose(f);
    ok(strstr(text, "algbw") && strstr(text, "busbw") && strstr(text, "#wrong") && strstr(text, "p99"),
       "text: nccl-tests columns plus p99");
    ok(strstr(text, "1048576") && strstr(text, "in-place"), "text: size and in-place section");
    ok(strstr(text, "size-weighted mean") != NULL, "text: summary names the weighted mean");
    ok(strstr(text, "CORRUPTION") != NULL, "text: summary flags wrong results");
    free(text);

    /* why a run stopped early: "interrupted" only after a signal, "stopped" says which */
    json_t *o = cc_summary_json(&sum[slot], CC_STOP_ERROR);
    ok(json_is_false(json_object_get(o, "interrupted")) &&
           strcmp(json_string_value(json_object_get(o, "stopped")) ?: "", "error") == 0,
       "summary after a fault: not interrupted, stopped \"error\"");
    json_decref(o);
    o = cc_summary_json(&sum[slot], CC_STOP_TERM);
    ok(json_is_true(json_object_get(o, "interrupted")) &&
           strcmp(json_string_value(json_object_get(o, "stopped")) ?: "", "terminated") == 0,
       "summary after SIGTERM: interrupted, stopped \"terminated\"");
    json_decref(o);
    o = cc_summary_json(&sum[slot], CC_STOP_NONE);
    ok(json_is_false(json_object_get(o, "interrupted")) && json_is_null(json_object_get(o, "stopped")),
       "summary of a complete run: stopped null");
    is_near(json_real_value(json_object_get(o, "algbw_largest_GBps")), 2.0, 1e-12,
            "summary JSON: algbw at the largest size");
    json_decref(o);
    f = tmpfile();
    cc_sink_text(&s, f, &to);
    s.end(s.state, sum, CC_SUMMARY_SLOTS, CC_STOP_ERROR);
    text = slurp(f);
    s.close(s.state);
    fclose(f);
    ok(strstr(text, "# stopped by an error: the summary covers the sizes measured so far") &&
           !strstr(text, "interrupted"),
       "text: a fault is not called an interruption");
    free(text);

    /* a write that fails (a full disk) is reported by every call of every sink */
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        int rc[3];
        cc_sink_jsonl(&s, full, 0);
        errno = 0;
        rc[0] = s.begin(s.state, hdr);
        ok(rc[0] == -1 && errno == ENOSPC, "jsonl: the header write fails with ENOSPC");
        rc[1] = s.row(s.state, &rows[0]);
        rc[2] = s.end(s.state, sum, CC_SUMMARY_SLOTS, CC_STOP_NONE);
        ok(rc[1] == -1 && rc[2] == -1, "jsonl: rows and summaries fail too");
        s.close(s.state);
        clearerr(full);
        cc_sink_csv(&s, full, 0);
        ok(s.begin(s.state, hdr) == -1 && s.row(s.state, &rows[0]) == -1, "csv: writes fail");
        s.close(s.state);
        clearerr(full);
        cc_sink_text(&s, full, &to);
        ok(s.begin(s.state, hdr) == -1 && s.row(s.state, &rows[0]) == -1, "text: writes fail");
        s.close(s.state);
        fclose(full);
    } else {
        for (int i = 0; i < 4; i++)
            ok(1, "# SKIP no /dev/full");
    }

    /* output files: checked together before any is truncated */
    char dir[] = "/tmp/ccb-outfile-XXXXXX", a[256], b[256], err[512];
    if (mkdtemp(dir)) {
        snprintf(a, sizeof a, "%s/keep.jsonl", dir);
        f = fopen(a, "w");
        fputs("earlier results\n", f);
        fclose(f);
        struct cc_outfile out[2] = {{"--json", a, -1, 0, NULL, 0, 0}, {"--csv", "/nonexistent/x.csv", -1, 0, NULL, 0, 0}};
        ok(cc_outfiles_open(out, 2, err, sizeof err) == CC_EUSAGE &&
               strstr(err, "cannot write --csv file '/nonexistent/x.csv'"),
           "an unwritable path is refused: %s", err);
        f = fopen(a, "r");
        char line[64] = "";
        ok(f && fgets(line, sizeof line, f) && strcmp(line, "earlier results\n") == 0,
           "the other, existing file is left as it was");
        if (f)
            fclose(f);
        snprintf(b, sizeof b, "%s/./keep.jsonl", dir);
        out[1].path = b;
        ok(cc_outfiles_open(out, 2, err, sizeof err) == CC_EUSAGE && strstr(err, "are the same file"),
           "two spellings of one file are refused: %s", err);
        snprintf(a, sizeof a, "%s/new.jsonl", dir);
        snprintf(b, sizeof b, "%s/new.csv", dir);
        out[0].path = a;
        out[1].path = b;
        ok(cc_outfiles_open(out, 2, err, sizeof err) == CC_OK, "two new files open");
        cc_outfiles_abandon(out, 2);
        ok(access(a, F_OK) != 0 && access(b, F_OK) != 0, "abandoned before commit: the new files are gone");
        snprintf(a, sizeof a, "%s/keep.jsonl", dir);
        out[0].path = a;
        ok(cc_outfiles_open(out, 2, err, sizeof err) == CC_OK &&
               cc_outfiles_commit(out, 2, err, sizeof err) == CC_OK && out[0].f && out[1].f,
           "commit gives streams");
        fputs("new\n", out[0].f);
        cc_outfiles_abandon(out, 2);
        f = fopen(a, "r");
        ok(f && fgets(line, sizeof line, f) && strcmp(line, "new\n") == 0 && !fgets(line, sizeof line, f),
           "committed: the old content is gone, the new one kept");
        if (f)
            fclose(f);
        ok(access(b, F_OK) == 0, "a committed new file stays");
        unlink(a);
        unlink(b);
        rmdir(dir);
    }
    json_decref(hdr);
    return tap_done();
}
