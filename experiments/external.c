/*
 * external.c: a framework baseline (an SL_EXTERNAL row) measured in the same run as the C variants.
 *
 * The program is the study's baselines/STUDY.py, run by the interpreter sl_external_python() names. A
 * row (numpy, torch ...) has one or more forms there: the ways a user of that framework writes the
 * computation. The protocol (docs/baselines.md, "Protocol"), in order:
 *   1. the study writes its set-up inputs (external_inputs) into CASE_DIR: raw arrays (in
 *      CASE_DIR/arrays) and inputs.json;
 *   2. speedlab starts the program with CASE_DIR/stderr.txt as its stderr and writes one JSON line of
 *      settings (row, the form --param form= forces if any, inputs, repetitions, thread candidates);
 *   3. the program imports its framework, reads the inputs, makes each form and calls it once (the
 *      first call, JIT included) and writes one JSON line: each form's outputs (or why it could not
 *      run), versions and times;
 *   4. speedlab checks each form: its outputs into the study (external_outputs) and the study's own
 *      check with its tolerance. It then writes "go" and the forms that passed (or "stop": none did);
 *   5. the program times those forms briefly at each thread count, runs the fastest at its fastest
 *      count, times its repetitions and writes one JSON line with the form, every repetition's time
 *      and the probe's medians, then exits 0.
 * Start-up, imports and the first call are never inside a repetition's time; they are recorded apart.
 * A program still running $SPEEDLAB_BASELINE_TIMEOUT seconds after its start, all reports included, is
 * ended (SIGKILL) and the case failed.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <speedlab/prof.h>

#include "external.h"
#include "external_proc.h"
#include "record.h"
#include "sl_config.h"

#define EXT_PROTOCOL 2 /* baselines/harness.py's PROTOCOL: a program of another version is refused */
#define EXT_MAX_REPS 100000 /* the C runner's cap is higher; a Python call is never that short */
#define EXT_MIN_TIME_S 1e-9 /* a repetition's time: no clock here resolves less than a nanosecond */
#define EXT_MAX_THREADS 4096 /* as --threads */

struct sl_inputs {
    char dir[4200];    /* CASE_DIR */
    char arrays[4300]; /* CASE_DIR/arrays: the raw arrays alone, so a pack or a cleanup can name them */
    json_t *manifest; /* name -> {"file", "dtype", "shape"} or a number or a string */
};

struct sl_outputs {
    json_t *obj;
};

/* ---- inputs and outputs (study.h's sl_input_* and sl_output_*) ---------------------------------- */

static int input_array(sl_inputs *in, const char *name, const void *data, size_t elem, const char *dtype,
                       int ndim, const long *shape, sl_error *err)
{
    char path[4400];
    size_t count = 1;
    json_t *dims = json_array();
    for (int d = 0; d < ndim; d++) {
        count *= (size_t)shape[d];
        json_array_append_new(dims, json_integer(shape[d]));
    }
    snprintf(path, sizeof path, "%s/%s.%s", in->arrays, name, dtype);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, elem, count, f) == count;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok) {
        json_decref(dims);
        sl_error_set(err, "%s: cannot write the baseline's input '%s' (%zu values): %s", path, name, count,
                     strerror(errno));
        return -1;
    }
    json_t *a = json_object();
    json_object_set_new(a, "file", json_string(path));
    json_object_set_new(a, "dtype", json_string(dtype));
    json_object_set_new(a, "shape", dims);
    json_object_set_new(in->manifest, name, a);
    return 0;
}

int sl_input_f32(sl_inputs *in, const char *name, const float *data, int ndim, const long *shape, sl_error *err)
{
    return input_array(in, name, data, sizeof *data, "float32", ndim, shape, err);
}

int sl_input_f64(sl_inputs *in, const char *name, const double *data, int ndim, const long *shape, sl_error *err)
{
    return input_array(in, name, data, sizeof *data, "float64", ndim, shape, err);
}

