/* Bounded one-line texts (descriptions, reasons): cuts that keep UTF-8 valid and say so. */
#include <string.h>

#include "core/internal.h"

size_t sla_utf8_prefix(const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len <= max) return len;
    /* back off over continuation bytes (10xxxxxx) to the start of the character that would
     * be split */
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
    return max;
}

void sla_text_append(char *buf, size_t cap, const char *sep, const char *text)
{
    static const char ellipsis[] = "…";
    size_t used = strlen(buf);
    if (used + 1 >= cap) return;
    size_t room = cap - 1 - used, ls = strlen(sep), lt = strlen(text);
    if (ls + lt <= room) {
        memcpy(buf + used, sep, ls);
        memcpy(buf + used + ls, text, lt + 1);
        return;
    }
    if (room < ls + sizeof ellipsis - 1) return;     /* not even the separator and "…" */
    size_t keep = sla_utf8_prefix(text, room - ls - (sizeof ellipsis - 1));
    memcpy(buf + used, sep, ls);
    memcpy(buf + used + ls, text, keep);
    memcpy(buf + used + ls + keep, ellipsis, sizeof ellipsis);
}
