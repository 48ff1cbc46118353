/* tap.h - a minimal TAP producer for C unit tests (one header, no library).
 *
 *   int main(void) { ok(1 + 1 == 2, "adds"); is_int(f(), 3, "f"); return tap_done(); }
 *
 * Prints "ok N - name" / "not ok N - name" with a diagnostic, and the plan at the end.
 * tap_done() returns the exit status (non-zero if anything failed). */
#ifndef CC_TAP_H
#define CC_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    tap_n++;
    printf("%sok %d - ", cond ? "" : "not ", tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!cond) {
        tap_failed++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...)                                                               \
    do {                                                                                     \
        long long g_ = (long long)(got), w_ = (long long)(want);                             \
        if (!ok(g_ == w_, __VA_ARGS__))                                                      \
            printf("#   got %lld, want %lld\n", g_, w_);                                     \
    } while (0)
#define is_str(got, want, ...)                                                               \
    do {                                                                                     \
        const char *g_ = (got), *w_ = (want);                                                \
        if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                               \
            printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)");     \
    } while (0)
#define is_near(got, want, tol, ...)                                                         \
    do {                                                                                     \
        double g_ = (got), w_ = (want);                                                      \
        if (!ok(fabs(g_ - w_) <= (tol), __VA_ARGS__))                                        \
            printf("#   got %.10g, want %.10g (tolerance %g)\n", g_, w_, (double)(tol));     \
    } while (0)
#define diag(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

#endif