int sl_input_u8(sl_inputs *in, const char *name, const unsigned char *data, int ndim, const long *shape,
                sl_error *err)
{
    return input_array(in, name, data, 1, "uint8", ndim, shape, err);
}

int sl_input_i32(sl_inputs *in, const char *name, const int32_t *data, int ndim, const long *shape, sl_error *err)
{
    return input_array(in, name, data, sizeof *data, "int32", ndim, shape, err);
}

int sl_input_number(sl_inputs *in, const char *name, double value)
{
    return json_object_set_new(in->manifest, name, json_real(value));
}

int sl_input_string(sl_inputs *in, const char *name, const char *value)
{
    return json_object_set_new(in->manifest, name, json_string(value));
}

int sl_output_has(const sl_outputs *out, const char *name)
{
    return json_object_get(out->obj, name) != NULL;
}

int sl_output_number(const sl_outputs *out, const char *name, double *x, sl_error *err)
{
    json_t *j = json_object_get(out->obj, name);
    if (!json_is_number(j)) {
        sl_error_set(err, "the baseline's outputs have no number '%s'", name);
        return -1;
    }
    *x = json_number_value(j);
    return 0;
}

int sl_output_array(const sl_outputs *out, const char *name, double *x, long n, sl_error *err)
{
    json_t *j = json_object_get(out->obj, name);
    if (!json_is_array(j) || (long)json_array_size(j) != n) {
        sl_error_set(err, "the baseline's outputs have no array '%s' of %ld numbers (got %s %ld)", name, n,
                     json_is_array(j) ? "an array of" : "no array,", j ? (long)json_array_size(j) : 0L);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        json_t *e = json_array_get(j, (size_t)i);
        /* a NaN is sent as null (JSON has no NaN): the check then fails, as for a C variant */
        x[i] = json_is_number(e) ? json_number_value(e) : NAN;
    }
    return 0;
}

/* The row's framework: the first module of its requirement ("python:numpy+scipy" -> "numpy",
 * "python:torch@cuda" -> "torch"). */
static json_t *framework_of(const sl_variant *var)
{
    const char *m = var->requires + 7;
    return json_stringn(m, strcspn(m, "+@"));
}

/* The device a GPU row's forms run on ("python:torch@cuda" -> "cuda"), NULL for a CPU row. A GPU row
 * runs on the CPU when SPEEDLAB_BASELINE_DEVICE=cpu: the tests' way to run its code without a GPU. */
static const char *device_name(const sl_variant *var)
{
    const char *at = strchr(var->requires, '@'), *forced = getenv("SPEEDLAB_BASELINE_DEVICE");
    return !at ? NULL : forced && *forced ? forced : at + 1;
}

static json_t *device_of(const sl_variant *var)
{
    const char *d = device_name(var);
    return d ? json_string(d) : json_null();
}

/* ---- one case ----------------------------------------------------------------------------------- */

/* CASE_DIR = RUN_DIR/baselines/STUDY-VARIANT-SIZE, created, with the study's input arrays in
 * CASE_DIR/arrays and their manifest CASE_DIR/inputs.json. */
static int write_inputs(sl_run_ctx *c, const sl_study *s, void *state, const char *variant, long size,
                        sl_inputs *in, sl_error *err)
{
    char base[4200];
    snprintf(base, sizeof base, "%s/baselines", c->dir);
    int len = snprintf(in->dir, sizeof in->dir, "%s/%s-%s-%ld", base, s->name, variant, size);
    if (len < 0 || (size_t)len >= sizeof in->dir) {
        sl_error_set(err, "the run directory's path is too long for the baseline's inputs");
        return -1;
    }
    snprintf(in->arrays, sizeof in->arrays, "%s/arrays", in->dir);
    const char *dirs[] = {base, in->dir, in->arrays};
    for (int i = 0; i < 3; i++)
        if (mkdir(dirs[i], 0777) != 0 && errno != EEXIST) {
            sl_error_set(err, "cannot create %s: %s", dirs[i], strerror(errno));
            return -1;
        }
    in->manifest = json_object();
    if (s->external_inputs(state, in, err) != 0)
        return -1;
    char path[4400];
    snprintf(path, sizeof path, "%s/inputs.json", in->dir);
    if (json_dump_file(in->manifest, path, JSON_INDENT(1)) != 0) {
        sl_error_set(err, "cannot write %s", path);
        return -1;
    }
    return 0;
}

