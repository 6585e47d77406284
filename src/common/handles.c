/* handles.c - the handle table: opaque handles are (slot, generation, kind) codes. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

/* A handle's value packs kind (4 bits), slot (24 bits) and generation (the rest) so that a
 * stale handle (its slot reused) or a forged one never matches a live entry, and checking a
 * handle never dereferences user-supplied memory.
 *
 * Reads (dt_handle_get, on every op) take no lock; create, destroy and the per-owner walks
 * take g_lock. What makes the lock-free read safe:
 * - The table never moves and never shrinks: slots live in segments that are allocated once,
 *   zeroed, published with a release store and kept for the life of the process (segment k
 *   holds SEG0 << k slots, so 19 pointers cover all 2^24 slots). A lookup with any value, stale
 *   or forged, reads only table memory.
 * - A slot's `live` word holds the full value of the handle that owns it (0 while free). A
 *   lookup matches the handle's value against it, reads obj and reads `live` again (a seqlock
 *   read, writers hold g_lock): a slot freed or reused while it reads answers NULL, never a
 *   mix of two objects. Generations make a reused slot's value differ from every earlier one
 *   until the generation wraps (2^36 creations of one slot on a 64-bit host).
 * The rule (docs/internals.md): a handle destroyed before a call begins (same thread, or
 * ordered by the caller's own synchronisation) is always detected; destroying a handle while
 * another thread is inside a call that uses it is a race the caller must avoid, as it was with
 * a locked lookup (the object could be freed as soon as the lock was dropped). */
#define KIND_BITS 4u
#define SLOT_BITS 24u
#define MAX_SLOTS (1u << SLOT_BITS)
#define SEG0_BITS 6u
#define SEG0 (1u << SEG0_BITS)
#define MAX_SEGS (SLOT_BITS - SEG0_BITS + 1u)

