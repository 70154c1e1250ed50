/* User objects (clr hipamd/src/hip_graph.cpp hipUserObject*, hipGraphRetain/
 * ReleaseUserObject; hip::UserObject and Graph's graphUserObj_ in
 * hip_graph_internal.hpp/.cpp, at rocm-6.2.0 and amd-staging 2024-10).
 *
 * An object counts its references; the one that drops the count to zero
 * runs the destructor at once, on the releasing thread (~UserObject calls
 * it), so its timing is: the last hipUserObjectRelease, the last
 * hipGraphReleaseUserObject, or the destruction of the last graph or
 * executable graph owning a reference.  A graph's clone (hipGraphClone, and
 * the clone an executable graph keeps) takes one reference of each object
 * its original owns.  The stub releases an executable graph's references
 * once its last launch has completed, so a destructor never runs while the
 * graph's work is in flight (hipamd's GraphExec is itself reference counted
 * for the same reason).
 *
 * hipamd checks no handle: an object it no longer lists (all references
 * released, or moved into a graph before 6.3) makes Retain and Release
 * succeed doing nothing.  The stub keeps every live object in a registry and
 * does the same for one it does not know, instead of reading freed memory.
 *
 * What a graph owns changed after 6.2 (STUB_RULE_GRAPH_USER_OBJECT_COUNTS):
 * 6.2 keeps a set and releases one reference per object when the graph
 * goes, and hipGraphUserObjectMove takes the object off the live list; from
 * 6.3 the graph counts the references it retained (or was moved) and
 * releases that count, and a moved object stays listed. */
#include <limits.h>
#include <pthread.h>

#include "hip_graph.h"
#include "stub_version.h"

typedef struct user_object {
    uint64_t id;                      /* unique: a graph's entry outlives a freed object */
    unsigned refs;
    bool listed;                      /* hipamd's UserObject::ObjectSet_ */
    void (*destroy)(void *);
    void *ptr;
} user_object_t;

struct hip_user_refs {
    size_t n, cap;
    struct user_ref {
        user_object_t *obj;
        uint64_t id;
        unsigned count;               /* the graph's own references (6.3 on) */
    } *v;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static hip_registry_t objects = HIP_REGISTRY_INIT;   /* allocated, listed or not */

static bool alive(const user_object_t *o, uint64_t id) {
    return o && hip_registry_contains(&objects, o) && (id == 0 || o->id == id);
}

/* Drop n references (lock held); the destructor to run once unlocked, or NULL. */
static user_object_t *drop(user_object_t *o, unsigned n) {
    o->refs = n >= o->refs ? 0 : o->refs - n;
    if (o->refs) return NULL;
    o->listed = false;
    hip_registry_remove(&objects, o);
    return o;
}

static void finish(user_object_t *dead) {
    if (!dead) return;
    dead->destroy(dead->ptr);
    free(dead);
}

static struct user_ref *find(hip_user_refs_t *r, const user_object_t *o) {
    for (size_t i = 0; r && i < r->n; i++)
        if (r->v[i].obj == o && alive(o, r->v[i].id)) return &r->v[i];
    return NULL;
}

static struct user_ref *add(hip_user_refs_t **rp, user_object_t *o) {
    struct user_ref *e = find(*rp, o);
    if (e) return e;
    hip_user_refs_t *r = *rp;
    if (!r && !(r = *rp = calloc(1, sizeof *r))) return NULL;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 4;
        struct user_ref *v = realloc(r->v, cap * sizeof *v);
        if (!v) return NULL;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n] = (struct user_ref){o, o->id, 0};
    return &r->v[r->n++];
}

void hip_user_refs_free(hip_user_refs_t **rp) {
    hip_user_refs_t *r = *rp;
    if (!r) return;
    *rp = NULL;
    bool counted = stub_rule(STUB_RULE_GRAPH_USER_OBJECT_COUNTS);
    for (size_t i = 0; i < r->n; i++) {
        pthread_mutex_lock(&lock);
        user_object_t *o = r->v[i].obj, *dead = NULL;
        if (alive(o, r->v[i].id)) {
            /* ~Graph: 6.3 on, the graph's count (skipped when it exceeds the
             * object's); 6.2, one release per object */
            unsigned n = counted ? r->v[i].count : 1;
            if (!counted || n <= o->refs) dead = drop(o, n);
        }
        pthread_mutex_unlock(&lock);
        finish(dead);
    }
    free(r->v);
    free(r);
}

hipError_t hip_user_refs_clone(hip_user_refs_t *src, hip_user_refs_t **dst) {
    pthread_mutex_lock(&lock);
    hipError_t status = hipSuccess;
    for (size_t i = 0; src && i < src->n && status == hipSuccess; i++) {
        user_object_t *o = src->v[i].obj;
        if (!alive(o, src->v[i].id)) continue;
        struct user_ref *e = add(dst, o);
        if (!e) {
            status = hipErrorOutOfMemory;
            break;
        }
        o->refs++;                    /* Graph::clone: userObj->retain() */
        e->count = 1;
    }
    pthread_mutex_unlock(&lock);
    return status;
}

