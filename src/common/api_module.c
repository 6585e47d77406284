/* api_module.c - runtime-compiled modules and kernel launches: handles and argument checks. */
#include "backend.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

duet_status dt_resolve_stream(duet_stream *handle, dt_context *ctx, const char *func,
                              dt_stream **out);
void dt_module_release(dt_module *m, const void *module_handle);

static duet_status check_list(const char *const *list, int n, const char *func,
                              const char *name)
{
    if (n < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "options.num_%s (%d) is negative",
                       name, n);
    if (n > 0 && !list)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func,
                       "options.%s is NULL but options.num_%s is %d", name, name, n);
    for (int i = 0; i < n; i++)
        if (!list[i])
            return dt_fail(DUET_ERROR_INVALID_ARGUMENT, func, "options.%s[%d] is NULL", name, i);
    return DUET_SUCCESS;
}

duet_status duet_module_create(duet_context *handle, const char *source,
                               const duet_module_options *options, duet_module **module)
{
    static const char *fn = "duet_module_create";
    dt_clear_error();
    dt_context *ctx = (dt_context *)dt_handle_get(handle, DT_CONTEXT);
    if (!ctx)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, fn, "ctx is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    if (!module) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "module is NULL");
    *module = NULL;
    if (!source) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "source is NULL");
    if (options) {
        duet_status st = check_list(options->defines, options->num_defines, fn, "defines");
        if (st == DUET_SUCCESS)
            st = check_list(options->include_dirs, options->num_include_dirs, fn, "include_dirs");
        if (st == DUET_SUCCESS)
            st = check_list(options->extra_options, options->num_extra_options, fn,
                            "extra_options");
        if (st != DUET_SUCCESS) return st;
    }
    dt_module *m = (dt_module *)calloc(1, sizeof *m);
    if (!m) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a module object");
    m->ctx = ctx;
    char *log = NULL;
    duet_status st = be_module_create(ctx, source, options, &m->be, &log);
    dt_set_compile_log(log ? log : "");
    if (st != DUET_SUCCESS) {
        free(log);
        free(m);
        return st;
    }
    m->log = log;
    *module = (duet_module *)dt_handle_new(DT_MODULE, m, ctx->self);
    if (!*module) {
        be_module_destroy(ctx, m->be);
        free(m->log);
        free(m);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    return DUET_SUCCESS;
}

duet_status duet_module_destroy(duet_module *handle)
{
    dt_clear_error();
    dt_module *m = (dt_module *)dt_handle_get(handle, DT_MODULE);
    if (!m)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, "duet_module_destroy", "module is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    dt_handle_release(handle);
    dt_module_release(m, handle);
    return DUET_SUCCESS;
}

duet_status duet_module_log(const duet_module *handle, const char **log)
{
    dt_clear_error();
    dt_module *m = (dt_module *)dt_handle_get(handle, DT_MODULE);
    if (!m)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, "duet_module_log", "module is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    if (!log) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, "duet_module_log", "log is NULL");
    *log = m->log ? m->log : "";
    return DUET_SUCCESS;
}

duet_status duet_module_get_function(duet_module *handle, const char *name,
                                     duet_function **function)
{
    static const char *fn = "duet_module_get_function";
    dt_clear_error();
    dt_module *m = (dt_module *)dt_handle_get(handle, DT_MODULE);
    if (!m)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, fn, "module is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    if (!name) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "name is NULL");
    if (!function) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "function is NULL");
    *function = NULL;
    if (strlen(name) >= sizeof(((dt_function *)0)->name))
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "name is longer than %zu characters",
                       sizeof(((dt_function *)0)->name) - 1);
    dt_function *f = (dt_function *)calloc(1, sizeof *f);
    if (!f) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate a function object");
    f->module = m;
    strcpy(f->name, name);
    duet_status st = be_module_get_function(m->ctx, m->be, name, &f->be);
    if (st != DUET_SUCCESS) {
        free(f);
        return st;
    }
    /* Owned by the module: destroying the module (or its context) releases its functions. */
    *function = (duet_function *)dt_handle_new(DT_FUNCTION, f, handle);
    if (!*function) {
        free(f);
        return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "the handle table cannot grow");
    }
    return DUET_SUCCESS;
}

duet_status duet_launch(duet_stream *stream, const duet_function *handle,
                        const duet_launch_config *config, const duet_arg *args, int num_args)
{
    static const char *fn = "duet_launch";
    dt_clear_error();
    dt_function *f = (dt_function *)dt_handle_get(handle, DT_FUNCTION);
    if (!f)
        return dt_fail(DUET_ERROR_INVALID_HANDLE, fn, "function is %s",
                       handle ? "not a live handle (destroyed or never created)" : "NULL");
    dt_context *ctx = f->module->ctx;
    if (!config) return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "config is NULL");
    duet_status st = dt_validate_config(&ctx->props, config, fn);
    if (st != DUET_SUCCESS) return st;
    if (num_args < 0)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "num_args (%d) is negative", num_args);
    if (num_args > 0 && !args)
        return dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "args is NULL but num_args is %d",
                       num_args);
    dt_stream *s = NULL;
    st = dt_resolve_stream(stream, ctx, fn, &s);
    if (st != DUET_SUCCESS) return st;
    be_arg *conv = (be_arg *)calloc(num_args > 0 ? (size_t)num_args : 1, sizeof *conv);
    if (!conv) return dt_fail(DUET_ERROR_OUT_OF_MEMORY, fn, "cannot allocate %d arguments", num_args);
    for (int i = 0; i < num_args && st == DUET_SUCCESS; i++) {
        conv[i].kind = args[i].kind;
        switch (args[i].kind) {
        case DUET_ARG_BUFFER: {
            dt_buffer *b = (dt_buffer *)dt_handle_get(args[i].value.buf.buffer, DT_BUFFER);
            if (!b)
                st = dt_fail(DUET_ERROR_INVALID_HANDLE, fn, "args[%d].buffer is %s", i,
                             args[i].value.buf.buffer ? "not a live handle" : "NULL");
            else if (b->ctx != ctx)
                st = dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                             "args[%d].buffer belongs to another context than function", i);
            else if (args[i].value.buf.offset > b->bytes)
                st = dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn,
                             "args[%d].offset (%zu) is past the end of its buffer (%zu bytes)",
                             i, args[i].value.buf.offset, b->bytes);
            else
                conv[i].v.ptr = b->ptr ? (char *)b->ptr + args[i].value.buf.offset : NULL;
            break;
        }
        case DUET_ARG_I32: conv[i].v.i32 = args[i].value.i32; break;
        case DUET_ARG_I64: conv[i].v.i64 = args[i].value.i64; break;
        case DUET_ARG_U32: conv[i].v.u32 = args[i].value.u32; break;
        case DUET_ARG_U64: conv[i].v.u64 = args[i].value.u64; break;
        case DUET_ARG_F32: conv[i].v.f32 = args[i].value.f32; break;
        case DUET_ARG_F64: conv[i].v.f64 = args[i].value.f64; break;
        default:
            st = dt_fail(DUET_ERROR_INVALID_ARGUMENT, fn, "args[%d].kind (%d) is not a duet_arg_kind",
                         i, (int)args[i].kind);
        }
    }
    if (st == DUET_SUCCESS) st = be_launch(ctx, s->be, f->be, config, conv, num_args);
    free(conv);
    return st;
}
