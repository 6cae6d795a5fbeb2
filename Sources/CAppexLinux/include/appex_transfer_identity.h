#ifndef APPEX_TRANSFER_IDENTITY_H
#define APPEX_TRANSFER_IDENTITY_H
#include <sys/types.h>

// Makes the calling process the extension's identity for good: supplementary groups = {gid},
// real/effective/saved gid = gid, uid = uid (which clears every capability), then
// no_new_privs. Returns 0, or -1 with errno set and *step naming the call that failed.
int appex_transfer_drop_identity(uid_t uid, gid_t gid, const char **step);

// SIGKILL when the parent (appexd's loop thread) dies, set after the drop (a change of
// credentials clears it); fails with ESRCH when `parent` is already gone.
int appex_transfer_die_with_parent(pid_t parent);

#endif