/* Removes the input files of a case that passed (a failed one keeps them, to be run again by hand). */
static void remove_inputs(const sl_inputs *in)
{
    const char *name;
    json_t *a;
    json_object_foreach(in->manifest, name, a) {
        const char *file = json_string_value(json_object_get(a, "file"));
        if (file)
            unlink(file);
    }
    rmdir(in->arrays);
}

const char *sl_external_forced_form(const sl_opts *o)
{
    const char *form = NULL;
    for (int i = 0; i < o->n_params; i++) /* the last one given wins, as for a study's parameters */
        if (strcmp(o->param_names[i], SL_EXTERNAL_FORM_PARAM) == 0)
            form = o->param_values[i];
    return form && form[0] ? form : NULL;
}

/* The one line of settings the program reads first (docs/baselines.md, "Protocol"). */
static char *settings_line(sl_run_ctx *c, const sl_study *s, int v, long size, const char *inputs)
{
    int reps, warmup;
    double min_time;
    sl_case_plan(c->cfg, s, &reps, &warmup, &min_time);
    json_t *j = json_object();
    json_object_set_new(j, "protocol", json_integer(EXT_PROTOCOL));
    json_object_set_new(j, "study", json_string(s->name));
    json_object_set_new(j, "row", json_string(s->variants[v].name));
    const char *form = sl_external_forced_form(&c->opts);
    json_object_set_new(j, "form", form ? json_string(form) : json_null()); /* null: the fastest */
    json_object_set_new(j, "framework", framework_of(&s->variants[v]));
    json_object_set_new(j, "device", device_of(&s->variants[v]));
    json_object_set_new(j, "size", json_integer(size));
    json_object_set_new(j, "inputs", json_string(inputs));
    json_object_set_new(j, "reps", json_integer(reps));
    json_object_set_new(j, "warmup", json_integer(warmup));
    json_object_set_new(j, "min_time", json_real(min_time));
    json_object_set_new(j, "max_reps", json_integer(EXT_MAX_REPS));
    json_object_set_new(j, "quick", json_boolean(c->cfg->quick));
    /* the program runs at whichever of these is fastest for it, and says which (docs/baselines.md) */
    json_t *cand = json_array();
    json_array_append_new(cand, json_integer(1));
    if (c->cfg->threads > 1)
        json_array_append_new(cand, json_integer(c->cfg->threads));
    json_object_set_new(j, "threads", cand);
    char *line = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return line;
}

/* external.forms: per form its first call's time and its check, or why it did not run; external.form
 * and the record's baseline_form: the form that was timed (docs/results-schema.md). */
static void add_forms(json_t *e, json_t *rec, const json_t *first, const json_t *timed, const json_t *checks)
{
    json_t *forms = json_object();
    const char *name;
    json_t *f;
    json_object_foreach(json_object_get(first, "forms"), name, f) {
        json_t *o = json_object();
        const char *keys[] = {"first_call_s", "error"};
        for (size_t i = 0; i < 2; i++)
            if (json_object_get(f, keys[i]))
                json_object_set(o, keys[i], json_object_get(f, keys[i]));
        json_t *chk = json_object_get(checks, name);
        if (json_object_get(chk, "check"))
            json_object_set(o, "check", json_object_get(chk, "check"));
        if (json_object_get(chk, "error"))
            json_object_set(o, "error", json_object_get(chk, "error"));
        json_object_set_new(forms, name, o);
    }
    json_object_set_new(e, "forms", forms);
    json_t *form = timed ? json_object_get(timed, "form") : NULL;
    if (json_is_string(form)) {
        json_object_set(e, "form", form);
        json_object_set(rec, "baseline_form", form);
        json_t *fc = json_object_get(json_object_get(json_object_get(first, "forms"), json_string_value(form)),
                                     "first_call_s");
        if (fc)
            json_object_set(e, "first_call_s", fc);
    }
}

