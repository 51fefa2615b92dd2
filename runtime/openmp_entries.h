/* The OpenMP entry points that GCC's `parallel for` calls, in each library of tracer's that
 * runs parallel loops (a compiled module, the installed kernels), handed to tracer's own
 * pool (runtime/thread_pool.c) through `tr_pool`, the table of its functions, which the
 * library's loader writes (runtime/native.py's `pool_table`). Defined hidden, they bind
 * the library's calls to themselves when it is linked, whatever OpenMP library the process
 * has loaded. A compiled module links them built once, as the object of
 * runtime/openmp_entries.c (setup.py); where there is none, each of its translation units
 * is compiled with this header, and they are weak so that the linker keeps one copy
 * (codegen/build.py). Until `tr_pool` is written, or where the pool was not built, each
 * loop runs whole on the thread that calls it.
 *
 * What GCC makes of the loops tracer writes (a static or dynamic schedule, `ordered`, a
 * reduction) calls no entry point but these; codegen/build.py refuses a module that calls
 * another (it would reach an OpenMP library that knows nothing of this pool's threads). */
#ifndef TR_OPENMP_ENTRIES_H
#define TR_OPENMP_ENTRIES_H
#include <stdbool.h>

typedef void (*tr_body)(void *);

/* the pool's functions, in this order (runtime/thread_pool.c fills one) */
struct tr_pool_api {
    void (*parallel)(tr_body body, void *data, unsigned threads);
    void (*parallel_loop)(tr_body body, void *data, unsigned threads, long start, long end,
                          long incr, long chunk);
    bool (*loop_start)(long start, long end, long incr, long chunk, long *first, long *last);
    bool (*loop_next)(long *first, long *last);
    bool (*ordered_loop_start)(long start, long end, long incr, long chunk, long *first,
                               long *last);
    bool (*ordered_loop_next)(long *first, long *last);
    void (*ordered_start)(void);
    void (*ordered_end)(void);
    void (*atomic_start)(void);
    void (*atomic_end)(void);
    int (*max_threads)(void);
    int (*num_threads)(void);
    int (*thread_num)(void);
};

#ifndef TR_POOL_ITSELF
/* one pointer's test and one call each: at -O3 their fourteen bodies added some 20 ms to
   every unit's compile, at -O0 about 6 (benchmarks/RESULTS.md) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O0")
#endif
#define TR_ENTRY __attribute__((weak, visibility("hidden")))

/* written by the loader once the library is loaded */
__attribute__((weak)) const struct tr_pool_api *tr_pool = 0;

/* without the pool: a loop's whole range is the one chunk of the thread that runs it */
static __thread struct { long start, end; bool pending; } tr_alone;

static bool tr_alone_range(long start, long end, long incr, long *first, long *last)
{
    *first = start;
    *last = end;
    return incr > 0 ? start < end : start > end;
}

TR_ENTRY void GOMP_parallel(tr_body body, void *data, unsigned threads, unsigned flags)
{
    (void)flags;
    if (tr_pool) {
        tr_pool->parallel(body, data, threads);
        return;
    }
    const bool pending = tr_alone.pending;
    tr_alone.pending = false;
    body(data);
    tr_alone.pending = pending;
}

TR_ENTRY void GOMP_parallel_loop_nonmonotonic_dynamic(tr_body body, void *data, unsigned threads,
                                                      long start, long end, long incr,
                                                      long chunk, unsigned flags)
{
    (void)flags;
    if (tr_pool) {
        tr_pool->parallel_loop(body, data, threads, start, end, incr, chunk);
        return;
    }
    const long saved_start = tr_alone.start, saved_end = tr_alone.end;
    const bool pending = tr_alone.pending;
    tr_alone.start = start;
    tr_alone.end = incr > 0 ? (start < end ? end : start) : (start > end ? end : start);
    tr_alone.pending = true;
    body(data);
    tr_alone.start = saved_start;
    tr_alone.end = saved_end;
    tr_alone.pending = pending;
}

TR_ENTRY bool GOMP_loop_nonmonotonic_dynamic_next(long *first, long *last)
{
    if (tr_pool) return tr_pool->loop_next(first, last);
    if (!tr_alone.pending) return false;
    tr_alone.pending = false;
    *first = tr_alone.start;
    *last = tr_alone.end;
    return tr_alone.start != tr_alone.end;
}

TR_ENTRY bool GOMP_loop_nonmonotonic_dynamic_start(long start, long end, long incr, long chunk,
                                                   long *first, long *last)
{
    if (tr_pool) return tr_pool->loop_start(start, end, incr, chunk, first, last);
    return tr_alone_range(start, end, incr, first, last);
}

TR_ENTRY bool GOMP_loop_ordered_dynamic_start(long start, long end, long incr, long chunk,
                                              long *first, long *last)
{
    if (tr_pool) return tr_pool->ordered_loop_start(start, end, incr, chunk, first, last);
    return tr_alone_range(start, end, incr, first, last);
}

TR_ENTRY bool GOMP_loop_ordered_dynamic_next(long *first, long *last)
{
    if (tr_pool) return tr_pool->ordered_loop_next(first, last);
    (void)first;
    (void)last;
    return false;
}

TR_ENTRY void GOMP_loop_end_nowait(void) {}

TR_ENTRY void GOMP_ordered_start(void)
{
    if (tr_pool) tr_pool->ordered_start();
}

TR_ENTRY void GOMP_ordered_end(void)
{
    if (tr_pool) tr_pool->ordered_end();
}

TR_ENTRY void GOMP_atomic_start(void)
{
    if (tr_pool) tr_pool->atomic_start();
}

TR_ENTRY void GOMP_atomic_end(void)
{
    if (tr_pool) tr_pool->atomic_end();
}

TR_ENTRY int omp_get_max_threads(void) { return tr_pool ? tr_pool->max_threads() : 1; }
TR_ENTRY int omp_get_num_threads(void) { return tr_pool ? tr_pool->num_threads() : 1; }
TR_ENTRY int omp_get_thread_num(void) { return tr_pool ? tr_pool->thread_num() : 0; }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#endif
#endif
