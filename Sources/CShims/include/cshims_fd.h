#pragma once
/// Descriptor calls that glibc declares only under _GNU_SOURCE, hidden from Swift.

/// pipe2(fds, flags): both ends created with `flags` (O_CLOEXEC, O_NONBLOCK) atomically.
int cshims_pipe2(int fds[2], int flags);

/// accept4(fd, NULL, NULL, flags): the accepted socket gets `flags` (SOCK_CLOEXEC) atomically.
int cshims_accept4(int fd, int flags);