#ifdef ROCPY_HAVE_hipUserObjectCreate
static uint64_t next_id = 1;

static void forget(hip_user_refs_t *r, const user_object_t *o) {
    for (size_t i = 0; r && i < r->n; i++)
        if (r->v[i].obj == o) r->v[i] = r->v[--r->n];
}


static bool bad_count(unsigned count) { return count == 0 || count > INT_MAX; }

hipError_t hipUserObjectCreate(hipUserObject_t *object_out, void *ptr, hipHostFn_t destroy,
                               unsigned int initialRefcount, unsigned int flags) {
    HIP_INIT_API();
    if (!object_out || flags != hipUserObjectNoDestructorSync || bad_count(initialRefcount) ||
        !destroy)
        HIP_RETURN(hipErrorInvalidValue);
    user_object_t *o = calloc(1, sizeof *o);
    if (!o) HIP_RETURN(hipErrorOutOfMemory);
    pthread_mutex_lock(&lock);
    *o = (user_object_t){next_id++, initialRefcount, true, destroy, ptr};
    bool added = hip_registry_add(&objects, o);
    pthread_mutex_unlock(&lock);
    if (!added) {
        free(o);
        HIP_RETURN(hipErrorOutOfMemory);
    }
    *object_out = (hipUserObject_t)(void *)o;
    HIP_RETURN(hipSuccess);
}

/* hip::hipUserObjectRelease, lock held: more than its count, or an object no
 * longer listed, is hipSuccess doing nothing */
static user_object_t *release_locked(user_object_t *o, unsigned count) {
    if (!alive(o, 0) || !o->listed || o->refs < count) return NULL;
    return drop(o, count);
}

hipError_t hipUserObjectRelease(hipUserObject_t object, unsigned int count) {
    HIP_INIT_API();
    if (!object || bad_count(count)) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&lock);
    user_object_t *dead = release_locked((user_object_t *)(void *)object, count);
    pthread_mutex_unlock(&lock);
    finish(dead);
    HIP_RETURN(hipSuccess);
}

hipError_t hipUserObjectRetain(hipUserObject_t object, unsigned int count) {
    HIP_INIT_API();
    if (!object || bad_count(count)) HIP_RETURN(hipErrorInvalidValue);
    user_object_t *o = (user_object_t *)(void *)object;
    pthread_mutex_lock(&lock);
    if (alive(o, 0) && o->listed) o->refs += count;
    pthread_mutex_unlock(&lock);
    HIP_RETURN(hipSuccess);
}

/* hipamd reads the graph without checking it: the stub refuses one that is
 * not live (hipErrorInvalidValue) */
hipError_t hipGraphRetainUserObject(hipGraph_t graph, hipUserObject_t object, unsigned int count,
                                    unsigned int flags) {
    HIP_INIT_API();
    if (!graph || !object || bad_count(count) || (flags != 0 && flags != hipGraphUserObjectMove) ||
        !hip_graph_valid(graph))
        HIP_RETURN(hipErrorInvalidValue);
    user_object_t *o = (user_object_t *)(void *)object;
    bool counted = stub_rule(STUB_RULE_GRAPH_USER_OBJECT_COUNTS);
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&lock);           /* guards graph->user_objects too */
    bool known = alive(o, 0) && (o->listed || find(graph->user_objects, o));
    if (known) {
        if (flags != hipGraphUserObjectMove) {
            if (o->listed) o->refs += count;
        } else if (!counted) {
            o->listed = false;         /* 6.2: removeUSerObj */
        }
        struct user_ref *e = add(&graph->user_objects, o);
        if (!e) status = hipErrorOutOfMemory;
        else e->count += count;
    }
    pthread_mutex_unlock(&lock);
    HIP_RETURN(status);
}

hipError_t hipGraphReleaseUserObject(hipGraph_t graph, hipUserObject_t object, unsigned int count) {
    HIP_INIT_API();
    if (!graph || !object || bad_count(count) || !hip_graph_valid(graph))
        HIP_RETURN(hipErrorInvalidValue);
    user_object_t *o = (user_object_t *)(void *)object, *dead = NULL;
    pthread_mutex_lock(&lock);
    struct user_ref *e = find(graph->user_objects, o);
    if (e && o->refs >= count) {
        e->count = e->count > count ? e->count - count : 0;
        if (o->refs == count) forget(graph->user_objects, o);
        dead = release_locked(o, count);
    }
    pthread_mutex_unlock(&lock);
    finish(dead);
    HIP_RETURN(hipSuccess);
}
#endif