typedef struct slot {
    uintptr_t live;    /* the live handle's value, 0 when free: read without the lock */
    void *obj;         /* read without the lock while live                           */
    const void *owner; /* the rest only under g_lock                                 */
    uintptr_t gen;
    uint32_t next_free_plus1;
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *g_segs[MAX_SEGS]; /* written under g_lock (release), read with acquire loads */
static uint32_t g_cap, g_used, g_free_head_plus1;

#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RLX(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define STORE_RLX(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
/* (No standalone fences: the seqlock below orders through the obj word, which ThreadSanitizer
 * understands, unlike atomic_thread_fence.) */

/* Segment k holds indices [SEG0 (2^k - 1), SEG0 (2^(k+1) - 1)). */
static inline unsigned seg_of(uint32_t index, uint32_t *offset)
{
    const uint32_t q = (index >> SEG0_BITS) + 1u;
    const unsigned k = 31u - (unsigned)__builtin_clz(q);
    *offset = index - SEG0 * ((1u << k) - 1u);
    return k;
}

/* Only under g_lock, for index < g_cap. */
static slot *slot_at(uint32_t index)
{
    uint32_t off;
    const unsigned k = seg_of(index, &off);
    return &g_segs[k][off];
}

static uintptr_t gen_mask(void)
{
    return ((uintptr_t)-1) >> (KIND_BITS + SLOT_BITS);
}

static uintptr_t encode(uint32_t index, uintptr_t gen, unsigned kind)
{
    return (((gen & gen_mask()) << SLOT_BITS | index) << KIND_BITS) | kind;
}

void *dt_handle_new(dt_kind kind, void *obj, const void *owner)
{
    uintptr_t h = 0;
    pthread_mutex_lock(&g_lock);
    uint32_t index;
    if (g_free_head_plus1) {
        index = g_free_head_plus1 - 1;
        g_free_head_plus1 = slot_at(index)->next_free_plus1;
    } else {
        if (g_used == MAX_SLOTS) goto out;
        if (g_used == g_cap) {
            uint32_t off;
            const unsigned k = seg_of(g_cap, &off);
            slot *seg = (slot *)calloc((size_t)SEG0 << k, sizeof *seg);
            if (!seg) goto out;
            STORE_REL(&g_segs[k], seg); /* zeroed before readers can see it */
            g_cap += SEG0 << k;
        }
        index = g_used++;
    }
    slot *s = slot_at(index);
    s->gen++;
    /* Generation 0 would let a zeroed slot/kind pair look valid to a forged small value. */
    if ((s->gen & gen_mask()) == 0) s->gen++;
    s->next_free_plus1 = 0;
    s->owner = owner;
    STORE_REL(&s->obj, obj);
    h = encode(index, s->gen, (unsigned)kind);
    STORE_REL(&s->live, h); /* obj is visible to whoever sees the handle live */
out:
    pthread_mutex_unlock(&g_lock);
    return (void *)h;
}

void *dt_handle_get(const void *handle, dt_kind kind)
{
    const uintptr_t v = (uintptr_t)handle;
    if ((v & ((1u << KIND_BITS) - 1)) != (uintptr_t)kind) return NULL; /* NULL included */
    const uint32_t index = (uint32_t)((v >> KIND_BITS) & (MAX_SLOTS - 1));
    uint32_t off;
    const slot *seg = LOAD_ACQ(&g_segs[seg_of(index, &off)]);
    if (!seg) return NULL;
    const slot *s = &seg[off];
    if (LOAD_ACQ(&s->live) != v) return NULL;
    /* Acquire: the second read of live comes after it; and an obj that release_locked stored
     * brings its "live = 0" with it, so that a slot freed meanwhile fails the second read. */
    void *obj = LOAD_ACQ(&s->obj);
    if (LOAD_RLX(&s->live) != v) return NULL; /* released (and maybe reused) meanwhile */
    return obj;
}

/* Frees slot s (index): readers see it dead before anything else in it changes. */
static void release_locked(slot *s, uint32_t index)
{
    STORE_RLX(&s->live, (uintptr_t)0);
    STORE_REL(&s->obj, (void *)NULL); /* publishes live = 0 to whoever reads this obj */
    s->owner = NULL;
    s->next_free_plus1 = g_free_head_plus1;
    g_free_head_plus1 = index + 1;
}

void dt_handle_release(const void *handle)
{
    const uintptr_t v = (uintptr_t)handle;
    const uint32_t index = (uint32_t)((v >> KIND_BITS) & (MAX_SLOTS - 1));
    pthread_mutex_lock(&g_lock);
    if (v != 0 && index < g_used) {
        slot *s = slot_at(index);
        if (s->live == v) release_locked(s, index);
    }
    pthread_mutex_unlock(&g_lock);
}

/* The next live handle of kind at or after *cursor whose owner is owner (match NULL) or whose
 * object match() accepts: released, its object in *obj, *cursor moved past it. Resuming at
 * the cursor makes taking all of an owner's handles one pass over the table, not one pass
 * per handle (a context with 80,000 buffers). */
static void *take_next(const void *owner, dt_kind kind, int (*match)(const void *, const void *),
                       const void *user, uint32_t *cursor, void **obj)
{
    uintptr_t h = 0;
    *obj = NULL;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = *cursor; i < g_used; i++) {
        slot *s = slot_at(i);
        if (s->live == 0 || (s->live & ((1u << KIND_BITS) - 1)) != (uintptr_t)kind) continue;
        if (match ? !match(s->obj, user) : s->owner != owner) continue;
        h = s->live;
        *obj = s->obj;
        release_locked(s, i);
        *cursor = i + 1;
        break;
    }
    if (!h) *cursor = g_used;
    pthread_mutex_unlock(&g_lock);
    return (void *)h;
}

void *dt_handle_take_owned(const void *owner, dt_kind kind, uint32_t *cursor, void **obj)
{
    return take_next(owner, kind, NULL, NULL, cursor, obj);
}

void *dt_handle_take_matching(dt_kind kind, int (*match)(const void *obj, const void *user),
                              const void *user, uint32_t *cursor, void **obj)
{
    return take_next(NULL, kind, match, user, cursor, obj);
}

duet_status dt_handle_for_each_owned(const void *owner, dt_kind kind,
                                     duet_status (*fn)(void *obj, void *user), void *user)
{
    /* Collect under the lock, call outside it: fn may block (a stream synchronize) and must
     * not stall every other thread's creates and destroys meanwhile. */
    void **objs = NULL;
    size_t n = 0, cap = 0;
    duet_status st = DUET_SUCCESS;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < g_used; i++) {
        slot *s = slot_at(i);
        if (s->live == 0 || (s->live & ((1u << KIND_BITS) - 1)) != (uintptr_t)kind ||
            s->owner != owner)
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            void **grown = (void **)realloc(objs, ncap * sizeof *grown);
            if (!grown) {
                st = dt_fail(DUET_ERROR_OUT_OF_MEMORY, "duet", "cannot list a context's objects");
                break;
            }
            objs = grown;
            cap = ncap;
        }
        objs[n++] = s->obj;
    }
    pthread_mutex_unlock(&g_lock);
    for (size_t i = 0; i < n && st == DUET_SUCCESS; i++) st = fn(objs[i], user);
    free(objs);
    return st;
}
