// The floor of the measurement: the least an extension can do before its Hello is on the
// wire. It sends one prebuilt Hello frame (bundle "dev.appex.bench", pid 0) to fd 3 and exits.
#include <sys/socket.h>
#include <unistd.h>

static const unsigned char hello[] = {
    'A', 'P', 'X', 'W', 1,   0, 1,   0,   0,   0,   0,   0,   41,  0,   0,   0, // header: Hello, 41 bytes of fields
    1,   0,   4,   0,   0,   0, 1,   0,   0,   0, // protocolVersion 1
    2,   0,   15,  0,   0,   0, 'd', 'e', 'v', '.', 'a', 'p', 'p', 'e', 'x', '.',
    'b', 'e', 'n', 'c', 'h', 3, 0,   4,   0,   0,   0,   0,   0,   0,   0, // pid 0
};

int main(void) { return send(3, hello, sizeof hello, MSG_NOSIGNAL) == (ssize_t)sizeof hello ? 0 : 1; }
