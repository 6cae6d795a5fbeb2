/* libFuzzer entry for libappex's decoder (`make fuzz-libappex`): every input, as each role
 * and with 0 to 2 descriptors, must decode to a message that frees cleanly or to an error
 * with a message, never a crash, a leak or undefined behaviour. */
#include "../Sources/CAppex/internal.h"

#include <assert.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const enum appex_role roles[] = {APPEX_ROLE_EXTENSION, APPEX_ROLE_HOST,
                                            (enum appex_role)APPEX_ROLE_SUPERVISOR_};
    for (size_t r = 0; r < 3; r++)
        for (int fds = 0; fds <= 2; fds++) {
            appex_message *m = NULL;
            appex_error err;
            if (appex_decode(data, size, fds, roles[r], &m, &err) == 0) {
                assert(m && m->fd_count == 0);
                appex_message_free(m);
            } else {
                assert(!m && err.message[0] && err.reason[0]);
            }
        }
    return 0;
}
