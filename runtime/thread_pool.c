/* tracer's thread pool: the threads that run the parallel loops of compiled modules and of
 * the installed kernels, whose OpenMP entry points (runtime/openmp_entries.h) hand each loop
 * here.
 *
 *     configure(threads, spin, caller_spin, watch, reserve)
 *         the pool's size (the calling thread counted); the pauses an idle worker spins
 *         before it sleeps; at least those a caller spins waiting for the shares its
 *         workers have started before it sleeps; with `watch`, the workers spin only while
 *         the machine is quiet (`look_at_the_machine`), and `reserve` workers more join
 *         the loops while it is not
 *     settings() -> (threads, spin now, caller's spin now, workers started)
 *     threads_now() -> the threads the last loop could use, the reserve's included
 *     table() -> the address of the pool's function table (struct tr_pool_api)
 *
 * OpenMP's team meets at the end of every loop: the caller waits until each thread of the
 * team has come, run its share and gone. Where other processes take the cores, a worker
 * comes milliseconds late, and the caller waits for it with its own work long done. Here a
 * loop's shares are claimed: the caller publishes the loop, wakes the workers, and takes
 * shares itself; a worker takes what is left when it comes. The caller waits only for
 * shares a worker has started, and runs a worker's share itself where that worker has not
 * come. A static schedule's shares are its threads' (`omp_get_thread_num` names the share,
 * so the loop is cut as OpenMP cuts it, whoever runs each); a dynamic schedule's workers
 * claim its chunks, and the caller, having run out of chunks, closes the loop to late
 * workers.
 *
 * Each thread of the pool owns a block of a static loop's shares, the caller the first, the
 * n-th worker the n-th: it claims its own shares first, in order, then those left of the
 * others', from the last one back. So where the threads keep pace, each runs the same part
 * of every loop of a size (and of every kernel that cuts its range as a static loop does),
 * and reads in the next loop what it wrote in the last: a part the other core wrote has to
 * travel between the cores' caches, which on a machine whose cores are far apart (two
 * chiplets, a VM's vCPUs placed apart) cost an eager step more than the second thread saved
 * (benchmarks/RESULTS.md). A late thread's shares are still taken by the others.
 *
 * A dynamic schedule's chunks are dealt the same way: the loop's range of chunks is cut into
 * one block for each thread of the pool, in order, and each thread claims the chunks of its
 * own block from the front, then takes the others' from their backs, the last block's first.
 * Which thread ran a chunk changes no value (a dynamic loop's iterations are independent:
 * codegen/loops.py gives that schedule to no reduction), and the parts of a product, the
 * rows of an elementwise loop and an optimizer's update stay on the core that had them.
 *
 * A static schedule is cut in SHARES_PER_THREAD shares for each of the pool's threads,
 * whoever takes them. Where other processes' ready threads outnumber the cores twice, the
 * scheduler gives each runnable thread its turn, and a pool whose threads are as many as
 * the cores gets only their part of the machine, its caller doing most of each loop alone:
 * then workers of a reserve (as many as the pool's threads at most, one for each other
 * ready thread beyond twice the cores' count) join the loops, each asleep when it has no
 * work.
 * The shares stay as many, and a product's parts (`omp_get_max_threads`) too, whoever
 * joins, so that what a loop computes (a reduction's partial sums) does not depend on the
 * load.
 *
 * One loop at a time has the pool; a loop started meanwhile in another thread, or inside a
 * share (nested), runs whole on its own thread. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TR_POOL_ITSELF
#include "openmp_entries.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define relax() _mm_pause() /* a spinning thread's pause: the core's other thread runs */
#elif defined(__aarch64__)
#define relax() __asm__ __volatile__("yield")
#else
#define relax() ((void)0)
#endif

#define INTERFACE 19 /* runtime/native.py refuses a module of another */
#define MAX_SLOTS 0xffff
#define LOOK_EVERY_NS 50000000 /* 50 ms */
#define LOOK_SOON_NS 5000000   /* 5 ms */
#define SHARES_PER_THREAD 2    /* a static loop's shares for each thread of the pool */
#define MAX_BLOCKS 64          /* a dynamic loop's blocks of chunks: threads beyond own none */

