/*
 * Region names are any bytes a caller passes; every output is valid UTF-8. A byte that does not start a
 * well-formed UTF-8 sequence (Unicode's table 3-7: no overlong forms, no surrogates U+D800-U+DFFF,
 * nothing above U+10FFFF) becomes U+FFFD, one per byte, as the WHATWG decoder's "replacement" mode
 * does for a lone byte. The layer keeps the bytes as given (names are compared by content); only what
 * it writes is cleaned. docs/profiler.md, "Region names".
 */
#include "prof_internal.h"

#include <stdlib.h>
#include <string.h>

int prof_utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return c ? 1 : 0;
    int n;
    unsigned char lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* below: overlong */
        if (c == 0xed)
            hi = 0x9f; /* above: surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90; /* below: overlong */
        if (c == 0xf4)
            hi = 0x8f; /* above: beyond U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

char *prof_utf8_clean(const char *s, int controls_to_space)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t len = strlen((const char *)p);
    char *out = malloc(3 * len + 1), *o = out; /* at worst every byte becomes U+FFFD's three */
    if (!out)
        return NULL;
    while (*p) {
        int n = prof_utf8_len(p);
        if (n == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
        } else if (controls_to_space && n == 1 && (*p < 0x20 || *p == 0x7f)) {
            *o++ = ' ';
            p++;
        } else {
            memcpy(o, p, (size_t)n);
            o += n;
            p += n;
        }
    }
    *o = 0;
    return out;
}
