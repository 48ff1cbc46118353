/* text.h - names from files and flags made safe to print and to put in JSON.
 *
 * Text that ccbench did not write (a model's name, a topology's, a path) can hold any bytes.
 * JSON needs valid UTF-8, and a terminal line must not be split or recoloured by a newline or
 * an escape sequence hidden in it.
 */
#ifndef CC_TEXT_H
#define CC_TEXT_H

#include <stddef.h>

/* Length of the valid UTF-8 character at s (1 to 4), or 0 if s starts none: a stray byte, an
 * overlong form, a surrogate, past U+10FFFF, or a sequence cut short (jansson's rules). */
size_t cc_utf8_len(const unsigned char *s);

/* Makes s, in place, one line of valid UTF-8: a character cut short by the end of the string
 * (a name cut to its buffer) is dropped; any other invalid byte, every control character
 * (U+0000-U+001F, U+007F-U+009F: newline, tab, escape) and the characters that break or
 * reorder a line (U+2028-U+202E, U+2066-U+2069) become '?'. */
void cc_text_line(char *s);

/* cc_text_line on a copy of src (NULL: "") cut to len bytes. */
void cc_text_copy(char *dst, size_t len, const char *src);

/* The name, of those name_at(0, ctx), name_at(1, ctx), ... up to the first NULL, that word
 * most likely meant, or NULL: one it starts (at least 2 characters: "lay" for "layout"), else
 * the nearest within a few edits (insertions, deletions, substitutions, swaps of neighbours;
 * at most 1 for words of up to 4 characters, else a third of the word), ignoring case. For a
 * "did you mean" in messages. */
const char *cc_closest(const char *word, const char *(*name_at)(int i, const void *ctx),
                       const void *ctx);

/* "did you mean DASHESNAME? " for cc_closest's pick, or "" when there is none: the start of
 * a message's parenthesis ("unknown option '--iter' (did you mean --iters? see --help)"). */
const char *cc_did_you_mean(char *buf, size_t len, const char *dashes, const char *word,
                            const char *(*name_at)(int i, const void *ctx), const void *ctx);

#endif
