// The one socket call the wire's listener needs that Swift's Glibc module does not import: accept4 is
// declared only under _GNU_SOURCE. Accepting with SOCK_CLOEXEC atomically matters: a plain
// accept followed by fcntl leaves a window in which a concurrent spawn inherits a host's
// control connection.
#ifndef APPEX_ACCEPT_H
#define APPEX_ACCEPT_H

/// accept4(fd, NULL, NULL, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0)); -1 and errno on failure.
int appex_wire_accept(int fd, int nonblocking);

#endif
