// Network actions. Only loopback is ever contacted, and nothing is sent.
#include "probe.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int connect_loopback(int argc, char **argv) {
    (void)argc;
    unsigned long port;
    if (probe_number(argv[1], &port) < 0 || port == 0 || port > 65535) return probe_usage();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return probe_fail(errno, "at=socket");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    int err = errno;
    close(fd);
    return rc < 0 ? probe_fail(err, NULL) : probe_ok(NULL);
}

const struct probe_action probe_network_actions[] = {
    {"connect", 1, 1, connect_loopback, "PORT"},
    {0, 0, 0, 0, 0},
};
