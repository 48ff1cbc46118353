/* outfile.h - the output files of a run, opened together so that a run that cannot write
 * one of them destroys none: every path is opened (created if missing, never truncated) and
 * checked to name a different file from the others before any existing file is truncated.
 *
 *   struct cc_outfile o[2] = {{"--json", json_path}, {"--csv", csv_path}};
 *   cc_outfiles_open(o, 2, err, len);    // before anything slow: a bad path fails at once
 *   ...                                  // start-up that can still fail: cc_outfiles_abandon
 *   cc_outfiles_commit(o, 2, err, len);  // truncate, then write through o[i].f
 */
#ifndef CC_OUTFILE_H
#define CC_OUTFILE_H

#include <stdio.h>

#include "core/status.h"

struct cc_outfile {
    const char *opt;  /* the option that named it, for messages ("--json") */
    const char *path; /* NULL: not requested (skipped by every function) */
    int fd;           /* open for writing, -1 when closed */
    int created;      /* cc_outfiles_open created it (cc_outfiles_abandon removes it): 1 at
                         path, 2 through a link to a file not there yet, at made */
    FILE *f;          /* after cc_outfiles_commit: the stream to write (owns fd, unless
                         borrowed) */
    int borrowed;     /* f is the process's stdout or stderr (the file is theirs): written
                         through that stream, never truncated or closed */
    unsigned long long dev, ino; /* identity of the open file */
    char made[4096];  /* created == 2: the file the link led to (the link itself stays); last,
                         so that positional initialisers of the fields above stay valid */
};

/* Open every requested file for writing without truncating it. CC_EUSAGE with a message
 * naming the option and the path when one cannot be opened ("cannot write --csv file
 * '/x/y.csv': No such file or directory"; a FIFO without a reader fails at once) or when two
 * name the same file (after links and "./" are resolved); nothing is left open or created
 * then. A path to the file the process's stdout or stderr writes (the shell's `> run.txt`
 * given again as --json run.txt, or /dev/stdout) is written through that stream: a separate
 * descriptor at offset 0 would write over what the other prints. (Under mpirun a rank's
 * stdout is a pipe to the launcher, so there the file is not stdout's and this cannot help.) */
cc_status cc_outfiles_open(struct cc_outfile *o, int n, char *err, size_t errlen);

/* Truncate the files (regular files only: /dev/stdout or a pipe stays as it is) and give
 * each its stream. On failure the files are abandoned. */
cc_status cc_outfiles_commit(struct cc_outfile *o, int n, char *err, size_t errlen);

/* Close what is open, removing the files cc_outfiles_open created (before any commit). */
void cc_outfiles_abandon(struct cc_outfile *o, int n);

/* open(2) for writing that does not wait: a FIFO without a reader fails at once with ENXIO
 * instead of blocking until one comes (the descriptor is blocking again once open). */
int cc_open_write(const char *path, int flags, int mode);

/* fopen(path, "w") through cc_open_write: a FIFO without a reader fails with ENXIO. */
FILE *cc_fopen_write(const char *path);

/* The standard stream (stdout or stderr) that writes to the file at path, or NULL. */
FILE *cc_std_twin(const char *path);

/* errno's text for a failed open of path; ENXIO from cc_open_write on a FIFO is said for
 * what it means there ("a FIFO with no reader"). */
const char *cc_open_strerror(const char *path, int e);

#endif
