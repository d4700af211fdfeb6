/* reports/envs.c: the environments (machines) of a results set.
 *
 * A machine is env.host + env.cpu_model + env.isa: the ISA level the kernels ran decides their speed as
 * much as the CPU does (the same AVX-512 CPU forced to AVX2 with SPEEDLAB_ISA=v3 is another machine for
 * the report), so results of two levels are never grouped or averaged together. Records written before
 * env.isa existed have none: their machine is host + cpu_model, named by the host alone, as before.
 * The directory of a machine is made from strings of a results file: see make_slug. */
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

static int slug_taken(const rep_set *s, const char *slug)
{
    for (int i = 0; i < s->nenvs; i++)
        if (strcmp(s->envs[i].slug, slug) == 0)
            return 1;
    return 0;
}

/* "host" or "host-isa", each part through rep_path_name (hosts a.b and a-b stay apart, and no host
 * reaches outside the report); numbered from 2 when still taken ("a-b" with ISA "c" and "a" with ISA
 * "b-c"), so two machines never share a directory. */
static char *make_slug(const rep_set *s, const char *host, const char *isa)
{
    char *h = rep_path_name(host), *i = isa ? rep_path_name(isa) : NULL;
    char *base = isa ? rep_printf("%s-%s", h, i) : rep_strdup(h);
    free(h);
    free(i);
    if (base && strlen(base) > 200) /* a file name has 255 bytes at most: the number below keeps it apart */
        base[200] = 0;
    if (!base || !slug_taken(s, base))
        return base;
    for (int n = 2;; n++) {
        char *c = rep_printf("%s-%d", base, n);
        if (!c || !slug_taken(s, c)) {
            free(base);
            return c;
        }
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
    free(e->threads_example);
    for (int i = 0; i < e->nruns; i++)
        free(e->runs[i]);
    json_decref(e->env);
    json_decref(e->ceilings);
}
