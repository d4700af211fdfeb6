/* reports/envs.c: the environments (machines) of a results set.
 *
 * A machine is env.host + env.cpu_model + env.isa: the ISA level the kernels ran decides their speed as
 * much as the CPU does (the same AVX-512 CPU forced to AVX2 with SPEEDLAB_ISA=v3 is another machine for
 * the report), so results of two levels are never grouped or averaged together. Records written before
 * env.isa existed have none: their machine is host + cpu_model, named by the host alone, as before. */
#include <stdlib.h>
#include <string.h>

#include "rep.h"

int rep_same_opt(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static const char *opt_str(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Appends s to buf (of n bytes, at *k), made safe for a directory name. */
static void slug_part(char *buf, size_t n, size_t *k, const char *s)
{
    for (const char *p = s; *p && *k + 1 < n; p++)
        buf[(*k)++] = (char)((*p == '/' || *p == ' ' || *p == '.') ? '-' : *p);
    buf[*k] = 0;
}

static int slug_taken(const rep_set *s, const char *slug)
{
    for (int i = 0; i < s->nenvs; i++)
        if (strcmp(s->envs[i].slug, slug) == 0)
            return 1;
    return 0;
}

/* "host" or "host-isa"; numbered from 2 when taken (two CPU models behind one host name). */
static char *make_slug(const rep_set *s, const char *host, const char *isa)
{
    char base[128];
    size_t k = 0;
    base[0] = 0;
    slug_part(base, 80, &k, host);
    if (isa) {
        slug_part(base, sizeof base, &k, "-");
        slug_part(base, sizeof base, &k, isa);
    }
    if (!slug_taken(s, base))
        return rep_strdup(base);
    for (int n = 2;; n++) {
        char *c = rep_printf("%s-%d", base, n);
        if (!c || !slug_taken(s, c))
            return c;
        free(c);
    }
}

int rep_env_index(rep_set *s, const json_t *env)
{
    const char *host = opt_str(env, "host"), *cpu = opt_str(env, "cpu_model"), *isa = opt_str(env, "isa");
    for (int i = 0; i < s->nenvs; i++)
        if (strcmp(s->envs[i].host, host) == 0 && strcmp(s->envs[i].cpu_model, cpu) == 0 &&
            rep_same_opt(s->envs[i].isa, isa))
            return i;
    rep_env *e = realloc(s->envs, sizeof *e * (size_t)(s->nenvs + 1));
    if (!e)
        return -1;
    s->envs = e;
    e = &s->envs[s->nenvs];
    memset(e, 0, sizeof *e);
    e->host = rep_strdup(host);
    e->cpu_model = rep_strdup(cpu);
    e->isa = rep_strdup(isa);
    e->name = isa ? rep_printf("%s (%s)", host, isa) : rep_strdup(host);
    e->env = json_incref((json_t *)env);
    e->slug = make_slug(s, host, isa);
    return s->nenvs++;
}

void rep_env_free(rep_env *e)
{
    free(e->host);
    free(e->cpu_model);
    free(e->isa);
    free(e->name);
    free(e->slug);
    free(e->calib_time);
    json_decref(e->env);
    json_decref(e->ceilings);
}