/* a loop on the pool: its body and what it reads, its shares, and its chunks */
struct team {
    tr_body body;
    void *data;
    unsigned slots;  /* shares: what omp_get_num_threads says inside the loop */
    bool every_slot; /* a static schedule (each share runs once), or seats at a dynamic one */
    _Atomic long next;
    long start, end, incr, step;
    bool by_blocks;   /* chunks claimed from `blocks` (the pool's dynamic loop), not `next` */
    unsigned blocks;  /* of them, one for each thread that owns one */
    _Atomic int loop_state; /* a loop begun inside the body: 0 not set, 1 being set, 2 set */
    _Atomic long ordered;   /* iterations (counted from 0) whose ordered sections have run */
};

/* the running thread's share, and its place in an ordered loop (iterations from 0); the
   block of a static loop's shares it owns (0 for a caller, -1 for the reserve's workers) */
static __thread struct {
    struct team *team;
    unsigned slot;
    int owner;
    long ordered_first, ordered_last, ordered_at;
} me;

static struct {
    int threads, workers;
    int reserve, reserve_workers; /* the workers that join the loops while the machine is busy */
    _Atomic int reserve_now;      /* of them, those the last look of the machine called */
    _Atomic uint32_t reserve_generation; /* the reserve's futex, raised for a busy loop */
    _Atomic int reserve_sleepers;
    long quiet_spin, caller_spin; /* as configured */
    _Atomic long spin, wait_spin; /* now: a worker's, a caller's */
    bool watch;
    int64_t next_look; /* when the caller looks at the machine again (ns, monotonic) */
    _Atomic uint32_t generation; /* raised for each loop: the workers' futex */
    _Atomic uint64_t claims;     /* generation << 32 | shares << 16 | shares claimed */
    _Atomic uint64_t owned;      /* a static loop's shares claimed, a bit each (all: none) */
    _Atomic bool by_owner;       /* the running loop's shares are claimed in `owned` */
    _Atomic uint32_t finished;   /* shares finished: the caller's futex */
    _Atomic int sleepers, caller_sleeps, busy;
    pthread_mutex_t start_lock;
    struct team team;
} pool = {.threads = 1, .owned = ~(uint64_t)0, .start_lock = PTHREAD_MUTEX_INITIALIZER};

/* the chunks left of each block of the pool's dynamic loop, `back << 32 | front` (chunks
   numbered from the loop's start), each on a cache line of its own */
static struct {
    _Alignas(64) _Atomic uint64_t range;
} blocks[MAX_BLOCKS];

static pthread_mutex_t atomic_lock = PTHREAD_MUTEX_INITIALIZER;

static void futex_wait(_Atomic uint32_t *word, uint32_t seen)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word, int count)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* a pause, or after `spin` of them the core for others: a waiter must not hold a core that
   the thread it waits for needs */
static void pause_or_yield(long *spun, const _Atomic long *spin)
{
    if ((*spun)++ < atomic_load_explicit(spin, memory_order_relaxed))
        relax();
    else
        sched_yield();
}

/* until `word` is no longer `seen`: `spin` pauses, then asleep on it, counted in `sleepers`
   (whoever changes the word wakes it where that count is not 0) */
static void wait_for_change(_Atomic uint32_t *word, uint32_t seen, const _Atomic long *spin,
                            _Atomic int *sleepers)
{
    long spun = 0;
    while (atomic_load_explicit(word, memory_order_acquire) == seen) {
        if (spun++ < atomic_load_explicit(spin, memory_order_relaxed)) {
            relax();
            continue;
        }
        atomic_fetch_add(sleepers, 1);
        if (atomic_load(word) == seen) futex_wait(word, seen);
        atomic_fetch_sub(sleepers, 1);
        spun = 0;
    }
}

/* a share of a static loop: the first left of the calling thread's own, else the last left
   of the others' */
