// Descriptor slots: a few low-numbered descriptors reserved early, so that a launch can hand
// its child a small descriptor table however many descriptors the supervisor holds.
//
// Without CLONE_FILES, clone copies the parent's whole descriptor table (a reference taken on
// every open file) and the child's execve then closes every copy that is close-on-exec: with
// 1,000 live extensions appexd holds many thousands of descriptors, and the copy and the
// closes are paid twice per cold start (the sandbox init, then the extension;
// Docs/decisions/0010-many-idle-extensions.md). With slots, the
// descriptors a child needs are dup3'd into reserved numbers below `limit`, the child is
// cloned with CLONE_FILES (no copy), and its first act is close_range(limit, ~0U,
// CLOSE_RANGE_UNSHARE): the kernel gives it a private table holding only the descriptors
// below `limit`. A free slot holds a copy of /dev/null, so its number stays reserved.
#define _GNU_SOURCE
#include "appex_launcher.h"
#include "descriptor_slots.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define SLOT_MAX 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int slot_fd[SLOT_MAX];
static unsigned char slot_busy[SLOT_MAX];
static int slot_count;
static int slot_limit;
static int placeholder = -1;

int appex_reserve_descriptor_slots(int32_t count) {
    pthread_mutex_lock(&lock);
    if (slot_count > 0 || count <= 0) {
        int n = slot_count;
        pthread_mutex_unlock(&lock);
        return n;
    }
    if (count > SLOT_MAX) count = SLOT_MAX;
    placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (placeholder < 0) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    int limit = placeholder + 1;
    int n = 0;
    for (; n < count; n++) {
        // The lowest free number from 3: never one somebody else holds.
        int fd = fcntl(placeholder, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) break;
        slot_fd[n] = fd;
        slot_busy[n] = 0;
        if (fd + 1 > limit) limit = fd + 1;
    }
    slot_count = n;
    slot_limit = limit;
    pthread_mutex_unlock(&lock);
    return n;
}

int32_t appex_descriptor_slots_limit(void) {
    pthread_mutex_lock(&lock);
    int limit = slot_count > 0 ? slot_limit : 0;
    pthread_mutex_unlock(&lock);
    return limit;
}

int appex_slot_stage(appex_slot_set *set, int32_t fd, int32_t *out) {
    *out = fd;
    if (fd < 0 || set->limit == 0 || fd < set->limit) return 0;
    for (int i = 0; i < set->n; i++) {
        if (set->original[i] == fd) {
            *out = set->staged[i];
            return 0;
        }
    }
    if (set->n >= APPEX_SLOT_SET_MAX) return -1;
    pthread_mutex_lock(&lock);
    int found = -1;
    for (int i = 0; i < slot_count; i++) {
        if (!slot_busy[i]) {
            slot_busy[i] = 1;
            found = i;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (found < 0) return -1;
    if (dup3(fd, slot_fd[found], O_CLOEXEC) < 0) {
        pthread_mutex_lock(&lock);
        slot_busy[found] = 0;
        pthread_mutex_unlock(&lock);
        return -1;
    }
    set->slot[set->n] = found;
    set->original[set->n] = fd;
    set->staged[set->n] = slot_fd[found];
    set->n++;
    *out = slot_fd[found];
    return 0;
}

void appex_slot_release(appex_slot_set *set) {
    for (int i = 0; i < set->n; i++) {
        // Back to /dev/null: the number stays ours, the staged file is let go.
        dup3(placeholder, set->staged[i], O_CLOEXEC);
        pthread_mutex_lock(&lock);
        slot_busy[set->slot[i]] = 0;
        pthread_mutex_unlock(&lock);
    }
    set->n = 0;
}
