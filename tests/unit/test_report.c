/* Writers: JSON Lines parse back with every field; CSV has one line per measurement with
 * as many fields as the header; the text table carries nccl-tests' columns. */
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
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
    r.slow_host = "h1";
    struct cc_measure m = {.valid = 1, .iters = 10, .time_us = 100, .p50_us = 99, .p99_us = 150,
                           .min_us = 90, .max_us = 160, .ci95_us = 1.5, .algbw = busbw / 1.5,
                           .busbw = busbw, .wrong = 0, .slow_rank = 2, .skew_pct = 3.5, .wall_s = 0.1};
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
    struct cc_summary sum[CC_COLL_COUNT] = {{0}};
    for (int i = 0; i < CC_COLL_COUNT; i++)
        sum[i].wrong = -1;
    for (int i = 0; i < 2; i++)
        cc_summary_add(&sum[CC_ALLREDUCE], &rows[i]);
    is_near(sum[CC_ALLREDUCE].busbw_largest, 3.0, 1e-12, "summary: busbw at the largest size");
    is_near(sum[CC_ALLREDUCE].busbw_mean, 2.0, 1e-12, "summary: plain mean");
    is_near(sum[CC_ALLREDUCE].busbw_weighted, (1.0 * 1024 + 3.0 * 1048576) / (1024 + 1048576), 1e-12,
            "summary: size-weighted mean");
    is_int(sum[CC_ALLREDUCE].wrong, 6, "summary: wrong summed over placements");

    /* JSON Lines */
    FILE *f = tmpfile();
    struct cc_sink s;
    cc_sink_jsonl(&s, f, 0);
    s.begin(s.state, hdr);
    for (int i = 0; i < 2; i++)
        s.row(s.state, &rows[i]);
    s.end(s.state, sum, CC_COLL_COUNT, 0);
    char *text = slurp(f);
    s.close(s.state);
    fclose(f);
    int lines = 0, results = 0, good = 1;
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
            good &= json_is_real(json_object_get(o, "busbw_GBps")) &&
                    json_is_integer(json_object_get(o, "bytes")) &&
                    json_is_integer(json_object_get(o, "iters")) &&
                    json_is_real(json_object_get(o, "p99_us")) &&
                    json_is_integer(json_object_get(o, "slowest_rank"));
        }
        if (type && strcmp(type, "summary") == 0)
            ok(json_integer_value(json_object_get(o, "wrong")) == 6, "summary line carries wrong=6");
        json_decref(o);
    }
    ok(good, "every line is valid JSON with typed fields");
    is_int(results, 4, "one result object per size and placement");
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

    /* text */
    f = tmpfile();
    struct cc_text_opts to = {3};
    cc_sink_text(&s, f, &to);
    s.begin(s.state, hdr);
    s.row(s.state, &rows[1]);
    s.end(s.state, sum, CC_COLL_COUNT, 0);
    text = slurp(f);
    s.close(s.state);
    fclose(f);
    ok(strstr(text, "algbw") && strstr(text, "busbw") && strstr(text, "#wrong") && strstr(text, "p99"),
       "text: nccl-tests columns plus p99");
    ok(strstr(text, "1048576") && strstr(text, "in-place"), "text: size and in-place section");
    ok(strstr(text, "size-weighted mean") != NULL, "text: summary names the weighted mean");
    ok(strstr(text, "CORRUPTION") != NULL, "text: summary flags wrong results");
    free(text);
    json_decref(hdr);
    return tap_done();
}