/* CASE_DIR/settings.json: the settings line, so that a failed case can be run again by hand
 * (`PYTHON baselines/STUDY.py < CASE_DIR/settings.json`; its inputs are kept too). */
static void save_settings(const char *dir, const char *line)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/settings.json", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", line);
        fclose(f);
    }
}

/* The record's "external" object, from the program's two reports (either may be NULL). */
static void add_external(json_t *rec, const sl_study *s, int v, const json_t *first, const json_t *timed,
                         const json_t *checks, double start_s)
{
    json_t *e = json_object();
    char program[4400];
    snprintf(program, sizeof program, "%s/%s.py", sl_external_dir(), s->name);
    json_object_set_new(e, "framework", framework_of(&s->variants[v]));
    json_object_set_new(e, "requires", json_string(s->variants[v].requires + 7));
    if (strchr(s->variants[v].requires, '@'))
        json_object_set_new(e, "device", device_of(&s->variants[v]));
    json_object_set_new(e, "program", json_string(program));
    json_object_set_new(e, "python", json_string(sl_external_python()));
    /* start_s: from fork to the first report; less the program's own import, load and first call, it is
     * the interpreter's start-up */
    json_object_set_new(e, "first_report_s", sl_json_num(start_s));
    double own = 0; /* the program's own time before its first report: imports, inputs, first calls */
    const char *own_keys[] = {"import_s", "load_s"};
    for (size_t i = 0; first && i < 2; i++)
        own += json_number_value(json_object_get(first, own_keys[i]));
    const char *name;
    json_t *f;
    json_object_foreach(json_object_get(first, "forms"), name, f)
        own += json_number_value(json_object_get(f, "first_call_s"));
    if (first && isfinite(start_s))
        json_object_set_new(e, "startup_s", sl_json_num(start_s - own));
    const char *keys[] = {"version", "versions", "python_version", "device_name", "cuda", "cudnn",
                          "fp32_math", "import_s", "load_s"};
    for (size_t i = 0; first && i < sizeof keys / sizeof *keys; i++)
        if (json_object_get(first, keys[i]))
            json_object_set(e, keys[i], json_object_get(first, keys[i]));
    const char *tkeys[] = {"threads", "form_probe_s", "thread_probe_s", "thread_settings"};
    for (size_t i = 0; timed && i < sizeof tkeys / sizeof *tkeys; i++)
        if (json_object_get(timed, tkeys[i]))
            json_object_set(e, tkeys[i], json_object_get(timed, tkeys[i]));
    add_forms(e, rec, first, timed, checks);
    sl_external_isa_record(e, first); /* external.isa: what each framework runs at */
    json_object_set_new(rec, "external", e);
    json_t *t = timed ? json_object_get(timed, "threads") : NULL;
    if (json_is_integer(t)) /* the count it ran at, as for a C variant */
        json_object_set(rec, "threads", t);
}

static void fail_ext(json_t *rec, const char *stage, const char *msg, const char *err_path)
{
    char tail[1024], buf[SL_ERRLEN + 6000];
    ext_stderr_tail(err_path, tail, sizeof tail);
    snprintf(buf, sizeof buf, "baseline %s: %s; its stderr ends: %s (all of it in %s)", stage, msg, tail,
             err_path);
    json_object_set_new(rec, "status", json_string("failed"));
    json_object_set_new(rec, "error", json_string(buf));
}