static bool claim_owned(unsigned *slot)
{
    const int owner = me.owner;
    const uint64_t block = ((uint64_t)1 << SHARES_PER_THREAD) - 1;
    const uint64_t own =
        owner >= 0 && (owner + 1) * SHARES_PER_THREAD <= 64 ? block << (owner * SHARES_PER_THREAD)
                                                            : 0;
    uint64_t seen = atomic_load_explicit(&pool.owned, memory_order_acquire);
    for (;;) {
        const uint64_t left = ~seen;
        if (!left) return false;
        const unsigned share =
            left & own ? (unsigned)__builtin_ctzll(left & own) : 63 - (unsigned)__builtin_clzll(left);
        if (atomic_compare_exchange_weak_explicit(&pool.owned, &seen, seen | (uint64_t)1 << share,
                                                  memory_order_acq_rel, memory_order_acquire)) {
            *slot = share;
            return true;
        }
    }
}

/* a share of the loop of `generation`, where one is left. A static loop's are claimed in
   `owned`, whose shares are all claimed but while one runs: a thread that reads the next
   loop's `by_owner` claims in that loop, the team it then runs. */
static bool claim(uint32_t generation, unsigned *slot)
{
    uint64_t seen = atomic_load_explicit(&pool.claims, memory_order_acquire);
    if ((uint32_t)(seen >> 32) == generation &&
        atomic_load_explicit(&pool.by_owner, memory_order_relaxed))
        return claim_owned(slot);
    for (;;) {
        const unsigned claimed = seen & 0xffff, slots = (seen >> 16) & 0xffff;
        if ((uint32_t)(seen >> 32) != generation || claimed >= slots) return false;
        if (atomic_compare_exchange_weak_explicit(&pool.claims, &seen, seen + 1,
                                                  memory_order_acq_rel, memory_order_acquire)) {
            *slot = claimed;
            return true;
        }
    }
}

/* no more seats at the running dynamic loop: how many were taken */
static unsigned close_seats(void)
{
    uint64_t seen = atomic_load(&pool.claims);
    for (;;) {
        const unsigned claimed = seen & 0xffff, slots = (seen >> 16) & 0xffff;
        if (claimed >= slots) return slots;
        if (atomic_compare_exchange_weak(&pool.claims, &seen, (seen & ~(uint64_t)0xffff) | slots))
            return claimed;
    }
}

static void run_share(struct team *team, unsigned slot)
{
    const struct team *outer = me.team;
    const unsigned outer_slot = me.slot;
    me.team = team;
    me.slot = slot;
    team->body(team->data);
    me.team = (struct team *)outer;
    me.slot = outer_slot;
}

/* a worker of the pool's threads, or of its reserve (`reserve` not null): each waits on
   its own futex, the reserve's raised only for a loop started while the machine is busy */
static void *work(void *owner)
{
    me.owner = (int)(intptr_t)owner;
    const bool reserve = me.owner < 0;
    _Atomic uint32_t *word = reserve ? &pool.reserve_generation : &pool.generation;
    _Atomic int *sleepers = reserve ? &pool.reserve_sleepers : &pool.sleepers;
    uint32_t seen = atomic_load(word);
    for (;;) {
        wait_for_change(word, seen, &pool.spin, sleepers);
        seen = atomic_load(word);
        const uint32_t generation = atomic_load_explicit(&pool.generation, memory_order_acquire);
        unsigned slot;
        while (claim(generation, &slot)) {
            struct team *team = &pool.team;
            const bool every_slot = team->every_slot; /* the team is the next loop's after */
            run_share(team, slot);
            atomic_fetch_add(&pool.finished, 1);
            if (atomic_load(&pool.caller_sleeps)) futex_wake(&pool.finished, 1);
            if (!every_slot) break;
        }
    }
    return NULL;
}

static bool workers_wanted(int reserve)
{
    return pool.workers < pool.threads - 1 || pool.reserve_workers < reserve;
}

/* the workers the pool's size wants and has not yet, and up to `reserve` of the reserve's,
   with every signal blocked (signals are the program's threads' to take) */
