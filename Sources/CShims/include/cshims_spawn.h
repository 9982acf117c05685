#pragma once
/// posix_spawn settings that glibc declares only under _GNU_SOURCE, hidden from Swift.
#include <spawn.h>

/// Makes the child close every descriptor numbered `lowfd` or higher before it execs
/// (posix_spawn_file_actions_addclosefrom_np). Returns 0 or an error number.
int cshims_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int lowfd);

/// The POSIX_SPAWN_SETSID flag: the child starts a new session.
short cshims_spawn_setsid_flag(void);
