// The calling thread's filesystem identity, for opening files with another user's permissions
// while the rest of the process stays root. setfsuid and setfsgid are per-thread but Swift's
// Glibc module does not export them; glibc's setgroups changes every thread of the process, so
// supplementary groups go through the raw system call, which changes only the caller's.
#ifndef APPEX_THREAD_IDENTITY_H
#define APPEX_THREAD_IDENTITY_H

#include <stddef.h>
#include <sys/types.h>

// setfsuid(uid): the thread's previous fsuid (the kernel reports no error; check by asking again
// with (uid_t)-1, which changes nothing).
unsigned appex_thread_setfsuid(unsigned uid);
// setfsgid(gid), the same way.
unsigned appex_thread_setfsgid(unsigned gid);
// syscall(SYS_setgroups, count, groups) for the calling thread only; -1 and errno on failure.
int appex_thread_setgroups(size_t count, const gid_t *groups);

#endif