static void start_workers(int reserve)
{
    pthread_mutex_lock(&pool.start_lock);
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    while (workers_wanted(reserve)) {
        const bool of_reserve = pool.workers >= pool.threads - 1;
        pthread_attr_t attributes;
        pthread_t thread;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        const intptr_t owner = of_reserve ? -1 : pool.workers + 1;
        const int failed = pthread_create(&thread, &attributes, work, (void *)owner);
        pthread_attr_destroy(&attributes);
        if (failed) break;
        if (of_reserve)
            pool.reserve_workers++;
        else
            pool.workers++;
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_mutex_unlock(&pool.start_lock);
}

/* a forked child has the calling thread alone: its loops start workers of their own */
static void forget_workers(void)
{
    pool.workers = pool.reserve_workers = 0;
    atomic_store(&pool.busy, 0);
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.reserve_sleepers, 0);
    atomic_store(&pool.caller_sleeps, 0);
    pthread_mutex_init(&pool.start_lock, NULL);
    pthread_mutex_init(&atomic_lock, NULL);
}

static void wait_for_shares(uint32_t shares)
{
    uint32_t finished;
    while ((finished = atomic_load_explicit(&pool.finished, memory_order_acquire)) < shares)
        wait_for_change(&pool.finished, finished, &pool.wait_spin, &pool.caller_sleeps);
}

/* the spins for a machine that is quiet, or not: idle workers spin only where no other
   process's thread is ready to run and the pool's threads fit the cores */
static void set_spins(bool quiet)
{
    const long spin = quiet ? pool.quiet_spin : 0;
    atomic_store_explicit(&pool.spin, spin, memory_order_relaxed);
    atomic_store_explicit(&pool.wait_spin, spin > pool.caller_spin ? spin : pool.caller_spin,
                          memory_order_relaxed);
}

/* other processes' threads ready to run now: the kernel's count in /proc/loadavg less this
   pool's own (the caller, and the workers, the reserve's too, not asleep); -1 where it
   cannot be read */
static long others_running(void)
{
    char text[128];
    const int file = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (file < 0) return -1;
    const ssize_t length = read(file, text, sizeof text - 1);
    close(file);
    if (length <= 0) return -1;
    text[length] = 0;
    long running;
    if (sscanf(text, "%*s %*s %*s %ld/", &running) != 1) return -1;
    const long own = 1 + pool.workers - atomic_load(&pool.sleepers) + pool.reserve_workers -
                     atomic_load(&pool.reserve_sleepers);
    return running > own ? running - own : 0;
}

/* the spins (rule 3), and the reserve the loops call: a worker for each other ready thread
   beyond twice the cores' count, up to the reserve's size (where other threads want every
   core twice over, each runnable thread gets its turn, and a pool of the cores' size a
   third of the machine or less; a reserve called for a lighter load, one other thread a
   core, made the pool's threads wait on each other instead: docs/threads.md, rule 4).
   Whether the machine is quiet. */
static bool judge_the_machine(void)
{
    const long others = others_running();
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const bool quiet = others >= 0 && others + pool.threads <= cores;
    set_spins(quiet);
    const long beyond = others > 2 * cores ? others - 2 * cores : 0;
    atomic_store(&pool.reserve_now, (int)(beyond < pool.reserve ? beyond : pool.reserve));
    return quiet;
}

/* by the caller that has the pool, LOOK_EVERY_NS after a quiet look (other processes that
   come later stop the workers' spin, and call the reserve, within that time) and
   LOOK_SOON_NS after a busy one (the spin comes back, and the reserve rests, soon after
   they end: the compiler that built a module, say) */
static void look_at_the_machine(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    const int64_t at = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    if (at < pool.next_look) return;
    pool.next_look = at + (judge_the_machine() ? LOOK_EVERY_NS : LOOK_SOON_NS);
}

