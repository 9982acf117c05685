#define _GNU_SOURCE
#include "cshims_spawn.h"

int cshims_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int lowfd) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowfd);
}

short cshims_spawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }
