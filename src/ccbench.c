/* ccbench - measure collective communication, judge it, turn it into configuration.
 * This file holds only the subcommand table and dispatch; see src/cmd/. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/log.h"
#include "core/text.h"
#include "report/report.h"

const struct cc_cmd cc_cmds[] = {
    {"bench", "measure collectives over a size sweep (run under mpirun)", cc_cmd_bench},
    {"probe", "read every node's topology with hwloc and merge the cluster view", cc_cmd_probe},
    {"layout", "rank data/tensor/pipeline-parallel layouts by estimated step time", cc_cmd_layout},
    {"gpu", "GPU copy bandwidth: host<->device, device<->device, peer-to-peer matrix", cc_cmd_gpu},
    {"backends", "list transports: built in, and usable on this machine (with the reason)", cc_cmd_backends},
    {NULL, NULL, NULL},
};

/* The commands' names, then help and version, for a "did you mean". */
static const char *cmd_name_at(int i, const void *ctx)
{
    (void)ctx;
    int n = (int)(sizeof cc_cmds / sizeof cc_cmds[0]) - 1;
    return i < n ? cc_cmds[i].name : i == n ? "help" : i == n + 1 ? "version" : NULL;
}

/* "unknown command 'lay' (did you mean layout? see ccbench help)" */
static int unknown_command(const char *name)
{
    char dym[96];
    cc_err("unknown command '%s' (%ssee ccbench help)", name,
           cc_did_you_mean(dym, sizeof dym, "", name, cmd_name_at, NULL));
    return 2;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: ccbench <command> [options]\n"
                 "       mpirun -np N ccbench bench [options]\n\ncommands:\n");
    for (int i = 0; cc_cmds[i].name; i++)
        fprintf(out, "  %-10s %s\n", cc_cmds[i].name, cc_cmds[i].summary);
    fprintf(out, "  %-10s %s\n  %-10s %s\n", "help", "this text, or `ccbench help <command>`",
            "version", "version and optional parts (also --version)");
    fprintf(out, "\n`ccbench <command> --help` lists a command's options. Docs: docs/ in the "
                 "source tree.\n");
}

static void version_help(FILE *out)
{
    fprintf(out, "usage: ccbench version (or ccbench --version)\n  print the version and the "
                 "optional parts built in and usable here\n");
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        cc_err("no command given (see ccbench help)");
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
            version_help(stdout);
            return 0;
        }
        if (argc > 2) {
            cc_err("%s takes no arguments, got '%s' (see ccbench help version)", name, argv[2]);
            return 2;
        }
        cc_print_version();
        return 0;
    }
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc > 3) {
            cc_err("help takes one command, got '%s' too (see ccbench help)", argv[3]);
            return 2;
        }
        if (argc > 2) {
            if (strcmp(argv[2], "help") == 0) {
                usage(stdout);
                return 0;
            }
            if (strcmp(argv[2], "version") == 0) {
                version_help(stdout);
                return 0;
            }
            for (int i = 0; cc_cmds[i].name; i++)
                if (strcmp(cc_cmds[i].name, argv[2]) == 0) {
                    char *hargv[] = {argv[2], "--help", NULL};
                    return cc_cmds[i].main(2, hargv);
                }
            return unknown_command(argv[2]);
        }
        usage(stdout);
        return 0;
    }
    for (int i = 0; cc_cmds[i].name; i++)
        if (strcmp(cc_cmds[i].name, name) == 0)
            return cc_cmds[i].main(argc - 1, argv + 1);
    return unknown_command(name);
}

/* What a command printed must have reached standard output (a full disk, /dev/full): a
 * result that was not written is a failure, not exit 0. A command that already said so
 * (bench's table) is not contradicted by a second line with a stale errno. */
int main(int argc, char **argv)
{
    int rc = run(argc, argv);
    if (cc_report_flush(stdout) != 0) {
        cc_err_stdout(errno);
        if (rc == 0)
            rc = 2;
    }
    return rc;
}