/* the chunks of `team`'s loop, cut into one block for each thread of the pool, in order */
static void deal_blocks(struct team *team)
{
    const long span = team->incr > 0 ? team->end - team->start : team->start - team->end;
    const long step = team->step > 0 ? team->step : -team->step;
    const long chunks = span > 0 ? (span + step - 1) / step : 0;
    const unsigned owners = pool.threads < MAX_BLOCKS ? (unsigned)pool.threads : MAX_BLOCKS;
    team->by_blocks = chunks < (long)INT_MAX;
    if (!team->by_blocks) return;
    team->blocks = owners;
    for (unsigned b = 0; b < owners; b++) {
        const uint64_t front = (uint64_t)(chunks * b / owners);
        const uint64_t back = (uint64_t)(chunks * (b + 1) / owners);
        atomic_store_explicit(&blocks[b].range, back << 32 | front, memory_order_relaxed);
    }
}

/* one chunk of block `b`: its first left (`front`), or its last left */
static bool take_chunk(unsigned b, bool front, long *chunk)
{
    uint64_t seen = atomic_load_explicit(&blocks[b].range, memory_order_relaxed);
    for (;;) {
        const uint64_t first = seen & 0xffffffff, end = seen >> 32;
        if (first >= end) return false;
        const uint64_t taken = front ? seen + 1 : seen - ((uint64_t)1 << 32);
        if (atomic_compare_exchange_weak_explicit(&blocks[b].range, &seen, taken,
                                                  memory_order_relaxed, memory_order_relaxed)) {
            *chunk = (long)(front ? first : end - 1);
            return true;
        }
    }
}

/* a chunk of the pool's dynamic loop: the first left of the calling thread's own block, else
   the last left of the others', the last block's first */
static bool claim_chunk(const struct team *team, long *chunk)
{
    const int owner = me.owner;
    if (owner >= 0 && (unsigned)owner < team->blocks && take_chunk((unsigned)owner, true, chunk))
        return true;
    for (unsigned b = team->blocks; b-- > 0;)
        if ((int)b != owner && take_chunk(b, false, chunk)) return true;
    return false;
}

/* `loop` (set up by the caller) on the pool, in `slots` shares (a dynamic loop's seats,
   the reserve's added while the machine is busy): false where the pool is another
   thread's now, or this is a share of a loop already */
static bool run_on_pool(const struct team *loop, unsigned slots)
{
    int free_ = 0;
    if (me.team || !atomic_compare_exchange_strong(&pool.busy, &free_, 1)) return false;
    if (pool.watch) look_at_the_machine();
    int reserve = atomic_load(&pool.reserve_now);
    if (workers_wanted(reserve)) start_workers(reserve);
    if (reserve > pool.reserve_workers) reserve = pool.reserve_workers;
    if (!loop->every_slot) slots += (unsigned)reserve;
    struct team *team = &pool.team;
    team->body = loop->body;
    team->data = loop->data;
    team->slots = slots;
    team->every_slot = loop->every_slot;
    atomic_store_explicit(&team->next, atomic_load(&loop->next), memory_order_relaxed);
    team->start = loop->start;
    team->end = loop->end;
    team->incr = loop->incr;
    team->step = loop->step;
    atomic_store_explicit(&team->loop_state, atomic_load(&loop->loop_state), memory_order_relaxed);
    atomic_store_explicit(&team->ordered, 0, memory_order_relaxed);
    team->by_blocks = false;
    if (!team->every_slot && atomic_load_explicit(&team->loop_state, memory_order_relaxed) == 2)
        deal_blocks(team);
    atomic_store_explicit(&pool.finished, 0, memory_order_relaxed);
    const uint32_t generation = atomic_load(&pool.generation) + 1;
    const bool by_owner = team->every_slot && slots <= 64;
    atomic_store_explicit(&pool.by_owner, by_owner, memory_order_relaxed);
    if (by_owner)
        atomic_store_explicit(&pool.owned, slots == 64 ? 0 : ~(uint64_t)0 << slots,
                              memory_order_relaxed);
    atomic_store_explicit(&pool.claims, (uint64_t)generation << 32 | (uint64_t)slots << 16,
                          memory_order_release);
    atomic_store(&pool.generation, generation);
    if (atomic_load(&pool.sleepers)) futex_wake(&pool.generation, INT_MAX);
    if (reserve) {
        atomic_fetch_add(&pool.reserve_generation, 1);
        if (atomic_load(&pool.reserve_sleepers)) futex_wake(&pool.reserve_generation, reserve);
    }
    unsigned slot, claimed = slots;
    if (team->every_slot) {
        while (claim(generation, &slot)) {
            run_share(team, slot);
            atomic_fetch_add(&pool.finished, 1);
        }
    } else {
        if (claim(generation, &slot)) {
            run_share(team, slot);
            atomic_fetch_add(&pool.finished, 1);
        }
        claimed = close_seats();
    }
    wait_for_shares(claimed);
    atomic_store_explicit(&pool.busy, 0, memory_order_release);
    return true;
}

static unsigned threads_for(unsigned asked)
{
    const unsigned threads = (unsigned)pool.threads;
    return asked == 0 || asked > threads ? threads : asked;
}

static void parallel(tr_body body, void *data, unsigned threads)
{
    struct team loop = {.body = body, .data = data, .every_slot = true};
    threads = threads_for(threads);
    if (threads > 1 && run_on_pool(&loop, threads * SHARES_PER_THREAD)) return;
    loop.slots = 1;
    run_share(&loop, 0);
}

/* a loop's range and chunk, its chunks claimed in order from `next` */
static void set_loop_range(struct team *team, long start, long end, long incr, long chunk)
{
    atomic_store_explicit(&team->next, start, memory_order_relaxed);
    team->start = start;
    team->end = end;
    team->incr = incr;
    team->step = chunk * incr;
    team->by_blocks = false;
    atomic_store_explicit(&team->ordered, 0, memory_order_relaxed);
}

static void set_loop(struct team *team, long start, long end, long incr, long chunk)
{
    set_loop_range(team, start, end, incr, chunk);
    atomic_store_explicit(&team->loop_state, 2, memory_order_release);
}

static void parallel_loop(tr_body body, void *data, unsigned threads, long start, long end,
                          long incr, long chunk)
{
    struct team loop = {.body = body, .data = data, .every_slot = false};
    set_loop(&loop, start, end, incr, chunk);
    threads = threads_for(threads);
    if (threads > 1 && run_on_pool(&loop, threads)) return;
    loop.slots = 1;
    run_share(&loop, 0);
}

static bool loop_next(long *first, long *last)
{
    struct team *team = me.team;
    long at, chunk;
    if (team->by_blocks) {
        if (!claim_chunk(team, &chunk)) return false;
        at = team->start + chunk * team->step;
    } else {
        at = atomic_fetch_add(&team->next, team->step);
        if (team->incr > 0 ? at >= team->end : at <= team->end) return false;
    }
    const long end = at + team->step;
    *first = at;
    *last = (team->incr > 0 ? end > team->end : end < team->end) ? team->end : end;
    return true;
}

/* the loop a share's body begins: the first share to come sets it (its chunks dealt in
   blocks where `dealt` and the loop is the pool's), the others wait */
static void begin_loop(long start, long end, long incr, long chunk, bool dealt)
{
    struct team *team = me.team;
    int unset = 0;
    if (atomic_compare_exchange_strong(&team->loop_state, &unset, 1)) {
        if (dealt && team == &pool.team) {
            set_loop_range(team, start, end, incr, chunk);
            deal_blocks(team);
            atomic_store_explicit(&team->loop_state, 2, memory_order_release);
        } else
            set_loop(team, start, end, incr, chunk);
    } else {
        long spun = 0;
        while (atomic_load_explicit(&team->loop_state, memory_order_acquire) != 2)
            pause_or_yield(&spun, &pool.wait_spin);
    }
}

static bool loop_start(long start, long end, long incr, long chunk, long *first, long *last)
{
    begin_loop(start, end, incr, chunk, true);
    return loop_next(first, last);
}

/* an ordered loop's chunk, done: the ordered sections pass on past its iterations (where
   a section was skipped, the next chunk's may run all the same) */
