#ifndef CSHIMS_PTY_H
#define CSHIMS_PTY_H

#include <stddef.h>

/// Opens a pseudo-terminal pair, both ends in raw mode and close-on-exec, the master
/// non-blocking. Writes the slave's path into `name` (size `name_size`).
/// Returns 0, or an errno value with nothing left open.
int cshims_pty_open(int *master, int *slave, char *name, size_t name_size);

/// Bytes written to the pseudo-terminal that its reader has not read yet (FIONREAD on the
/// slave `fd`), or -1 on error.
int cshims_pty_unread(int slave);

#endif
