/* grow.h - room for one more element in a growing array.
 *
 *     void *p = cc_grow(v, &cap, n, sizeof *v, 16);
 *     if (!p)
 *         return -1;          // v, cap and its contents are unchanged
 *     v = p;
 *     v[n++] = item;
 *
 * Returns buf when n < *cap, else buf reallocated to twice *cap elements (first when *cap is
 * 0) with *cap updated, or NULL when out of memory (buf still valid, *cap unchanged).
 */
#ifndef CC_GROW_H
#define CC_GROW_H

#include <stdlib.h>

static inline void *cc_grow(void *buf, int *cap, int n, size_t elem, int first)
{
    if (n < *cap)
        return buf;
    int nc = *cap ? 2 * *cap : first;
    void *p = realloc(buf, (size_t)nc * elem);
    if (p)
        *cap = nc;
    return p;
}

#endif
