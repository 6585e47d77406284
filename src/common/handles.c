/* handles.c - the handle table: opaque handles are (slot, generation, kind) codes. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

/* A handle's value packs kind (4 bits), slot (24 bits) and generation (the rest) so that a
 * stale handle (its slot reused) or a forged one never matches a live entry, and checking a
 * handle never dereferences user-supplied memory. */
#define KIND_BITS 4u
#define SLOT_BITS 24u
#define MAX_SLOTS (1u << SLOT_BITS)

typedef struct slot {
    void *obj;
    const void *owner;
    uintptr_t gen;
    unsigned kind; /* 0: free */
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *g_slots;
static uint32_t g_cap, g_used, g_free_head_plus1;
/* Free slots are chained through obj (as an index + 1) to reuse them in O(1). */

static uintptr_t gen_mask(void)
{
    return ((uintptr_t)-1) >> (KIND_BITS + SLOT_BITS);
}

static void *encode(uint32_t index, uintptr_t gen, unsigned kind)
{
    uintptr_t v = (((gen & gen_mask()) << SLOT_BITS | index) << KIND_BITS) | kind;
    return (void *)v;
}

static slot *decode(const void *handle, uint32_t *index_out)
{
    uintptr_t v = (uintptr_t)handle;
    unsigned kind = (unsigned)(v & ((1u << KIND_BITS) - 1));
    uint32_t index = (uint32_t)((v >> KIND_BITS) & (MAX_SLOTS - 1));
    uintptr_t gen = v >> (KIND_BITS + SLOT_BITS);
    if (kind == 0 || index >= g_used) return NULL;
    slot *s = &g_slots[index];
    if (s->kind != kind || (s->gen & gen_mask()) != gen) return NULL;
    if (index_out) *index_out = index;
    return s;
}

void *dt_handle_new(dt_kind kind, void *obj, const void *owner)
{
    void *h = NULL;
    pthread_mutex_lock(&g_lock);
    uint32_t index;
    if (g_free_head_plus1) {
        index = g_free_head_plus1 - 1;
        g_free_head_plus1 = (uint32_t)(uintptr_t)g_slots[index].obj;
    } else {
        if (g_used == g_cap) {
            uint32_t cap = g_cap ? g_cap * 2 : 64;
            if (cap > MAX_SLOTS) cap = MAX_SLOTS;
            if (cap == g_cap) goto out;
            slot *grown = (slot *)realloc(g_slots, (size_t)cap * sizeof *grown);
            if (!grown) goto out;
            g_slots = grown;
            g_cap = cap;
        }
        index = g_used++;
        g_slots[index].gen = 0;
    }
    slot *s = &g_slots[index];
    s->gen++;
    /* Generation 0 would let a zeroed slot/kind pair look valid to a forged small value. */
    if ((s->gen & gen_mask()) == 0) s->gen++;
    s->obj = obj;
    s->owner = owner;
    s->kind = (unsigned)kind;
    h = encode(index, s->gen, (unsigned)kind);
out:
    pthread_mutex_unlock(&g_lock);
    return h;
}

void *dt_handle_get(const void *handle, dt_kind kind)
{
    void *obj = NULL;
    if (!handle) return NULL;
    pthread_mutex_lock(&g_lock);
    slot *s = decode(handle, NULL);
    if (s && s->kind == (unsigned)kind) obj = s->obj;
    pthread_mutex_unlock(&g_lock);
    return obj;
}

static void release_locked(uint32_t index)
{
    slot *s = &g_slots[index];
    s->kind = 0;
    s->owner = NULL;
    s->obj = (void *)(uintptr_t)g_free_head_plus1;
    g_free_head_plus1 = index + 1;
}

void dt_handle_release(const void *handle)
{
    pthread_mutex_lock(&g_lock);
    uint32_t index;
    if (decode(handle, &index)) release_locked(index);
    pthread_mutex_unlock(&g_lock);
}

/* The next live handle of kind at or after *cursor whose owner is owner (match NULL) or whose
 * object match() accepts: released, its object in *obj, *cursor moved past it. Resuming at
 * the cursor makes taking all of an owner's handles one pass over the table, not one pass
 * per handle (a context with 80,000 buffers). */
static void *take_next(const void *owner, dt_kind kind, int (*match)(const void *, const void *),
                       const void *user, uint32_t *cursor, void **obj)
{
    void *h = NULL;
    *obj = NULL;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = *cursor; i < g_used; i++) {
        slot *s = &g_slots[i];
        if (s->kind != (unsigned)kind) continue;
        if (match ? !match(s->obj, user) : s->owner != owner) continue;
        h = encode(i, s->gen, s->kind);
        *obj = s->obj;
        release_locked(i);
        *cursor = i + 1;
        break;
    }
    if (!h) *cursor = g_used;
    pthread_mutex_unlock(&g_lock);
    return h;
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
     * not stall every other thread's handle lookups meanwhile. */
    void **objs = NULL;
    size_t n = 0, cap = 0;
    duet_status st = DUET_SUCCESS;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < g_used; i++) {
        slot *s = &g_slots[i];
        if (s->kind != (unsigned)kind || s->owner != owner) continue;
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
