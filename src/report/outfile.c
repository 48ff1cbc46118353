/* outfile.c - the output files of a run, opened together (report/outfile.h). */
#include "report/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"

int cc_open_write(const char *path, int flags, int mode)
{
    int fd = open(path, flags | O_NONBLOCK, (mode_t)mode);
    if (fd >= 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
            int e = errno;
            close(fd);
            if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
                unlink(path); /* created by this call: not left behind */
            errno = e;
            return -1;
        }
    }
    return fd;
}

FILE *cc_fopen_write(const char *path)
{
    int fd = cc_open_write(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

const char *cc_open_strerror(const char *path, int e)
{
    struct stat st;
    if (e == ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
        return "a FIFO with no reader";
    return strerror(e);
}

/* Whether st is the file open on descriptor fd. */
static int is_fd(const struct stat *st, int fd)
{
    struct stat fs;
    return fstat(fd, &fs) == 0 && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino;
}

/* The standard stream open on the file st describes, or NULL. */
static FILE *twin_of(const struct stat *st)
{
    return is_fd(st, STDOUT_FILENO) ? stdout : is_fd(st, STDERR_FILENO) ? stderr : NULL;
}

FILE *cc_std_twin(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? twin_of(&st) : NULL;
}

void cc_outfiles_abandon(struct cc_outfile *o, int n)
{
    for (int i = 0; i < n; i++) {
        if (o[i].f && !o[i].borrowed)
            fclose(o[i].f);
        else if (o[i].fd >= 0)
            close(o[i].fd);
        if (o[i].created == 1)
            unlink(o[i].path);
        else if (o[i].created == 2) /* the link is the user's: only the file made through it */
            unlink(o[i].made);
        o[i].f = NULL;
        o[i].fd = -1;
        o[i].created = 0;
        o[i].borrowed = 0;
    }
}

/* Whether o[i] is a regular file that an earlier output also names (said in err). */
static int same_as_earlier(const struct cc_outfile *o, int i, char *err, size_t errlen)
{
    for (int j = 0; j < i; j++)
        if (o[j].path && o[i].ino && o[j].dev == o[i].dev && o[j].ino == o[i].ino) {
            cc_errbuf(err, errlen, "%s '%s' and %s '%s' are the same file", o[j].opt, o[j].path,
                      o[i].opt, o[i].path);
            return 1;
        }
    return 0;
}

cc_status cc_outfiles_open(struct cc_outfile *o, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        o[i].fd = -1;
        o[i].created = 0;
        o[i].f = NULL;
        o[i].borrowed = 0;
    }
    for (int i = 0; i < n; i++) {
        if (!o[i].path)
            continue;
        if (!o[i].path[0]) {
            cc_errbuf(err, errlen, "%s needs a file name", o[i].opt);
            goto fail;
        }
        struct stat st;
        FILE *twin = stat(o[i].path, &st) == 0 ? twin_of(&st) : NULL;
        if (twin) { /* written through stdout or stderr */
            o[i].f = twin;
            o[i].borrowed = 1;
            o[i].dev = (unsigned long long)st.st_dev;
            o[i].ino = S_ISREG(st.st_mode) ? (unsigned long long)st.st_ino : 0;
            if (same_as_earlier(o, i, err, errlen))
                goto fail;
            continue;
        }
        /* created here, or opened as it is: nothing is truncated until every file is known
         * to be writable and distinct */
        o[i].fd = cc_open_write(o[i].path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o[i].fd >= 0)
            o[i].created = 1;
        else if (errno == EEXIST)
            o[i].fd = cc_open_write(o[i].path, O_WRONLY | O_CLOEXEC, 0);
        if (o[i].fd < 0 && errno == ENOENT) { /* a link to a file not there yet: create it */
            o[i].fd = cc_open_write(o[i].path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
            o[i].created = o[i].fd >= 0 && realpath(o[i].path, o[i].made) ? 2 : 0;
        }
        if (o[i].fd < 0 || fstat(o[i].fd, &st) != 0) {
            cc_errbuf(err, errlen, "cannot write %s file '%s': %s", o[i].opt, o[i].path,
                      cc_open_strerror(o[i].path, errno));
            goto fail;
        }
        /* only regular files can be clobbered by another output: /dev/null twice is fine */
        o[i].dev = (unsigned long long)st.st_dev;
        o[i].ino = S_ISREG(st.st_mode) ? (unsigned long long)st.st_ino : 0;
        if (same_as_earlier(o, i, err, errlen))
            goto fail;
    }
    return CC_OK;
fail:
    cc_outfiles_abandon(o, n);
    return CC_EUSAGE;
}

cc_status cc_outfiles_commit(struct cc_outfile *o, int n, char *err, size_t errlen)
{
    /* every stream first, then the truncation: a file that cannot be opened as a stream
     * leaves the others as they were */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            struct stat st;
            if (!o[i].path || o[i].fd < 0) /* not asked for, or borrowed (f set) */
                continue;
            int bad = pass == 0 ? !(o[i].f = fdopen(o[i].fd, "w"))
                                : fstat(o[i].fd, &st) != 0 ||
                                      (S_ISREG(st.st_mode) && ftruncate(o[i].fd, 0) != 0);
            if (bad) {
                cc_errbuf(err, errlen, "cannot write %s file '%s': %s", o[i].opt, o[i].path,
                          strerror(errno));
                cc_outfiles_abandon(o, n);
                return CC_EIO;
            }
        }
    for (int i = 0; i < n; i++)
        o[i].created = 0;
    return CC_OK;
}
