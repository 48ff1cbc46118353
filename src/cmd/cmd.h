/* cmd.h - subcommands. Each takes the arguments after its name (argv[0] is the subcommand
 * name) and returns a process exit code (see cc_status_exit). The table is in ccbench.c. */
#ifndef CC_CMD_H
#define CC_CMD_H

struct cc_cmd {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
};

extern const struct cc_cmd cc_cmds[];

int cc_cmd_bench(int argc, char **argv);
int cc_cmd_probe(int argc, char **argv);
int cc_cmd_layout(int argc, char **argv);
int cc_cmd_backends(int argc, char **argv);
int cc_cmd_gpu(int argc, char **argv);

/* Print the version line and the optional parts compiled in / available at run time. */
void cc_print_version(void);

#endif
