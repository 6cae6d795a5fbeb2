#include "appex_thread_identity.h"
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

unsigned appex_thread_setfsuid(unsigned uid) { return (unsigned)setfsuid((uid_t)uid); }
unsigned appex_thread_setfsgid(unsigned gid) { return (unsigned)setfsgid((gid_t)gid); }

int appex_thread_setgroups(size_t count, const gid_t *groups) { return (int)syscall(SYS_setgroups, count, groups); }