static void pass_ordered(struct team *team)
{
    if (me.ordered_last <= me.ordered_first) return;
    long spun = 0;
    while (atomic_load_explicit(&team->ordered, memory_order_acquire) < me.ordered_first)
        pause_or_yield(&spun, &pool.wait_spin);
    if (atomic_load(&team->ordered) < me.ordered_last)
        atomic_store_explicit(&team->ordered, me.ordered_last, memory_order_release);
    me.ordered_first = me.ordered_last = 0;
}

static bool ordered_loop_next(long *first, long *last)
{
    struct team *team = me.team;
    pass_ordered(team);
    if (!loop_next(first, last)) return false;
    me.ordered_first = me.ordered_at = (*first - team->start) / team->incr;
    me.ordered_last = (*last - team->start) / team->incr;
    return true;
}

static bool ordered_loop_start(long start, long end, long incr, long chunk, long *first,
                               long *last)
{
    me.ordered_first = me.ordered_last = 0;
    begin_loop(start, end, incr, chunk, false); /* its sections pass in order: chunks too */
    return ordered_loop_next(first, last);
}

static void ordered_start(void)
{
    long spun = 0;
    while (atomic_load_explicit(&me.team->ordered, memory_order_acquire) != me.ordered_at)
        pause_or_yield(&spun, &pool.wait_spin);
}

static void ordered_end(void)
{
    me.ordered_at++;
    atomic_store_explicit(&me.team->ordered, me.ordered_at, memory_order_release);
}

static void atomic_start(void) { pthread_mutex_lock(&atomic_lock); }
static void atomic_end(void) { pthread_mutex_unlock(&atomic_lock); }
static int max_threads(void) { return pool.threads; }
static int num_threads(void) { return me.team ? (int)me.team->slots : 1; }
static int thread_num(void) { return me.team ? (int)me.slot : 0; }

static const struct tr_pool_api api = {
    parallel,      parallel_loop, loop_start,   loop_next,  ordered_loop_start,
    ordered_loop_next, ordered_start, ordered_end, atomic_start, atomic_end,
    max_threads,   num_threads,   thread_num,
};

static PyObject *configure(PyObject *self, PyObject *args)
{
    (void)self;
    int threads, watch, reserve;
    long spin, caller_spin;
    if (!PyArg_ParseTuple(args, "illpi", &threads, &spin, &caller_spin, &watch, &reserve))
        return NULL;
    if (threads < 1 || reserve < 0 || (threads + reserve) * SHARES_PER_THREAD > MAX_SLOTS ||
        spin < 0 || caller_spin < 0) {
        PyErr_Format(PyExc_ValueError,
                     "a pool of 1 to %d threads with its reserve and spins of 0 pauses or "
                     "more, not %d + %d, %ld, %ld",
                     MAX_SLOTS / SHARES_PER_THREAD, threads, reserve, spin, caller_spin);
        return NULL;
    }
    pool.threads = threads;
    pool.quiet_spin = spin;
    pool.caller_spin = caller_spin;
    pool.watch = watch;
    pool.reserve = watch ? reserve : 0;
    pool.next_look = 0;
    atomic_store(&pool.reserve_now, 0);
    if (watch)
        judge_the_machine();
    else
        set_spins(true);
    Py_RETURN_NONE;
}

static PyObject *settings(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return Py_BuildValue("(illi)", pool.threads, atomic_load(&pool.spin),
                         atomic_load(&pool.wait_spin), pool.workers);
}

static PyObject *threads_now(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLong(pool.threads + atomic_load(&pool.reserve_now));
}

static PyObject *table(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromVoidPtr((void *)&api);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "the pool's size and spins"},
    {"settings", settings, METH_NOARGS, "(threads, spin now, caller's spin now, workers)"},
    {"threads_now", threads_now, METH_NOARGS, "the threads the last loop could use"},
    {"table", table, METH_NOARGS, "the address of the pool's function table"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_thread_pool", "tracer's thread pool", -1, methods,
    NULL,                  NULL,           NULL,                   NULL,
};

PyMODINIT_FUNC
PyInit__thread_pool(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    static bool forks_handled;
    if (!forks_handled) forks_handled = pthread_atfork(NULL, NULL, forget_workers) == 0;
    return module;
}