/* A form's name as the "go" line carries it: lowercase letters, digits and '-' (harness.py, FORM_NAME). */
static int form_name_ok(const char *name)
{
    return name[0] && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(name);
}

/* A form's outputs handed to the study and checked against its reference, the outcome in `into`
 * ({"check"}, or failed with the reason). 0 when they passed. */
static int check_outputs(const sl_study *s, void *state, int v, json_t *outputs, json_t *into, const char *ep)
{
    sl_error err = {{0}};
    sl_outputs out = {outputs};
    if (s->external_outputs(state, v, &out, &err) != 0) {
        fail_ext(into, "outputs", err.msg, ep);
        return -1;
    }
    return sl_case_check(s, state, v, into);
}

/* One form's first-call outputs into the study and the study's check, into `one` ({"check"} or
 * {"status": "failed", "error"}). 0 when it passed. */
static int check_one_form(const sl_study *s, void *state, int v, const char *name, json_t *f, json_t *one,
                          const char *ep)
{
    if (!form_name_ok(name)) {
        fail_ext(one, "form name", "not lowercase letters, digits and '-' only", ep);
        return -1;
    }
    return check_outputs(s, state, v, json_object_get(f, "outputs"), one, ep);
}

/* Steps 3 and 4: each form's first-call outputs checked. Fills *checks with each checked form's outcome
 * and returns the line "go NAME ...\n" of the forms that passed (malloc'ed); NULL with rec failed when
 * none did. */
static char *check_forms(const sl_study *s, void *state, int v, json_t *first, json_t *rec, json_t *checks,
                         const char *ep)
{
    const char *status = json_string_value(json_object_get(first, "status"));
    if (!status || strcmp(status, "checked") != 0) {
        const char *why = json_string_value(json_object_get(first, "error"));
        fail_ext(rec, "first call", why ? why : "no \"status\": \"checked\" in its first line", ep);
        return NULL;
    }
    int passed = 0, tried = 0;
    const char *name;
    json_t *f, *last = NULL;
    char why[SL_ERRLEN] = "";
    size_t len = 3, cap = 4;
    json_object_foreach(json_object_get(first, "forms"), name, f)
        cap += strlen(name) + 1;
    char *go = malloc(cap + 1);
    if (!go) {
        fail_ext(rec, "check", "out of memory", ep);
        return NULL;
    }
    memcpy(go, "go", 3);
    json_object_foreach(json_object_get(first, "forms"), name, f) {
        if (!json_object_get(f, "outputs"))
            continue; /* it could not run here: its "error" says why, add_forms records it */
        json_t *one = json_object();
        if (check_one_form(s, state, v, name, f, one, ep) == 0) {
            go[len - 1] = ' ', memcpy(go + len, name, strlen(name) + 1), len += strlen(name) + 1;
            passed++;
        }
        json_object_set_new(checks, name, one);
        const char *e = json_string_value(json_object_get(one, "error"));
        if (e)
            snprintf(why + strlen(why), sizeof why - strlen(why), "%sform %s: %s", why[0] ? "; " : "", name, e);
        last = one, tried++;
    }
    memcpy(go + len - 1, "\n", 2);
    if (passed > 0)
        return go;
    free(go);
    if (tried == 1) { /* one form: its record says what its own check said */
        const char *keys[] = {"status", "error", "check"};
        for (size_t i = 0; i < 3; i++)
            if (json_object_get(last, keys[i]))
                json_object_set(rec, keys[i], json_object_get(last, keys[i]));
    } else {
        fail_ext(rec, "check", tried ? why : "no form gave outputs", ep);
    }
    return NULL;
}

/* The timed form's first-call outputs and check, once more: the study's state and the record hold that
 * form's, not the last one checked. 0, or -1 with rec failed. */
