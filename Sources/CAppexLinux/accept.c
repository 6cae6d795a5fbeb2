#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include "appex_accept.h"

int appex_wire_accept(int fd, int nonblocking) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0));
}
