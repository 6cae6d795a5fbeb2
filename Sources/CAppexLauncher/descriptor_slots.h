// Descriptor slots (descriptor_slots.c): private to the launcher.
#ifndef APPEX_DESCRIPTOR_SLOTS_H
#define APPEX_DESCRIPTOR_SLOTS_H
#include <stdint.h>

#define APPEX_SLOT_SET_MAX 32

// The slots one launch holds: which slot, the descriptor staged there, its number there.
typedef struct appex_slot_set {
    int32_t limit; // the reserved numbers' bound; 0: no slots, no staging
    int n;
    int slot[APPEX_SLOT_SET_MAX];
    int32_t original[APPEX_SLOT_SET_MAX];
    int32_t staged[APPEX_SLOT_SET_MAX];
} appex_slot_set;

// The bound below which every reserved slot lies, or 0 when none are reserved.
int32_t appex_descriptor_slots_limit(void);
// `fd` as the child should see it: itself when already below the bound, else a slot it was
// dup3'd into. -1 when no slot is free (the caller launches without slots).
int appex_slot_stage(appex_slot_set *set, int32_t fd, int32_t *out);
// Frees the set's slots (after the vfork child exec'd or died).
void appex_slot_release(appex_slot_set *set);

#endif