static int check_timed_form(const sl_study *s, void *state, int v, const json_t *first, const json_t *timed,
                            json_t *rec, const char *ep)
{
    const char *form = json_string_value(json_object_get(timed, "form"));
    json_t *f = form ? json_object_get(json_object_get(first, "forms"), form) : NULL;
    json_t *outputs = json_object_get(f, "outputs");
    if (!outputs) {
        fail_ext(rec, "repetitions", "its report names no form that was checked (\"form\")", ep);
        return -1;
    }
    return check_outputs(s, state, v, outputs, rec, ep);
}

/* Step 5's times, or -1 with rec failed; the last call's outputs go to the study for `finish`. */
static int take_times(const sl_study *s, void *state, int v, json_t *timed, json_t *rec, double **times,
                      double wall_s, int want_reps, const char *ep)
{
    sl_error err = {{0}};
    sl_outputs out = {json_object_get(timed, "outputs")};
    if (out.obj && s->external_outputs(state, v, &out, &err) != 0) {
        fail_ext(rec, "outputs of the last repetition", err.msg, ep);
        return -1;
    }
    /* a kernel study's repetition computes what the first call did: its last outputs pass the same
     * check, or the times are of some other work (a training's last outputs are its metrics) */
    if (s->kind == SL_KERNEL && (!out.obj || sl_case_check(s, state, v, rec) != 0)) {
        if (!out.obj)
            fail_ext(rec, "repetitions", "no \"outputs\" of the last repetition to check", ep);
        else
            json_object_set_new(rec, "error", json_sprintf("the last repetition's outputs: %s",
                                                           json_string_value(json_object_get(rec, "error"))));
        return -1;
    }
    json_t *a = json_object_get(timed, "times_s");
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n == 0) {
        fail_ext(rec, "repetitions", "no \"times_s\" array of at least one time", ep);
        return -1;
    }
    if (n > EXT_MAX_REPS) {
        fail_ext(rec, "repetitions", "more than 100000 times in \"times_s\"", ep);
        return -1;
    }
    if (n < (size_t)want_reps) { /* harness.py repeats until reps and min_time are both reached */
        char msg[200];
        snprintf(msg, sizeof msg, "%s.py's repetition report (line 2 of its output) holds %zu times, fewer than "
                 "the %d repetitions asked", s->name, n, want_reps);
        fail_ext(rec, "repetitions", msg, ep);
        return -1;
    }
    /* the thread count it ran at becomes the record's: a whole number a run could have used */
    json_t *th = json_object_get(timed, "threads");
    if (th && (!json_is_integer(th) || json_integer_value(th) < 1 || json_integer_value(th) > EXT_MAX_THREADS)) {
        char *v = json_dumps(th, JSON_ENCODE_ANY), msg[200];
        snprintf(msg, sizeof msg, "%s.py's repetition report (line 2 of its output) says \"threads\": %.40s; a "
                 "thread count is a whole number from 1 to %d", s->name, v ? v : "?", EXT_MAX_THREADS);
        free(v);
        fail_ext(rec, "repetitions", msg, ep);
        return -1;
    }
    *times = malloc(n * sizeof **times);
    double sum = 0;
    for (size_t i = 0; *times && i < n; i++) {
        double t = json_number_value(json_array_get(a, i));
        /* below a nanosecond no clock here resolves it (5e-324 s made "inf×" in the report) */
        if (!json_is_number(json_array_get(a, i)) || !(t >= EXT_MIN_TIME_S) || !isfinite(t)) {
            char msg[200];
            snprintf(msg, sizeof msg, "%s.py's repetition report (line 2 of its output) has times_s[%zu] = %g; a "
                     "time is a finite number of seconds of at least %g (a nanosecond)", s->name, i, t, EXT_MIN_TIME_S);
            fail_ext(rec, "repetitions", msg, ep);
            free(*times), *times = NULL;
            return -1;
        }
        (*times)[i] = t;
        sum += t;
    }
    /* the repetitions ran inside the program's life: together they cannot exceed it */
    if (*times && sum > wall_s * 1.01 + 0.01) {
        char msg[160];
        snprintf(msg, sizeof msg, "its times add up to %.3g s, but the program ran %.3g s in all", sum, wall_s);
        fail_ext(rec, "repetitions", msg, ep);
        free(*times), *times = NULL;
        return -1;
    }
    return *times ? (int)n : -1;
}

int sl_external_case(sl_run_ctx *c, const sl_study *s, void *state, int v, long size, json_t *rec,
                     double **times)
{
    sl_error err = {{0}};
    sl_inputs in = {.manifest = NULL};
    ext_proc p = {.pid = -1, .in_fd = -1, .out_fd = -1};
    char ep[4400] = "(no stderr file)", program[4400], inputs[4400];
    json_t *first = NULL, *timed = NULL, *checks = NULL;
    char *go = NULL;
    int n = -1;
    signal(SIGPIPE, SIG_IGN); /* a program that died makes write() fail with EPIPE, not kill speedlab */
    snprintf(program, sizeof program, "%s/%s.py", sl_external_dir(), s->name);
    if (access(program, R_OK) != 0) {
        char msg[SL_ERRLEN];
        snprintf(msg, sizeof msg, "cannot read the study's program: %s", strerror(errno));
        fail_ext(rec, program, msg, ep);
        return -1;
    }
    if (write_inputs(c, s, state, s->variants[v].name, size, &in, &err) != 0) {
        fail_ext(rec, "inputs", err.msg, ep);
        json_decref(in.manifest);
        return -1;
    }
    snprintf(ep, sizeof ep, "%s/stderr.txt", in.dir);
    snprintf(inputs, sizeof inputs, "%s/inputs.json", in.dir);
    char *line = settings_line(c, s, v, size, inputs);
    save_settings(in.dir, line);
    checks = json_object();
    double t0 = ext_now_s();
    p.deadline_s = t0 + sl_external_timeout_s();
    if (ext_spawn(&p, program, ep, &err) != 0) {
        fail_ext(rec, "start", err.msg, ep);
    } else if (ext_send_line(&p, line) != 0 || ext_send_line(&p, "\n") != 0) {
        fail_ext(rec, "settings", "the program did not read its settings", ep);
    } else if (!(first = ext_read_line(&p, "first-call report", &err))) {
        fail_ext(rec, "first call", err.msg, ep);
    } else if (!(go = check_forms(s, state, v, first, rec, checks, ep))) {
        ext_send_line(&p, "stop\n"); /* failed: no repetition is timed */
    } else if (ext_send_line(&p, go) != 0 || !(timed = ext_read_line(&p, "repetition report", &err))) {
        fail_ext(rec, "repetitions", err.msg[0] ? err.msg : "the program ended before them", ep);
    } else if (check_timed_form(s, state, v, first, timed, rec, ep) == 0) {
        int reps, warmup;
        double min_time;
        sl_case_plan(c->cfg, s, &reps, &warmup, &min_time);
        n = take_times(s, state, v, timed, rec, times, ext_now_s() - t0, reps, ep);
    }
    int status = ext_finish(&p, n > 0);
    free(go);
    if (n > 0 && status != 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "exited with status %d after its report", status);
        fail_ext(rec, "exit", msg, ep);
        n = -1;
    }
    add_external(rec, s, v, first, timed, checks, p.first_line_s > 0 ? p.first_line_s - t0 : NAN);
    json_object_set_new(json_object_get(rec, "external"), "form_chosen_by",
                        json_string(sl_external_forced_form(&c->opts) ? "--param form" : "fastest"));
    const char *device = device_name(&s->variants[v]);
    if (device && !strcmp(device, "cpu"))
        json_object_set_new(rec, "traits", json_pack("[s]", "external")); /* ran on the CPU: no GPU row */
    if (n > 0)
        remove_inputs(&in);
    free(line);
    json_decref(first);
    json_decref(timed);
    json_decref(checks);
    json_decref(in.manifest);
    return n;
}
